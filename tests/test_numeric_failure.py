"""No silent numeric failure: values that overflow stop training with a
ValueError that says "non-finite" and names the remedy, and inputs that do
not overflow fit with finite attributes."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import ESTIMATORS
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)
from skperc.datasets import make_margin_classification

# The first configuration of each estimator class.
FIRST_CONFIGURATIONS = list({type(e): e for e in reversed(ESTIMATORS)}.values())


def _noisy_sample(n_samples=60, seed=0):
    """Two classes that overlap (no run separates them), in the unit ball."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, 3)
    y = (X[:, 0] + 0.5 * rng.randn(n_samples) > 0).astype(int)
    return X / np.linalg.norm(X, axis=1).max(), y


def _separable_sample():
    """Four points separated with a wide margin, of largest |x_ij| 1."""
    X = np.array([[1.0, 0.2], [-1.0, -0.2], [0.9, -0.1], [-0.9, 0.1]])
    return X, np.array([1, 0, 1, 0])


def _epoch_of(message):
    return int(re.search(r"in epoch (\d+)", message).group(1))


def _fitted_arrays(estimator):
    """The numeric fitted attributes of an estimator (and of the fitted
    estimators it holds)."""
    for name, value in vars(estimator).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if hasattr(value, "__sklearn_tags__") or hasattr(value, "get_params"):
            yield from _fitted_arrays(value)
            continue
        array = np.asarray(value) if np.isscalar(value) else value
        if isinstance(array, np.ndarray) and array.dtype.kind in "fc":
            yield name, array


@pytest.mark.parametrize("scale", [2.0**-990, 2.0**500, 2.0**1000, 2.0**1020])
@pytest.mark.parametrize(
    "estimator", FIRST_CONFIGURATIONS, ids=lambda e: type(e).__name__
)
def test_huge_or_tiny_input_fits_finite_or_raises_non_finite(estimator, scale):
    X, y = _separable_sample()
    X = X * scale
    estimator = clone(estimator)
    if getattr(estimator, "kernel", None) == "precomputed":
        X = X @ X.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            estimator.fit(X, y)
        except ValueError as error:
            # an overflow, or products of tiny values that underflow
            assert "non-finite" in str(error) or "underflows" in str(error)
            assert "StandardScaler" in str(error)
            return
    for name, array in _fitted_arrays(estimator):
        assert np.isfinite(array).all(), name
    assert set(estimator.predict(X)) <= set(y)


# MarginPerceptron


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_margin_perceptron_large_eta0_stops_at_the_first_update(container):
    X, y = _separable_sample()
    X = 2 * X
    eta0 = 1e308
    with np.errstate(over="ignore"):
        assert not np.isfinite(eta0 * X).all()
    clf = MarginPerceptron(eta0=eta0, fit_intercept=False, max_iter=10**6)
    with pytest.raises(ValueError, match="non-finite") as error:
        clf.fit(container(X), y)
    message = str(error.value)
    assert "epoch 1 (problem 0, 1 updates counted)" in message
    assert "lower eta0" in message


def test_margin_perceptron_radius_overflow_names_it():
    X, y = _separable_sample()
    X = X * 1e160
    with np.errstate(over="ignore"):
        assert np.isinf((X**2).sum(axis=1)).all()
    with pytest.raises(ValueError, match="non-finite") as error:
        MarginPerceptron().fit(X, y)
    assert "squared norm" in str(error.value)
    assert "StandardScaler" in str(error.value)


def test_margin_perceptron_power_run_stops_where_it_overflows():
    # Norms near sqrt(max float): the growing weights overflow the decision
    # values after some hundred updates of a run asked for 10**6 epochs.
    X, y = _noisy_sample()
    X = X * 3e153
    assert np.isfinite((X**2).sum(axis=1)).all()
    clf = MarginPerceptron(beta="power", max_iter=10**6, random_state=0)
    with pytest.raises(ValueError, match="non-finite") as error:
        clf.fit(X, y)
    assert _epoch_of(str(error.value)) < 100


