"""LinearProgramClassifier and optimal_margin against scikit-learn.

Prints, for each case, the median fit time of each model over interleaved
repeats, the ratio to scikit-learn's time measured in the same run, and the
held-out accuracy; and the optimal margin of skperc.metrics.optimal_margin
(exact, NNLS) beside that of SVC(kernel="linear", C=1e8) through the origin
(the data lifted by a zero coordinate that SVC's intercept cannot use, so
both solve the same problem; SVC's answer is to its tolerance).

Then the peak memory of a fit on a dense separable X, each fit in a fresh
process: the growth of its peak resident set (which sees HiGHS's own
memory) and the peak that tracemalloc traces (NumPy's and SciPy's arrays
only), as multiples of the memory of X, the first also as a ratio to
scikit-learn's LinearSVC(penalty="l1", dual=False) on the same X (whose
liblinear tracemalloc does not see), with the fit time; and a fit bounded
by time_limit.

    python benchmarks/bench_linear_program.py
    python benchmarks/bench_linear_program.py --memory   # the memory part only
"""

import json
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from skperc import LinearProgramClassifier
from skperc.datasets import make_margin_classification
from skperc.metrics import margin, optimal_margin

REPEATS = 5


def cases():
    X, y = make_margin_classification(2000, 50, margin=0.05, random_state=0)
    yield "separable, 2000 x 50", X, y, None
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast cancer (soft, C=1)", StandardScaler().fit_transform(X), y, 1.0
    X, y = load_digits(return_X_y=True)
    yield "digits, 10 classes (soft, C=1)", X / 16.0, y, 1.0


def median_fit(make, X, y, timings):
    start = time.perf_counter()
    model = make().fit(X, y)
    timings.append(time.perf_counter() - start)
    return model


def main():
    warnings.simplefilter("ignore", ConvergenceWarning)
    print(f"medians of {REPEATS} interleaved repeats\n")
    for name, X, y, C in cases():
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=0, stratify=y
        )
        models = {
            "LinearSVC(penalty='l1')": lambda C=C: LinearSVC(
                penalty="l1", C=1.0 if C else 1e4, max_iter=20_000
            ),
            "LP feasibility": lambda C=C: LinearProgramClassifier(C=C),
            "LP l1_margin": lambda C=C: LinearProgramClassifier(
                objective="l1_margin", C=C
            ),
        }
        timings = {key: [] for key in models}
        fitted = {}
        for _ in range(REPEATS):
            for key, make in models.items():
                fitted[key] = median_fit(make, X_train, y_train, timings[key])
        reference = np.median(timings["LinearSVC(penalty='l1')"])
        print(name)
        for key, model in fitted.items():
            elapsed = np.median(timings[key])
            print(
                f"  {key:24} fit {elapsed * 1e3:8.1f} ms  "
                f"ratio {elapsed / reference:6.2f}  "
                f"test accuracy {model.score(X_test, y_test):.4f}"
            )
        print()

    X, y = make_margin_classification(500, 20, margin=0.05, random_state=1)
    lifted = np.hstack([X, np.zeros((len(X), 1))])
    nnls_times, svc_times = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        eps = optimal_margin(X, y)[0]
        nnls_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        svc = SVC(kernel="linear", C=1e8).fit(lifted, y)
        svc_times.append(time.perf_counter() - start)
    svc_margin = margin(svc.coef_[0], lifted, y)
    print("optimal margin, 500 x 20, eps* = 0.05 by construction")
    print(
        f"  optimal_margin (NNLS)   {np.median(nnls_times) * 1e3:8.1f} ms  "
        f"ratio {np.median(nnls_times) / np.median(svc_times):6.2f}  eps* {eps:.10f}"
    )
    print(
        f"  SVC linear, C=1e8       {np.median(svc_times) * 1e3:8.1f} ms  "
        f"ratio {1.0:6.2f}  margin {svc_margin:.10f} (with its intercept)"
    )


MEMORY_CASES = [(2000, 500), (4000, 200), (8000, 200), (40000, 20)]
# the peak of a fit in a fresh process varies little
MEMORY_REPEATS = 3
REFERENCE = "LinearSVC(penalty='l1')"
MEMORY_MODELS = {
    REFERENCE: lambda: LinearSVC(penalty="l1", dual=False, C=1e4, max_iter=20_000),
    "LP feasibility": lambda: LinearProgramClassifier(),
    "LP l1_margin": lambda: LinearProgramClassifier(objective="l1_margin"),
    "LP feasibility, C=1": lambda: LinearProgramClassifier(C=1.0),
}


def measure_in_this_process(key, n_samples, n_features, tracing):
    """Fit one model; print its time and the growth of the peak memory
    (and the peak traced by tracemalloc, which slows the fit, if
    ``tracing``)."""
    X, y = make_margin_classification(
        n_samples, n_features, margin=0.05, random_state=0
    )
    model = MEMORY_MODELS[key]()
    if tracing:
        tracemalloc.start()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    model.fit(X, y)
    elapsed = time.perf_counter() - start
    # ru_maxrss is in kilobytes on Linux
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    traced = tracemalloc.get_traced_memory()[1] if tracing else 0
    print(
        json.dumps(
            {"seconds": elapsed, "bytes": grown, "traced": traced, "x_bytes": X.nbytes}
        )
    )


def measure(key, n_samples, n_features, tracing):
    output = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            key,
            str(n_samples),
            str(n_features),
            str(int(tracing)),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output.splitlines()[-1])


def main_memory():
    print(
        f"\npeak memory of a fit (fresh process), medians of {MEMORY_REPEATS} "
        "runs (traced: one run under tracemalloc)"
    )
    for n_samples, n_features in MEMORY_CASES:
        # the time and the resident set untraced, the traced peak apart
        runs = {
            key: [
                measure(key, n_samples, n_features, tracing=False)
                for _ in range(MEMORY_REPEATS)
            ]
            for key in MEMORY_MODELS
        }
        traced = {
            key: measure(key, n_samples, n_features, tracing=True)["traced"]
            for key in MEMORY_MODELS
        }
        x_bytes = runs["LP feasibility"][0]["x_bytes"]
        print(f"dense separable X, {n_samples} x {n_features} ({x_bytes / 1e6:.0f} MB)")
        medians = {
            key: {
                quantity: np.median([run[quantity] for run in measured])
                for quantity in ["seconds", "bytes"]
            }
            for key, measured in runs.items()
        }
        reference = medians[REFERENCE]
        for key, median in medians.items():
            seconds, grown = median["seconds"], median["bytes"]
            print(
                f"  {key:24} fit {seconds:7.2f} s  "
                f"ratio {seconds / reference['seconds']:6.2f}  "
                f"RSS +{grown / 1e6:6.1f} MB = {grown / x_bytes:5.1f} x X  "
                f"ratio {grown / reference['bytes']:5.2f}  "
                f"traced {traced[key] / x_bytes:5.1f} x X"
            )


def main_time_limit():
    X, y = make_margin_classification(10000, 200, margin=0.05, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        LinearProgramClassifier(time_limit=0.5).fit(X, y)
        elapsed = time.perf_counter() - start
    print(
        f"\nLP feasibility, 10000 x 200, time_limit=0.5: returned after "
        f"{elapsed:.2f} s with {len(caught)} ConvergenceWarning"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        main_memory()
    elif sys.argv[1:2] == ["--measure"]:
        measure_in_this_process(
            sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
        )
    else:
        main()
        main_memory()
        main_time_limit()
