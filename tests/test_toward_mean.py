"""What a fit that separates answers with under ``average="auto"``.

The theorems' margin rests on two facts about the last function ``f``: every
example has ``y f(x)`` at least the threshold the last epoch passed, and
``||f||`` is bounded by the run's updates. The fit answers with the point of
the segment from ``f`` to the mean of the run's functions that lies furthest
toward the mean while, scaled to ``||f||``, it keeps the first fact: so it
keeps both, and the theorems' margin. Each test recomputes that point in
numpy from the last function and the mean (the fits with ``average=False``
and ``average=True``, which make the same updates) and checks the answer
against it, on many random samples.
"""

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.schedules import checked_schedule

GRID = np.linspace(0.0, 1.0, 2001)


def _separable_samples():
    """Random samples of margins eps*/R from 0.3 down to 0.02, of several
    radii and dimensions."""
    rng = np.random.RandomState(1)
    for seed in range(25):
        radius = 10.0 ** rng.uniform(-2, 2)
        relative = np.exp(rng.uniform(np.log(0.02), np.log(0.3)))
        X, y = make_margin_classification(
            rng.randint(20, 120),
            rng.randint(2, 8),
            relative * radius,
            radius,
            random_state=seed,
        )
        yield seed, X, y, radius


SAMPLES = list(_separable_samples())


def _threshold(estimator, beta, problem, scale=1.0):
    """The threshold of the next update of ``problem``, as the loop has it."""
    run = estimator._run
    schedule = checked_schedule(beta, estimator.alpha)
    t = int(run.n_updates[problem]) + 1
    return scale * schedule.threshold(t, np.sqrt(run.radius[1]))


def _margins(signs, X, w):
    """y f(x) of the function of coordinates w on the rows of X."""
    return signs * (X @ w)


def _kernel_product(K, a, b):
    """<f, g> of the functions of dual coefficients a and b."""
    return a @ K @ b


def _check_answer(answer, last, mean, products, margins, threshold):
    """The answer ``answer`` (a vector of the function's coordinates) against
    the point the grid finds between ``last`` and ``mean``, where
    ``products(u, v)`` is the inner product and ``margins(u)`` the
    ``y f(x)`` of the function of coordinates ``u`` on the examples.
    Returns the answer's step toward the mean (None where the two are one
    function)."""
    norm = np.sqrt(products(last, last))
    feasible = [
        margins((1 - t) * last + t * mean).min()
        >= threshold * np.sqrt(products(w := (1 - t) * last + t * mean, w)) / norm
        for t in GRID
    ]
    assert feasible[0]
    # the feasible steps are an interval from 0
    grid_step = GRID[np.flatnonzero(feasible)].max()
    assert all(feasible[: np.flatnonzero(feasible).max() + 1])
    # the two facts: the threshold on every example, at the last norm
    assert margins(answer).min() >= threshold * (1 - 1e-9)
    np.testing.assert_allclose(np.sqrt(products(answer, answer)), norm, rtol=1e-9)
    if np.allclose(
        mean / np.linalg.norm(mean), last / np.linalg.norm(last), rtol=0, atol=1e-12
    ):
        return None  # one function: every step answers it
    # the answer is c ((1 - t) last + t mean), for c > 0 and t in [0, 1]
    basis = np.column_stack([last, mean - last])
    (c, ct), *_ = np.linalg.lstsq(basis, answer, rcond=None)
    np.testing.assert_allclose(
        basis @ [c, ct], answer, rtol=1e-9, atol=1e-12 * np.abs(answer).max()
    )
    step = ct / c
    assert grid_step - 1e-9 <= step <= min(grid_step + GRID[1], 1.0) + 1e-9
    return step


