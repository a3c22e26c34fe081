"""The L2 penalty ``alpha`` of MarginMLPClassifier beside MLPClassifier's.

The two networks with their other defaults (MarginMLPClassifier: 300
hidden units, the hinge loss ``beta=1``; MLPClassifier: 100 units,
cross-entropy), ``random_state=0``, on the data of
``benchmarks/bench_defaults.py`` (each split 70/30 and scaled on its
training part), the noisy set drawn with ``--noisy-rows`` rows instead of
its 100,000, on which the networks take minutes:

1. For each ``alpha`` of ALPHAS, the same ``alpha`` in both (it has the
   same meaning in both): test accuracy, fit time (median of ``--repeat``,
   the two taking turns) and the ratio of the times, and the epochs.
2. What a user tunes: ``GridSearchCV`` over ALPHAS (3 folds) on the
   training part for each network, its best ``alpha``, the test accuracy
   of the refitted best, and the time of the whole search.

Run from the repository root::

    python benchmarks/bench_mlp_penalty.py [--repeat 3] [--sets noisy digits]
"""

import argparse
import time
import warnings

import numpy as np
from bench_defaults import SET_KEYS, SETS, noisy_dense
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from skperc import MarginMLPClassifier

ALPHAS = (0.0, 1e-4, 1e-2, 1.0, 10.0)


def split(name, noisy_rows):
    if name == "noisy":
        X, y = noisy_dense(n_samples=noisy_rows)
    else:
        X, y = SETS[SET_KEYS[name]]()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def networks(**params):
    return {
        "MarginMLPClassifier": MarginMLPClassifier(random_state=0, **params),
        "MLPClassifier": MLPClassifier(random_state=0, **params),
    }


def by_alpha(X_train, X_test, y_train, y_test, repeat):
    print(
        f"{'alpha':>8} | {'ours acc':>8} {'fit s':>7} {'epochs':>6} | "
        f"{'MLP acc':>8} {'fit s':>7} {'epochs':>6} | {'ratio':>5}"
    )
    for alpha in ALPHAS:
        models = networks(alpha=alpha)
        times = {name: [] for name in models}
        for _ in range(repeat):
            for name, model in models.items():
                start = time.perf_counter()
                model.fit(X_train, y_train)
                times[name].append(time.perf_counter() - start)
        cells = [
            f"{model.score(X_test, y_test):8.4f} {np.median(times[name]):7.2f} "
            f"{model.n_iter_:6d}"
            for name, model in models.items()
        ]
        ratio = np.median(times["MarginMLPClassifier"]) / np.median(
            times["MLPClassifier"]
        )
        print(f"{alpha:8g} | {cells[0]} | {cells[1]} | {ratio:5.2f}", flush=True)


def tuned(X_train, X_test, y_train, y_test):
    print(f"\nGridSearchCV over alpha in {ALPHAS}, 3 folds")
    for name, model in networks().items():
        start = time.perf_counter()
        search = GridSearchCV(model, {"alpha": list(ALPHAS)}, cv=3)
        search.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        print(
            f"{name:20} best alpha {search.best_params_['alpha']:<8g} "
            f"cv {search.best_score_:.4f}  test {search.score(X_test, y_test):.4f}"
            f"  search {seconds:7.1f} s",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--noisy-rows", type=int, default=20_000)
    parser.add_argument(
        "--sets",
        nargs="+",
        choices=["noisy", "breast_cancer", "digits"],
        default=["noisy", "breast_cancer", "digits"],
    )
    args = parser.parse_args()
    # the runs without a penalty that reach max_iter are part of the table
    warnings.simplefilter("ignore", ConvergenceWarning)
    for name in args.sets:
        data = split(name, args.noisy_rows)
        label = name if name != "noisy" else f"noisy {args.noisy_rows:,} x 50"
        print(f"\n== {label}: {data[0].shape[0]:,} training rows")
        by_alpha(*data, args.repeat)
        tuned(*data)


if __name__ == "__main__":
    main()
