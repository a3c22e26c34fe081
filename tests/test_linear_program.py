"""LinearProgramClassifier: the halfspace ERM of lecture 5 by linear
programming, checked against brute force and against the hard instance."""

import copy
import itertools
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from skperc import LinearProgramClassifier, MarginPerceptron
from skperc.datasets import make_margin_classification, make_nested_boolean

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([0, 0, 1, 1])


def functional_margins(clf, X, y):
    return np.where(y == clf.classes_[1], 1, -1) * clf.decision_function(X)


@pytest.mark.parametrize("objective", ["feasibility", "l1_margin"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_separable_sample_gets_a_consistent_hypothesis(
    objective, fit_intercept, sparse
):
    X, y = make_margin_classification(200, 10, margin=0.05, random_state=0)
    if fit_intercept:
        X = X + 3.0  # separable by an affine hyperplane only
    clf = LinearProgramClassifier(objective=objective, fit_intercept=fit_intercept)
    clf.fit(sp.csr_matrix(X) if sparse else X, y)
    assert functional_margins(clf, X, y).min() >= 1 - 1e-7
    assert clf.score(X, y) == 1.0
    np.testing.assert_array_equal(clf.status_, [0])
    assert clf.n_iter_[0] > 0
    if not fit_intercept:
        np.testing.assert_array_equal(clf.intercept_, [0.0])


@pytest.mark.parametrize("objective", ["feasibility", "l1_margin"])
def test_dense_and_sparse_input_give_the_same_model(objective):
    X, y = make_margin_classification(80, 6, margin=0.1, random_state=1)
    dense = LinearProgramClassifier(objective=objective).fit(X, y)
    sparse = LinearProgramClassifier(objective=objective).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, atol=1e-12)


@pytest.mark.parametrize("objective", ["feasibility", "l1_margin"])
def test_a_sample_that_is_not_separable_is_an_error_without_C(objective):
    with pytest.raises(ValueError, match="not linearly separable"):
        LinearProgramClassifier(objective=objective).fit(XOR_X, XOR_Y)
    soft = LinearProgramClassifier(objective=objective, C=1.0).fit(XOR_X, XOR_Y)
    np.testing.assert_array_equal(soft.status_, [0])


def test_a_point_of_weight_zero_adds_no_constraint():
    weights = np.array([1.0, 0.0, 1.0, 1.0])
    clf = LinearProgramClassifier().fit(XOR_X, XOR_Y, sample_weight=weights)
    kept = weights > 0
    assert functional_margins(clf, XOR_X[kept], XOR_Y[kept]).min() >= 1 - 1e-7


def test_the_l1_margin_is_the_largest_under_unit_l1_norm():
    """Against brute force over the l1 unit circle in the plane."""
    X, y = make_margin_classification(40, 2, margin=0.2, random_state=3)
    clf = LinearProgramClassifier(objective="l1_margin", fit_intercept=False)
    clf.fit(X, y)
    achieved = 1 / np.abs(clf.coef_[0]).sum()
    t = np.linspace(-1, 1, 400_001)
    candidates = np.vstack(
        [np.column_stack([t, 1 - np.abs(t)]), np.column_stack([t, np.abs(t) - 1])]
    )
    best = (y[:, None] * (X @ candidates.T)).min(axis=0).max()
    assert achieved == pytest.approx(best, rel=1e-4)  # the grid step
    assert achieved >= best * (1 - 1e-9)
    # the soft version reaches the same program when C is large enough
    soft = LinearProgramClassifier(objective="l1_margin", fit_intercept=False, C=1e4)
    np.testing.assert_allclose(soft.fit(X, y).coef_, clf.coef_, rtol=1e-6)


def test_the_l1_margin_gives_sparse_weights():
    X, y = make_margin_classification(20, 200, margin=0.05, random_state=4)
    sparse_fit = LinearProgramClassifier(objective="l1_margin").fit(X, y)
    dense_fit = MarginPerceptron(fit_intercept=False, random_state=0).fit(X, y)
    assert np.count_nonzero(np.abs(sparse_fit.coef_) > 1e-9) <= 20 + 1
    assert np.count_nonzero(dense_fit.coef_) == 200


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20, 30])
def test_consistent_on_the_nested_boolean_sample(n):
    """The perceptron needs sqrt(3)^(n-1) updates on S_n; the program is
    consistent at once, up to n = 30 (weights of ratio about 1e12)."""
    X, y = make_nested_boolean(n)
    clf = LinearProgramClassifier().fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)
    ratio = clf.coef_[0, -1] / clf.coef_[0, :2].min()
    assert clf.coef_[0, :2].min() > 0
    assert ratio >= np.sqrt(3) ** (n - 1)  # Proposition 1


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_hypothesis_consistent_on_the_specifying_sample_is_f_2n(n):
    """Proposition 2: consistency on S_n alone fixes f_2n on all of
    {0, 1}^(2n)."""
    X, y = make_nested_boolean(n)
    cube = np.array(list(itertools.product([0.0, 1.0], repeat=2 * n)))
    target = cube[:, 0].astype(bool) & cube[:, 1].astype(bool)
    for k in range(2, 2 * n, 2):
        target = cube[:, k + 1].astype(bool) & (cube[:, k].astype(bool) | target)
    for objective in ["feasibility", "l1_margin"]:
        clf = LinearProgramClassifier(objective=objective).fit(X, y)
        np.testing.assert_array_equal(clf.predict(cube), target.astype(int))


