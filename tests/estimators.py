"""The registry of estimator configurations that every common test module
draws from: scikit-learn's checks (test_common), same answers, hostile
input, memory, overflow, distributed search and streams.

Every public estimator of skperc must be here, in several configurations
(test_common checks that it is): an estimator left out would get none of
those tests.
"""

from functools import partial

import numpy as np
import scipy.sparse as sp

from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)
from skperc.concepts import ExplicitConcepts
from skperc.schedules import PowerThreshold, ScaleThreshold


def _stump(X, feature, sign, threshold):
    return sign * (X[:, feature] - threshold) >= 0


# Stumps of the first and the last feature (so that any number of features
# works), written as a list of named functions so that the estimator pickles.
EXPLICIT_CONCEPTS = ExplicitConcepts(
    [
        partial(_stump, feature=feature, sign=sign, threshold=threshold)
        for feature in (0, -1)
        for sign in (1, -1)
        for threshold in np.linspace(-2, 2, 33)
    ]
)


def _cosine_kernel(x, z, shift):
    """A callable kernel: the shifted cosine similarity of two samples, given
    as 1-D arrays or as CSR rows."""
    x, z = (np.ravel(v.toarray()) if sp.issparse(v) else v for v in (x, z))
    return shift + x @ z / (np.linalg.norm(x) * np.linalg.norm(z) + 1e-12)


ESTIMATORS = [
    MarginPerceptron(),
    MarginPerceptron(beta="scale"),
    MarginPerceptron(beta="power", average=True),
    MarginPerceptron(beta=1.0, fit_intercept=False, shuffle=False),
    MarginPerceptron(beta=PowerThreshold(alpha=1.6), intercept_scaling=1.0, n_jobs=2),
    KernelPerceptron(),
    KernelPerceptron(kernel="poly", degree=2, beta="power"),
    KernelPerceptron(kernel="linear", beta="scale", shuffle=False),
    KernelPerceptron(kernel="precomputed"),
    KernelPerceptron(kernel=_cosine_kernel, kernel_params={"shift": 1.0}),
    KernelPerceptron(kernel="laplacian", average=True),
    KernelPerceptron(budget=20, max_iter=5),
    KernelPerceptron(budget=20, budget_strategy="remove", max_iter=5),
    KernelPerceptron(kernel="cosine", budget=20, max_iter=5),
    # the checks' smallest samples need a validation set of 3 classes
    KernelPerceptron(early_stopping=True, validation_fraction=0.5),
    KernelPerceptron(early_stopping=True, validation_fraction=0.5, refit=True),
    KernelPerceptron(
        early_stopping=True, validation_fraction=0.5, refit=True, average=False
    ),
    # Without C the sample must be separable, and the checks' random samples
    # are not: the hard version is tested in test_linear_program.py.
    LinearProgramClassifier(C=1.0),
    LinearProgramClassifier(objective="l1_margin", C=10.0),
    LinearProgramClassifier(objective="l1_margin", fit_intercept=False, C=0.5),
    HalvingClassifier(),
    HalvingClassifier(randomized=True, n_jobs=2),
    HalvingClassifier(concepts=EXPLICIT_CONCEPTS),
    # small networks and few epochs keep the checks fast
    MarginMLPClassifier((16,), learning_rate_init=0.01, max_iter=100, random_state=0),
    MarginMLPClassifier(
        (16, 8),
        beta="sublinear",
        c=0.25,
        solver="sgd",
        alpha=0.1,
        learning_rate="adaptive",
        learning_rate_init=0.01,
        nesterovs_momentum=False,
    ),
    MarginMLPClassifier(
        (16,),
        beta=ScaleThreshold(),
        learning_rate_init=0.01,
        batch_size=16,
        early_stopping=True,
        # the checks' smallest samples need a validation set of 3 classes
        validation_fraction=0.5,
        beta_1=0.8,
        beta_2=0.99,
        epsilon=1e-6,
    ),
]