def test_margin_perceptron_largest_finite_input_fits():
    X, y = _separable_sample()
    X = X * 1e153
    clf = MarginPerceptron(beta="power", random_state=0).fit(X, y)
    for name, array in _fitted_arrays(clf):
        assert np.isfinite(array).all(), name
    assert clf.score(X, y) == 1.0


@pytest.mark.parametrize("estimator", [MarginPerceptron(), KernelPerceptron()])
def test_partial_fit_overflow_leaves_the_model_unchanged(estimator):
    X, y = _noisy_sample()
    half = len(y) // 2
    clf = clone(estimator).set_params(random_state=0)
    clf.partial_fit(X[:half], y[:half], classes=[0, 1])
    before = {name: array.copy() for name, array in _fitted_arrays(clf)}
    huge = X[half:] * 1e160
    with np.errstate(over="ignore"):
        assert np.isinf((huge**2).sum(axis=1)).any()
    with pytest.raises(ValueError, match="non-finite"):
        clf.partial_fit(huge, y[half:])
    for name, array in _fitted_arrays(clf):
        np.testing.assert_array_equal(array, before[name], err_msg=name)
    # The run goes on as if the batch had not come.
    clf.partial_fit(X[half:], y[half:])
    reference = clone(estimator).set_params(random_state=0)
    reference.partial_fit(X[:half], y[:half], classes=[0, 1])
    reference.partial_fit(X[half:], y[half:])
    np.testing.assert_array_equal(clf.predict(X), reference.predict(X))
    np.testing.assert_array_equal(clf.n_updates_, reference.n_updates_)


@pytest.mark.parametrize(
    "estimator",
    # a precomputed kernel takes kernel values, not the huge inputs here
    [e for e in FIRST_CONFIGURATIONS if getattr(e, "kernel", None) != "precomputed"],
    ids=lambda e: type(e).__name__,
)
def test_outputs_refuse_decision_values_beyond_the_float_range(estimator):
    """On inputs near the largest double, every output is finite or raises
    the non-finite error: no inf or NaN score, no class guessed from one."""
    X, y = _noisy_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = clone(estimator).fit(X, y)
    signs = np.array([[1, 1, -1], [-1, 1, 1], [1, -1, 1], [1, 1, 1], [-1, -1, 1]])
    huge = 1e308 * signs
    for method in ("decision_function", "predict_proba", "predict"):
        if not hasattr(clf, method):
            continue
        try:
            outputs = getattr(clf, method)(huge)
        except ValueError as error:
            assert "non-finite" in str(error)
            continue
        if method == "predict":
            assert set(outputs) <= set(y)
        else:
            assert np.isfinite(outputs).all()


def test_outputs_raise_on_a_nan_decision_value():
    X = np.array([[2.0, -2.0], [-2.0, 2.0]])
    clf = MarginPerceptron(fit_intercept=False, shuffle=False).fit(X, [1, 0])
    # Sparse products are summed one by one: 2e308 - 2e308 is inf - inf.
    huge = sp.csr_matrix([[1e308, 1e308]])
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(1e308 * clf.coef_[0, 0] + 1e308 * clf.coef_[0, 1])
    for method in (clf.decision_function, clf.predict):
        with pytest.raises(ValueError, match="non-finite"):
            method(huge)


# KernelPerceptron


def _overflowing_kernel(x, z):
    """A kernel of one pair whose product overflows on huge inputs."""
    return float(np.prod(x) * np.prod(z) * 1e300)


@pytest.mark.parametrize(
    "params, scale, naive_kernel",
    [
        (
            dict(kernel="poly", degree=3, gamma="auto"),
            1e110,
            lambda X: (X @ X.T / 2 + 1) ** 3,
        ),
        (dict(kernel="linear"), 1e160, lambda X: X @ X.T),
        # exp(-gamma ||x - x'||^2) from the expanded squared distance
        (
            dict(kernel="rbf", gamma="auto"),
            1e160,
            lambda X: (X**2).sum(axis=1) - 2 * X @ X.T,
        ),
        (
            dict(kernel=_overflowing_kernel),
            1e5,
            lambda X: np.array([[_overflowing_kernel(a, b) for b in X] for a in X]),
        ),
    ],
    ids=["poly", "linear", "rbf", "callable"],
)
def test_kernel_perceptron_kernel_overflow(params, scale, naive_kernel):
    X, y = _separable_sample()
    X = X * scale
    clf = KernelPerceptron(max_iter=10**6, **params)
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(naive_kernel(X)).all()
    with pytest.raises(ValueError, match="non-finite") as error:
        clf.fit(X, y)
    assert "kernel values" in str(error.value)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("p, q", [(2, 3), (300, 420), (400, 448)])
