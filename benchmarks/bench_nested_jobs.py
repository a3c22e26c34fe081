"""Estimators of ``n_jobs=-1`` inside ``GridSearchCV(n_jobs=-1)``: the
search's time against the same search around estimators of ``n_jobs=1``.

joblib's process workers set ``OMP_NUM_THREADS`` to their share of the
processors, so that the threads of an estimator inside a worker do not
multiply with the workers; ``n_jobs=-1`` counts at most those threads (see
``skperc._threads``). Where it counted every processor, each worker of a
search on a machine of as many processors as workers ran as many threads
as processors, and these waited for each other at every parallel step.

The searches, over ``beta`` with ``--cv`` folds, all in one process:

- ``KernelPerceptron`` (RBF, ``gamma=0.05``) on ``--n`` examples of the
  ``clusters`` data of ``benchmarks/bench_kernel_scale.py``, without and
  with ``budget=500``;
- ``MarginPerceptron`` on ``load_digits`` stacked ``--digits-copies`` times
  (ten one-vs-rest problems, which its threads share).

Times are medians of ``--repeat`` searches, interleaved; "ratio" is the
search of ``n_jobs=-1`` over the one of ``n_jobs=1`` (1 means no loss).

Run from the repository root::

    python benchmarks/bench_nested_jobs.py [--repeat 5] [--n 10000]
"""

import argparse
import time

import numpy as np
from bench_kernel_scale import data
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skperc import KernelPerceptron, MarginPerceptron


def searches(n, copies):
    """(name, estimator of n_jobs, grid, X, y) of each search."""
    X, y, _, _ = data(n)
    digits = load_digits()
    X_digits = StandardScaler().fit_transform(np.vstack([digits.data] * copies))
    y_digits = np.concatenate([digits.target] * copies)
    return [
        (
            "KernelPerceptron",
            lambda n_jobs: KernelPerceptron(gamma=0.05, random_state=0, n_jobs=n_jobs),
            {"beta": [0.25, 1.0]},
            X,
            y,
        ),
        (
            "KernelPerceptron budget=500",
            lambda n_jobs: KernelPerceptron(
                gamma=0.05, budget=500, random_state=0, n_jobs=n_jobs
            ),
            {"beta": [0.25, 1.0]},
            X,
            y,
        ),
        (
            "MarginPerceptron (digits)",
            lambda n_jobs: MarginPerceptron(random_state=0, n_jobs=n_jobs),
            {"beta": [0.25, 1.0]},
            X_digits,
            y_digits,
        ),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--cv", type=int, default=2)
    parser.add_argument("--digits-copies", type=int, default=20)
    args = parser.parse_args()
    print(f"{'search':30} {'n_jobs=1 s':>11} {'n_jobs=-1 s':>12} {'ratio':>6}")
    for name, make, grid, X, y in searches(args.n, args.digits_copies):
        times = {1: [], -1: []}
        for _ in range(args.repeat):
            for n_jobs in times:
                search = GridSearchCV(make(n_jobs), grid, cv=args.cv, n_jobs=-1)
                start = time.perf_counter()
                search.fit(X, y)
                times[n_jobs].append(time.perf_counter() - start)
        one, every = np.median(times[1]), np.median(times[-1])
        print(f"{name:30} {one:11.2f} {every:12.2f} {every / one:6.2f}", flush=True)


if __name__ == "__main__":
    main()
