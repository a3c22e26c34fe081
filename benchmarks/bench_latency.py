"""The time of one prediction: ``predict`` on a single row, as a deployed
model answers one request, each estimator beside the scikit-learn
estimator that a user would otherwise deploy.

Every estimator is built with its defaults (``random_state=0``) and fitted
on the training part of digits (shipped with scikit-learn, 10 classes;
dense rows of 64 features), and the margin and kernel perceptrons also on
the first ``--text-rows`` rows of the training part of the sparse
text-like set (CSR rows of 3,000 columns, about 29 stored a row), as
``benchmarks/bench_defaults.py`` splits and scales them (``split``):

- ``MarginPerceptron()`` against ``Perceptron()``;
- ``KernelPerceptron()``, and with ``budget=100``, against ``SVC()``;
- ``LinearProgramClassifier(C=1.0)`` against ``LinearSVC()`` (the default,
  ``C=None``, asks for a separable training set, which digits is not);
- ``MarginMLPClassifier()`` against ``MLPClassifier()``;
- ``HalvingClassifier()``, which has no counterpart.

Printed: the median over ``--rounds`` rounds of the median time of
``--calls`` calls of ``predict`` on one row of the held-out part (the
rounds take the estimators in turn, so that a change in the machine's load
falls on all of them), and its ratio to the counterpart's in the same run.
Every estimator predicts on one thread, as by default: the time of one row
is that of the checks of the input and of the call, which threads would
not share.

Run from the repository root::

    python benchmarks/bench_latency.py [--rounds 5] [--calls 1000]
"""

import argparse
import time
import warnings

import numpy as np
from bench_defaults import split
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC, LinearSVC

from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)


def pairs(sparse):
    """(name, estimator, counterpart name, counterpart) for the data."""
    rows = [
        (
            "MarginPerceptron()",
            MarginPerceptron(random_state=0),
            "Perceptron()",
            Perceptron(random_state=0),
        ),
        ("KernelPerceptron()", KernelPerceptron(random_state=0), "SVC()", SVC()),
        (
            "KernelPerceptron(budget=100)",
            KernelPerceptron(budget=100, random_state=0),
            "SVC()",
            SVC(),
        ),
    ]
    if not sparse:
        rows += [
            (
                "LinearProgramClassifier(C=1.0)",
                LinearProgramClassifier(C=1.0),
                "LinearSVC()",
                LinearSVC(random_state=0),
            ),
            (
                "MarginMLPClassifier()",
                MarginMLPClassifier(random_state=0),
                "MLPClassifier()",
                MLPClassifier(random_state=0),
            ),
            ("HalvingClassifier()", HalvingClassifier(), None, None),
        ]
    return rows


def one_row_time(estimator, row, calls):
    """The median seconds of ``calls`` calls of predict on ``row``."""
    times = np.empty(calls)
    for i in range(calls):
        start = time.perf_counter()
        estimator.predict(row)
        times[i] = time.perf_counter() - start
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--text-rows", type=int, default=5000)
    args = parser.parse_args()

    sets = {}
    for name, n_rows in (("digits", None), ("sparse text-like", args.text_rows)):
        X_train, X_test, y_train, _ = split(name)
        sets[name] = (X_train[:n_rows], y_train[:n_rows], X_test)
    print(
        f"predict on one row: median of {args.rounds} rounds of the median of "
        f"{args.calls} calls; ratio = skperc / scikit-learn"
    )
    header = (
        f"{'data':17s} {'estimator':31s} {'us':>7s} {'against':16s} "
        f"{'us':>7s} {'ratio':>6s}"
    )
    print(header)
    print("-" * len(header))
    for name, (X_fit, y_fit, X_rows) in sets.items():
        fitted = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for ours, estimator, theirs, counterpart in pairs(name != "digits"):
                fitted.append(
                    (
                        ours,
                        estimator.fit(X_fit, y_fit),
                        theirs,
                        None if counterpart is None else counterpart.fit(X_fit, y_fit),
                    )
                )
        row = X_rows[:1]
        times = {(i, side): [] for i in range(len(fitted)) for side in (0, 1)}
        for _ in range(args.rounds):
            for i, (_, estimator, _, counterpart) in enumerate(fitted):
                times[i, 0].append(one_row_time(estimator, row, args.calls))
                if counterpart is not None:
                    times[i, 1].append(one_row_time(counterpart, row, args.calls))
        for i, (ours, _, theirs, counterpart) in enumerate(fitted):
            mine = 1e6 * np.median(times[i, 0])
            if counterpart is None:
                print(
                    f"{name:17s} {ours:31s} {mine:7.0f} {'-':16s} {'-':>7s} {'-':>6s}"
                )
                continue
            other = 1e6 * np.median(times[i, 1])
            print(
                f"{name:17s} {ours:31s} {mine:7.0f} {theirs:16s} {other:7.0f} "
                f"{mine / other:6.2f}"
            )


if __name__ == "__main__":
    main()
