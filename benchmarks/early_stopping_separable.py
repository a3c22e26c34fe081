"""How often the default KernelPerceptron and MarginPerceptron stop a
separable run before it separates, now that ``early_stopping="auto"``
splits samples of more than 2,000 examples.

Each sample: ``--size`` points (3,000 by default) uniform in
``[-1, 1]^d`` (``d`` drawn from 2, 5 and 10), labelled by a random
hyperplane through the origin, with the
points closer to it than ``margin`` (drawn from 0.02, 0.05 and 0.1) removed
and the sample topped up to ``--size``, so that it is separable with that
margin by the linear kernel, and by the RBF kernel (as every sample of
distinct points). For each, the default ``KernelPerceptron(kernel=...)``
and ``MarginPerceptron()`` (only ``random_state`` set) against the same
with ``early_stopping=False``:
whether the default run separated its training part (``converged_``), its
training error on the whole sample (the held-out tenth included), its
epochs and time, and the epochs of the run to separation.

Run from the repository root::

    python benchmarks/early_stopping_separable.py [--samples 12] [--size 3000]
        [--learners linear rbf MarginPerceptron]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skperc import KernelPerceptron, MarginPerceptron

# the learners by name: the kernel perceptron's kernels, and the perceptron
LEARNERS = {
    "linear": lambda **params: KernelPerceptron(kernel="linear", **params),
    "rbf": lambda **params: KernelPerceptron(kernel="rbf", **params),
    "MarginPerceptron": MarginPerceptron,
}


def separable(seed, size):
    rng = np.random.RandomState(seed)
    d = rng.choice([2, 5, 10])
    margin = rng.choice([0.02, 0.05, 0.1])
    normal = rng.standard_normal(d)
    normal /= np.linalg.norm(normal)
    X = np.empty((0, d))
    while len(X) < size:
        points = rng.uniform(-1, 1, size=(size, d))
        X = np.vstack([X, points[np.abs(points @ normal) >= margin]])
    X = X[:size]
    return X, (X @ normal > 0).astype(int), d, margin


def timed(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        estimator.fit(X, y)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=12)
    parser.add_argument("--size", type=int, default=3_000)
    parser.add_argument(
        "--learners", nargs="+", choices=list(LEARNERS), default=list(LEARNERS)
    )
    args = parser.parse_args()
    print(
        f"{'learner':16} {'seed':>4} {'d':>3} {'margin':>6} | {'default':>9} "
        f"{'epochs':>6} {'train err':>9} {'fit s':>6} | {'to separation':>13} "
        f"{'fit s':>6}"
    )
    for learner in args.learners:
        make = LEARNERS[learner]
        early = 0
        for seed in range(args.samples):
            X, y, d, margin = separable(seed, args.size)
            default = make(random_state=seed)
            default_time = timed(default, X, y)
            full = make(early_stopping=False, max_iter=1000, random_state=seed)
            full_time = timed(full, X, y)
            early += not default.converged_
            print(
                f"{learner:16} {seed:>4} {d:>3} {margin:>6} | "
                f"{default.stop_reason_:>9.9} {default.n_iter_:>6} "
                f"{1 - default.score(X, y):>9.4f} {default_time:>6.2f} | "
                f"{full.stop_reason_:>9.9} {full.n_iter_:>3} {full_time:>6.2f}"
            )
        print(
            f"{learner}: the default stopped {early} of {args.samples} separable "
            "runs before they separated their training part"
        )


if __name__ == "__main__":
    main()
