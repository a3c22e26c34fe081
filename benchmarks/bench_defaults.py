"""Default estimators against scikit-learn's, as a new user would fit them.

Every estimator is built with its defaults (only ``random_state=0``):
``MarginPerceptron()`` against ``sklearn.linear_model.Perceptron()`` and
``KernelPerceptron()`` against ``sklearn.svm.SVC()``. The data sets:

- breast cancer and digits, shipped with scikit-learn;
- ``noisy 100,000 x 50``: ``make_classification(100_000, 50)`` with its
  default informative and redundant features, ``flip_y=0``, and then the
  labels of exactly 5% of the rows, drawn at random, flipped (scikit-learn's
  ``flip_y=0.05`` would redraw 5% of the labels at random, flipping only
  about half of them);
- ``sparse text-like``: 30,000 CSR rows over a vocabulary of 3,000 columns,
  word counts drawn from a Zipf-like law (about 40 distinct words a row),
  log-scaled; the label is the sign of a sparse linear model of the counts,
  and then exactly 5% of the labels are flipped;
- ``sparse vocabulary 500,000`` (``--sets vocabulary``, not run by
  default): the same on 500,000 rows over a vocabulary of 100,000 columns,
  the topic words drawn by frequency (``benchmarks/bench_kernel_scale.py
  --data vocabulary``): as many features as a bag of words or hashed text
  has, where the training data is nearly separable.

Each set is split 70/30 (``random_state=0``) and scaled on the training part
(``StandardScaler`` for dense data, ``MaxAbsScaler`` for sparse data, which
keeps it sparse). The kernel estimators fit at most ``--kernel-rows``
training rows (10,000 by default, the first rows of the shuffled training
part), because SVC takes far longer than two minutes on 70,000 rows; the
table says when a set was subsampled so. Test accuracy is on the whole
test part.

Fit times are medians over ``--repeat`` measurements, the two estimators
taking turns; a measurement is one fit, or for a fit shorter than
``MEASURE_SECONDS`` the mean of as many fits as fill them, since the
machine's noise swamps a single fit of a millisecond (MarginPerceptron on
breast cancer measured 1.26x to 1.65x Perceptron's time over 3 to 5 single
fits). The ratio is skperc's median over scikit-learn's, measured in the
same run. ``epochs`` is ``n_iter_``; ``stop`` is the fitted ``stop_reason_``
when the estimator has one, and ``conv`` is ``converged_``. The targets are
those of the stopping rule: MarginPerceptron at most 1.5x Perceptron's time
and at least its accuracy - 0.005; KernelPerceptron at most 0.5x SVC's time
where SVC takes 20 ms or more, and at least its accuracy - 0.01.

``--estimators kernel_early_stopping`` adds the table of
``KernelPerceptron(early_stopping=True)`` against ``SVC()`` (the default,
``"auto"``, splits only samples of more than 2,000 examples);
``linear_rule`` the table of ``MarginPerceptron(early_stopping=False)``,
the stopping rule on the training data alone, against ``Perceptron()``;
``linear_sgd`` the table of ``MarginPerceptron()`` against
``SGDClassifier()``, the estimator a user of large sparse data would pick
otherwise (no targets), and with ``--margins M ...`` one more such table
for each ``M``, of ``MarginPerceptron(beta=RelativeThreshold(M))``: the
beta-perceptron with ``beta = M R^2``, whose margin keeps a run on noisy
data further from the noise (the default, ``beta=0``, is Rosenblatt's
perceptron); ``mixing`` the table of
``ParameterMixingClassifier(MarginPerceptron(), n_shards=2)``, two shards
on threads, against ``MarginPerceptron()`` on one core, and
``mixing_rule`` the same with ``early_stopping=False`` on both (no
targets: issue 15's are measured by ``benchmarks/bench_mixing.py``).

``--grid`` instead times the README's grid search over ``beta`` on digits:
``GridSearchCV(make_pipeline(StandardScaler(), MarginPerceptron(...)),
{beta: [0.0, 0.5, 1.0, "scale", "power"], alpha: [1.5, 1.9]}, n_jobs=-1)``,
with the default ``MarginPerceptron()`` of the design page and the README
and with ``max_iter=100``, which the README used before the stopping rule,
beside the same search over scikit-learn's
``Perceptron`` (its ``alpha`` and ``penalty`` on a grid of the same size).

Run from the repository root::

    python benchmarks/bench_defaults.py [--repeat 3] [--sets digits ...]
        [--estimators linear linear_rule linear_sgd kernel ...]
        [--margins 0.25 1.0]
    python benchmarks/bench_defaults.py --grid [--repeat 3]
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron, MarginMLPClassifier, MarginPerceptron
from skperc.distributed import ParameterMixingClassifier
from skperc.schedules import RelativeThreshold

LINEAR_TIME_RATIO = 1.5
LINEAR_ACCURACY_GAP = 0.005
KERNEL_TIME_RATIO = 0.5
KERNEL_TIME_FLOOR = 0.020  # seconds of SVC below which no time target holds
KERNEL_ACCURACY_GAP = 0.01
MEASURE_SECONDS = 0.2  # a shorter fit is timed as the mean of enough to fill it


def flip_labels(y, fraction, rng):
    """y with the labels of exactly ``fraction`` of the rows flipped."""
    y = y.copy()
    flipped = rng.choice(len(y), size=round(fraction * len(y)), replace=False)
    y[flipped] = 1 - y[flipped]
    return y


def noisy_dense(n_samples=100_000, n_features=50):
    X, y = make_classification(
        n_samples=n_samples, n_features=n_features, flip_y=0.0, random_state=0
    )
    return X, flip_labels(y, 0.05, np.random.RandomState(1))


def sparse_text(
    n_samples=30_000, n_features=3_000, words_per_row=40, topics_by_frequency=False
):
    """Log-scaled word counts with Zipf-like word frequencies, labelled by
    the sign of a linear score of 300 topic words, drawn uniformly or (with
    ``topics_by_frequency``) by frequency: on a large vocabulary, words drawn
    uniformly are rare, and leave most rows at the median score of 0 (with
    100,000 words, 93% of them in one class)."""
    rng = np.random.RandomState(0)
    frequency = 1.0 / np.arange(1, n_features + 1) ** 1.1
    frequency /= frequency.sum()
    lengths = rng.poisson(words_per_row, size=n_samples) + 1
    words = rng.choice(n_features, size=lengths.sum(), p=frequency)
    rows = np.repeat(np.arange(n_samples), lengths)
    counts = sp.csr_matrix(
        (np.ones(len(words)), (rows, words)), shape=(n_samples, n_features)
    )
    counts.sum_duplicates()
    X = counts.copy()
    X.data = np.log1p(X.data)
    # A few hundred words carry the label, as topic words do.
    coef = np.zeros(n_features)
    topical = rng.choice(
        n_features,
        size=300,
        replace=False,
        p=frequency if topics_by_frequency else None,
    )
    coef[topical] = rng.standard_normal(300)
    score = X @ coef
    y = (score > np.median(score)).astype(int)
    return X.tocsr(), flip_labels(y, 0.05, rng)


SETS = {
    "breast cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "noisy 100,000 x 50": noisy_dense,
    "sparse text-like": sparse_text,
    "sparse vocabulary 500,000": lambda: sparse_text(
        500_000, n_features=100_000, topics_by_frequency=True
    ),
}
SET_KEYS = {
    "breast_cancer": "breast cancer",
    "digits": "digits",
    "noisy": "noisy 100,000 x 50",
    "sparse": "sparse text-like",
    "vocabulary": "sparse vocabulary 500,000",
}
DEFAULT_SETS = ["breast_cancer", "digits", "noisy", "sparse"]


def split(name):
    X, y = SETS[name]()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0
    )
    scaler = MaxAbsScaler() if sp.issparse(X) else StandardScaler()
    X_train = scaler.fit_transform(X_train)
    return X_train, scaler.transform(X_test), y_train, y_test


def timed_fit(estimator, X, y):
    """The time of a fit (the mean of as many as fill MEASURE_SECONDS, for a
    shorter one) and whether the fits warned that they did not converge."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        fits, elapsed = 0, 0.0
        while elapsed < MEASURE_SECONDS:
            start = time.perf_counter()
            estimator.fit(X, y)
            elapsed += time.perf_counter() - start
            fits += 1
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return elapsed / fits, warned


