"""Peak memory of training, measured: MarginPerceptron and KernelPerceptron.

MarginPerceptron trains on float32 X without copying it: the memory a fit
adds beyond X is printed as a fraction of ``X.nbytes``, against the target
of 25%, beside scikit-learn's Perceptron on the same data (same epochs,
``shuffle=False``) measured in the same run. KernelPerceptron never forms
the Gram matrix: its peak is printed at several sample sizes, per sample,
beside the size an ``n x n`` float64 Gram matrix would take.

Each fit runs in a fresh process (so that the peaks of two fits do not mix),
which first builds X in float32 in blocks of rows, without a float64
intermediate the size of X, then measures the fit in two ways:

- tracemalloc: the peak of the memory allocated during the fit, numpy's
  arrays included (the kernel perceptron's column cache too);
- resource: ``ru_maxrss`` after the fit minus ``ru_maxrss`` once X is built,
  the growth of the process's resident peak.

Figures are medians over ``--repeat`` processes; the fit times are taken
with tracemalloc running.

Run from the repository root::

    python benchmarks/bench_memory.py [--repeat 3] [--n-samples 1000000]
        [--n-features 100] [--kernel-sizes 25000 50000 100000]
"""

import argparse
import multiprocessing
import resource
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron

from skperc import KernelPerceptron, MarginPerceptron

# The largest acceptable memory a MarginPerceptron fit adds, over X.nbytes.
TARGET_EXTRA = 0.25


def linear_data(n_samples, n_features, block=20_000, seed=0):
    """Two noisy Gaussian classes in float32, built block by block.

    The classes differ in their means on the first 20 features (fewer if
    there are fewer); 10% of the labels are flipped, so that no epoch is
    free of updates and every fit runs all its epochs.
    """
    rng = np.random.default_rng(seed)
    n_informative = min(20, n_features)
    shift = np.zeros(n_features, dtype=np.float32)
    shift[:n_informative] = rng.choice([-0.5, 0.5], n_informative)
    X = np.empty((n_samples, n_features), dtype=np.float32)
    y = rng.integers(2, size=n_samples)
    for start in range(0, n_samples, block):
        rows = slice(start, start + block)
        X[rows] = rng.standard_normal((len(X[rows]), n_features), dtype=np.float32)
        X[rows] += np.where(y[rows, None] == 1, shift, -shift)
    flip = rng.random(n_samples) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def ring_data(n_samples, n_features=5, seed=0):
    """A disc inside a ring in the first two features, a gap between them,
    and noise features: separable by the RBF kernel with a margin."""
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n_samples)
    radius = np.where(
        y == 1, rng.uniform(0, 1, n_samples), rng.uniform(1.1, 3, n_samples)
    )
    angle = rng.uniform(0, 2 * np.pi, n_samples)
    X = rng.normal(scale=0.3, size=(n_samples, n_features))
    X[:, 0] = radius * np.cos(angle)
    X[:, 1] = radius * np.sin(angle)
    return X, y


