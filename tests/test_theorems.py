"""The theorems of Section 2 of "On the Perceptron's Compression", checked on
separable samples whose optimal margin eps* is computed by a hard-margin SVM.

R is the largest norm of an example and T the number of updates.
"""

import numpy as np
import pytest
from margin_data import (
    SLACK,
    assert_novikoff,
    assert_theorem_1,
    assert_theorem_2,
    assert_theorem_3,
    separable_sample,
)

from skperc import MarginPerceptron
from skperc.metrics import optimal_margin
from skperc.schedules import RelativeThreshold

# (n_samples, n_features, gap, scale): gaps small enough that the bounds
# are far from trivial, scales away from 1 so that R matters.
SAMPLES = [
    (n, d, gap, scale)
    for n, d in [(60, 2), (80, 4), (100, 6)]
    for gap, scale in [(0.02, 1.0), (0.05, 7.0), (0.1, 0.3)]
]


@pytest.fixture(scope="module", params=range(len(SAMPLES) * 2))
def sample(request):
    n, d, gap, scale = SAMPLES[request.param // 2]
    X, y = separable_sample(n, d, gap, scale, random_state=request.param)
    return X, y, np.linalg.norm(X, axis=1).max(), optimal_margin(X, y)[0]


def fit(X, y, **params):
    # tol=None: the papers' algorithms, which stop only when separated
    estimator = MarginPerceptron(
        fit_intercept=False, max_iter=1_000_000, eta0=0.37, tol=None, **params
    ).fit(X, y)
    assert estimator.converged_
    return estimator


@pytest.mark.parametrize("shuffle", [False, True])
def test_novikoff(sample, shuffle):
    X, y, R, eps = sample
    estimator = fit(X, y, beta=0.0, shuffle=shuffle, random_state=0)
    assert_novikoff(estimator, R, eps)


@pytest.mark.parametrize("relative_beta", [0.1, 1.0, 5.0])
def test_beta_perceptron_theorem_1(sample, relative_beta):
    X, y, R, eps = sample
    beta = relative_beta * R**2
    estimator = fit(X, y, beta=beta, random_state=1)
    assert_theorem_1(estimator, beta, R, eps)


@pytest.mark.parametrize("relative_beta", [0.1, 0.25, 1.0, 5.0])
@pytest.mark.parametrize("shuffle", [False, True])
def test_relative_threshold_theorem_1(sample, relative_beta, shuffle):
    """beta_t = b rho^2 with rho the largest norm so far: no threshold
    exceeds b R^2, so Theorem 1 holds with beta = b R^2."""
    X, y, R, eps = sample
    estimator = fit(
        X, y, beta=RelativeThreshold(relative_beta), shuffle=shuffle, random_state=4
    )
    assert_theorem_1(estimator, relative_beta * R**2, R, eps)


def test_r_independent_perceptron_theorem_2(sample):
    X, y, R, eps = sample
    estimator = fit(X, y, beta="scale", random_state=2)
    assert_theorem_2(estimator, R, eps)


@pytest.mark.parametrize("alpha", [1.2, 1.5])
def test_infinity_perceptron_theorem_3(sample, alpha):
    X, y, R, eps = sample
    estimator = fit(X, y, beta="power", alpha=alpha, random_state=3)
    assert_theorem_3(estimator, alpha, R, eps)


def test_the_margin_guarantees_are_not_vacuous():
    """Rosenblatt's perceptron often stops well short of eps* / 3, the
    margin that beta="scale" guarantees: the margin tests above can fail."""
    short = 0
    for seed, (n, d, gap, scale) in enumerate(SAMPLES):
        X, y = separable_sample(n, d, gap, scale, random_state=2 * seed)
        eps = optimal_margin(X, y)[0]
        plain = fit(X, y, beta=0.0, shuffle=False)
        scaled = fit(X, y, beta="scale", shuffle=False)
        short += plain.margin_[0] < eps / 3
        assert scaled.margin_[0] >= eps / 3 / SLACK
    assert short >= len(SAMPLES) // 2


@pytest.mark.parametrize("beta", ["scale", "power", RelativeThreshold(0.25)])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_scale_free_thresholds_do_not_see_the_scale(beta, fit_intercept):
    X, y = separable_sample(80, 3, 0.05, 1.0, random_state=0)
    if fit_intercept:
        X = X + 0.5  # separable by an affine hyperplane only
    base = MarginPerceptron(
        beta=beta,
        fit_intercept=fit_intercept,
        random_state=0,
        max_iter=100_000,
        tol=None,
    )
    reference = base.fit(X, y)
    assert reference.converged_
    coef, intercept = reference.coef_.copy(), reference.intercept_.copy()
    # A power of two scales every operation exactly: the same bits, scaled.
    for c in [2.0**-7, 2.0**9]:
        scaled = base.fit(c * X, y)
        np.testing.assert_array_equal(scaled.coef_, c * coef)
        np.testing.assert_array_equal(scaled.intercept_, c**2 * intercept)
        np.testing.assert_array_equal(scaled.n_updates_, reference.n_updates_)
    # Any other constant gives the same classifier up to rounding.
    scaled = base.fit(3.7 * X, y)
    np.testing.assert_allclose(scaled.coef_, 3.7 * coef, rtol=1e-9)
    np.testing.assert_array_equal(scaled.predict(3.7 * X), base.fit(X, y).predict(X))


def test_a_constant_beta_does_see_the_scale():
    """The same check fails for the beta-perceptron, whose threshold has the
    units of the data squared."""
    X, y = separable_sample(80, 3, 0.05, 1.0, random_state=0)
    base = MarginPerceptron(beta=1.0, fit_intercept=False, random_state=0)
    small = base.fit(X, y).n_updates_.copy()
    assert not np.array_equal(base.fit(2.0**9 * X, y).n_updates_, small)


@pytest.mark.parametrize("beta", [0.0, 1.0, "scale", "power"])
def test_eta0_only_scales_the_weights(beta):
    X, y = separable_sample(80, 3, 0.05, 2.0, random_state=1)
    one = MarginPerceptron(beta=beta, eta0=1.0, random_state=0).fit(X, y)
    quarter = MarginPerceptron(beta=beta, eta0=0.25, random_state=0).fit(X, y)
    np.testing.assert_array_equal(quarter.coef_, 0.25 * one.coef_)
    np.testing.assert_array_equal(quarter.intercept_, 0.25 * one.intercept_)
    np.testing.assert_array_equal(quarter.n_updates_, one.n_updates_)


def test_a_fixed_lift_is_the_perceptron_on_lifted_data():
    """fit_intercept with intercept_scaling=s runs the perceptron on (x, s)."""
    X, y = separable_sample(80, 3, 0.05, 2.0, random_state=2)
    for s in [1.0, 2.5]:
        lifted = np.hstack([X + 1.0, np.full((len(X), 1), s)])
        for beta in [0.0, 0.5, "scale", "power"]:
            common = dict(beta=beta, shuffle=False, max_iter=100_000, tol=None)
            with_intercept = MarginPerceptron(intercept_scaling=s, **common).fit(
                X + 1.0, y
            )
            on_lifted = MarginPerceptron(fit_intercept=False, **common).fit(lifted, y)
            assert with_intercept.converged_
            np.testing.assert_array_equal(with_intercept.coef_, on_lifted.coef_[:, :-1])
            np.testing.assert_array_equal(
                with_intercept.intercept_, on_lifted.coef_[:, -1] * s
            )
