"""LinearProgramClassifier: the halfspace ERM of lecture 5 by linear
programming, checked against brute force and against the hard instance."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning

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


def test_the_iteration_limit_warns(monkeypatch):
    from scipy.optimize import OptimizeResult

    import skperc._linear_program as module

    def stopped(*args, **kwargs):
        return OptimizeResult(
            x=np.zeros(len(args[0])), status=1, nit=7, message="Iteration limit"
        )

    monkeypatch.setattr(module, "linprog", stopped)
    X, y = make_margin_classification(20, 3, margin=0.1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="iteration limit"):
        clf = LinearProgramClassifier(C=1.0).fit(X, y)
    np.testing.assert_array_equal(clf.status_, [1])

    # HiGHS often stops at its limit with no point at all
    def stopped_empty(*args, **kwargs):
        return OptimizeResult(x=None, status=1, nit=7, message="Iteration limit")

    monkeypatch.setattr(module, "linprog", stopped_empty)
    with pytest.raises(ValueError, match="failed on the training data"):
        LinearProgramClassifier(C=1.0).fit(X, y)
