"""HalvingClassifier on 1,000,000 decision stumps against a plain numpy vote.

The class: stumps over 20 features with 25,000 thresholds per feature and
sign (2 x 20 x 25,000 = 1,000,000 concepts), thresholds taken from 10,000
unlabeled samples. The stream: 10,000 samples labeled by one stump of the
class (realizable). The baseline is halving written per example in numpy:
evaluate every concept on the sample, vote over the live ones, drop the
refuted ones; it runs on the first ``--baseline`` samples only, and its
mistakes on them are checked equal to the estimator's, both on the class
of those samples.

Times are medians over repeated runs, the baseline and the estimator taking
turns; the speed-up compares the time per example, measured in the same
run. Accuracy is on 10,000 fresh samples labeled by the same stump.

Run from the repository root::

    python benchmarks/bench_halving.py [--repeat 5] [--baseline 200]
"""

import argparse
import time

import numpy as np

from skperc import HalvingClassifier
from skperc.concepts import DecisionStumps

N_FEATURES = 20
N_THRESHOLDS = 25_000
N_STREAM = 10_000

# The targets this benchmark checks.
FIT_SECONDS = 1.0
PREDICT_SECONDS = 1.0
SPEEDUP = 60.0


def numpy_halving(stumps, X, y):
    """Online mistakes of halving with every concept evaluated per example."""
    feature, sign, threshold = stumps.stump_parameters()
    live = np.ones(stumps.n_concepts, dtype=bool)
    mistakes = 0
    for x, label in zip(X, y, strict=True):
        predictions = np.where(sign * (x[feature] - threshold) >= 0, 1, -1)
        positive = np.count_nonzero(predictions[live] > 0)
        guess = 1 if 2 * positive >= np.count_nonzero(live) else -1
        mistakes += guess != label
        live &= predictions == label
    return mistakes


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=int, default=200)
    args = parser.parse_args()

    rng = np.random.RandomState(0)
    X = rng.randn(N_STREAM, N_FEATURES)
    X_test = rng.randn(N_STREAM, N_FEATURES)
    stumps = DecisionStumps(n_thresholds=N_THRESHOLDS).fit(X)
    # the stump of sign +1 on feature 3 at a third of its thresholds
    target = 2 * stumps.threshold_ptr_[3] + N_THRESHOLDS // 3
    y = stumps.predict(X, [target])[:, 0]
    y_test = stumps.predict(X_test, [target])[:, 0]
    print(
        f"{stumps.n_concepts:,} stumps over {N_FEATURES} features; "
        f"{N_STREAM:,} samples, {np.mean(y > 0):.0%} positive"
    )

    times = {"numpy": [], "fit": [], "predict": []}
    for _ in range(args.repeat):
        seconds, reference_mistakes = timed(
            numpy_halving, stumps, X[: args.baseline], y[: args.baseline]
        )
        times["numpy"].append(seconds)
        seconds, clf = timed(HalvingClassifier(concepts=stumps).fit, X, y)
        times["fit"].append(seconds)
        seconds, y_pred = timed(clf.predict, X_test)
        times["predict"].append(seconds)

    # The estimator fits its class on the samples it is given: on the
    # prefix alone, the class of the prefix, which the baseline runs on too.
    prefix = HalvingClassifier(concepts=stumps).fit(
        X[: args.baseline], y[: args.baseline]
    )
    prefix_mistakes = numpy_halving(
        prefix.concepts_, X[: args.baseline], y[: args.baseline]
    )
    assert prefix.n_mistakes_[0] == prefix_mistakes, "the baseline disagrees"

    numpy_time, fit_time, predict_time = (np.median(times[k]) for k in times)
    per_example_numpy = numpy_time / args.baseline
    per_example_fit = fit_time / N_STREAM
    speedup = per_example_numpy / per_example_fit
    print(f"medians of {args.repeat} interleaved runs")
    print(
        f"numpy vote over all concepts: {numpy_time:.3f} s for {args.baseline} "
        f"samples, {per_example_numpy * 1e3:.2f} ms per sample "
        f"({reference_mistakes} mistakes)"
    )
    print(
        f"HalvingClassifier.fit:        {fit_time:.3f} s for {N_STREAM:,} samples, "
        f"{per_example_fit * 1e6:.2f} us per sample "
        f"(target <= {FIT_SECONDS} s: {'met' if fit_time <= FIT_SECONDS else 'MISSED'})"
    )
    print(
        f"speed-up per sample:          {speedup:,.0f} x "
        f"(target >= {SPEEDUP:.0f} x: {'met' if speedup >= SPEEDUP else 'MISSED'})"
    )
    print(
        f"HalvingClassifier.predict:    {predict_time:.3f} s for {N_STREAM:,} "
        f"samples (target <= {PREDICT_SECONDS} s: "
        f"{'met' if predict_time <= PREDICT_SECONDS else 'MISSED'})"
    )
    print(
        f"online mistakes {clf.n_mistakes_[0]} <= log2 |C| = "
        f"{clf.mistake_bound_:.2f}; version space {clf.version_space_size_[0]}; "
        f"held-out accuracy {np.mean(y_pred == y_test):.4f}"
    )


if __name__ == "__main__":
    main()