def test_weights_beyond_double_precision_are_an_error_not_a_wrong_model():
    X, y = make_nested_boolean(40)
    with pytest.raises(ValueError, match="linprog"):
        LinearProgramClassifier().fit(X, y)


def test_multiclass_is_one_vs_rest():
    X, y = load_wine(return_X_y=True)
    clf = LinearProgramClassifier().fit(X, y)  # wine is separable one-vs-rest
    assert clf.coef_.shape == (3, 13)
    assert clf.status_.shape == clf.n_iter_.shape == (3,)
    for k, label in enumerate(clf.classes_):
        signs = np.where(y == label, 1, -1)
        assert (signs * (X @ clf.coef_[k] + clf.intercept_[k])).min() >= 1 - 1e-6
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="class 1 against the rest"):
        LinearProgramClassifier().fit(X, y)
    assert LinearProgramClassifier(C=1.0).fit(X, y).score(X, y) > 0.9


def test_soft_feasibility_minimizes_the_total_hinge_loss():
    """On a separable sample the least total slack is 0: a consistent
    hypothesis, whatever C; on XOR it is the least hinge loss."""
    X, y = make_margin_classification(60, 3, margin=0.1, random_state=5)
    for C in [1e-3, 1.0, 1e3]:
        clf = LinearProgramClassifier(C=C).fit(X, y)
        assert functional_margins(clf, X, y).min() >= 1 - 1e-7
    clf = LinearProgramClassifier(C=1.0).fit(XOR_X, XOR_Y)
    hinge = np.maximum(0, 1 - functional_margins(clf, XOR_X, XOR_Y)).sum()
    # On XOR, sum_i y_i f(x_i) = 0 for every (w, b), so the total hinge
    # loss is at least sum_i (1 - y_i f(x_i)) = 4, which (w, b) = 0 reaches.
    assert hinge == pytest.approx(4.0, abs=1e-7)


def test_parameters_are_checked_before_any_work():
    X, y = make_margin_classification(20, 3, margin=0.1, random_state=0)
    with pytest.raises(ValueError, match="objective"):
        LinearProgramClassifier(objective="l2_margin").fit(X, y)
    with pytest.raises(ValueError, match="C"):
        LinearProgramClassifier(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LinearProgramClassifier().fit(X, np.zeros(20))


def _separable_with_magnitudes(case, seed):
    """A sample separated through the origin by its first feature, then
    scaled as ``case`` says, which keeps it separable."""
    rng = np.random.RandomState(seed)
    if case == "columns [1e-4, 1, 1e4, 1]":
        X = rng.randn(200, 4) * [1e-4, 1, 1e4, 1]
    elif case == "columns [1, 1e8]":
        X = rng.randn(200, 2) * [1, 1e8]
    else:  # one row times 1e12
        X = rng.randn(200, 4)
        X[rng.randint(200)] *= 1e12
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "case", ["columns [1e-4, 1, 1e4, 1]", "columns [1, 1e8]", "one row times 1e12"]
)
@pytest.mark.parametrize(
    "params",
    [{}, {"objective": "l1_margin"}, {"C": 1.0}],
    ids=["C=None", "C=None, l1_margin", "C=1.0"],
)
def test_separable_samples_of_very_different_magnitudes_are_separated(case, params):
    """Once HiGHS dropped the entries below 1e-9 of the largest: these
    were "not linearly separable", and with C=1.0 (zero hinge loss on
    separable data) 0.53 to 0.97 accurate."""
    for seed in range(5):
        X, y = _separable_with_magnitudes(case, seed)
        clf = LinearProgramClassifier(**params).fit(X, y)
        assert clf.score(X, y) == 1.0
        if "C" not in params:
            assert functional_margins(clf, X, y).min() >= 1 - 1e-7


