"""skperc.metrics: each function checked against its definition or theorem."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron, LinearProgramClassifier, MarginPerceptron
from skperc.datasets import make_margin_classification, make_two_point_example
from skperc.metrics import (
    compression_bound,
    margin,
    optimal_margin,
    perceptron_bounds,
)
from skperc.schedules import (
    ConstantThreshold,
    PowerThreshold,
    RelativeThreshold,
    SublinearThreshold,
    ThresholdSchedule,
)

SLACK = 1 + 1e-7  # eps* comes from a numerical solver

# Learners through the origin whose updates and margin the theorems of
# Section 2 bound, read from their beta and alpha parameters; a learner
# without n_updates_ is checked on its margin only.
BOUNDED_LEARNERS = [
    lambda: MarginPerceptron(beta=0.0, fit_intercept=False, eta0=0.3),
    lambda: MarginPerceptron(beta=0.5, fit_intercept=False),
    lambda: MarginPerceptron(beta=4.0, fit_intercept=False, shuffle=False),
    lambda: MarginPerceptron(beta="scale", fit_intercept=False),
    lambda: MarginPerceptron(beta="power", alpha=1.3, fit_intercept=False),
    lambda: MarginPerceptron(beta="power", alpha=1.5, fit_intercept=False),
    lambda: MarginPerceptron(beta=RelativeThreshold(0.5), fit_intercept=False),
    lambda: KernelPerceptron(kernel="linear"),
    lambda: KernelPerceptron(kernel="linear", beta=0.5),
    lambda: KernelPerceptron(kernel="linear", beta="scale"),
    lambda: KernelPerceptron(kernel="linear", beta="power", alpha=1.5),
]

# Kernel models with a linear kernel, fitted by margin() through dual_coef_,
# decision_function and _coef_norm: their margin must be that of the
# explicit weights sum_j dual_coef_ x_j.
LINEAR_KERNEL_LEARNERS = [
    lambda: KernelPerceptron(kernel="linear"),
    lambda: KernelPerceptron(kernel="linear", beta="scale", average=True),
    lambda: KernelPerceptron(kernel="linear", beta="power", shuffle=False),
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("multiclass", [False, True])
def test_margin_is_margin_perceptron_margin_to_the_last_bit(
    sparse, fit_intercept, multiclass
):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    if not multiclass:
        y = np.where(y == 0, "first", "other")
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    clf = MarginPerceptron(
        beta="scale", fit_intercept=fit_intercept, max_iter=3, random_state=0
    ).fit(X, y)
    margins = margin(clf, X, y)
    assert margins.shape == clf.margin_.shape == (3 if multiclass else 1,)
    np.testing.assert_array_equal(margins, clf.margin_)


def test_margin_of_any_linear_model_is_its_definition():
    X, y = make_margin_classification(50, 4, margin=0.1, random_state=0)
    X = X + 0.3
    clf = LinearProgramClassifier().fit(X, y)
    w, b = clf.coef_[0], clf.intercept_[0]
    expected = (y * (X @ w + b)).min() / np.linalg.norm(w)
    assert margin(clf, X, y)[0] == pytest.approx(expected, rel=1e-12)
    # negative on a sample that the model does not separate
    assert margin(clf, X, -y)[0] < 0


def test_margin_of_a_weight_vector():
    X, y, w = make_margin_classification(
        60, 5, margin=0.15, radius=2.0, random_state=1, return_coef=True
    )
    assert margin(w, X, y) == pytest.approx(0.15, rel=1e-12)
    assert margin(7.5 * w, X, y) == pytest.approx(0.15, rel=1e-12)
    assert margin(-w, X, y) == pytest.approx(-(np.abs(X @ w).max()), rel=1e-12)
    # two other labels: the larger is +1
    assert margin(w, X, np.where(y > 0, "yes", "no")) == margin(w, X, y)
    assert margin(w, sp.csr_matrix(X), y) == pytest.approx(0.15, rel=1e-12)
    assert margin(np.zeros(5), X, y) == 0.0
    with pytest.raises(ValueError, match="1-dimensional"):
        margin(np.zeros((2, 5)), X, y)
    with pytest.raises(ValueError, match="features"):
        margin(np.zeros(4), X, y)
    with pytest.raises(ValueError, match="two labels"):
        margin(w, X, np.arange(60) % 3)


def test_margin_of_a_pipeline_is_measured_after_its_transformers():
    X, y = make_margin_classification(80, 3, margin=0.2, random_state=2)
    pipe = make_pipeline(StandardScaler(), MarginPerceptron(random_state=0))
    pipe.fit(X, y)
    transformed = pipe[0].transform(X)
    np.testing.assert_array_equal(margin(pipe, X, y), margin(pipe[-1], transformed, y))
    np.testing.assert_array_equal(margin(pipe, X, y), pipe[-1].margin_)


def test_margin_checks_its_input():
    X, y = make_margin_classification(30, 3, margin=0.2, random_state=3)
    clf = MarginPerceptron(random_state=0)
    with pytest.raises(Exception, match="not fitted"):
        margin(clf, X, y)
    clf.fit(X, y)
    with pytest.raises(ValueError, match=r"labels \[5\]"):
        margin(clf, X, np.where(y > 0, 1, 5))
    with pytest.raises(ValueError, match="samples"):
        margin(clf, X, y[:-1])


def test_margin_refuses_what_it_cannot_measure():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    # one-vs-one weights, 6 for 4 classes, are not one per one-vs-rest problem
    four = y < 3
    X4, y4 = np.vstack([X[four], -X[four][:20]]), np.r_[y[four], np.full(20, 3)]
    with pytest.raises(TypeError, match="one-vs-rest"):
        margin(SVC(kernel="linear").fit(X4, y4), X4, y4)
    # a kernel model without a norm in feature space
    with pytest.raises(TypeError, match="KernelPerceptron"):
        margin(SVC().fit(X, y), X, y)
    # weights of 13 features, read on 1 feature: no reshaping into 13 problems
    binary = MarginPerceptron().fit(X, y == 0)
    with pytest.raises(ValueError, match="13 weights"):
        margin(binary, X[:, :1], y == 0)
    assert margin(SVC(kernel="linear").fit(X, y == 0), X, y == 0).shape == (1,)


@pytest.mark.parametrize("make_learner", LINEAR_KERNEL_LEARNERS)
def test_margin_of_a_kernel_model_is_that_of_its_explicit_weights(make_learner):
    X, y = make_margin_classification(60, 4, margin=0.1, random_state=4)
    clf = make_learner().fit(X, y)
    weights = clf.dual_coef_ @ clf.support_vectors_
    explicit = (y * (X @ weights.ravel())).min() / np.linalg.norm(weights)
    assert margin(clf, X, y)[0] == pytest.approx(explicit, rel=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_optimal_margin_is_the_known_margin(seed):
    rng = np.random.RandomState(seed)
    n_features = rng.randint(2, 30)
    radius = rng.choice([0.1, 1.0, 25.0])
    eps = radius * rng.uniform(0.01, 0.5)
    X, y, w = make_margin_classification(
        rng.randint(10, 300),
        n_features,
        eps,
        radius,
        random_state=seed,
        return_coef=True,
    )
    found, coef = optimal_margin(X, y)
    assert found == pytest.approx(eps, rel=1e-9)
    np.testing.assert_allclose(coef, w, atol=1e-7)
    assert np.linalg.norm(coef) == pytest.approx(1.0)


def test_optimal_margin_against_brute_force_in_the_plane():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    direction = np.array([np.cos(1.0), np.sin(1.0)])
    X = X[np.abs(X @ direction) > 0.1]
    y = np.where(X @ direction > 0, 1, -1)

    def best_on(angles):
        units = np.column_stack([np.cos(angles), np.sin(angles)])
        margins = (y[:, None] * (X @ units.T)).min(axis=0)
        return angles[margins.argmax()], margins.max()

    # a coarse grid, then a fine one around its best direction
    coarse, _ = best_on(np.linspace(0, 2 * np.pi, 10_001))
    _, best = best_on(np.linspace(coarse - 1e-3, coarse + 1e-3, 10_001))
    found = optimal_margin(sp.csr_matrix(X), y)[0]
    assert best <= found * SLACK
    assert found == pytest.approx(best, rel=1e-7)


def test_optimal_margin_refuses_a_sample_that_is_not_separable():
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="not linearly separable"):
        optimal_margin(X, [1, -1, 1])
    # separable with an intercept, not through the origin
    with pytest.raises(ValueError, match="not linearly separable"):
        optimal_margin([[1.0], [2.0]], [1, -1])
    assert optimal_margin([[1.0, 1.0], [2.0, 1.0]], [1, -1])[0] > 0


@pytest.mark.parametrize("make_learner", BOUNDED_LEARNERS)
def test_the_bounds_hold_for_the_fitted_learners(make_learner):
    """Theorems 1 to 3 on many random separable samples."""
    rng = np.random.RandomState(0)
    for seed in range(8):
        radius = rng.choice([0.5, 1.0, 6.0])
        X, y = make_margin_classification(
            rng.randint(20, 120),
            rng.randint(2, 8),
            radius * rng.uniform(0.05, 0.3),
            radius,
            random_state=seed,
        )
        learner = make_learner().set_params(max_iter=1_000_000, random_state=seed)
        learner.fit(X, y)
        params = learner.get_params()
        bounds = perceptron_bounds(X, y, beta=params["beta"], alpha=params["alpha"])
        assert bounds.radius == pytest.approx(radius)
        if hasattr(learner, "n_updates_"):
            assert learner.n_updates_[0] <= bounds.max_updates * SLACK
        assert margin(learner, X, y)[0] >= bounds.min_margin / SLACK
        assert margin(learner, X, y)[0] > 0


@pytest.mark.parametrize("beta", [0.0, 2.0, "scale", "power"])
def test_the_bounds_of_a_lifted_sample_hold_with_an_intercept(beta):
    X, y = make_margin_classification(80, 3, margin=0.1, random_state=5)
    X = X + np.array([0.2, -0.1, 0.1])
    s = 1.5
    clf = MarginPerceptron(
        beta=beta, intercept_scaling=s, max_iter=1_000_000, random_state=0, tol=None
    ).fit(X, y)
    bounds = perceptron_bounds(X, y, beta=beta, intercept_scaling=s)
    assert bounds.radius == pytest.approx(np.sqrt((X**2).sum(axis=1).max() + s**2))
    assert clf.n_updates_[0] <= bounds.max_updates * SLACK
    assert clf.margin_[0] >= bounds.min_margin / SLACK


def test_the_bounds_are_the_theorems():
    X, y = make_margin_classification(50, 4, margin=0.1, radius=2.0, random_state=6)
    R, eps = 2.0, 0.1
    plain = perceptron_bounds(X, y)
    assert plain.max_updates == pytest.approx((R / eps) ** 2)
    assert plain.min_margin == 0.0
    constant = perceptron_bounds(X, y, beta=3.0)
    assert constant.max_updates == pytest.approx((6 + R**2) / eps**2)
    assert constant.min_margin == pytest.approx(3 * eps / (6 + R**2))
    scale = perceptron_bounds(X, y, beta="scale")
    assert scale.max_updates == pytest.approx(9 * R**2 / eps**2)
    assert scale.min_margin == pytest.approx(eps / 3)
    power = perceptron_bounds(X, y, beta="power", alpha=1.5)
    assert power.max_updates == pytest.approx((R / eps) ** 4)
    assert power.min_margin == pytest.approx(0.75 * eps - R * (eps / R) ** 3)

    class Custom(ThresholdSchedule):
        def threshold(self, t, radius):
            return 1.0

    class Doubling(RelativeThreshold):
        radius_rule = "double"

    for unbounded in [Custom(), SublinearThreshold(), Doubling()]:
        with pytest.raises(ValueError, match="No theorem.*'auto'"):
            perceptron_bounds(X, y, beta=unbounded)
    with pytest.raises(ValueError, match="alpha"):
        perceptron_bounds(X, y, beta="power", alpha=2.0)


@pytest.mark.parametrize(
    "schedule, parameter",
    [
        (ConstantThreshold(-1.0), "beta"),
        (ConstantThreshold(np.nan), "beta"),
        (RelativeThreshold(-0.5), "beta"),
        (PowerThreshold(alpha=2.5), "alpha"),
    ],
)
def test_bounds_refuse_the_schedules_that_the_learners_refuse(schedule, parameter):
    """ConstantThreshold(-1) gave max_updates -100, PowerThreshold(2.5) a
    margin of -1e5, before any check; the learners refuse them."""
    X, y = make_margin_classification(50, 4, margin=0.1, random_state=6)
    with pytest.raises(ValueError, match=f"'{parameter}' parameter"):
        MarginPerceptron(beta=schedule).fit(X, y)
    with pytest.raises(ValueError, match=f"'{parameter}' parameter"):
        perceptron_bounds(X, y, beta=schedule)


def test_a_subclass_keeping_its_threshold_is_bounded_as_its_base():
    class Relative(RelativeThreshold):
        pass

    X, y = make_margin_classification(50, 4, margin=0.1, radius=2.0, random_state=6)
    assert perceptron_bounds(X, y, beta=Relative(0.5)) == perceptron_bounds(
        X, y, beta=RelativeThreshold(0.5)
    )


def test_compression_bound_is_theorem_6():
    m, d, delta = 10_000, 12, 0.01
    eps = 50 * (d * math.log2(m / d) + math.log2(1 / delta)) / m
    assert compression_bound(m, d, delta) == pytest.approx(eps)
    assert compression_bound(m, d, delta, training_error=0.04) == pytest.approx(
        0.04 + math.sqrt(eps * 0.04) + eps
    )
    assert compression_bound(m, 0, delta) == pytest.approx(
        50 * math.log2(1 / delta) / m
    )
    assert compression_bound(m, d + 1, delta) > compression_bound(m, d, delta)
    assert compression_bound(m, d, delta / 2) > compression_bound(m, d, delta)
    with pytest.raises(ValueError, match="cannot exceed"):
        compression_bound(10, 11, delta)
    with pytest.raises(ValueError, match="delta"):
        compression_bound(10, 1, 1.0)


def test_compression_bound_holds_for_the_perceptron():
    """Train on m examples of a distribution with margin; the true error,
    measured on a large fresh sample, is below the bound fed by n_updates_
    in at least 1 - delta of the runs (here: in all of them)."""
    delta = 0.1
    X, y, w = make_margin_classification(
        200_000, 4, margin=0.3, random_state=0, return_coef=True
    )
    test_X, test_y = X[100_000:], y[100_000:]
    for run in range(5):
        train = slice(run * 20_000, (run + 1) * 20_000)
        clf = MarginPerceptron(fit_intercept=False, random_state=run)
        clf.fit(X[train], y[train])
        bound = compression_bound(20_000, int(clf.n_updates_[0]), delta)
        assert bound < 0.25  # not vacuous
        assert 1 - clf.score(test_X, test_y) <= bound


def _random_separable_sample(seed, smallest_margin=1e-4):
    """A separable sample of known margin eps*, its size, dimension and
    margin drawn at random."""
    rng = np.random.RandomState(seed)
    true_margin = 10 ** rng.uniform(np.log10(smallest_margin), -0.5)
    X, y = make_margin_classification(
        rng.randint(5, 150), rng.randint(2, 8), margin=true_margin, random_state=seed
    )
    return X, y, true_margin


@pytest.mark.parametrize("seed", range(20))
def test_optimal_margin_and_bounds_are_scale_free(seed):
    """Scaled by 2^e, e from -664 to 664 (1e-200 to 1e200), eps* and R scale
    by 2^e to the last bit and the update bounds do not move; scaled by
    powers of 10, to the solver's precision. Two absolute tolerances once
    called these samples inseparable below 1e-5 and above 1e20
    (scikit-learn's SVC does not claim a hard margin at all)."""
    X, y, true_margin = _random_separable_sample(seed, smallest_margin=1e-6)
    eps, coef = optimal_margin(X, y)
    assert eps == pytest.approx(true_margin, rel=1e-8)
    bounds = perceptron_bounds(X, y, beta="power", alpha=1.5)
    for exponent in range(-664, 665, 83):
        scaled = np.ldexp(X, exponent)
        scaled_eps, scaled_coef = optimal_margin(scaled, y)
        assert scaled_eps == np.ldexp(eps, exponent)
        np.testing.assert_array_equal(scaled_coef, coef)
        scaled_bounds = perceptron_bounds(scaled, y, beta="power", alpha=1.5)
        assert scaled_bounds.radius == np.ldexp(bounds.radius, exponent)
        assert scaled_bounds.max_updates == pytest.approx(bounds.max_updates, rel=1e-12)
        assert scaled_bounds.min_margin == pytest.approx(
            np.ldexp(bounds.min_margin, exponent), rel=1e-12
        )
    for exponent in range(-200, 201, 25):
        scale = 10.0**exponent
        scaled_eps, scaled_coef = optimal_margin(X * scale, y)
        # what optimal_margin says is the margin of the vector it returns
        assert scaled_eps == pytest.approx(margin(scaled_coef, X * scale, y), rel=1e-9)
        # and the optimum, to its precision: 1e-16 R / eps*, 1e-10 at 1e-6
        assert scaled_eps == pytest.approx(true_margin * scale, rel=1e-8)


def test_optimal_margin_of_the_reported_cases():
    """A margin of 1e-5 of radius 1, and iris (setosa against the rest,
    lifted) in kilometres, were called inseparable."""
    X, y = make_margin_classification(1000, 5, margin=1e-5, random_state=0)
    assert optimal_margin(X, y)[0] == pytest.approx(1e-5, rel=1e-9)
    X, y = load_iris(return_X_y=True)
    lifted = np.hstack([X, np.ones((len(X), 1))])
    in_cm = optimal_margin(lifted, y == 0)[0]
    assert optimal_margin(lifted * 1e-5, y == 0)[0] == pytest.approx(in_cm * 1e-5)


def _tight_sample(rng, n_samples, n_features, n_support, eps):
    """Examples z_i = y_i x_i of radius about 1 whose optimal margin is
    about eps: n_support of them at eps w + t_i, the t_i orthogonal to the
    unit w and of mean 0 (so that 0 is in their hull), the others farther
    along w."""
    w = rng.standard_normal(n_features)
    w /= np.linalg.norm(w)
    # two unit directions orthogonal to w
    aside = np.linalg.qr(np.column_stack([w, rng.standard_normal((n_features, 2))]))[0]
    across = rng.standard_normal((n_support, n_features))
    across -= np.outer(across @ w, w)
    across -= across.mean(axis=0)
    across /= 2 * np.linalg.norm(across, axis=1).max()
    rest = n_samples - n_support
    far = rng.uniform(2 * eps, 0.5, size=(rest, 1)) * w + 0.5 * (
        rng.uniform(-1, 1, size=(rest, 2)) @ aside[:, 1:].T
    )
    return np.vstack([eps * w + across, far])


def _exact_squared_margin(Z, n_support):
    """eps*^2 of the float examples Z in rational arithmetic, when its
    first n_support rows are the support vectors: 1 / (1' G^-1 1) for
    their Gram matrix G. The conditions that make them the support (G^-1 1
    > 0, z . v >= 1 for every row, v = sum_i (G^-1 1)_i z_i) are asserted,
    exactly."""
    rows = [[Fraction(value) for value in row] for row in Z]
    support = rows[:n_support]
    system = [
        [sum(a * b for a, b in zip(zi, zj, strict=True)) for zj in support]
        + [Fraction(1)]
        for zi in support
    ]
    for column in range(n_support):
        pivot = next(r for r in range(column, n_support) if system[r][column])
        system[column], system[pivot] = system[pivot], system[column]
        for r in range(n_support):
            if r != column and system[r][column]:
                ratio = system[r][column] / system[column][column]
                system[r] = [
                    a - ratio * b
                    for a, b in zip(system[r], system[column], strict=True)
                ]
    alpha = [system[i][-1] / system[i][i] for i in range(n_support)]
    assert min(alpha) > 0
    v = [
        sum(a * z[j] for a, z in zip(alpha, support, strict=True))
        for j in range(len(Z[0]))
    ]
    assert min(sum(a * b for a, b in zip(z, v, strict=True)) for z in rows) >= 1
    return 1 / sum(alpha)


@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-11])
def test_optimal_margin_is_precise_to_1e_16_radius_over_eps(eps):
    """Against eps* of the very floats in rational arithmetic, on samples
    whose support is known: a relative error within 100 times
    1e-16 R / eps* (observed: up to 15 times), down to eps* / R = 1e-11.
    The least distance program's residual, which gave v before, missed by
    1e-16 (R / eps*)^2 and gave no digit below 1e-8."""
    rng = np.random.default_rng(int(-math.log10(eps)))
    for _ in range(8):
        n_features = int(rng.integers(3, 9))
        n_support = int(rng.integers(2, n_features + 1))
        Z = _tight_sample(
            rng, int(rng.integers(n_support + 1, 40)), n_features, n_support, eps
        )
        y = rng.choice([-1, 1], size=len(Z))
        X = y[:, None] * Z
        exact = math.sqrt(_exact_squared_margin(Z, n_support))
        radius = np.linalg.norm(Z, axis=1).max()
        found, coef = optimal_margin(X, y)
        assert abs(found - exact) <= 100 * 1e-16 * radius
        assert margin(coef, X, y) == pytest.approx(found, rel=1e-15 * radius / exact)