def compare(ours, theirs, X_train, X_test, y_train, y_test, repeat):
    """Median fit times taking turns, and what the last fits report."""
    times = {"ours": [], "theirs": []}
    for _ in range(repeat):
        elapsed, ours_warned = timed_fit(ours, X_train, y_train)
        times["ours"].append(elapsed)
        elapsed, _ = timed_fit(theirs, X_train, y_train)
        times["theirs"].append(elapsed)
    return {
        "ours_time": float(np.median(times["ours"])),
        "theirs_time": float(np.median(times["theirs"])),
        "ours_acc": ours.score(X_test, y_test),
        "theirs_acc": theirs.score(X_test, y_test),
        "ours_epochs": int(np.max(ours.n_iter_)),
        "theirs_epochs": int(np.max(getattr(theirs, "n_iter_", -1))),
        "stop": getattr(ours, "stop_reason_", "-"),
        "converged": getattr(ours, "converged_", "-"),
        "warned": ours_warned,
    }


def print_row(label, r, time_ok=None, acc_ok=None):
    """One row of a table; without targets its verdict is "-"."""
    ratio = r["ours_time"] / r["theirs_time"]
    if time_ok is None:
        verdict = "-"
    else:
        verdict = "ok" if time_ok(r, ratio) and acc_ok(r) else "MISSED"
    print(
        f"{label:30} {r['ours_epochs']:>6} {r['ours_time']:8.3f} "
        f"{r['ours_acc']:7.3f} {str(r['stop']):>15} {str(r['converged']):>5} "
        f"{'yes' if r['warned'] else 'no':>4} | {r['theirs_epochs']:>6} "
        f"{r['theirs_time']:8.3f} {r['theirs_acc']:7.3f} | {ratio:6.2f}  {verdict}"
    )


