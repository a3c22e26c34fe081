"""The margin race: how close to the optimal margin each learner gets.

Section 2 of "On the Perceptron's Compression" places its infinity-perceptron
(``beta="power"``) against ALMA (Gentile 2001), which also approaches the
optimal margin but works on unit-norm examples, and the hard-margin SVM. On
separable samples of known optimal margin ``eps*`` through the origin and
radius ``R`` (``skperc.datasets.make_margin_classification``: norms spread
over ``[eps*, R]``, not normalised), each learner is trained to its stop and
the table gives the margin of its hyperplane on the sample as a fraction of
``eps*``, its number of updates and its fit time:

- ``MarginPerceptron`` (``fit_intercept=False``) with ``beta`` 0, 1,
  ``"scale"`` and ``"power"`` with ``alpha`` 1.3, 1.5 and 1.7, stopped by
  its first epoch without update or after ``--max-epochs`` epochs;
- ALMA_2 (``p = 2``, ``B = 1 / alpha``, ``C = sqrt(2)``) written here in
  NumPy after Figure 1 of Gentile's paper, with ``alpha = 0.9`` (river's
  default) and ``alpha = 0.1``: its margin on the normalised examples is at
  least ``(1 - alpha)`` times their optimum. Each example is
  normalised, ``x / ||x||``, the update is taken when ``y w . x <= (1 -
  alpha) B / sqrt(k)``, and ``w`` is projected back onto the unit ball;
  passes over the sample until one makes no update (at most
  ``--max-epochs``);
- river's ``ALMAClassifier`` with its defaults (``alpha = 0.9``), what a user would
  pick, fed the raw examples as dicts. It deviates from the paper: it does
  not normalise the examples, and it rescales only the coordinates present
  in ``x`` (all of them here, the data being dense). Its dict conversion is
  not timed. river is a dependency of this benchmark only: install it with
  ``pip install river``; without it the script says so and leaves the
  column out. It runs at most ``--river-max-epochs`` passes;
- ``SVC(kernel="linear", C=1e10)``, the hard-margin SVM, as the optimum
  (it has an intercept, so its margin may exceed ``eps*``, the optimum
  through the origin); its "updates" are its support vectors.

Figures are medians over ``--seeds`` samples (new data each); "conv" counts
the runs that stopped by themselves; "time / SVC" is the median fit time
over SVC's, measured in the same run.

Run from the repository root::

    python benchmarks/bench_margin_race.py [--seeds 3] [--n-samples 500]
"""

import argparse
import math
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification

RATIOS = (0.3, 0.1, 0.03, 0.01)


def alma2(X, y, *, alpha=0.9, max_epochs=100_000):
    """ALMA_2(alpha; B = 1 / alpha, C = sqrt(2)) of Gentile (2001), Figure 1,
    passed over the sample in order until a pass without update. Returns the
    weights, the number of updates and whether a pass made none.

    Between two updates ``w`` and ``k`` do not change, so the next update is
    on the first example after the current one whose margin is at most the
    threshold: found for all examples at once, the same run as one example
    at a time."""
    B, C = 1.0 / alpha, math.sqrt(2.0)
    signed = y[:, None] * X / np.linalg.norm(X, axis=1, keepdims=True)
    n_samples = len(X)
    w = np.zeros(X.shape[1])
    k = 1
    position = 0  # where the pass goes on, counted over all passes
    while position < max_epochs * n_samples:
        start = position % n_samples
        # the rest of this pass, then the whole of the next one
        order = np.r_[start:n_samples, 0:start]
        hits = np.flatnonzero(signed[order] @ w <= (1 - alpha) * B / math.sqrt(k))
        if hits.size == 0:
            return w, k - 1, True
        index = order[hits[0]]
        position += hits[0] + 1
        w += C / math.sqrt(k) * signed[index]
        w /= max(1.0, np.linalg.norm(w))
        k += 1
    return w, k - 1, False


def river_alma(rows, y, *, alpha=0.9, max_epochs=1000):
    """river's ALMAClassifier, passed over the sample until a pass without
    update (river counts its updates in ``k``, from 1)."""
    from river.linear_model import ALMAClassifier

    model = ALMAClassifier(p=2, alpha=alpha, B=1 / alpha, C=2**0.5)
    labels = [bool(label > 0) for label in y]
    for _ in range(max_epochs):
        before = model.k
        for row, label in zip(rows, labels, strict=True):
            model.learn_one(row, label)
        if model.k == before:
            break
    w = np.array([model.w.get(i, 0.0) for i in range(len(rows[0]))])
    return w, model.k - 1, model.k == before


def _margin(w, b, X, y):
    norm = np.linalg.norm(w)
    return float((y * (X @ w + b)).min() / norm) if norm > 0 else 0.0