@pytest.mark.parametrize("beta", [0.0, 1.0, "scale", "power"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_margin_perceptron_answers_toward_the_mean(beta, fit_intercept):
    steps = []
    for seed, X, y, R in SAMPLES:
        X = X + 0.2 * R if fit_intercept else X
        beta_value = R**2 if beta == 1.0 else beta
        params = dict(
            beta=beta_value,
            fit_intercept=fit_intercept,
            intercept_scaling=1.5 * R,
            max_iter=1_000_000,
            random_state=seed,
        )
        last = MarginPerceptron(average=False, **params).fit(X, y)
        mean = MarginPerceptron(average=True, **params).fit(X, y)
        auto = MarginPerceptron(**params).fit(X, y)
        assert auto.stop_reason_ == "separated"
        assert np.array_equal(auto.n_updates_, last.n_updates_)
        s = 1.5 * R if fit_intercept else 0.0
        lifted = np.hstack([X, np.full((len(X), 1), s)])
        signs = np.where(y == auto.classes_[1], 1.0, -1.0)

        coordinates = [
            np.append(model.coef_[0], model.intercept_[0] / s if s else 0.0)
            for model in (auto, last, mean)
        ]
        steps.append(
            _check_answer(
                *coordinates,
                np.dot,
                partial(_margins, signs, lifted),
                _threshold(last, beta_value, 0),
            )
        )
    # the answer did move toward the mean: the test could fail
    assert np.mean([step is not None and step > 0 for step in steps]) >= 0.5, steps


def _rbf_samples():
    """Noisy samples that the RBF kernel separates."""
    for seed in range(12):
        X, y = make_classification(
            60 + 10 * seed,
            5,
            n_informative=3,
            n_redundant=0,
            flip_y=0.05,
            random_state=seed,
        )
        yield seed, StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("beta", ["auto", 0.0, "scale", "power"])
def test_kernel_perceptron_answers_toward_the_mean(beta):
    steps = []
    for seed, X, y in _rbf_samples():
        params = dict(beta=beta, max_iter=100_000, random_state=seed)
        last = KernelPerceptron(average=False, **params).fit(X, y)
        mean = KernelPerceptron(average=True, **params).fit(X, y)
        auto = KernelPerceptron(**params).fit(X, y)
        assert auto.stop_reason_ == "separated"
        K = rbf_kernel(X, gamma=1.0 / (X.shape[1] * X.var()))
        signs = np.where(y == auto.classes_[1], 1.0, -1.0)

        coordinates = []
        for model in (auto, last, mean):
            coordinates.append(np.zeros(len(X)))
            coordinates[-1][model.support_] = model.dual_coef_[0]
        steps.append(
            _check_answer(
                *coordinates,
                partial(_kernel_product, K),
                partial(_margins, signs, K),
                _threshold(last, beta, 0),
            )
        )
    assert np.mean([step is not None and step > 0 for step in steps]) >= 0.5, steps


def test_each_problem_of_a_multiclass_fit_answers_on_its_own():
    """One-vs-rest: each problem that separates finds its own step; the
    linear kernel gives MarginPerceptron's answer (without intercept)."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    params = dict(beta=0.0, max_iter=100_000, random_state=0)
    kernel = KernelPerceptron(kernel="linear", **params).fit(X, y)
    linear = MarginPerceptron(fit_intercept=False, **params).fit(X, y)
    last = MarginPerceptron(fit_intercept=False, average=False, **params).fit(X, y)
    mean = MarginPerceptron(fit_intercept=False, average=True, **params).fit(X, y)
    np.testing.assert_allclose(
        kernel.decision_function(X), linear.decision_function(X), rtol=1e-9, atol=1e-9
    )
    codes = np.searchsorted(linear.classes_, y)
    moved = 0
    for k in range(3):
        signs = np.where(codes == k, 1.0, -1.0)
        if not (signs * last.decision_function(X)[:, k]).min() > 0:
            # not separated: stopped by the rule, the mean answers
            np.testing.assert_allclose(linear.coef_[k], mean.coef_[k])
            continue
        step = _check_answer(
            linear.coef_[k],
            last.coef_[k],
            mean.coef_[k],
            np.dot,
            partial(_margins, signs, X),
            _threshold(last, 0.0, k),
        )
        moved += step is not None and step > 0
    assert moved >= 1


@pytest.mark.parametrize("estimator", [MarginPerceptron, KernelPerceptron])
def test_partial_fit_answers_with_the_last_function(estimator):
    """partial_fit makes no claim of separation: "auto" answers with the
    last function of a call whose epoch had no update."""
    X, y = make_margin_classification(80, 3, 0.2, 1.0, random_state=0)
    auto, last = estimator(random_state=0), estimator(average=False, random_state=0)
    for _ in range(30):
        auto.partial_fit(X, y, classes=[-1, 1])
        last.partial_fit(X, y, classes=[-1, 1])
    assert auto.converged_
    np.testing.assert_array_equal(auto.decision_function(X), last.decision_function(X))


@pytest.mark.parametrize("estimator", [MarginPerceptron, KernelPerceptron])
def test_without_the_rule_a_fit_answers_with_the_last_function(estimator):
    """tol=None gives the papers' algorithms, whose output is the last
    function; the same sample with the rule on does move."""
    X, y = make_margin_classification(80, 3, 0.2, 1.0, random_state=0)
    params = dict(max_iter=100_000, random_state=0)
    off = estimator(tol=None, **params).fit(X, y)
    last = estimator(tol=None, average=False, **params).fit(X, y)
    on = estimator(**params).fit(X, y)
    assert off.converged_ and on.converged_
    np.testing.assert_array_equal(off.decision_function(X), last.decision_function(X))
    assert not np.allclose(on.decision_function(X), last.decision_function(X))


@pytest.mark.parametrize("estimator", [MarginPerceptron, KernelPerceptron])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("empty_columns", [0, 40])
def test_dense_and_csr_move_to_the_same_bits(estimator, dtype, empty_columns):
    """The decision values the step is found on are summed as in training:
    dense and CSR rows give the same answer, bit for bit (and the kernel
    perceptron float32 rows the bits of float64 ones, as its compiled
    kernels promise), with columns that hold no value too, whose weights
    the linear fit of CSR rows leaves out. Rows with many zeros, on which
    the answer moves."""
    X, y = make_margin_classification(120, 6, 0.1, 1.0, random_state=3)
    rng = np.random.RandomState(0)
    noise = rng.uniform(-0.5, 0.5, X.shape) * (rng.rand(*X.shape) < 0.5)
    # separable still, by the separator of X with zero weight on the noise
    X = np.hstack([X, noise]).astype(np.float32).astype(np.float64)
    X = np.insert(X, rng.randint(X.shape[1] + 1, size=empty_columns), 0.0, axis=1)
    params = dict(max_iter=100_000, random_state=0)
    last = estimator(average=False, **params).fit(X, y)
    reference = estimator(**params).fit(
        X if estimator is KernelPerceptron else X.astype(dtype), y
    )
    assert reference.converged_
    assert not np.allclose(reference.decision_function(X), last.decision_function(X))
    for form in (X.astype(dtype), sp.csr_matrix(X, dtype=dtype)):
        answer = estimator(**params).fit(form, y)
        np.testing.assert_array_equal(
            answer.decision_function(X), reference.decision_function(X)
        )
        np.testing.assert_array_equal(answer.margin_, reference.margin_)
