"""The theorems of the margin perceptrons in the feature space of a kernel.

The polynomial kernel ``(1 + x . x')^2`` of lecture 5 on points of the plane
is the dot product of the explicit features ``phi(x) = (1, sqrt(2) x1,
sqrt(2) x2, x1^2, x2^2, sqrt(2) x1 x2)``, so the optimal margin ``eps*`` of
a sample in feature space is that of ``phi(X)``, computed exactly, and
``R^2 = max k(x, x)``. The samples (a disc inside a ring; XOR) are separable
in feature space and by no line.
"""

import numpy as np
import pytest
from margin_data import (
    assert_novikoff,
    assert_theorem_1,
    assert_theorem_2,
    assert_theorem_3,
)
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from skperc import KernelPerceptron, MarginPerceptron
from skperc.metrics import optimal_margin
from skperc.schedules import RelativeThreshold

POLY = dict(kernel="poly", degree=2, gamma=1.0, coef0=1.0)


def features(X):
    x1, x2 = X[:, 0], X[:, 1]
    r2 = np.sqrt(2)
    return np.column_stack(
        [np.ones(len(X)), r2 * x1, r2 * x2, x1**2, x2**2, r2 * x1 * x2]
    )


def circles(n_samples, random_state):
    """A disc of radius 0.6 (+1) inside a ring from radius 1 (-1)."""
    rng = np.random.RandomState(random_state)
    X = rng.uniform(-1.3, 1.3, size=(8 * n_samples, 2))
    radius = np.linalg.norm(X, axis=1)
    X = X[(radius <= 0.6) | (radius >= 1.0)][:n_samples]
    return X, np.where(np.linalg.norm(X, axis=1) <= 0.6, 1, -1)


def xor(n_samples, random_state):
    """The sign of x1 x2, kept where |x1 x2| >= 0.15."""
    rng = np.random.RandomState(random_state)
    X = rng.uniform(-1, 1, size=(8 * n_samples, 2))
    X = X[np.abs(X[:, 0] * X[:, 1]) >= 0.15][:n_samples]
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


@pytest.fixture(
    scope="module",
    params=[(circles, 60, 0), (circles, 80, 1), (xor, 60, 2), (xor, 80, 3)],
    ids=["circles-60", "circles-80", "xor-60", "xor-80"],
)
def sample(request):
    make, n, seed = request.param
    X, y = make(n, seed)
    Phi = features(X)
    # R = max sqrt(k(x, x)) = max (1 + ||x||^2)
    return X, y, (1 + (X**2).sum(axis=1)).max(), optimal_margin(Phi, y)[0]


def fit(X, y, **params):
    # tol=None: the papers' algorithms, which stop only when separated
    estimator = KernelPerceptron(**POLY, max_iter=1_000_000, tol=None, **params).fit(
        X, y
    )
    assert estimator.converged_
    assert estimator.score(X, y) == 1.0
    return estimator


def test_no_line_separates_the_samples(sample):
    X, y, _, _ = sample
    line = MarginPerceptron(max_iter=200, random_state=0, tol=None)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        line.fit(X, y)
    assert line.score(X, y) < 1.0
    assert not line.converged_


def test_kernel_perceptron_is_the_perceptron_on_the_features(sample):
    X, y, _, _ = sample
    kernel = fit(X, y, beta="scale", shuffle=False)
    linear = MarginPerceptron(
        beta="scale", fit_intercept=False, shuffle=False, tol=None
    )
    linear.set_params(max_iter=1_000_000).fit(features(X), y)
    assert_array_equal(kernel.n_updates_, linear.n_updates_)
    assert_allclose(kernel.margin_, linear.margin_, rtol=1e-9)
    assert_allclose(kernel._coef_norm, np.linalg.norm(linear.coef_), rtol=1e-9)


@pytest.mark.parametrize("shuffle", [False, True])
def test_novikoff_in_feature_space(sample, shuffle):
    X, y, R, eps = sample
    estimator = fit(X, y, beta=0.0, shuffle=shuffle, random_state=0)
    assert_novikoff(estimator, R, eps)


@pytest.mark.parametrize("relative_beta", [0.1, 1.0, 5.0])
def test_beta_perceptron_in_feature_space(sample, relative_beta):
    X, y, R, eps = sample
    beta = relative_beta * R**2
    estimator = fit(X, y, beta=beta, random_state=1)
    assert_theorem_1(estimator, beta, R, eps)


@pytest.mark.parametrize("relative_beta", [0.1, 1.0])
def test_relative_threshold_in_feature_space(sample, relative_beta):
    """beta_t = b rho^2, rho^2 the largest k(x, x) so far: Theorem 1 with
    beta = b R^2 once every example has been seen."""
    X, y, R, eps = sample
    estimator = fit(X, y, beta=RelativeThreshold(relative_beta), random_state=4)
    assert_theorem_1(estimator, relative_beta * R**2, R, eps)


def test_the_default_threshold_is_a_quarter_of_the_squared_radius(sample):
    X, y, R, eps = sample
    estimator = fit(X, y, random_state=5)
    assert estimator.beta == "auto"
    assert_theorem_1(estimator, 0.25 * R**2, R, eps)


def test_r_independent_perceptron_in_feature_space(sample):
    X, y, R, eps = sample
    estimator = fit(X, y, beta="scale", random_state=2)
    assert_theorem_2(estimator, R, eps)


@pytest.mark.parametrize("alpha", [1.2, 1.3])
def test_infinity_perceptron_in_feature_space(sample, alpha):
    X, y, R, eps = sample
    estimator = fit(X, y, beta="power", alpha=alpha, random_state=3)
    assert_theorem_3(estimator, alpha, R, eps)