def perceptron(params, max_epochs):
    def fit(X, y, seed):
        clf = MarginPerceptron(
            fit_intercept=False,
            max_iter=max_epochs,
            early_stopping=False,
            random_state=seed,
            **params,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        converged = clf.n_iter_ < max_epochs
        return clf.coef_[0], 0.0, int(clf.n_updates_[0]), converged

    return fit


def learners(max_epochs, with_river):
    race = {
        "beta=0 (perceptron)": perceptron(dict(beta=0.0), max_epochs),
        "beta=1": perceptron(dict(beta=1.0), max_epochs),
        'beta="scale"': perceptron(dict(beta="scale"), max_epochs),
    }
    for alpha in (1.3, 1.5, 1.7):
        race[f'beta="power", alpha={alpha}'] = perceptron(
            dict(beta="power", alpha=alpha), max_epochs
        )

    def numpy_alma(alpha):
        def fit(X, y, seed):
            w, updates, converged = alma2(X, y, alpha=alpha, max_epochs=max_epochs)
            return w, 0.0, updates, converged

        return fit

    for alpha in (0.9, 0.1):
        race[f"ALMA_2 (numpy), alpha={alpha}"] = numpy_alma(alpha)
    if with_river:
        race["river ALMAClassifier, 0.9"] = "river"

    def svc(X, y, seed):
        model = SVC(kernel="linear", C=1e10).fit(X, y)
        return model.coef_[0], model.intercept_[0], int(model.n_support_.sum()), True

    race["SVC(linear, C=1e10)"] = svc
    return race


def race(ratios, n_samples, n_features, radius, seeds, max_epochs, river_epochs):
    """The table's rows: for each ratio eps*/R and learner, the margin
    fractions, updates, times and convergence of each seed."""
    results = {}
    for ratio in ratios:
        for seed in range(seeds):
            X, y = make_margin_classification(
                n_samples, n_features, ratio * radius, radius, random_state=seed
            )
            y = y.astype(np.float64)
            with_river = river_epochs > 0
            rows = [dict(enumerate(x)) for x in X] if with_river else None
            for name, fit in learners(max_epochs, with_river).items():
                start = time.perf_counter()
                if fit == "river":
                    w, updates, converged = river_alma(rows, y, max_epochs=river_epochs)
                    b = 0.0
                else:
                    w, b, updates, converged = fit(X, y, seed)
                elapsed = time.perf_counter() - start
                fraction = _margin(w, b, X, y) / (ratio * radius)
                cell = results.setdefault((ratio, name), [])
                cell.append((fraction, updates, elapsed, converged))
    return results


def report(results, ratios, seeds):
    header = (
        f"{'eps*/R':>7}  {'learner':28} {'margin/eps*':>11} {'(worst)':>8} "
        f"{'updates':>9} {'time s':>8} {'/ SVC':>7} {'conv':>5}"
    )
    print(header)
    print("-" * len(header))
    for ratio in ratios:
        names = [name for (r, name) in results if r == ratio]
        svc_time = np.median([cell[2] for cell in results[(ratio, names[-1])]])
        for name in names:
            cells = np.array(results[(ratio, name)], dtype=float)
            fraction, updates, elapsed = np.median(cells[:, :3], axis=0)
            print(
                f"{ratio:7.2f}  {name:28} {fraction:11.3f} {cells[:, 0].min():8.3f} "
                f"{updates:9.0f} {elapsed:8.3f} {elapsed / svc_time:7.2f} "
                f"{int(cells[:, 3].sum()):>2}/{seeds}"
            )
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-samples", type=int, default=500)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--radius", type=float, default=10.0)
    parser.add_argument("--max-epochs", type=int, default=100_000)
    parser.add_argument(
        "--river-max-epochs",
        type=int,
        default=1000,
        help="river learns one dict at a time, some 100 times slower",
    )
    parser.add_argument("--ratios", type=float, nargs="+", default=list(RATIOS))
    args = parser.parse_args()
    try:
        import river  # noqa: F401
    except ImportError:
        river_epochs = 0
        print(
            "river is not installed: the river ALMAClassifier column is left "
            "out (pip install river to run it).\n"
        )
    else:
        river_epochs = args.river_max_epochs
    print(
        f"{args.n_samples} samples, {args.n_features} features, R = "
        f"{args.radius}, {args.seeds} seeds, at most {args.max_epochs} epochs "
        f"({args.river_max_epochs} for river)\n"
    )
    results = race(
        args.ratios,
        args.n_samples,
        args.n_features,
        args.radius,
        args.seeds,
        args.max_epochs,
        river_epochs,
    )
    report(results, args.ratios, args.seeds)


if __name__ == "__main__":
    main()
