"""The default KernelPerceptron on small samples, where it runs to
separation, against its last function (``average=False``), its mean
(``average=True``) and SVC.

On at most 2,000 examples (and without a budget) the default
``KernelPerceptron()`` keeps the stopping rule on the training data, and
with the RBF kernel, which separates every sample of distinct points, its
run ends separated. ``average=False`` answers with its last function, which
holds the margin of Theorem 1; ``average=True`` with the mean of the run's
functions, which holds no margin but is the averaged perceptron of Freund
and Schapire, made to generalize; the default with the point between them
that lies furthest toward the mean while it keeps that margin. This script
measures what each answer scores on small data sets: breast cancer,
digits, wine and iris, shipped with scikit-learn, ``make_classification(1500,
20, n_informative=8, flip_y=0.05)`` and ``make_moons(1000, noise=0.3)``.

Each set is split 70/30, stratified, ``--splits`` times (``random_state``
0, 1, ...), and scaled on its training part (``StandardScaler``); every
estimator fits the same split (a perceptron with the split's
``random_state``). Printed: the mean test accuracy of each, with the
standard error of its difference to SVC's over the splits, the median fit
time, and on how many splits each scores more than a point below SVC.

Run from the repository root::

    python benchmarks/bench_small_samples.py [--splits 40]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
    make_moons,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron

SETS = {
    "breast cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "iris": lambda: load_iris(return_X_y=True),
    "classification 1,500": lambda: make_classification(
        1500, 20, n_informative=8, flip_y=0.05, random_state=0
    ),
    "moons 1,000": lambda: make_moons(1000, noise=0.3, random_state=0),
}

ESTIMATORS = {
    "KernelPerceptron()": lambda seed: KernelPerceptron(random_state=seed),
    "average=False": lambda seed: KernelPerceptron(average=False, random_state=seed),
    "average=True": lambda seed: KernelPerceptron(average=True, random_state=seed),
    "SVC()": lambda seed: SVC(),
}


def scores(X, y, n_splits):
    """Test accuracy and fit time of each estimator on each split."""
    accuracy = {name: [] for name in ESTIMATORS}
    seconds = {name: [] for name in ESTIMATORS}
    for seed in range(n_splits):
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=seed, stratify=y
        )
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        for name, make in ESTIMATORS.items():
            estimator = make(seed)
            start = time.perf_counter()
            estimator.fit(X_train, y_train)
            seconds[name].append(time.perf_counter() - start)
            accuracy[name].append(estimator.score(X_test, y_test))
    return {name: np.array(values) for name, values in accuracy.items()}, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=40)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    print(
        f"mean test accuracy over {args.splits} stratified 70/30 splits "
        "(standard error of the difference to SVC's), median fit time, and "
        "the splits more than a point below SVC"
    )
    for set_name, load in SETS.items():
        X, y = load()
        accuracy, seconds = scores(X, y, args.splits)
        svc = accuracy["SVC()"]
        cells = []
        for name, values in accuracy.items():
            error = np.std(values - svc) / np.sqrt(len(svc))
            below = int(np.sum(values < svc - 0.01))
            cells.append(
                f"{name} {values.mean():.4f} ({error:.4f}) "
                f"{np.median(seconds[name]) * 1e3:.1f} ms, {below} below"
            )
        print(f"{set_name:21} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