def test_budgeted_kernel_perceptron_nan_kernel_value_stops_the_loop(p, q, n_jobs):
    # A "poly" kernel of degree 2.5 is NaN on a negative base: here only
    # between x_p and x_q, where x_p is a support vector when x_q is
    # examined. At (2, 3) x_p entered the support after the kernel row of
    # x_q over it was computed (one block); at (300, 420) that row holds
    # x_p (a later block); at (400, 448), with two threads, the row was
    # computed while the block of x_p was examined. Either way the loop
    # finds the kernel value, and names it NaN, before the decision value
    # that it makes NaN.
    rng = np.random.RandomState(0)
    X = np.column_stack([np.ones(600), rng.uniform(-0.1, 0.1, size=(600, 2))])
    X[p] = [1.0, 5.0, 0.0]
    X[q] = [1.0, -5.0, 0.0]
    y = np.arange(600) % 2
    with np.errstate(invalid="ignore"):
        nan = np.isnan((0.5 * X @ X.T) ** 2.5)
    assert_array_equal(np.argwhere(nan), [[p, q], [q, p]])
    params = dict(
        kernel="poly",
        degree=2.5,
        gamma=0.5,
        coef0=0.0,
        budget=150,
        budget_strategy="remove",
        shuffle=False,
        early_stopping=False,
        max_iter=1,
        n_jobs=n_jobs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        before = KernelPerceptron(**params).fit(X[:q], y[:q])
    assert p in before.support_
    with pytest.raises(ValueError, match="kernel values of kernel='poly'") as error:
        KernelPerceptron(**params).fit(X, y)
    assert "degree=2.5) are NaN" in str(error.value)
    assert "(in epoch 1)" in str(error.value)


@pytest.mark.parametrize("n_features", [3, 30])
def test_kernel_perceptron_nan_in_the_last_rows_of_a_column_on_two_threads(
    n_features,
):
    # Two threads share the rows of a column of 9,000 (from 8,192), in
    # pieces that either may take; the NaN between x_2 and x_8995 is in the
    # last piece. Rows of 3 features add each column at once; rows of 30
    # (2.2 MB) hold updates back and add them together. Either way two
    # threads stop where one does, at the kernel value, and name it NaN,
    # before the decision value that it makes NaN.
    rng = np.random.RandomState(0)
    n, p, q = 9_000, 2, 8_995
    X = np.column_stack([np.ones(n), rng.uniform(-0.1, 0.1, size=(n, n_features - 1))])
    X[[p, q]] = 0.0
    X[p, :2] = [1.0, 5.0]
    X[q, :2] = [1.0, -5.0]
    y = np.arange(n) % 2
    params = dict(
        kernel="poly",
        degree=2.5,
        gamma=0.5,
        coef0=0.0,
        shuffle=False,
        early_stopping=False,
        max_iter=3,
    )
    messages = []
    for n_jobs in (1, 2):
        with pytest.raises(ValueError, match="kernel values of kernel='poly'") as error:
            KernelPerceptron(n_jobs=n_jobs, **params).fit(X, y)
        messages.append(str(error.value))
    assert "degree=2.5) are NaN" in messages[0]
    assert "(in epoch 1)" in messages[0]
    assert messages[1] == messages[0]


def test_kernel_perceptron_gamma_scale_of_overflowing_data():
    X, y = _separable_sample()
    with pytest.raises(ValueError, match="variance of X .*overflowed"):
        KernelPerceptron().fit(X * 1e160, y)


def test_kernel_perceptron_decision_values_overflow_in_the_loop():
    X, y = _noisy_sample()
    X = X * 3e153
    clf = KernelPerceptron(kernel="linear", beta="power", max_iter=10**6)
    with pytest.raises(ValueError, match="non-finite") as error:
        clf.fit(X, y)
    assert "decision value" in str(error.value)
    assert _epoch_of(str(error.value)) < 1000


def test_kernel_perceptron_precomputed_inf_is_rejected_by_validation():
    X, y = _separable_sample()
    gram = X @ X.T
    gram[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        KernelPerceptron(kernel="precomputed").fit(gram, y)


# MarginMLPClassifier


def test_margin_mlp_large_learning_rate_stops_early():
    X, y = _noisy_sample()
    learning_rate = 1e300
    # After a step both layers' weights are of the order of the rate, and
    # the output multiplies them.
    with np.errstate(over="ignore"):
        assert np.isinf(np.float64(learning_rate) ** 2)
    clf = MarginMLPClassifier(
        (8,),
        solver="sgd",
        learning_rate_init=learning_rate,
        max_iter=10**6,
        random_state=0,
    )
    with pytest.raises(ValueError, match="non-finite") as error:
        clf.fit(X, y)
    assert "learning_rate_init" in str(error.value)
    assert _epoch_of(str(error.value)) <= 2


# LinearProgramClassifier


def test_linear_program_weights_beyond_float_range_raise():
    X = np.array([[5e-309], [-5e-309]])
    with np.errstate(divide="ignore", over="ignore"):
        assert np.isinf(1 / X[0, 0])
    with pytest.raises(ValueError, match="non-finite"):
        LinearProgramClassifier().fit(X, [1, 0])


@pytest.mark.parametrize("scale", [1e-300, 1e150, 1e300])
@pytest.mark.parametrize("objective", ["feasibility", "l1_margin"])
def test_linear_program_separates_at_any_scale(scale, objective):
    X, y = _separable_sample()
    clf = LinearProgramClassifier(objective=objective).fit(X * scale, y)
    assert np.isfinite(clf.coef_).all() and np.isfinite(clf.intercept_).all()
    assert clf.score(X * scale, y) == 1.0


# HalvingClassifier


def test_halving_thresholds_between_values_near_the_float_max():
    X = np.array([[-1.5e308], [1.5e308], [-1e308], [1e308]])
    y = np.array([0, 1, 0, 1])
    with np.errstate(over="ignore"):
        assert np.isinf(np.interp([1.5], [1, 2], [-1e308, 1e308])).all()
    clf = HalvingClassifier(concepts="stumps").fit(X, y)
    thresholds = clf.concepts_.thresholds_
    assert np.isfinite(thresholds).all()
    assert clf.score(X, y) == 1.0


# Inputs so small that their products underflow


def _underflow_estimators():
    schedules = (0.0, "scale", "power")
    return [MarginPerceptron(beta=beta, random_state=0) for beta in schedules] + [
        KernelPerceptron(kernel="linear", beta=beta, random_state=0)
        for beta in schedules
    ]


@pytest.mark.parametrize("scale", [1e-162, 1e-200, 1e-300])
@pytest.mark.parametrize(
    "estimator",
    [*_underflow_estimators(), KernelPerceptron(kernel="cosine", random_state=0)],
    ids=repr,
)
def test_inputs_whose_products_underflow_are_refused_before_any_work(estimator, scale):
    """Every squared norm and decision value underflowed: the perceptrons
    scored 0.485 on separable data and blamed separability in a
    ConvergenceWarning (scikit-learn's Perceptron does the same)."""
    X, y = make_margin_classification(200, 3, margin=0.1, random_state=0)
    for tiny in (X * scale, sp.csr_matrix(X * scale)):
        clf = clone(estimator)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            with pytest.raises(ValueError, match="underflows") as error:
                clf.fit(tiny, y)
        assert "power of 2" in str(error.value)
        assert not hasattr(clf, "classes_")
        with pytest.raises(ValueError, match="underflows"):
            clone(estimator).partial_fit(tiny, y, classes=[-1, 1])


@pytest.mark.parametrize("kernel", ["rbf", "poly", "laplacian"])
@pytest.mark.parametrize("scale", [1e-155, 1e-170, 1e-300])
def test_gamma_scale_of_inputs_whose_squares_underflow_is_refused(kernel, scale):
    """gamma='scale' divides by the variance of X: where every square
    underflows, that variance was a subnormal number (gamma inf, NaN kernel
    values blamed on the kernel) or 0 (gamma 1, taken for constant data,
    and a kernel of constant values that scored 0.52 on separable data)."""
    X, y = make_margin_classification(200, 3, margin=0.1, random_state=0)
    clf = KernelPerceptron(kernel=kernel, random_state=0)
    with pytest.raises(ValueError, match="underflows") as error:
        clf.fit(X * scale, y)
    assert "gamma='scale'" in str(error.value)
    assert not hasattr(clf, "classes_")
    # a float gamma is the user's: no variance is taken
    KernelPerceptron(kernel=kernel, gamma=1.0, max_iter=2).fit(X * scale, y)


def test_gamma_scale_that_overflows_is_refused():
    """A variance so small that 1 / (n_features * variance) overflows."""
    X = np.zeros((100, 3))
    X[0, 0], X[1, 1] = 2e-154, -2e-154
    y = np.arange(100) % 2
    with pytest.raises(ValueError, match="non-finite") as error:
        KernelPerceptron().fit(X, y)
    assert "gamma='scale'" in str(error.value)


@pytest.mark.parametrize("estimator", _underflow_estimators(), ids=repr)
def test_the_scale_free_classifier_at_the_smallest_scale_taken(estimator):
    """Just above the refusal, an exact power of 2 changes no classifier."""
    X, y = make_margin_classification(200, 3, margin=0.1, random_state=0)
    reference = clone(estimator).fit(X, y)
    small = clone(estimator).fit(X * 2.0**-480, y)
    assert small.converged_
    assert_array_equal(small.predict(X * 2.0**-480), reference.predict(X))
    assert small.score(X * 2.0**-480, y) == 1.0


# Kernels that give NaN are named, not taken for an overflow


def _nan_kernel(x, z):
    """A kernel of one pair that is NaN where x . z < 0."""
    return float(np.sqrt(x @ z)) if x @ z >= 0 else float("nan")


@pytest.mark.parametrize(
    "params, named",
    [
        (dict(kernel="poly", degree=0.5, gamma=1.0, coef0=0.0), "degree=0.5"),
        (dict(kernel=_nan_kernel), "_nan_kernel"),
    ],
    ids=["fractional-degree", "callable"],
)
def test_nan_kernel_values_are_reported_as_nan(params, named):
    """They were reported as 'overflowed ... scale the input features',
    which cannot mend a kernel undefined on the input."""
    X, y = _separable_sample()
    with np.errstate(invalid="ignore"):
        with pytest.raises(ValueError, match="are NaN") as error:
            KernelPerceptron(**params).fit(X, y)
    message = str(error.value)
    assert named in message
    assert "overflow" not in message and "StandardScaler" not in message


def test_kernel_overflow_is_still_reported_as_overflow():
    X, y = _separable_sample()
    with pytest.raises(ValueError, match="overflowed") as error:
        KernelPerceptron(kernel="poly", degree=3, gamma="auto", max_iter=10**6).fit(
            X * 1e110, y
        )
    assert "NaN" not in str(error.value)


@pytest.mark.parametrize("estimator", _underflow_estimators(), ids=repr)
def test_tiny_batches_continue_a_run_of_normal_scale(estimator):
    """Only a run's first values are checked: a tiny batch after normal
    ones makes products with normal weights, which do not underflow."""
    X, y = make_margin_classification(200, 3, margin=0.1, random_state=0)
    clf = clone(estimator).partial_fit(X[:100], y[:100], classes=[-1, 1])
    clf.partial_fit(X[100:] * 1e-200, y[100:])
    assert np.isfinite(clf.decision_function(X)).all()