def max_rss_bytes():
    # ru_maxrss is in kilobytes on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure_fit(make_estimator, make_data, data_args, predict=False):
    """In a fresh process: build the data, then fit, and measure the fit
    (and, with ``predict``, the decision function on the training X)."""
    X, y = make_data(*data_args)
    estimator = make_estimator()
    baseline = max_rss_bytes()
    tracemalloc.start()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    grown = max_rss_bytes() - baseline
    scored = {}
    if predict:
        tracemalloc.start()
        start = time.perf_counter()
        estimator.decision_function(X)
        scored["predict_seconds"] = time.perf_counter() - start
        scored["predict_traced"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {
        **scored,
        # a CSR matrix: the bytes of its three arrays
        "x_bytes": X.nbytes
        if hasattr(X, "nbytes")
        else X.data.nbytes + X.indices.nbytes + X.indptr.nbytes,
        "traced": peak,
        "rss": grown,
        "seconds": seconds,
        "n_support": len(getattr(estimator, "support_", ())),
    }


def median_fit(make_estimator, make_data, data_args, repeat, predict=False):
    """The median of each figure over ``repeat`` fresh processes."""
    context = multiprocessing.get_context("spawn")
    runs = []
    for _ in range(repeat):
        with context.Pool(1) as pool:
            runs.append(
                pool.apply(measure_fit, (make_estimator, make_data, data_args, predict))
            )
    return {key: float(np.median([r[key] for r in runs])) for key in runs[0]}


def margin_perceptron(epochs):
    return MarginPerceptron(max_iter=epochs, shuffle=False, early_stopping=False)


def sklearn_perceptron(epochs):
    return Perceptron(max_iter=epochs, tol=None, shuffle=False)


def kernel_perceptron(cache_size):
    return KernelPerceptron(
        kernel="rbf", gamma=1.0, max_iter=20, cache_size=cache_size, random_state=0
    )


class Make:
    """A picklable estimator factory for the spawned processes."""

    def __init__(self, factory, *args):
        self.factory, self.args = factory, args

    def __call__(self):
        return self.factory(*self.args)


def report_linear(args):
    data_args = (args.n_samples, args.n_features)
    mib = args.n_samples * args.n_features * 4 / 2**20
    print(
        f"MarginPerceptron vs sklearn Perceptron, {args.n_samples:,} x "
        f"{args.n_features} float32 (X = {mib:.0f} MiB), {args.epochs} epochs, "
        f"shuffle=False; median of {args.repeat} processes."
    )
    print(
        "extra = memory the fit adds beyond X, as a fraction of X.nbytes; "
        "predict = the decision function on X: the memory it traces beyond "
        "X, in MiB (its float64 scores take 8 bytes a row), and its time"
    )
    header = (
        f"{'estimator':20} {'traced extra':>12} {'maxrss extra':>12} "
        f"{'fit s':>7} {'predict MiB':>11} {'predict s':>9} {'target':>7}"
    )
    print(header)
    print("-" * len(header))
    results = {}
    for name, factory in [
        ("skperc MarginPerc.", margin_perceptron),
        ("sklearn Perceptron", sklearn_perceptron),
    ]:
        r = median_fit(
            Make(factory, args.epochs), linear_data, data_args, args.repeat, True
        )
        results[name] = r
        traced, rss = r["traced"] / r["x_bytes"], r["rss"] / r["x_bytes"]
        target = ""
        if factory is margin_perceptron:
            ok = max(traced, rss) <= TARGET_EXTRA
            target = f"<= {TARGET_EXTRA}  {'ok' if ok else 'MISSED'}"
        print(
            f"{name:20} {traced:12.3f} {rss:12.3f} {r['seconds']:7.2f} "
            f"{r['predict_traced'] / 2**20:11.1f} {r['predict_seconds']:9.3f} {target}"
        )
    ours, theirs = results.values()
    print(
        f"ratio skperc / sklearn: traced {ours['traced'] / theirs['traced']:.2f}, "
        f"maxrss {ours['rss'] / max(theirs['rss'], 1):.2f}"
    )


def cache_bytes(cache_size, n_points):
    """The column cache a fit allocates: as many columns of n_points
    float64 as fit in cache_size MB, at least one and at most n_points."""
    n_slots = int(cache_size * 2**20 // (8 * n_points))
    return min(max(n_slots, 1), n_points) * n_points * 8


def report_kernel(args):
    print()
    print(
        f"KernelPerceptron, rbf, until an epoch without updates (at most 20), "
        f"{args.kernel_features} features, "
        f"cache_size={args.cache_size} MB; median of {args.repeat} processes."
    )
    print(
        "traced = tracemalloc peak; cache = the column cache within it, "
        "bounded by cache_size; per sample = (traced - cache) / n"
    )
    header = (
        f"{'n':>8} {'traced MiB':>10} {'cache MiB':>9} {'per sample B':>12} "
        f"{'maxrss MiB':>10} {'SVs':>5} {'fit s':>7} {'n x n Gram MiB':>14}"
    )
    print(header)
    print("-" * len(header))
    for n in args.kernel_sizes:
        r = median_fit(
            Make(kernel_perceptron, args.cache_size),
            ring_data,
            (n, args.kernel_features),
            args.repeat,
        )
        cache = cache_bytes(args.cache_size, n)
        print(
            f"{n:8,} {r['traced'] / 2**20:10.1f} {cache / 2**20:9.1f} "
            f"{(r['traced'] - cache) / n:12.0f} {r['rss'] / 2**20:10.1f} "
            f"{r['n_support']:5.0f} {r['seconds']:7.2f} {8 * n * n / 2**20:14,.0f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-features", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument(
        "--kernel-sizes", type=int, nargs="+", default=[25_000, 50_000, 100_000]
    )
    parser.add_argument("--kernel-features", type=int, default=5)
    parser.add_argument("--cache-size", type=float, default=200)
    parser.add_argument("--only", choices=["linear", "kernel"])
    args = parser.parse_args()
    if args.only != "kernel":
        report_linear(args)
    if args.only != "linear":
        report_kernel(args)


if __name__ == "__main__":
    main()
