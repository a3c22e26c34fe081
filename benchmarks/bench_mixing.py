"""Parameter mixing against one core: epochs and wall time to the same
training error, and test accuracy.

The data: ``--n-samples`` x ``--n-features`` float32 rows in a memmap file
(written block by block, never held twice in memory), two noisy Gaussian
classes (the means differ on 20 features, 5% of the labels flipped), and a
test set of ``--n-test`` rows drawn the same way.

The reference is :class:`~skperc.MarginPerceptron` on one core, its default
stopping rule on and ``average=False`` (so that its model is its last
weights, as the mixed weights followed below are). Its training error is
the target. Then :class:`~skperc.distributed.ParameterMixingClassifier`
with the same perceptron runs on 1 and 2 shards of threads and on a
``LocalCluster`` of 2 worker processes (2 shards, each worker opening its
rows of the memmap file itself). For each run the mixed weights of every
epoch are kept with the wall time at which they were mixed, and their
training error is measured after the fit (outside the timed run): the
time to the target is the time of the first epoch at or below it.

Printed: epochs, seconds to the target, seconds of the whole fit, test
accuracy, and the ratios: one core's time to its error over each run's
(target: 2 threads at least 1.7x, to the same error, accuracy within 0.5
point) and the cluster's time over the 2 threads' (target: at most 1.5).
Medians over ``--repeat`` runs.

Run from the repository root::

    python benchmarks/bench_mixing.py [--n-samples 2000000] [--n-features 100]
        [--n-test 200000] [--repeat 3] [--dir /tmp]
"""

import argparse
import os
import tempfile
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skperc import MarginPerceptron
from skperc import distributed as mixing
from skperc.distributed import ParameterMixingClassifier


def write_data(path, n_samples, n_features, seed, block=100_000):
    """X in a float32 memmap file at ``path`` and y, block by block."""
    rng = np.random.default_rng(seed)
    shift = np.zeros(n_features, dtype=np.float32)
    shift[: min(20, n_features)] = 0.25
    X = np.lib.format.open_memmap(
        path, mode="w+", dtype=np.float32, shape=(n_samples, n_features)
    )
    y = rng.integers(2, size=n_samples)
    for start in range(0, n_samples, block):
        rows = slice(start, min(start + block, n_samples))
        X[rows] = rng.standard_normal((rows.stop - start, n_features), np.float32)
        X[rows] += np.where(y[rows, None] == 1, shift, -shift)
    flip = rng.random(n_samples) < 0.05
    y[flip] = 1 - y[flip]
    X.flush()
    del X
    return np.load(path, mmap_mode="r"), y


def error_rate(X, y, coef, intercept, block=500_000):
    wrong = 0
    for start in range(0, len(y), block):
        rows = slice(start, start + block)
        scores = X[rows] @ coef.astype(np.float32) + intercept
        wrong += np.count_nonzero((scores >= 0).astype(int) != y[rows])
    return wrong / len(y)


def load_rows(path, start, stop):
    """Rows of the memmap file, opened by the worker that reads them."""
    return np.load(path, mmap_mode="r")[start:stop]


class Trajectory:
    """The mixed weights of every epoch and when they were mixed, kept by
    wrapping the mixing step of skperc.distributed."""

    def __init__(self):
        self.mix = mixing._mix
        self.epochs = []

    def __enter__(self):
        self.start = time.perf_counter()

        def kept(*args):
            coef, lift_coef = self.mix(*args)
            self.epochs.append((time.perf_counter() - self.start, coef, lift_coef))
            return coef, lift_coef

        mixing._mix = kept
        return self

    def __exit__(self, *exc):
        mixing._mix = self.mix

    def time_to(self, X, y, lift, target):
        """(epochs, seconds) to the first epoch with a training error <= target."""
        for epoch, (seconds, coef, lift_coef) in enumerate(self.epochs, 1):
            if error_rate(X, y, coef[:, 0], lift_coef[0] * lift) <= target:
                return epoch, seconds
        return None, float("nan")


def perceptron():
    return MarginPerceptron(average=False, random_state=0)