def header(ours, theirs):
    line = (
        f"{'data':30} {'epochs':>6} {'fit s':>8} {'acc':>7} {'stop':>15} "
        f"{'conv':>5} {'warn':>4} | {'epochs':>6} {'fit s':>8} {'acc':>7} | "
        f"{'ratio':>6}"
    )
    print(f"\n{ours} (left) against {theirs} (right)")
    print(line)
    print("-" * len(line))


def capped(data, kernel_rows):
    """The training part cut to ``kernel_rows`` rows, and the row's label."""
    X_train, X_test, y_train, y_test = data
    if X_train.shape[0] <= kernel_rows:
        return data, ""
    capped_data = (X_train[:kernel_rows], X_test, y_train[:kernel_rows], y_test)
    return capped_data, f" ({kernel_rows // 1000}k rows)"


def run_tables(names, estimators, repeat, kernel_rows, margins=()):
    data = {name: split(name) for name in names}
    if "linear" in estimators:
        run_linear(names, data, repeat)
    if "linear_rule" in estimators:
        run_linear(names, data, repeat, early_stopping=False)
    if "linear_sgd" in estimators:
        run_linear(names, data, repeat, reference=SGDClassifier)
        for margin in margins:
            run_linear(
                names,
                data,
                repeat,
                reference=SGDClassifier,
                beta=RelativeThreshold(margin),
            )
    if "kernel" in estimators:
        run_kernel(names, data, repeat, kernel_rows)
    if "kernel_early_stopping" in estimators:
        # the defaults split only samples above 2,000 examples
        run_kernel(names, data, repeat, kernel_rows, early_stopping=True)
    if "mlp" in estimators:
        run_mlp(names, data, repeat, kernel_rows)
    if "mixing" in estimators:
        run_mixing(names, data, repeat)
    if "mixing_rule" in estimators:
        run_mixing(names, data, repeat, early_stopping=False)


def run_linear(names, data, repeat, reference=Perceptron, **params):
    """MarginPerceptron(**params) against reference(); the targets are
    those of the defaults against Perceptron, none against another."""
    listed = ", ".join(f"{key}={value!r}" for key, value in params.items())
    header(f"MarginPerceptron({listed})", f"{reference.__name__}()")
    targets = (
        (
            lambda r, ratio: ratio <= LINEAR_TIME_RATIO,
            lambda r: r["ours_acc"] >= r["theirs_acc"] - LINEAR_ACCURACY_GAP,
        )
        if reference is Perceptron
        else ()
    )
    for name in names:
        r = compare(
            MarginPerceptron(random_state=0, **params),
            reference(random_state=0),
            *data[name],
            repeat,
        )
        print_row(name, r, *targets)


def run_kernel(names, data, repeat, kernel_rows, **params):
    """KernelPerceptron(**params) against SVC(); the targets are those of
    the defaults."""
    listed = ", ".join(f"{key}={value!r}" for key, value in params.items())
    header(f"KernelPerceptron({listed})", "SVC()")
    for name in names:
        subset, cut = capped(data[name], kernel_rows)
        r = compare(
            KernelPerceptron(random_state=0, **params),
            SVC(random_state=0),
            *subset,
            repeat,
        )
        print_row(
            name + cut,
            r,
            lambda r, ratio: (
                r["theirs_time"] < KERNEL_TIME_FLOOR or ratio <= KERNEL_TIME_RATIO
            ),
            lambda r: r["ours_acc"] >= r["theirs_acc"] - KERNEL_ACCURACY_GAP,
        )


