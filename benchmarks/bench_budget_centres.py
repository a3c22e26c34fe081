"""What a budget of RBF centres can score: the merged support of a budgeted
KernelPerceptron beside other centres of the same number, each with the best
linear model on its kernel values, and beside the same centres moved by
direct optimization.

On the data of ``benchmarks/bench_kernel_scale.py`` (``--data clusters``,
``wide`` or ``text``, its gamma, its 20,000 test points; not the word
counts of 2**20 or 100,000 columns, as the centres are held as dense rows),
at ``--size`` training examples, for ``--budget`` centres:

- ``KernelPerceptron``: the unbudgeted fit with its defaults, and the
  budgeted one (``budget_strategy="merge"``), their test accuracy;
- ``LinearSVC on ...``: ``LinearSVC`` (squared hinge, ``C`` of 1, 10 and 100)
  on the kernel values of the training examples against a set of centres:
  ``budget`` training rows drawn at random (the centres of Nystroem),
  ``budget / n_classes`` k-means centres of each class, and the budgeted fit's
  support vectors. The accuracy printed is the best of the three ``C`` on
  the test points, which flatters each set a little: an upper estimate
  of what a linear model on those centres gives;
- ``budgeted SGD``: the method of Wang, Crammer and Vucetic (JMLR 2012)
  that the merges of ``budget_strategy="merge"`` come from, in numpy:
  Pegasos on the hinge loss with regularization ``lambda`` (1e-4, 1e-5 and
  1e-6), whose support past the budget merges the vector of the smallest
  coefficient with the vector of its sign whose merge loses the least
  weight, every such vector searched (the merged point on a grid of 41
  points of the segment, where the paper searches by golden section);
  the accuracy of the function after each of ``--sgd-epochs`` epochs
  (the best ``lambda`` on the test points, as for LinearSVC, flatters it),
  and the time;
- ``optimized``: the budgeted fit's function, its centres and coefficients
  both moved by L-BFGS on the mean squared hinge loss over the training
  examples (plus ``1e-7`` times the squared norm of the coefficients,
  which start scaled to a mean ``|f(x)|`` of 1), as in the direct sparse
  kernel methods of Wu, Schoelkopf and Bakir (JMLR 2006): the accuracy after
  every 50 iterations, up to ``--optimize`` (0 skips it), and the time.

So that a budget that misses the accuracy of the unbudgeted fit can be
told apart: centres placed badly (where other centres of the same number
score more), or too few centres for the data.

``--passes N`` measures instead what the budget learns from passes over
one sample against passes over new ones: for ``random_state`` 0 to
``--seeds`` - 1, the budgeted KernelPerceptron (merging) after ``N`` calls of
``partial_fit`` on the same ``--size`` examples, and another after ``N``
calls on ``N`` samples of ``--size`` examples drawn from the same
distribution (``N * --size`` examples, the first sample the same examples):
the test accuracy of each last function, and its accuracy on the first
sample, the one that the first run passed over ``N`` times.

Run from the repository root::

    python benchmarks/bench_budget_centres.py [--size 40000] [--budget 500] \
        [--data clusters|wide|text] [--optimize 300] [--sgd-epochs 3]
    python benchmarks/bench_budget_centres.py --passes 25 [--seeds 3]
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
from bench_kernel_scale import DATASETS, data, gamma
from scipy.optimize import minimize
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import LinearSVC

from skperc import KernelPerceptron

C_VALUES = (1, 10, 100)
SGD_LAMBDAS = (1e-4, 1e-5, 1e-6)
MERGE_GRID = np.linspace(0.0, 1.0, 41)
OPTIMIZE_ROUND = 50
RIDGE = 1e-7


def linear_on_centres(X, y, X_test, y_test, centres, kernel_gamma):
    """The best test accuracy of LinearSVC over C_VALUES on the kernel values
    against the centres."""
    features = rbf_kernel(X, centres, gamma=kernel_gamma)
    test_features = rbf_kernel(X_test, centres, gamma=kernel_gamma)
    return max(
        LinearSVC(C=C, dual=False, max_iter=5000)
        .fit(features, y)
        .score(test_features, y_test)
        for C in C_VALUES
    )


def budgeted_sgd(X, signs, budget, kernel_gamma, lam, n_epochs, seed=0):
    """Budgeted SGD with merging on dense rows X and signs (+1 or -1): after
    each epoch, its RBF centres and their coefficients. Pegasos' t-th step
    shrinks the coefficients by 1 - 1 / t and adds signs[i] / (lam t), so
    that after t examples they are coef / t, where coef adds signs[i] / lam
    (a merge is linear in the coefficients: the same on coef)."""
    centres = np.zeros((budget + 1, X.shape[1]))
    sq_norms = np.zeros(budget + 1)
    coef = np.zeros(budget + 1)
    held, t = 0, 0
    rng = np.random.default_rng(seed)

    # (rbf_kernel would check its input at each of the hundreds of
    # thousands of rows)
    def kernel_row(x, sq_x):
        distances = sq_norms[:held] - 2.0 * centres[:held] @ x + sq_x
        return np.exp(-kernel_gamma * np.maximum(distances, 0.0))

    for _ in range(n_epochs):
        for i in rng.permutation(X.shape[0]):
            x, sq_x = X[i], X[i] @ X[i]
            value = coef[:held] @ kernel_row(x, sq_x) / max(t, 1)
            t += 1
            if signs[i] * value >= 1.0:
                continue
            centres[held], sq_norms[held], coef[held] = x, sq_x, signs[i] / lam
            held += 1
            if held <= budget:
                continue
            m = np.argmin(np.abs(coef[:held]))
            partners = np.flatnonzero(np.sign(coef[:held]) == np.sign(coef[m]))
            partners = partners[partners != m]
            k_mj = kernel_row(centres[m], sq_norms[m])[partners]
            log_k = np.log(np.maximum(k_mj, 1e-300))
            # z = h x_m + (1 - h) x_j: k(x_m, z) = k_mj^((1-h)^2), k(x_j, z) =
            # k_mj^(h^2), and the merged coefficient the projection onto z
            merged = coef[m] * np.exp(np.outer(log_k, (1 - MERGE_GRID) ** 2)) + coef[
                partners, None
            ] * np.exp(np.outer(log_k, MERGE_GRID**2))
            at = np.argmax(merged**2, axis=1)
            kept = merged[np.arange(len(partners)), at]
            lost = coef[m] ** 2 + coef[partners] ** 2
            lost += 2.0 * coef[m] * coef[partners] * k_mj - kept**2
            p = np.argmin(lost)
            j, h = partners[p], MERGE_GRID[at[p]]
            centres[j] = h * centres[m] + (1.0 - h) * centres[j]
            sq_norms[j], coef[j] = centres[j] @ centres[j], kept[p]
            held -= 1
            centres[m], sq_norms[m], coef[m] = centres[held], sq_norms[held], coef[held]
        yield centres[:held].copy(), coef[:held] / t


def function_of(params, n_centres):
    """The coefficients and the centres in params: the coefficients, then the
    centres flattened."""
    return params[:n_centres], params[n_centres:].reshape(n_centres, -1)


def squared_hinge(X, signs, kernel_gamma, n_centres):
    """The loss of the function of n_centres RBF centres on (X, signs) and its
    gradient, over the parameters of function_of."""

    def loss(params):
        coef, centres = function_of(params, n_centres)
        K = rbf_kernel(X, centres, gamma=kernel_gamma)
        slack = np.maximum(0.0, 1.0 - signs * (K @ coef))
        value = np.mean(slack**2) + RIDGE * coef @ coef
        dloss = -2.0 * slack * signs / len(signs)
        weighted = K * dloss[:, None]
        d_coef = K.T @ dloss + 2.0 * RIDGE * coef
        d_centres = (2.0 * kernel_gamma * coef[:, None]) * (
            (X.T @ weighted).T - weighted.sum(axis=0)[:, None] * centres
        )
        return value, np.concatenate([d_coef, d_centres.ravel()])

    return loss


def passes(args):
    """The budgeted fit's last function after args.passes calls of
    partial_fit on one sample, and after as many on new samples, the first
    of them that one (see the module's docstring)."""
    n = args.size
    X, y, X_test, y_test = data(n * args.passes, args.data)
    classes = np.unique(y)
    print(
        f"{args.data}, budget {args.budget}, {args.passes} calls of partial_fit "
        f"on {n} examples each; accuracy on the test points / on the first sample"
    )
    for seed in range(args.seeds):
        again, new = (
            KernelPerceptron(
                gamma=gamma(args.data), budget=args.budget, random_state=seed
            )
            for _ in range(2)
        )
        for at in range(args.passes):
            again.partial_fit(X[:n], y[:n], classes=classes)
            new.partial_fit(
                X[at * n : (at + 1) * n], y[at * n : (at + 1) * n], classes=classes
            )
        print(
            f"random_state={seed}: the same sample "
            f"{again.score(X_test, y_test):.4f} / {again.score(X[:n], y[:n]):.4f}, "
            f"new samples {new.score(X_test, y_test):.4f} / "
            f"{new.score(X[:n], y[:n]):.4f}",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40_000)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument(
        "--data", choices=sorted([*DATASETS, "text"]), default="clusters"
    )
    parser.add_argument("--optimize", type=int, default=300)
    parser.add_argument("--sgd-epochs", type=int, default=3)
    parser.add_argument("--passes", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if args.passes:
        passes(args)
        return
    X, y, X_test, y_test = data(args.size, args.data)
    kernel_gamma = gamma(args.data)

    def row(name, accuracy, seconds=None):
        spent = "" if seconds is None else f"{seconds:8.2f}"
        print(f"{name:<44} {accuracy:8.4f} {spent}", flush=True)

    title = f"{args.data}, n={args.size}, budget {args.budget}"
    print(f"{title:<44} accuracy   time s")
    for budget in (None, args.budget):
        start = time.perf_counter()
        model = KernelPerceptron(gamma=kernel_gamma, budget=budget, random_state=0)
        model.fit(X, y)
        seconds = time.perf_counter() - start
        name = "KernelPerceptron" + ("" if budget is None else f" budget={budget}")
        row(name, model.score(X_test, y_test), seconds)
    budgeted = model
    support = budgeted.support_vectors_
    support = support.toarray() if sp.issparse(support) else support

    rng = np.random.default_rng(0)
    labels = np.unique(y)
    centres = {
        "random rows": X[rng.choice(X.shape[0], args.budget, replace=False)],
        "k-means of each class": np.vstack(
            [
                KMeans(args.budget // len(labels), n_init=1, random_state=0)
                .fit(X[y == label])
                .cluster_centers_
                for label in labels
            ]
        ),
        "the budgeted fit's support": support,
    }
    for name, points in centres.items():
        accuracy = linear_on_centres(X, y, X_test, y_test, points, kernel_gamma)
        row(f"LinearSVC on {name}", accuracy)

    signs = np.where(y == budgeted.classes_[1], 1.0, -1.0)

    def test_accuracy(points, coef):
        # the function of RBF centres points and coefficients coef, with
        # the budgeted fit's second class where it is >= 0
        values = rbf_kernel(X_test, points, gamma=kernel_gamma) @ coef
        return np.mean((values >= 0) == (y_test == budgeted.classes_[1]))

    dense = X.toarray() if sp.issparse(X) else X
    best = np.zeros(args.sgd_epochs)
    seconds = np.zeros((len(SGD_LAMBDAS), args.sgd_epochs))
    for at, lam in enumerate(SGD_LAMBDAS):
        fits = budgeted_sgd(
            dense, signs, args.budget, kernel_gamma, lam, args.sgd_epochs
        )
        start = time.perf_counter()
        for epoch, (points, coef) in enumerate(fits):
            seconds[at, epoch:] += time.perf_counter() - start
            best[epoch] = max(best[epoch], test_accuracy(points, coef))
            start = time.perf_counter()
    # the time: the median over lambda of the epochs so far
    for epoch, accuracy in enumerate(best):
        row(f"budgeted SGD, {epoch + 1} epochs", accuracy, np.median(seconds[:, epoch]))

    if args.optimize:
        coef = budgeted.dual_coef_[0] / np.mean(np.abs(budgeted.decision_function(X)))
        params = np.concatenate([coef, support.ravel()])
        loss = squared_hinge(X, signs, kernel_gamma, args.budget)
        start = time.perf_counter()
        for done in range(OPTIMIZE_ROUND, args.optimize + 1, OPTIMIZE_ROUND):
            params = minimize(
                loss,
                params,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": OPTIMIZE_ROUND},
            ).x
            coef, moved = function_of(params, args.budget)
            accuracy = test_accuracy(moved, coef)
            row(f"optimized, {done} iterations", accuracy, time.perf_counter() - start)


if __name__ == "__main__":
    main()
