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
- ``optimized``: the budgeted fit's function, its centres and coefficients
  both moved by L-BFGS on the mean squared hinge loss over the training
  examples (plus ``1e-7`` times the squared norm of the coefficients,
  which start scaled to a mean ``|f(x)|`` of 1), as in the direct sparse
  kernel methods of Wu, Schoelkopf and Bakir (JMLR 2006): the accuracy after
  every 50 iterations, up to ``--optimize`` (0 skips it), and the time.

So that a budget that misses the accuracy of the unbudgeted fit can be
told apart: centres placed badly (where other centres of the same number
score more), or too few centres for the data.

Run from the repository root::

    python benchmarks/bench_budget_centres.py [--size 40000] [--budget 500] \
        [--data clusters|wide|text] [--optimize 300]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40_000)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument(
        "--data", choices=sorted([*DATASETS, "text"]), default="clusters"
    )
    parser.add_argument("--optimize", type=int, default=300)
    args = parser.parse_args()
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

    if args.optimize:
        signs = np.where(y == budgeted.classes_[1], 1.0, -1.0)
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
            values = rbf_kernel(X_test, moved, gamma=kernel_gamma) @ coef
            accuracy = np.mean((values >= 0) == (y_test == budgeted.classes_[1]))
            row(f"optimized, {done} iterations", accuracy, time.perf_counter() - start)


if __name__ == "__main__":
    main()
