"""Parameter mixing against one core: epochs and wall time to the same
training error, and test accuracy.

The data: ``--n-samples`` x ``--n-features`` float32 rows in a memmap file
(written block by block, never held twice in memory), two noisy Gaussian
classes (the means differ on 20 features, 5% of the labels flipped), and a
test set of ``--n-test`` rows drawn the same way.

Every run fits :class:`~skperc.MarginPerceptron` with its defaults but
``early_stopping=False`` (the stopping rule on the training data,
``average="auto"``; a held-out part would count in the training error):
on this data the rule ends every run, which then answers with its averaged
weights (for the mixed run, the average of the weights of every step of
every shard). The last weights are not a fair measure of either run: on
200,000 rows the test accuracy of one core's last weights spread over 6.7
points across three seeds, that of its averaged weights over 0.04.

The reference is the perceptron on one core; its training error plus
``--tolerance`` is the target. The averaged model settles within an epoch
or two, after which its training error wanders from epoch to epoch by
about 0.06 point on 200,000 rows and 0.01 point on 2,000,000, a few
examples either way: the default tolerance, 0.05 point (a tenth of the
accuracy target), asks for the same error up to that wandering.
Then :class:`~skperc.distributed.ParameterMixingClassifier` with the same
perceptron runs on 1 and 2 shards of threads and on a ``LocalCluster`` of
2 worker processes (2 shards, each worker opening its rows of the memmap
file itself). For each run the state of every epoch is kept, and the
training error of the model that the fit would answer with, had the rule
ended it there (the averaged weights), is measured after the fit: the
epochs to the target are those of the first epoch at or below it. One
shard is one core's run to the last bit, so its epochs to the target are
one core's. The time to the target of each engine is that of a fit of its
epochs to the target (``max_iter``), timed from the call of ``fit`` to its
return, so that every engine's includes the same work: its validation of
the data, the cluster's loading of its shards on the workers, and the end
of the fit (the margin of the model on the training data). A fit to the
target takes well under a second, whose time the load of a shared machine
moves by a tenth or more: each is timed ``--timings`` times, the engines
taking turns (each round starts with the next), and its median kept.

Printed: epochs, epochs and seconds to the target, seconds of the whole
fit, seconds and processor seconds (of this process) per epoch, test
accuracy, and the ratios: one core's time to the target over the 2
threads' (target: at least 1.7x, accuracy within 0.5 point), one core's
time per epoch over theirs, and the cluster's time to the target over the
2 threads' (target: at most 1.5). Medians over ``--repeat`` runs, each
with its own ``random_state``; the ratios of the times to the target are
medians of each seed's own, whose timed fits are neighbours in time, since
the load of a shared machine drifts over a benchmark. The engines read the
data from the same page cache, and the cluster is started, its workers with
skperc imported, before any timing. Wall times need the cores idle: the load
average is printed, and the processor time per epoch of the 2 threads over
one core's (the work that mixing adds) gives the per-epoch speed-up that
two idle cores would show. Likewise for the time to the target: one
core's processor time over an estimate of the 2 threads' time on two idle
cores, the work of the calling thread plus half of that of the pool's
threads (the shards counted as balanced, which flatters the threads by
the difference between the shards' epochs, a few percent).

Run from the repository root::

    python benchmarks/bench_mixing.py [--n-samples 2000000] [--n-features 100]
        [--n-test 200000] [--repeat 3] [--tolerance 0.0005] [--timings 5]
        [--dir /tmp]
"""

import argparse
import importlib
import os
import tempfile
import time
import warnings
from functools import partial

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
    """The shards' reports of every epoch, kept by
    wrapping the mixing step of skperc.distributed; the model of each
    epoch is then built by the code that ends a fit."""

    def __init__(self):
        self.mix = mixing._mix
        self.epochs = []

    def __enter__(self):
        def kept(reports, coef, lift_coef):
            mixed = self.mix(reports, coef, lift_coef)
            self.epochs.append((reports, mixed))
            return mixed

        mixing._mix = kept
        return self

    def __exit__(self, *exc):
        mixing._mix = self.mix

    def epochs_to(self, estimator, X, y, target):
        """The epochs to the first epoch whose averaged model has a training
        error <= target, or None."""
        # the radius of the whole sample, as the fit pools it after the
        # first epoch
        radius = mixing._pooled_radius(self.epochs[0][0])
        for epoch, (reports, (coef, lift_coef)) in enumerate(self.epochs, 1):
            mixed = (coef, lift_coef, radius)
            estimator._run = mixing._mixed_run(
                [mixing._finish_shard(report, mixed) for report in reports]
            )
            coef_, intercept_ = estimator._model(np.ones(len(lift_coef), dtype=bool))
            if error_rate(X, y, coef_[0], intercept_[0]) <= target:
                return epoch
        return None


