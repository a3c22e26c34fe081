"""KernelPerceptron against scikit-learn's SVC: fit time, test accuracy, memory.

Both use the RBF kernel with the same ``gamma = 1 / n_features`` on
standardized data; SVC has ``C=10``. KernelPerceptron runs ``--epochs``
epochs (``tol=None``: no stopping rule), with the threshold ``beta`` and
``average`` chosen among a small
grid by the accuracy on a validation fifth of the training data (never on
the test data), then refitted on the whole training data. Fit times are
medians over ``--repeat`` fits, the two estimators taking turns; the ratio
is KernelPerceptron's median over SVC's, measured in the same run, in wall
time and in CPU time (which a machine busy with other work disturbs less).

The last table fits growing samples of the first data set and reports the
peak memory of ``fit`` (tracemalloc), which grows linearly with the number
of samples: the Gram matrix of 100,000 samples would need 80 GB. The cache
of kernel columns (``cache_size``, 200 MB by default) is a fixed part of it.

Run from the repository root::

    python benchmarks/bench_kernel_perceptron.py [--repeat 5] [--epochs 10]
"""

import argparse
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron

# The targets this benchmark checks.
TIME_RATIO_TARGET = 0.5  # on the 20,000-sample set
ACCURACY_GAP_TARGET = 0.01  # on every set
GRID = [
    dict(beta=beta, average=average)
    for beta in [0.0, 0.25, 0.5, 1.0]
    for average in [False, True]
]


def classification(n_samples=20_000):
    return make_classification(
        n_samples=n_samples,
        n_features=20,
        n_informative=10,
        class_sep=1.5,
        random_state=0,
    )


CASES = {
    "classification 20,000 x 20": classification,
    "digits (10 classes)": lambda: load_digits(return_X_y=True),
    "breast cancer": lambda: load_breast_cancer(return_X_y=True),
}


def split(X, y):
    """Half for training, half for testing, standardized on the training half."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def choose(X_train, y_train, epochs):
    """The grid point of best accuracy on a validation fifth of the data."""
    X_fit, X_val, y_fit, y_val = train_test_split(
        X_train, y_train, test_size=0.2, stratify=y_train, random_state=1
    )
    scores = [
        KernelPerceptron(max_iter=epochs, tol=None, random_state=0, **params)
        .fit(X_fit, y_fit)
        .score(X_val, y_val)
        for params in GRID
    ]
    return GRID[int(np.argmax(scores))]


def fit_time(estimator, X, y):
    """Wall and CPU seconds of a fit."""
    wall, cpu = time.perf_counter(), time.process_time()
    estimator.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu


def run_case(make_data, epochs, repeat):
    X_train, X_test, y_train, y_test = split(*make_data())
    gamma = 1.0 / X_train.shape[1]
    params = choose(X_train, y_train, epochs)
    ours = KernelPerceptron(
        gamma=gamma, max_iter=epochs, tol=None, random_state=0, **params
    )
    theirs = SVC(kernel="rbf", gamma=gamma, C=10)
    times = {"ours": [], "theirs": []}
    for _ in range(repeat):
        times["ours"].append(fit_time(ours, X_train, y_train))
        times["theirs"].append(fit_time(theirs, X_train, y_train))
    ours_time, theirs_time = (np.median(times[k], axis=0) for k in times)
    return {
        "params": params,
        "n_train": len(y_train),
        "n_support": len(ours.support_),
        "svc_support": len(theirs.support_),
        "ours": ours_time[0],
        "theirs": theirs_time[0],
        "cpu_ratio": ours_time[1] / theirs_time[1],
        "ours_accuracy": ours.score(X_test, y_test),
        "theirs_accuracy": theirs.score(X_test, y_test),
    }


def peak_memory(n_samples, epochs, params):
    X, y = classification(n_samples)
    X = StandardScaler().fit_transform(X)
    estimator = KernelPerceptron(max_iter=epochs, tol=None, random_state=0, **params)
    tracemalloc.start()
    start = time.perf_counter()
    estimator.fit(X, y)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, seconds, len(estimator.support_)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument(
        "--memory-sizes",
        type=int,
        nargs="*",
        default=[25_000, 50_000, 100_000],
        help="sample sizes of the memory table (none to skip it)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)

    print(
        f"RBF kernel, gamma = 1 / n_features; KernelPerceptron {args.epochs} "
        f"epochs, SVC(C=10); median of {args.repeat} fits each, interleaved; "
        "ratio = KernelPerceptron / SVC fit time (wall, and CPU)"
    )
    header = (
        f"{'case':28} {'n_train':>7} {'chosen':>24} {'skperc s':>9} "
        f"{'SVC s':>7} {'ratio':>6} {'CPU ratio':>9} {'skperc acc':>10} {'SVC acc':>8} "
        f"{'gap':>6} {'n_SV':>11}  verdict"
    )
    print(header)
    print("-" * len(header))
    chosen = {}
    for name, make_data in CASES.items():
        r = run_case(make_data, args.epochs, args.repeat)
        chosen[name] = r["params"]
        ratio = r["ours"] / r["theirs"]
        gap = r["theirs_accuracy"] - r["ours_accuracy"]
        verdicts = ["acc ok" if gap <= ACCURACY_GAP_TARGET else "acc MISSED"]
        if name == "classification 20,000 x 20":
            verdicts.append("time ok" if ratio <= TIME_RATIO_TARGET else "time MISSED")
        choice = f"beta={r['params']['beta']}, average={r['params']['average']}"
        print(
            f"{name:28} {r['n_train']:7d} {choice:>24} {r['ours']:9.3f} "
            f"{r['theirs']:7.3f} {ratio:6.2f} {r['cpu_ratio']:9.2f} "
            f"{r['ours_accuracy']:10.4f} "
            f"{r['theirs_accuracy']:8.4f} {gap:6.3f} "
            f"{r['n_support']:5d}/{r['svc_support']:<5d}  {', '.join(verdicts)}"
        )
    print(
        f"targets: ratio <= {TIME_RATIO_TARGET} on the 20,000 set; SVC accuracy "
        f"minus ours <= {ACCURACY_GAP_TARGET} on every set. n_SV: ours/SVC's."
    )

    if not args.memory_sizes:
        return
    params = chosen["classification 20,000 x 20"]
    print()
    print(
        f"Peak memory of fit (tracemalloc), the classification data of growing "
        f"size, all of it for training, {args.epochs} epochs, {params}, "
        "default cache_size=200 MB"
    )
    header = (
        f"{'n_samples':>9} {'peak MB':>8} {'peak - cache MB':>15} "
        f"{'Gram matrix MB':>14} {'fit s':>7} {'n_SV':>6}"
    )
    print(header)
    print("-" * len(header))
    for n_samples in args.memory_sizes:
        peak, seconds, n_support = peak_memory(n_samples, args.epochs, params)
        cache = min(200 * 2**20 // (8 * n_samples), n_samples) * 8 * n_samples
        print(
            f"{n_samples:9d} {peak / 2**20:8.1f} {(peak - cache) / 2**20:15.1f} "
            f"{8 * n_samples**2 / 2**20:14.0f} {seconds:7.2f} {n_support:6d}"
        )


if __name__ == "__main__":
    main()
