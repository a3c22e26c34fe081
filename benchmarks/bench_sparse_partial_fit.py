"""High-dimensional sparse input: MarginPerceptron against scikit-learn's
Perceptron on HashingVectorizer-sized CSR matrices.

Two measures, each in fresh processes (so that the peaks of two runs do
not mix), with the two estimators measured in the same run:

- ``partial_fit``: ``--calls`` calls of ``--batch`` rows, ``--pf-features``
  features and ``--classes`` classes; the time of the calls, and the memory
  they add once the first call has set up the model (tracemalloc peak
  during the later calls, beyond what the model holds);
- ``fit``: a binary fit on ``--fit-rows`` rows of ``--fit-features``
  features; the memory the fit adds (tracemalloc peak, and the growth of
  the process's resident peak ``ru_maxrss``) and its time, measured as
  in ``benchmarks/bench_memory.py``; also with each estimator's other
  choice of averaging, since the averaging sums are a second array of
  the weights' size in both.

The rows hold ``--nnz`` stored values at random columns; the labels come
from a random hyperplane, so that a fit ends in few epochs. Figures are
medians over ``--repeat`` processes, with the ratio skperc / scikit-learn.

Run from the repository root::

    python benchmarks/bench_sparse_partial_fit.py [--repeat 3]
"""

import argparse
import multiprocessing
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from bench_memory import Make, median_fit
from sklearn.linear_model import Perceptron, SGDClassifier

from skperc import MarginPerceptron


def sparse_rows(n_rows, n_features, nnz, seed):
    """CSR rows of ``nnz`` standard normal values at random columns."""
    rng = np.random.default_rng(seed)
    indices = np.sort(
        rng.integers(n_features, size=(n_rows, nnz), dtype=np.int64), axis=1
    )
    X = sp.csr_matrix(
        (
            rng.standard_normal(n_rows * nnz),
            indices.ravel(),
            np.arange(0, n_rows * nnz + 1, nnz),
        ),
        shape=(n_rows, n_features),
    )
    X.sum_duplicates()
    return X


def labels(X, n_classes, seed):
    """The class of the largest of n_classes random hyperplanes, drawn on
    the columns where X has values only: no array of n_features is made,
    which would raise the resident peak that the fit is measured against."""
    rng = np.random.default_rng(seed + 1)
    columns, position = np.unique(X.indices, return_inverse=True)
    starts = X.indptr[:-1]
    scores = np.zeros((X.shape[0], n_classes))
    for c in range(n_classes):
        products = X.data * rng.standard_normal(len(columns))[position]
        # rows hold values, so reduceat sums each row's products
        scores[:, c] = np.add.reduceat(products, starts)
    return scores.argmax(axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)


# The estimators by name: the defaults, and each with the other's choice
# of averaging (MarginPerceptron's default keeps the averaging sums, a
# second array of the weights' size, for the runs its rule stops).
ESTIMATORS = {
    "skperc": lambda: MarginPerceptron(random_state=0),
    "sklearn": lambda: Perceptron(random_state=0),
    "skperc average=False": lambda: MarginPerceptron(average=False, random_state=0),
    # Perceptron is SGDClassifier with these parameters, which average
    "sklearn average=True": lambda: SGDClassifier(
        loss="perceptron",
        learning_rate="constant",
        eta0=1.0,
        penalty=None,
        average=True,
        random_state=0,
    ),
}


def make(name):
    return ESTIMATORS[name]()


def measure_partial_fit(name, calls, batch, n_features, n_classes, nnz):
    batches = [sparse_rows(batch, n_features, nnz, seed) for seed in range(calls + 1)]
    ys = [labels(X, n_classes, seed) for seed, X in enumerate(batches)]
    classes = np.arange(n_classes)
    estimator = make(name)
    # the first call allocates the model; the others are what is measured
    estimator.partial_fit(batches[0], ys[0], classes=classes)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    for X, y in zip(batches[1:], ys[1:], strict=True):
        estimator.partial_fit(X, y, classes=classes)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return {"seconds": seconds, "traced": peak}


def fit_data(n_rows, n_features, nnz):
    X = sparse_rows(n_rows, n_features, nnz, 0)
    return X, labels(X, 2, 0)


def median_of(function, args, repeat):
    """The median of each figure over ``repeat`` fresh processes."""
    context = multiprocessing.get_context("spawn")
    runs = []
    for _ in range(repeat):
        with context.Pool(1) as pool:
            runs.append(pool.apply(function, args))
    return {key: float(np.median([r[key] for r in runs])) for key in runs[0]}


def report(title, measure, figures, names=("skperc", "sklearn")):
    """Print the figures of ``measure(name)`` for the estimators ``names``,
    and each one's ratio to the default scikit-learn Perceptron's."""
    print(title)
    results = {}
    for name in names:
        results[name] = r = measure(name)
        values = "".join(
            f"  {label} {r[key] * scale:9.3f}" for key, label, scale in figures
        )
        print(f"  {name:21}{values}")
    theirs = results["sklearn"]
    for name in names:
        if name == "sklearn":
            continue
        print(
            f"  ratio {name} / sklearn:"
            + "".join(
                f"  {key} {results[name][key] / max(theirs[key], 1e-12):.2f}"
                for key, _, _ in figures
            )
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--pf-features", type=int, default=2**22)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--fit-rows", type=int, default=2_000)
    parser.add_argument("--fit-features", type=int, default=2**26)
    parser.add_argument("--nnz", type=int, default=50)
    parser.add_argument("--only", choices=["partial_fit", "fit"])
    args = parser.parse_args()
    mib = 1 / 2**20
    if args.only != "fit":
        report(
            f"partial_fit: {args.calls} calls of {args.batch} rows, "
            f"{args.pf_features:,} features, {args.classes} classes, "
            f"{args.nnz} values a row; median of {args.repeat} processes",
            lambda name: median_of(
                measure_partial_fit,
                (
                    name,
                    args.calls,
                    args.batch,
                    args.pf_features,
                    args.classes,
                    args.nnz,
                ),
                args.repeat,
            ),
            [("seconds", "s", 1.0), ("traced", "traced MiB", mib)],
        )
    if args.only != "partial_fit":
        report(
            f"fit: {args.fit_rows:,} rows, {args.fit_features:,} features, 2 "
            f"classes, {args.nnz} values a row; median of {args.repeat} "
            "processes",
            lambda name: median_fit(
                Make(make, name),
                fit_data,
                (args.fit_rows, args.fit_features, args.nnz),
                args.repeat,
            ),
            [
                ("seconds", "s", 1.0),
                ("traced", "traced MiB", mib),
                ("rss", "maxrss MiB", mib),
            ],
            names=tuple(ESTIMATORS),
        )


if __name__ == "__main__":
    main()