def perceptron(seed, max_iter=None):
    """The perceptron of every run: the stopping rule on the training data
    (not early stopping, whose held-out part the training error would
    count)."""
    options = {} if max_iter is None else {"max_iter": max_iter}
    return MarginPerceptron(random_state=seed, early_stopping=False, **options)


def one_core_fit(X, y, seed, max_iter=None):
    return perceptron(seed, max_iter).fit(X, y)


def mixed_fit(n_shards, data, seed, max_iter=None):
    return ParameterMixingClassifier(perceptron(seed, max_iter), n_shards=n_shards).fit(
        *data
    )


def run_mixed(fit, X, y, target, X_test, y_test):
    with Trajectory() as trajectory:
        start, cpu = time.perf_counter(), time.process_time()
        clf = fit()
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
    accuracy = clf.score(X_test, y_test)
    return dict(
        epochs=clf.n_iter_,
        epochs_to=trajectory.epochs_to(clf.estimator_, X, y, target),
        total=total,
        per_epoch=total / clf.n_iter_,
        cpu_per_epoch=cpu / clf.n_iter_,
        accuracy=accuracy,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=2_000_000)
    parser.add_argument("--n-features", type=int, default=100)
    parser.add_argument("--n-test", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=0.0005)
    parser.add_argument("--timings", type=int, default=5)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    # other processes on the machine take the cores the threads would use
    load = os.getloadavg()[0]

    import dask.array as da
    from dask import delayed
    from distributed import Client, LocalCluster

    path = os.path.join(args.dir, f"bench_mixing_{os.getpid()}.npy")
    try:
        X, y = write_data(path, args.n_samples, args.n_features, seed=0)
        test_path = path.replace(".npy", "_test.npy")
        X_test, y_test = write_data(test_path, args.n_test, args.n_features, seed=1)
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
            Client(cluster) as client,
        ):
            # the workers' imports are part of starting the cluster, not of
            # its first fit
            client.run(importlib.import_module, "skperc.distributed")
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
            # the labels too are read by the workers, not sent in the graph
            y_path = path.replace(".npy", "_y.npy")
            np.save(y_path, y)
            y_dask = da.concatenate(
                [
                    da.from_delayed(
                        delayed(load_rows)(y_path, a, b), shape=(b - a,), dtype=y.dtype
                    )
                    for a, b in rows
                ]
            )
            for seed in range(args.repeat):
                start, cpu = time.perf_counter(), time.process_time()
                single = one_core_fit(X, y, seed)
                seconds = time.perf_counter() - start
                cpu = time.process_time() - cpu
                target = 1 - single.score(X, y) + args.tolerance
                one_core = dict(
                    epochs=single.n_iter_,
                    total=seconds,
                    per_epoch=seconds / single.n_iter_,
                    cpu_per_epoch=cpu / single.n_iter_,
                    accuracy=single.score(X_test, y_test),
                )
                fits = {
                    name: partial(mixed_fit, n_shards, data, seed)
                    for name, n_shards, data in [
                        ("1 shard", 1, (X, y)),
                        ("2 threads", 2, (X, y)),
                        ("cluster", None, (X_dask, y_dask)),
                    ]
                }
                # the load of a shared machine drifts: the engines take turns
                # to run first
                engines = ["2 threads", "cluster"][:: 1 if seed % 2 == 0 else -1]
                for name in ["1 shard", *engines]:
                    results[name].append(
                        run_mixed(fits[name], X, y, target, X_test, y_test)
                    )
                # one shard is one core's run: its epochs to the target are
                # one core's
                one_core["epochs_to"] = results["1 shard"][-1]["epochs_to"]
                results["1 core"].append(one_core)
                fits["1 core"] = partial(one_core_fit, X, y, seed)
                timed = [
                    name
                    for name in ["1 core", "1 shard", *engines]
                    if results[name][-1]["epochs_to"] is not None
                ]
                walls = {name: [] for name in timed}
                cpus = {name: [] for name in timed}
                for turn in range(args.timings):
                    # each round starts with the next engine
                    first = turn % len(timed)
                    for name in timed[first:] + timed[:first]:
                        start = time.perf_counter()
                        cpu, main_cpu = time.process_time(), time.thread_time()
                        fits[name](max_iter=results[name][-1]["epochs_to"])
                        walls[name].append(time.perf_counter() - start)
                        main_cpu = time.thread_time() - main_cpu
                        # this thread's work, then the threads' work shared
                        # by two cores
                        cpus[name].append(
                            main_cpu + (time.process_time() - cpu - main_cpu) / 2
                        )
                for name in ["1 core", "1 shard", *engines]:
                    run = results[name][-1]
                    run["to_target"] = run["cpu_to_target"] = float("nan")
                    if name in timed:
                        run["to_target"] = float(np.median(walls[name]))
                        run["cpu_to_target"] = float(np.median(cpus[name]))
                print(
                    f"seed {seed}: target training error {target:.5f}; "
                    + "; ".join(
                        f"{name} {runs[-1]['epochs_to']}/{runs[-1]['epochs']} epochs "
                        f"{runs[-1]['to_target']:.2f}/{runs[-1]['total']:.2f} s "
                        f"acc {runs[-1]['accuracy']:.4f}"
                        for name, runs in results.items()
                    ),
                    flush=True,
                )
    finally:
        for file in (
            path,
            *(path.replace(".npy", end) for end in ("_test.npy", "_y.npy")),
        ):
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
        f"{'s total':>8} {'s/epoch':>8} {'cpu s/ep':>9} {'test acc':>9}"
    )
    for name, m in median.items():
        # the cluster's work is done in its worker processes
        cpu = "" if name == "cluster" else f"{m['cpu_per_epoch']:.3f}"
        print(
            f"{name:<10} {m['epochs']:>7.0f} {m['epochs_to']:>10.0f} "
            f"{m['to_target']:>11.2f} {m['total']:>8.2f} {m['per_epoch']:>8.3f} "
            f"{cpu:>9} {m['accuracy']:>9.4f}"
        )
    one, two, cluster = median["1 core"], median["2 threads"], median["cluster"]

    def ratios(a, b):
        """Each seed's time to the target of ``a`` over ``b``'s."""
        return [
            ra["to_target"] / rb["to_target"]
            for ra, rb in zip(results[a], results[b], strict=True)
        ]

    def over_seeds(values, target):
        """The median of each seed's ratio, the target, and each ratio."""
        each = ", ".join(f"{r:.2f}" for r in values)
        return f"{np.median(values):.2f}x ({target}; each seed {each})"

    print(
        "speed-up of 2 threads over 1 core to the same error, median over the "
        "seeds: " + over_seeds(ratios("1 core", "2 threads"), "target >= 1.7")
    )
    cpu_ratios = [
        a["cpu_to_target"] / b["cpu_to_target"]
        for a, b in zip(results["1 core"], results["2 threads"], strict=True)
    ]
    print(
        "processor time to the error of 1 core over that of 2 threads on two "
        "idle cores (the calling thread's, plus half of the pool's, which "
        "counts the shards as balanced), median over the seeds: "
        + over_seeds(cpu_ratios, "an estimate, less sensitive to the load")
    )
    print(
        f"speed-up of 2 threads over 1 core per epoch: "
        f"{one['per_epoch'] / two['per_epoch']:.2f}x"
    )
    work = two["cpu_per_epoch"] / one["cpu_per_epoch"]
    print(
        f"processor time per epoch of 2 threads over 1 core's: {work:.2f} (on two "
        f"idle cores the per-epoch speed-up would be {2 / work:.2f}x)"
    )
    print(
        f"load average (1 min) at the start and the end: "
        f"{load:.2f}, {os.getloadavg()[0]:.2f} on {os.cpu_count()} processors"
    )
    print(
        f"accuracy of 2 threads minus 1 core: "
        f"{100 * (two['accuracy'] - one['accuracy']):+.2f} points (target >= -0.5)"
    )
    print(
        "cluster time over 2 threads' to the error, median over the seeds: "
        + over_seeds(ratios("cluster", "2 threads"), "target <= 1.5")
    )


if __name__ == "__main__":
    main()
