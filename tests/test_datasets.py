"""skperc.datasets: each sample has the property its source states."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from skperc import HalvingClassifier, KernelPerceptron, MarginPerceptron
from skperc._norms import stable_norm
from skperc.datasets import (
    adversarial_basis_mistakes,
    make_margin_classification,
    make_nested_boolean,
    make_two_point_example,
)
from skperc.metrics import optimal_margin

# Deterministic online learners with partial_fit, for the adversary of
# Claim 1.4 (the kernel perceptron and the halving algorithm join them).
ONLINE_LEARNERS = [
    lambda: MarginPerceptron(),
    lambda: MarginPerceptron(beta="scale", fit_intercept=False),
    lambda: MarginPerceptron(beta="power", average=True),
    lambda: MarginPerceptron(beta=1.0, intercept_scaling=1.0),
    lambda: KernelPerceptron(),
    lambda: KernelPerceptron(kernel="poly", degree=2, beta="scale"),
    # Randomized halving is left out: Claim 1.4 is about deterministic
    # learners, and its online predictions are fresh draws.
    lambda: HalvingClassifier(),
]


@pytest.mark.parametrize("seed", range(6))
def test_margin_classification_has_the_margin_and_radius_it_says(seed):
    rng = np.random.RandomState(seed)
    n_samples, n_features = rng.randint(2, 200), rng.randint(2, 40)
    radius = rng.choice([0.2, 1.0, 30.0])
    eps = radius * rng.uniform(0.001, 1.0)
    X, y, w = make_margin_classification(
        n_samples, n_features, eps, radius, random_state=seed, return_coef=True
    )
    assert X.shape == (n_samples, n_features)
    assert set(np.unique(y)) == {-1, 1}
    assert np.linalg.norm(w) == pytest.approx(1.0)
    assert np.linalg.norm(X, axis=1).max() == pytest.approx(radius, rel=1e-12)
    assert (y * (X @ w)).min() == pytest.approx(eps, rel=1e-9)
    assert optimal_margin(X, y)[0] == pytest.approx(eps, rel=1e-7)
    again = make_margin_classification(
        n_samples, n_features, eps, radius, random_state=seed
    )
    np.testing.assert_array_equal(again[0], X)


@pytest.mark.parametrize("radius", [1e-300, 1e-200, 1e-100, 1e100, 1e200, 1e300])
def test_margin_classification_at_extreme_radii(radius):
    """radius^2 raised OverflowError beyond 1e154, and underflowed to a
    sample on the line of w* below 1e-154."""
    for seed in range(5):
        X, y, w = make_margin_classification(
            40, 3, radius * 0.1, radius, random_state=seed, return_coef=True
        )
        assert np.isfinite(X).all()
        radii = stable_norm(X, axis=1)
        assert radii.max() == pytest.approx(radius, rel=1e-12)
        assert (y * (X @ w)).min() == pytest.approx(radius * 0.1, rel=1e-9)
        # the examples off the margin are not all on the line of w*
        across = X - np.outer(X @ w, w)
        assert (stable_norm(across, axis=1) > radius * 1e-3).any()


def test_margin_classification_checks_its_parameters():
    with pytest.raises(ValueError, match="cannot exceed radius"):
        make_margin_classification(10, 3, margin=2.0, radius=1.0)
    with pytest.raises(ValueError, match="n_features"):
        make_margin_classification(10, 1, margin=0.1)
    X, y = make_margin_classification(10, 3, margin=1.0, shuffle=False)
    np.testing.assert_allclose(X[0], -X[1])  # margin = radius: on the axis


def nested_formula(n, point):
    """f_2n written out as the formula of Anthony and Shawe-Taylor."""
    u = dict(enumerate(point.astype(bool), start=1))
    text = "(u[2] and u[1])"
    for k in range(2, n + 1):
        text = f"(u[{2 * k}] and (u[{2 * k - 1}] or {text}))"
    return int(eval(text, {}, {"u": u}))


@pytest.mark.parametrize("n", [1, 2, 3, 6, 12])
def test_nested_boolean_labels_are_f_2n_on_the_specifying_sample(n):
    X, y = make_nested_boolean(n)
    assert X.shape == (2 * n + 1, 2 * n)
    assert set(np.unique(X)) <= {0.0, 1.0}
    assert len(np.unique(X, axis=0)) == 2 * n + 1
    assert y.tolist() == [nested_formula(n, x) for x in X]
    if n > 1:  # S_n = {x01 : x in S_n-1} + {11...10, 00...011}
        previous, _ = make_nested_boolean(n - 1)
        np.testing.assert_array_equal(X[: 2 * n - 1, :-2], previous)
        np.testing.assert_array_equal(X[: 2 * n - 1, -2:], [[0, 1]] * (2 * n - 1))
        np.testing.assert_array_equal(X[-2], [1] * (2 * n - 1) + [0])
        np.testing.assert_array_equal(X[-1], [0] * (2 * n - 2) + [1, 1])


@pytest.mark.parametrize("n", range(1, 9))
def test_the_perceptron_needs_sqrt3_to_the_n_minus_1_updates(n):
    """Theorem 3 of Anthony and Shawe-Taylor: the perceptron with a learned
    threshold (a lift of 1), cycling through S_n, updates at least
    sqrt(3)^(n-1) times before it is consistent."""
    X, y = make_nested_boolean(n)
    # tol=None: the perceptron of the theorem, which stops only when consistent
    clf = MarginPerceptron(
        intercept_scaling=1.0, shuffle=False, max_iter=100_000_000, tol=None
    ).fit(X, y)
    assert clf.converged_
    assert clf.score(X, y) == 1.0
    assert clf.n_updates_[0] >= math.sqrt(3) ** (n - 1)
    # Proposition 1 on the consistent weights it found
    weights = clf.coef_[0]
    assert weights[:2].min() > 0
    assert weights[-1] >= math.sqrt(3) ** (n - 1) * weights[:2].min()


@pytest.mark.parametrize("make_learner", ONLINE_LEARNERS)
@pytest.mark.parametrize("delta", [1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1])
def test_the_adversary_forces_one_mistake_per_basis_vector(make_learner, delta):
    learner = make_learner()
    result = adversarial_basis_mistakes(learner, delta)
    n = round(1 / delta**2)
    assert result.n_mistakes == n
    np.testing.assert_array_equal(result.X, np.eye(n))
    # the labels are those of a unit vector with margin delta
    assert np.linalg.norm(result.coef) == pytest.approx(1.0)
    assert result.margin == pytest.approx(delta)
    np.testing.assert_allclose(result.y * (result.X @ result.coef), delta)
    # replayed on a fresh learner, every prediction after the first is wrong
    replay = clone(learner)
    replay.partial_fit(result.X[:1], result.y[:1], classes=[-1, 1])
    for i in range(1, n):
        assert replay.predict(result.X[i : i + 1])[0] != result.y[i]
        replay.partial_fit(result.X[i : i + 1], result.y[i : i + 1])
    # the learner's own count: halving's online mistakes, or the perceptron's
    # updates, one per mistake here (the first one included: sign(0) = +1)
    own = getattr(result.estimator, "n_mistakes_", None)
    own = result.estimator.n_updates_ if own is None else own
    assert own.sum() == n
    assert not hasattr(learner, "classes_")  # the estimator passed is untouched


def test_the_adversary_is_sharp_for_the_perceptron():
    """Novikoff: at most 1 / margin^2 updates on the adversary's sequence,
    which is exactly the number of mistakes it forced."""
    result = adversarial_basis_mistakes(MarginPerceptron(), delta=0.2)
    clf = MarginPerceptron(fit_intercept=False, shuffle=False).fit(result.X, result.y)
    assert clf.n_updates_[0] <= result.n_mistakes
    assert result.n_mistakes == pytest.approx(1 / result.margin**2)


def test_the_adversary_rounds_up_when_1_over_delta_squared_is_not_whole():
    result = adversarial_basis_mistakes(MarginPerceptron(), delta=0.3)
    assert result.n_mistakes == math.ceil(1 / 0.3**2) == 12
    assert result.margin == pytest.approx(1 / math.sqrt(12))
    assert result.margin < 0.3


@pytest.mark.parametrize("epsilon", [0.6, 0.1, 0.01])
def test_the_two_point_example(epsilon):
    X, y = make_two_point_example(epsilon)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    eps, w = optimal_margin(X, y)
    assert eps == pytest.approx(epsilon, rel=1e-9)
    np.testing.assert_allclose(w, [0.0, 1.0], atol=1e-9)


@pytest.mark.parametrize("alpha", [1.3, 1.5])
def test_the_infinity_perceptron_running_time_is_sharp_on_two_points(alpha):
    """Remark 1: Omega((1/eps)^(2/(2-alpha))) updates, the order of the
    upper bound of Theorem 3."""
    exponent = 2 / (2 - alpha)
    updates = []
    for epsilon in [0.1, 0.05, 0.025]:
        X, y = make_two_point_example(epsilon)
        clf = MarginPerceptron(
            beta="power",
            alpha=alpha,
            fit_intercept=False,
            max_iter=10_000_000,
            tol=None,
        ).fit(X, y)
        assert 0.25 * (1 / epsilon) ** exponent <= clf.n_updates_[0]
        assert clf.n_updates_[0] <= (1 / epsilon) ** exponent
        updates.append(clf.n_updates_[0])
    slopes = np.diff(np.log(updates)) / np.log(2)
    np.testing.assert_allclose(slopes, exponent, rtol=0.1)
