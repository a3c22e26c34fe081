"""MarginPerceptron against scikit-learn's Perceptron, on the same work.

Both estimators run the same number of epochs over the same examples in the
same order (``shuffle=False``), on data that is not separable so that every
epoch runs in full, with Rosenblatt's rule (``beta=0``, ``eta0=1``) and an
intercept lifted by 1, the intercept step of scikit-learn's Perceptron: on
dense input the two compute the same model to the last bit, which the equal
accuracies show (on sparse input scikit-learn damps its intercept updates).
Times are medians over repeated fits, the two estimators taking turns; the
ratio is MarginPerceptron's median over Perceptron's, measured in the same
run. Accuracies are on a held-out fifth of the data.

Run from the repository root::

    python benchmarks/bench_margin_perceptron.py [--repeat 7] [--epochs 10]
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron
from sklearn.model_selection import train_test_split

from skperc import MarginPerceptron

# The targets this benchmark checks: the largest
# acceptable ratio of fit times.
TARGETS = {
    "dense 100,000 x 100, binary": 1.0,
    "dense 50,000 x 100, 10 classes": 0.5,
    "CSR 100,000 x 50,000, 0.1% dense": 1.0,
    "dense 100,000 x 100 float32": 0.6,
}


def dense_binary(dtype=np.float64):
    X, y = make_classification(
        n_samples=100_000,
        n_features=100,
        n_informative=20,
        flip_y=0.1,
        random_state=0,
    )
    return X.astype(dtype), y


def dense_multiclass():
    return make_classification(
        n_samples=50_000,
        n_features=100,
        n_informative=30,
        n_classes=10,
        flip_y=0.1,
        random_state=0,
    )


def sparse_binary(n_samples=100_000, n_features=50_000, nnz_per_row=50):
    """CSR rows of 50 random features each; labels from a noisy hyperplane."""
    rng = np.random.RandomState(0)
    indices = rng.randint(n_features, size=n_samples * nnz_per_row)
    indptr = np.arange(0, n_samples * nnz_per_row + 1, nnz_per_row)
    data = rng.randn(n_samples * nnz_per_row)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_samples, n_features))
    X.sum_duplicates()
    w = rng.randn(n_features)
    y = (X @ w > 0).astype(int)
    flip = rng.rand(n_samples) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


CASES = {
    "dense 100,000 x 100, binary": dense_binary,
    "dense 50,000 x 100, 10 classes": dense_multiclass,
    "CSR 100,000 x 50,000, 0.1% dense": sparse_binary,
    "dense 100,000 x 100 float32": lambda: dense_binary(np.float32),
}


def fit_time(estimator, X, y):
    start = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - start


def run_case(make_data, epochs, repeat):
    X, y = make_data()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, random_state=0
    )
    # tol=None: the same epochs as Perceptron(tol=None), no stopping rule
    ours = MarginPerceptron(
        beta=0.0,
        eta0=1.0,
        intercept_scaling=1.0,
        max_iter=epochs,
        shuffle=False,
        tol=None,
        early_stopping=False,
        average=False,
    )
    theirs = Perceptron(
        penalty=None, eta0=1.0, max_iter=epochs, tol=None, shuffle=False
    )
    times = {"ours": [], "theirs": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(repeat):
            times["ours"].append(fit_time(ours, X_train, y_train))
            times["theirs"].append(fit_time(theirs, X_train, y_train))
    assert ours.n_iter_ == theirs.n_iter_ == epochs
    return {
        "ours": float(np.median(times["ours"])),
        "theirs": float(np.median(times["theirs"])),
        "ours_accuracy": ours.score(X_test, y_test),
        "theirs_accuracy": theirs.score(X_test, y_test),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--case", choices=list(CASES), action="append")
    args = parser.parse_args()

    print(
        f"{args.epochs} epochs, median of {args.repeat} fits; "
        "ratio = MarginPerceptron / sklearn Perceptron fit time"
    )
    header = (
        f"{'case':34} {'skperc s':>9} {'sklearn s':>9} {'ratio':>6} "
        f"{'target':>7} {'skperc acc':>10} {'sklearn acc':>11}"
    )
    print(header)
    print("-" * len(header))
    for name in args.case or CASES:
        r = run_case(CASES[name], args.epochs, args.repeat)
        ratio = r["ours"] / r["theirs"]
        verdict = "ok" if ratio <= TARGETS[name] else "MISSED"
        print(
            f"{name:34} {r['ours']:9.3f} {r['theirs']:9.3f} {ratio:6.2f} "
            f"{'<= ' + str(TARGETS[name]):>7} {r['ours_accuracy']:10.4f} "
            f"{r['theirs_accuracy']:11.4f}  {verdict}"
        )


if __name__ == "__main__":
    main()