def run_mixed(fit, X, y, lift, target, X_test, y_test):
    with Trajectory() as trajectory:
        start = time.perf_counter()
        clf = fit()
        total = time.perf_counter() - start
    epochs, seconds = trajectory.time_to(X, y, lift, target)
    return dict(
        epochs=clf.n_iter_,
        epochs_to=epochs,
        to_target=seconds,
        total=total,
        accuracy=clf.score(X_test, y_test),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=2_000_000)
    parser.add_argument("--n-features", type=int, default=100)
    parser.add_argument("--n-test", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)

    import dask.array as da
    from dask import delayed
    from distributed import Client, LocalCluster

    path = os.path.join(args.dir, f"bench_mixing_{os.getpid()}.npy")
    try:
        X, y = write_data(path, args.n_samples, args.n_features, seed=0)
        test_path = path.replace(".npy", "_test.npy")
        X_test, y_test = write_data(test_path, args.n_test, args.n_features, seed=1)
        # the lifted coordinate of intercept_scaling="auto": the radius
        lift = max(
            float(np.sqrt(np.max(np.einsum("ij,ij->i", X[rows], X[rows]))))
            for rows in (slice(s, s + 500_000) for s in range(0, len(y), 500_000))
        )
        print(
            f"X: {X.shape[0]} x {X.shape[1]} float32 memmap "
            f"({X.nbytes / 2**30:.2f} GiB), test {len(y_test)} rows"
        )
        half = args.n_samples // 2
        rows = [(0, half), (half, args.n_samples)]
        results = {name: [] for name in ("1 core", "1 shard", "2 threads", "cluster")}
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            ) as cluster,
            Client(cluster),
        ):
            X_dask = da.concatenate(
                [
                    da.from_delayed(
                        delayed(load_rows)(path, a, b),
                        shape=(b - a, args.n_features),
                        dtype=np.float32,
                    )
                    for a, b in rows
                ]
            )
            y_dask = da.from_array(y, chunks=(tuple(b - a for a, b in rows),))
            for _ in range(args.repeat):
                start = time.perf_counter()
                single = perceptron().fit(X, y)
                seconds = time.perf_counter() - start
                target = 1 - single.score(X, y)
                results["1 core"].append(
                    dict(
                        epochs=single.n_iter_,
                        epochs_to=single.n_iter_,
                        to_target=seconds,
                        total=seconds,
                        accuracy=single.score(X_test, y_test),
                    )
                )
                for name, n_shards, data in [
                    ("1 shard", 1, (X, y)),
                    ("2 threads", 2, (X, y)),
                    ("cluster", None, (X_dask, y_dask)),
                ]:
                    results[name].append(
                        run_mixed(
                            lambda n_shards=n_shards, data=data: (
                                ParameterMixingClassifier(
                                    perceptron(), n_shards=n_shards
                                ).fit(*data)
                            ),
                            X,
                            y,
                            lift,
                            target,
                            X_test,
                            y_test,
                        )
                    )
                print(f"target training error {target:.4f}", flush=True)
    finally:
        for file in (path, path.replace(".npy", "_test.npy")):
            if os.path.exists(file):
                os.remove(file)

    median = {
        name: {
            key: float(np.median([np.nan if r[key] is None else r[key] for r in runs]))
            for key in runs[0]
        }
        for name, runs in results.items()
    }
    print(
        f"{'run':<10} {'epochs':>7} {'epochs to':>10} {'s to error':>11} "
        f"{'s total':>8} {'test acc':>9}"
    )
    for name, m in median.items():
        print(
            f"{name:<10} {m['epochs']:>7.0f} {m['epochs_to']:>10.0f} "
            f"{m['to_target']:>11.2f} {m['total']:>8.2f} {m['accuracy']:>9.4f}"
        )
    one, two, cluster = median["1 core"], median["2 threads"], median["cluster"]
    print(
        f"speed-up of 2 threads over 1 core to the same error: "
        f"{one['to_target'] / two['to_target']:.2f}x (target >= 1.7)"
    )
    print(
        f"accuracy of 2 threads minus 1 core: "
        f"{100 * (two['accuracy'] - one['accuracy']):+.2f} points (target >= -0.5)"
    )
    print(
        f"cluster time over 2 threads' to the error: "
        f"{cluster['to_target'] / two['to_target']:.2f} (target <= 1.5)"
    )


if __name__ == "__main__":
    main()
