"""The time of converting a large model to ONNX with ``skl2onnx.to_onnx``,
each estimator beside the scikit-learn estimator of the same weights,
converted by skl2onnx's own converter in the same run.

The models, each fitted once on data drawn for it (``random_state=0``):

- ``KernelPerceptron()`` against ``SVC()``, both RBF with the same gamma,
  on ``--kernel-rows`` dense rows of ``--kernel-features`` features
  (``make_classification``, 5% label noise), so that thousands of support
  vectors of many features make the graph large;
- ``MarginPerceptron()`` against ``Perceptron()`` on ``--linear-rows`` CSR
  rows of ``2**20`` columns (``HashingVectorizer``'s width, 30 stored
  values a row, as ``benchmarks/bench_sparse_partial_fit.py`` draws them)
  in ``--classes`` classes: a weight matrix of ``classes x 2**20``;
- ``MarginMLPClassifier()`` against ``MLPClassifier()``, one hidden layer
  of 300 units each (MarginMLPClassifier's default), on the kernel data.

Printed for each: the size of the serialized graph and the median time of
``--repeat`` conversions, the two estimators taking turns, and its ratio to
the counterpart's. The graphs compute the same kind of function, but
scikit-learn's converters write other operators (``SVMClassifier`` of
ONNX-ML for SVC), so the sizes differ too.

Run from the repository root::

    python benchmarks/bench_onnx_export.py [--repeat 3]
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from bench_sparse_partial_fit import labels, sparse_rows
from skl2onnx import to_onnx
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC

import skperc.onnx  # noqa: F401  (registers the converters)
from skperc import KernelPerceptron, MarginMLPClassifier, MarginPerceptron


def conversions(models, X, repeat):
    """The median time of converting each model (the models taking turns),
    and the size of its graph in MB."""
    times = np.empty((repeat, len(models)))
    sizes = []
    for r in range(repeat):
        sizes = []
        for m, model in enumerate(models):
            start = time.perf_counter()
            with warnings.catch_warnings():
                # skl2onnx's SVC converter reads probA_ and probB_, which
                # scikit-learn 1.9 deprecates
                warnings.simplefilter("ignore", FutureWarning)
                graph = to_onnx(model, X, target_opset=17)
            times[r, m] = time.perf_counter() - start
            sizes.append(graph.ByteSize() / 1e6)
    return np.median(times, axis=0), sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kernel-rows", type=int, default=3000)
    parser.add_argument("--kernel-features", type=int, default=10_000)
    parser.add_argument("--linear-rows", type=int, default=2000)
    parser.add_argument("--classes", type=int, default=20)
    args = parser.parse_args()

    X_kernel, y_kernel = make_classification(
        args.kernel_rows,
        args.kernel_features,
        n_informative=20,
        flip_y=0.05,
        random_state=0,
    )
    gamma = 1.0 / (args.kernel_features * X_kernel.var())
    X_hashed = sparse_rows(args.linear_rows, 2**20, 30, seed=0)
    y_hashed = labels(X_hashed, args.classes, seed=0)
    # the converters take a dense row: the hashed columns as float64
    X_hashed_row = X_hashed[:1].toarray()
    pairs = [
        (
            "KernelPerceptron()",
            KernelPerceptron(gamma=gamma, random_state=0),
            "SVC()",
            SVC(gamma=gamma),
            X_kernel,
            y_kernel,
        ),
        (
            "MarginPerceptron()",
            MarginPerceptron(random_state=0),
            "Perceptron()",
            Perceptron(random_state=0),
            X_hashed,
            y_hashed,
        ),
        (
            "MarginMLPClassifier()",
            MarginMLPClassifier(max_iter=5, random_state=0),
            "MLPClassifier(300)",
            MLPClassifier((300,), max_iter=5, random_state=0),
            X_kernel,
            y_kernel,
        ),
    ]
    print(
        f"to_onnx: median of {args.repeat} conversions; ratio = skperc / scikit-learn"
    )
    header = (
        f"{'estimator':22s} {'weights':>22s} {'MB':>6s} {'s':>6s} | "
        f"{'against':19s} {'MB':>6s} {'s':>6s} | {'ratio':>5s}"
    )
    print(header)
    print("-" * len(header))
    for ours, estimator, theirs, counterpart, X, y in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            estimator.fit(X, y)
            counterpart.fit(X, y)
        if hasattr(estimator, "support_vectors_"):
            shape = estimator.support_vectors_.shape
        elif hasattr(estimator, "coef_"):
            shape = estimator.coef_.shape
        else:
            shape = estimator.coefs_[0].shape
        row = X_hashed_row if sp.issparse(X) else X[:1]
        (ours_s, theirs_s), (ours_mb, theirs_mb) = conversions(
            [estimator, counterpart], row, args.repeat
        )
        weights = f"{shape[0]:,} x {shape[1]:,}"
        print(
            f"{ours:22s} {weights:>22s} {ours_mb:6.0f} {ours_s:6.2f} | "
            f"{theirs:19s} {theirs_mb:6.0f} {theirs_s:6.2f} | "
            f"{ours_s / theirs_s:5.2f}"
        )


if __name__ == "__main__":
    main()
