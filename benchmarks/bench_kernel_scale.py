"""KernelPerceptron with and without a budget against SVC and Nystroem + SGD
as the training set grows: fit time, test accuracy, support vectors, memory.

The data: ``make_classification(n_features=20, n_informative=10,
n_clusters_per_class=4, class_sep=1.0, flip_y=0.01)``, standardized, with
20,000 held-out test points; the RBF kernel with ``gamma=0.05`` everywhere.
Compared: KernelPerceptron with its defaults, the same with
``budget=--budget`` for each budget strategy, ``Nystroem(n_components=
--budget)`` + ``SGDClassifier``, and ``SVC(C=10)`` (skipped above
``--svc-max`` training examples). Each fit runs in a fresh process, so that
its peak resident memory (which includes the interpreter and the data) is
its own; times are medians over ``--repeat`` fits, and the ratios are to
SVC's median in the same run.

Run from the repository root::

    python benchmarks/bench_kernel_scale.py --sizes 10000 40000 [--repeat 3]
"""

import argparse
import multiprocessing
import resource
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron

GAMMA = 0.05
N_TEST = 20_000


def data(n_train):
    X, y = make_classification(
        n_samples=n_train + N_TEST,
        n_features=20,
        n_informative=10,
        n_clusters_per_class=4,
        class_sep=1.0,
        flip_y=0.01,
        random_state=0,
    )
    X = StandardScaler().fit_transform(X)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def estimators(budget):
    return {
        "KernelPerceptron": lambda: KernelPerceptron(gamma=GAMMA, random_state=0),
        **{
            f"KP budget={budget} {strategy}": (
                lambda strategy=strategy: KernelPerceptron(
                    gamma=GAMMA,
                    budget=budget,
                    budget_strategy=strategy,
                    random_state=0,
                )
            )
            for strategy in ("merge", "remove")
        },
        f"Nystroem({budget})+SGD": lambda: make_pipeline(
            Nystroem(gamma=GAMMA, n_components=budget, random_state=0),
            SGDClassifier(random_state=0),
        ),
        "SVC(C=10)": lambda: SVC(C=10, gamma=GAMMA),
    }


def fit_once(name, n_train, budget, queue):
    """Fit one estimator in this (child) process; report through queue."""
    X, y, X_test, y_test = data(n_train)
    estimator = estimators(budget)[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        estimator.fit(X, y)
        seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    last = estimator[-1] if hasattr(estimator, "steps") else estimator
    n_support = len(getattr(last, "support_", [])) or budget
    queue.put((seconds, estimator.score(X_test, y_test), n_support, peak_mb))


def measure(name, n_train, budget):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=fit_once, args=(name, n_train, budget, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 40_000])
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--svc-max", type=int, default=40_000)
    args = parser.parse_args()
    print(
        f"{'n_train':>8} {'estimator':<28} {'fit s':>8} {'x SVC':>6} "
        f"{'accuracy':>8} {'- SVC':>6} {'SVs':>6} {'peak RSS MB':>11}"
    )
    for n_train in args.sizes:
        rows = {}
        for name in estimators(args.budget):
            if name.startswith("SVC") and n_train > args.svc_max:
                continue
            runs = [measure(name, n_train, args.budget) for _ in range(args.repeat)]
            seconds = float(np.median([run[0] for run in runs]))
            rows[name] = (seconds, *runs[0][1:])
        svc = rows.get("SVC(C=10)")
        for name, (seconds, accuracy, n_support, peak) in rows.items():
            ratio = f"{seconds / svc[0]:6.2f}" if svc else f"{'-':>6}"
            gap = f"{accuracy - svc[1]:+6.3f}" if svc else f"{'-':>6}"
            print(
                f"{n_train:>8} {name:<28} {seconds:8.2f} {ratio} "
                f"{accuracy:8.4f} {gap} {n_support:>6} {peak:11.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