def test_the_constraint_matrix_holds_one_entry_per_non_zero(monkeypatch):
    """The dual program's matrix holds X once, sparse as X is, with one
    entry per example for the intercept and, for the l1 norm, one per
    feature: no dense copy, no second copy of X (for |w| or the slacks),
    whatever the class, the objective or C."""
    import skperc._linear_program as module

    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs["A_eq"])
        return linprog(*args, **kwargs)

    monkeypatch.setattr(module, "linprog", spy)
    X = sp.random(300, 200, density=0.01, random_state=0, format="csr")
    y = np.arange(300) % 2
    n_samples, n_features = X.shape
    for params, extra in [
        ({"C": 1.0}, n_samples),
        ({"C": 1.0, "fit_intercept": False}, 0),
        ({"objective": "l1_margin", "C": 1.0}, n_samples + n_features),
    ]:
        seen.clear()
        LinearProgramClassifier(**params).fit(X, y)
        (A,) = seen
        assert A.nnz == X.nnz + extra


def _failing_refits():
    """(description, X, y) of fits that raise, after a fit on a separable
    sample."""
    yield "not separable", XOR_X, XOR_Y
    X, y = make_nested_boolean(40)
    yield "weights beyond double precision", X, y
    yield "weights that overflow", np.array([[1e-320], [-1e-320]]), [0, 1]


@pytest.mark.parametrize(
    "case", list(_failing_refits()), ids=[case[0] for case in _failing_refits()]
)
def test_a_failing_refit_leaves_the_previous_model(case):
    """Once the model was zeroed before solving, and a failing refit left
    one that predicted a single class."""
    _, X_bad, y_bad = case
    X, y = make_margin_classification(50, 3, margin=0.1, random_state=0)
    clf = LinearProgramClassifier().fit(X, y)
    before = copy.deepcopy(vars(clf))
    predicted = clf.predict(X)
    with pytest.raises(ValueError):
        clf.fit(X_bad, y_bad)
    np.testing.assert_array_equal(clf.predict(X), predicted)
    after = vars(clf)
    assert after.keys() == before.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value)
    # a first fit that fails leaves an unfitted estimator
    unfitted = LinearProgramClassifier()
    with pytest.raises(ValueError):
        unfitted.fit(X_bad, y_bad)
    with pytest.raises(NotFittedError):
        unfitted.predict(X)


def test_an_interrupted_refit_leaves_the_previous_model(monkeypatch):
    import skperc._linear_program as module

    X, y = make_margin_classification(50, 3, margin=0.1, random_state=0)
    clf = LinearProgramClassifier().fit(X, y)
    coef, predicted = clf.coef_.copy(), clf.predict(X)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "linprog", interrupted)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X[:30], 1 - y[:30])
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf.predict(X), predicted)


@pytest.mark.parametrize(
    "limit", [{"max_iter": 1}, {"time_limit": 1e-9}], ids=["max_iter", "time_limit"]
)
@pytest.mark.parametrize("params", [{}, {"C": 1.0}, {"objective": "l1_margin"}])
def test_a_limit_warns_and_leaves_the_previous_model(limit, params):
    """HiGHS's iteration and time limits bound a fit; where they stop it,
    its point is no solution: the model stays as it was."""
    X, y = make_margin_classification(300, 20, margin=0.05, random_state=0)
    clf = LinearProgramClassifier(**params).fit(X, y)
    coef, predicted = clf.coef_.copy(), clf.predict(X)
    clf.set_params(**limit)
    with pytest.warns(ConvergenceWarning, match="limit.*: the previous model"):
        clf.fit(X[:200], 1 - y[:200])
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf.predict(X), predicted)
    unfitted = LinearProgramClassifier(**params, **limit)
    with pytest.warns(ConvergenceWarning, match="left as it was.*: an unfitted"):
        unfitted.fit(X, y)
    with pytest.raises(NotFittedError):
        unfitted.predict(X)