def test_a_margin_below_the_precision_of_optimal_margin_is_named_in_its_error():
    """The two-point example, separable by the margin eps at radius about
    1: found at 1e-9 and 1e-11; at 1e-13 an error that names the limit,
    1e-12, where it read as a sample that no hyperplane separates."""
    for eps in [1e-9, 1e-11]:
        X, y = make_two_point_example(eps)
        assert optimal_margin(X, y)[0] == pytest.approx(eps, rel=1e-16 / eps)
    X, y = make_two_point_example(1e-13)
    assert margin([0.0, 1.0], X, y) == pytest.approx(1e-13)
    with pytest.raises(ValueError, match=r"or its margin eps\* is below about 1e-12"):
        optimal_margin(X, y)


def test_the_margin_of_huge_or_tiny_weights_is_that_of_their_direction():
    """||w|| overflowed beyond 1e154 and underflowed below 1e-154: the
    margin read 0 (numpy.linalg.norm has the same limits)."""
    X = np.array([[2.0, 1.0], [1.0, -3.0]])
    expected = margin([3.0, 4.0], X, [1, -1])
    for exponent in range(-1070, 1020, 50):
        coef = np.ldexp([3.0, 4.0], exponent)
        assert margin(coef, X, [1, -1]) == pytest.approx(expected, rel=1e-15)
    for scale in [1e-300, 1e-200, 1e200, 1e300]:
        assert margin([3.0 * scale, 4.0 * scale], X, [1, -1]) == pytest.approx(
            expected, rel=1e-14
        )


def test_extreme_bounds_are_inf_not_an_error():
    """(R / eps*)^(2 / (2 - alpha)) beyond the float range raised
    OverflowError for alpha near 2: it is inf, a bound that says nothing."""
    X, y = make_margin_classification(50, 3, margin=1e-3, random_state=0)
    bounds = perceptron_bounds(X, y, beta="power", alpha=1.99)
    assert bounds.max_updates == math.inf
    assert 0 < bounds.min_margin < bounds.optimal_margin
    assert perceptron_bounds(X * 1e200, y, beta=1e-300).max_updates == pytest.approx(
        perceptron_bounds(X, y).max_updates
    )


def test_compression_bound_of_the_smallest_delta():
    """log2(1 / 5e-324) overflowed to inf and the bound was NaN."""
    bound = compression_bound(100, 5, delta=5e-324)
    assert bound == pytest.approx(50 * (5 * math.log2(20) + 1074) / 100)
    assert compression_bound(100, 5, 5e-324, training_error=0.5) > bound