def run_mixing(names, data, repeat, **params):
    """ParameterMixingClassifier(MarginPerceptron(**params)) on 2 shards
    against MarginPerceptron(**params) on one core (no targets)."""
    listed = ", ".join(f"{key}={value!r}" for key, value in params.items())
    header(
        f"ParameterMixingClassifier(MarginPerceptron({listed}), n_shards=2)",
        f"MarginPerceptron({listed})",
    )
    for name in names:
        r = compare(
            ParameterMixingClassifier(
                MarginPerceptron(random_state=0, **params), n_shards=2
            ),
            MarginPerceptron(random_state=0, **params),
            *data[name],
            repeat,
        )
        print_row(name, r)


def run_mlp(names, data, repeat, kernel_rows):
    """The networks' defaults on the same data: no targets, a check that
    MarginMLPClassifier's own stopping rule ends its runs as the
    perceptrons' does (stop "no_improvement"/"separated", no warning)."""
    header("MarginMLPClassifier()", "MLPClassifier()")
    for name in names:
        subset, cut = capped(data[name], kernel_rows)
        r = compare(
            MarginMLPClassifier(random_state=0),
            MLPClassifier(random_state=0),
            *subset,
            repeat,
        )
        print_row(name + cut, r)


def run_grid(repeat):
    X, y = load_digits(return_X_y=True)
    grid = {
        "marginperceptron__beta": [0.0, 0.5, 1.0, "scale", "power"],
        "marginperceptron__alpha": [1.5, 1.9],
    }
    reference_grid = {
        "perceptron__penalty": [None, "l2"],
        "perceptron__alpha": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1],
    }
    # The reference runs first, so that the ratios can be printed as they come.
    searches = {
        "Perceptron() (same size grid)": (
            make_pipeline(StandardScaler(), Perceptron(random_state=0)),
            reference_grid,
        ),
        "MarginPerceptron() (design page, README)": (
            make_pipeline(StandardScaler(), MarginPerceptron(random_state=0)),
            grid,
        ),
        "MarginPerceptron(max_iter=100) (former README)": (
            make_pipeline(
                StandardScaler(), MarginPerceptron(max_iter=100, random_state=0)
            ),
            grid,
        ),
    }
    line = f"{'GridSearchCV on digits, 10 candidates x 5 folds':48} {'fit s':>8}"
    line += f" {'ratio':>6} {'best score':>10}  best parameters"
    print(line)
    print("-" * len(line))
    times = {}
    for label, (pipeline, parameters) in searches.items():
        elapsed = []
        for _ in range(repeat):
            search = GridSearchCV(pipeline, parameters, n_jobs=-1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                search.fit(X, y)
                elapsed.append(time.perf_counter() - start)
        times[label] = float(np.median(elapsed))
        reference = times["Perceptron() (same size grid)"]
        best = {k.split("__")[1]: v for k, v in search.best_params_.items()}
        print(
            f"{label:48} {times[label]:8.2f} {times[label] / reference:6.2f} "
            f"{search.best_score_:10.3f}  {best}"
        )
    print("ratio: the search's median time over that of the Perceptron search")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--sets",
        nargs="+",
        choices=list(SET_KEYS),
        default=DEFAULT_SETS,
        help="the data sets of the tables",
    )
    parser.add_argument(
        "--kernel-rows",
        type=int,
        default=10_000,
        help="the largest number of training rows of the kernel estimators",
    )
    parser.add_argument(
        "--estimators",
        nargs="+",
        choices=[
            "linear",
            "linear_rule",
            "linear_sgd",
            "kernel",
            "kernel_early_stopping",
            "mlp",
            "mixing",
            "mixing_rule",
        ],
        default=["linear", "kernel"],
        help="the tables: perceptrons (with their defaults, with "
        "early_stopping=False, and against SGDClassifier), kernel perceptrons "
        "(with their defaults, and with early_stopping=True), networks, "
        "parameter mixing on 2 shards (with the defaults, and with "
        "early_stopping=False)",
    )
    parser.add_argument(
        "--margins",
        type=float,
        nargs="+",
        default=[],
        help="with linear_sgd, the table of MarginPerceptron(beta="
        "RelativeThreshold(M)) against SGDClassifier() for each M",
    )
    parser.add_argument(
        "--grid", action="store_true", help="time the README's grid search instead"
    )
    args = parser.parse_args()
    if args.margins and "linear_sgd" not in args.estimators:
        parser.error("--margins adds tables to linear_sgd: add it to --estimators")
    print(
        f"median of {args.repeat} measurements (fits shorter than "
        f"{MEASURE_SECONDS} s: the mean of as many as fill them); "
        "ratio = skperc time / scikit-learn time"
    )
    if args.grid:
        run_grid(args.repeat)
    else:
        run_tables(
            [SET_KEYS[key] for key in args.sets],
            args.estimators,
            args.repeat,
            args.kernel_rows,
            args.margins,
        )


if __name__ == "__main__":
    main()