def test_the_limits_are_checked():
    X, y = make_margin_classification(20, 3, margin=0.1, random_state=0)
    for bad in [{"max_iter": 0}, {"max_iter": 2**63}, {"time_limit": 0.0}]:
        with pytest.raises(ValueError, match=next(iter(bad))):
            LinearProgramClassifier(**bad).fit(X, y)


def test_concurrent_refits_and_predictions_see_one_model():
    """Threads predicting while another refits between a 2-class and a
    3-class model get the predictions of one of them, never a mixture nor
    an error. scikit-learn's Perceptron raises AttributeError (no classes_)
    in the same race."""
    X_a, y_a = make_margin_classification(300, 4, margin=0.1, random_state=0)
    X_b = X_a.copy()
    y_b = np.where(X_a[:, 0] > 0.3, 2, y_a)
    clf = LinearProgramClassifier(C=1.0)
    expected = [
        clone(clf).fit(X_a, y_a).predict(X_a[:200]),
        clone(clf).fit(X_b, y_b).predict(X_a[:200]),
    ]
    clf.fit(X_a, y_a)
    stop, problems = threading.Event(), []

    def predict():
        while not stop.is_set():
            try:
                got = clf.predict(X_a[:200])
            except Exception as error:  # noqa: BLE001 (any error is the failure)
                problems.append(repr(error))
                return
            if not any(np.array_equal(got, e) for e in expected):
                problems.append("a prediction of neither model")
                return

    readers = [threading.Thread(target=predict) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for _ in range(20):
            clf.fit(X_b, y_b)
            clf.fit(X_a, y_a)
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert problems == []


INTERRUPTED_FIT = """
import signal, time
import numpy as np
from skperc import LinearProgramClassifier
from skperc.datasets import make_margin_classification

# Ctrl-C raises KeyboardInterrupt even where the tests were started in the
# background of a shell, which leaves SIGINT ignored in them (as in
# tests/test_interrupt.py)
signal.signal(signal.SIGINT, signal.default_int_handler)

# a fit of a few seconds, which the SIGINT sent 0.5 s in lands within: 3.5 s
# on a 2-core machine where 6,000 rows took 1.4 s
X, y = make_margin_classification(12000, 200, margin=0.05, random_state=0)
clf = LinearProgramClassifier().fit(X[:100], y[:100])
before = clf.predict(X)
print("ready", flush=True)
start = time.perf_counter()
try:
    # the limit only bounds the test should the interrupt be lost
    clf.set_params(time_limit=60.0).fit(X, y)
    print("finished")
except KeyboardInterrupt:
    intact = bool((clf.predict(X) == before).all())
    print("interrupted", time.perf_counter() - start, intact)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_stops_a_fit_and_leaves_the_previous_model():
    """A real SIGINT during linprog: KeyboardInterrupt within seconds, and
    the model fitted before (the fit once zeroed coef_ before solving)."""
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_FIT], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        output = child.communicate(timeout=120)[0].split()
    finally:
        child.kill()
    assert output[0] == "interrupted"
    assert float(output[1]) < 10.0
    assert output[2] == "True"


def test_rows_scaled_apart_fall_back_to_the_unscaled_program():
    """Rows whose largest entries lie 27 orders of magnitude apart: scaled
    down to the median row, HiGHS confirms no optimum (status 15, found by
    tests/test_hostile_input.py); the unscaled program solves."""
    X = np.array([[1e-3, 1e-30]] * 7 + [[1e-2, 1e-30]] + [[1e-30, 1e-30]] * 8)
    y = np.array([3, -1, 3, -1] + [3] * 12)
    model = LinearProgramClassifier(C=1.0).fit(X, y)
    assert np.isfinite(model.coef_).all()
    # no halfspace does better than the majority class here
    assert model.score(X, y) == 0.875


@pytest.mark.parametrize("params", [{}, {"C": 0.5}], ids=["C=None", "C=0.5"])
def test_a_row_past_the_range_of_a_power_of_two_stays_in_the_program(params):
    """A row 10**324 times the others' size would be divided by 2**-1076,
    which is 0 in double precision: the row, whose class it alone holds,
    would leave the program. It is divided by 2**-1022 at most."""
    X = np.array([[1e21], [1e-303], [2e-303], [3e-303]])
    y = np.array([1, 0, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LinearProgramClassifier(**params).fit(X, y)
    assert model.score(X, y) == 1.0
