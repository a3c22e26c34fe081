import os
import pickle
import re
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from margin_data import growing_lift_sample
from numpy.testing import assert_allclose, assert_array_equal
from reference_perceptron import reference_fit
from sklearn.base import clone
from sklearn.datasets import load_digits, make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

import skperc._margin_perceptron
from skperc import KernelPerceptron, MarginPerceptron
from skperc.schedules import (
    PowerThreshold,
    RelativeThreshold,
    ScaleThreshold,
    ThresholdSchedule,
)


def quiet_fit(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


def noisy_data(n_classes=2, n_samples=60, n_features=6, random_state=0):
    return make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        flip_y=0.15,
        random_state=random_state,
    )


def assert_same_model(a, b):
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    assert_array_equal(a.n_updates_, b.n_updates_)
    assert a.n_iter_ == b.n_iter_
    assert a.converged_ == b.converged_


# --- The compiled loop against the pure-Python reference --------------------

LIFTS = {"none": None, "s=1": 1.0, "s=3.5": 3.5, "auto": "auto", "rms": "rms"}


@pytest.mark.parametrize("beta", [0.0, 0.7, "scale", "power"])
@pytest.mark.parametrize("lift", list(LIFTS))
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_matches_reference(beta, lift, average, n_classes):
    X, y = noisy_data(n_classes=n_classes, n_samples=40, n_features=5)
    rng = np.random.RandomState(1)
    sample_weight = rng.choice([0.0, 0.5, 1.0, 2.0], size=len(y))
    params = dict(beta=beta, alpha=1.4, eta0=0.8, average=average, max_iter=7)
    estimator = MarginPerceptron(
        **params,
        shuffle=False,
        fit_intercept=LIFTS[lift] is not None,
        intercept_scaling=LIFTS[lift] if LIFTS[lift] is not None else "auto",
    )
    quiet_fit(estimator, X, y, sample_weight=sample_weight)

    classes = np.unique(y)
    positives = classes[1:] if n_classes == 2 else classes
    for c, positive in enumerate(positives):
        expected = reference_fit(
            X,
            np.where(y == positive, 1.0, -1.0),
            lift=LIFTS[lift],
            sample_weight=sample_weight,
            **params,
        )
        assert_array_equal(estimator.coef_[c], expected["coef"])
        assert estimator.intercept_[c] == expected["intercept"]
        assert estimator.n_updates_[c] == expected["n_updates"]
    assert estimator.radius_ == expected["radius"]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_rho_follows_the_lifted_norms_once_the_rms_lift_settles(n_classes, seed):
    """The lift "rms" follows the mean of the norms through the first epoch,
    so the lifted norm of a row seen early grows when longer rows follow:
    rho, which must hold every lifted row examined, sees them again in the
    second epoch. Here the longest row comes after many short ones and
    before many nearly as long, whose mean raises the lift past the one it
    was seen with (growing_lift_sample), and "power" follows the largest
    lifted norm. ("scale" sets rho^2 to 4 times a lifted norm, which the
    later ones, at most twice the largest squared norm, seldom pass.)"""
    X, y = growing_lift_sample(50, n_classes, seed)
    weight = np.random.RandomState(seed).choice([0.5, 1.0, 2.0], size=len(y))
    params = dict(beta="power", alpha=1.3, eta0=1.0, average=True, max_iter=4)
    estimator = quiet_fit(
        MarginPerceptron(**params, shuffle=False, tol=None, early_stopping=False),
        X,
        y,
        sample_weight=weight,
    )
    classes = np.unique(y)
    for c, positive in enumerate(classes[1:] if n_classes == 2 else classes):
        expected = reference_fit(
            X,
            np.where(y == positive, 1.0, -1.0),
            lift="rms",
            sample_weight=weight,
            **params,
        )
        assert_array_equal(estimator.coef_[c], expected["coef"])
        assert estimator.intercept_[c] == expected["intercept"]
        assert estimator.n_updates_[c] == expected["n_updates"]


def test_lazy_average_is_the_mean_of_the_iterates():
    X, y = noisy_data()
    estimator = quiet_fit(
        MarginPerceptron(average=True, fit_intercept=False, shuffle=False, max_iter=5),
        X,
        y,
    )
    expected = reference_fit(X, np.where(y == 1, 1.0, -1.0), average=True, max_iter=5)
    assert_allclose(estimator.coef_[0], expected["mean_coef"], rtol=1e-12)
    # and it is not the last iterate
    assert not np.allclose(
        estimator.coef_[0],
        reference_fit(X, np.where(y == 1, 1.0, -1.0), max_iter=5)["coef"],
    )


# The weights that scikit-learn's Perceptron and MarginPerceptron define
# alike: none, sample weights, and class weights on two classes. With more
# classes, Perceptron weighs only the positives of each one-vs-rest problem
# by their class's weight (its negatives weigh 1), where MarginPerceptron
# gives each example its class's weight in every problem (the docstring's
# Notes say so): their class weights differ by definition there.
WEIGHTINGS = [
    (n_classes, weighting)
    for n_classes in (2, 4)
    for weighting in (None, "sample", "class")
    if not (n_classes > 2 and weighting == "class")
]


@pytest.mark.parametrize("n_classes, weighting", WEIGHTINGS)
@pytest.mark.parametrize("max_iter", [1, 5, 30])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_bitwise_equal_to_sklearn_perceptron(
    n_classes, weighting, max_iter, fit_intercept
):
    # A lift of 1 updates the intercept by eta0 * y, as scikit-learn does
    # for dense input.
    X, y = noisy_data(n_classes=n_classes, n_samples=200, n_features=9)
    class_weight = {0: 2.5, 1: 0.5} if weighting == "class" else None
    fit_params = {}
    if weighting == "sample":
        fit_params["sample_weight"] = np.random.RandomState(1).uniform(0.1, 3, 200)
    ours = quiet_fit(
        MarginPerceptron(
            beta=0,
            eta0=1,
            shuffle=False,
            fit_intercept=fit_intercept,
            intercept_scaling=1.0,
            max_iter=max_iter,
            tol=None,
            average=False,
            class_weight=class_weight,
        ),
        X,
        y,
        **fit_params,
    )
    theirs = quiet_fit(
        Perceptron(
            penalty=None,
            eta0=1,
            shuffle=False,
            tol=None,
            fit_intercept=fit_intercept,
            max_iter=max_iter,
            class_weight=class_weight,
        ),
        X,
        y,
        **fit_params,
    )
    assert_array_equal(ours.coef_, theirs.coef_)
    assert_array_equal(ours.intercept_, theirs.intercept_)
    assert ours.n_iter_ == theirs.n_iter_


# --- The same model every way ----------------------------------------------

CONFIGS = [
    dict(beta=0.0),
    dict(beta=1.5, fit_intercept=False),
    dict(beta="scale", average=True),
    dict(beta="power", alpha=1.5, intercept_scaling=2.0),
]


@pytest.mark.parametrize("params", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sparse_equals_dense(params, dtype, n_classes, shuffle):
    X, y = noisy_data(n_classes=n_classes, n_features=12)
    X[np.abs(X) < 0.7] = 0.0
    X = X.astype(dtype)
    estimator = MarginPerceptron(**params, shuffle=shuffle, random_state=3, max_iter=20)
    dense = quiet_fit(clone(estimator), X, y)
    for matrix in (sp.csr_matrix(X), sp.csc_matrix(X), sp.coo_matrix(X)):
        assert_same_model(quiet_fit(clone(estimator), matrix, y), dense)


def test_sparse_with_unsorted_duplicate_and_int64_indices():
    X, y = noisy_data(n_features=8)
    # The same rows with their entries in reverse order, the first entry of
    # each split into two halves, and int64 index arrays.
    data, indices, indptr = [], [], [0]
    for row in X:
        columns = np.flatnonzero(row)[::-1]
        values = row[columns]
        data += [values[0] / 2, *values[1:], values[0] / 2]
        indices += [*columns, columns[0]]
        indptr.append(len(indices))
    messy = sp.csr_matrix(
        (np.array(data), np.array(indices, dtype=np.int64), np.array(indptr)),
        shape=X.shape,
    )
    assert not messy.has_canonical_format
    before = messy.copy()
    estimator = MarginPerceptron(random_state=0, max_iter=10)
    assert_same_model(quiet_fit(clone(estimator), messy, y), quiet_fit(estimator, X, y))
    # the caller's matrix is left as it was
    assert_array_equal(messy.indices, before.indices)
    assert_array_equal(messy.data, before.data)


@pytest.mark.parametrize("params", CONFIGS)
def test_float32_equals_float64_to_rounding(params):
    X, y = noisy_data(n_features=20)
    X32 = X.astype(np.float32)
    single = quiet_fit(MarginPerceptron(**params, random_state=0), X32, y)
    double = quiet_fit(
        MarginPerceptron(**params, random_state=0), X32.astype(np.float64), y
    )
    assert_allclose(single.coef_, double.coef_, rtol=1e-10, atol=1e-10)
    assert_allclose(single.intercept_, double.intercept_, rtol=1e-10, atol=1e-10)
    assert_array_equal(single.predict(X32), double.predict(X32))


def test_integer_input_is_converted_without_overflow():
    X, y = load_digits(return_X_y=True)
    X8 = X.astype(np.uint8)
    from_int = quiet_fit(MarginPerceptron(random_state=0, max_iter=5), X8, y)
    from_float = quiet_fit(MarginPerceptron(random_state=0, max_iter=5), X, y)
    assert_same_model(from_int, from_float)
    # squares overflowing in uint8 would leave a model near chance (0.1)
    assert from_int.score(X8, y) > 0.85


@pytest.mark.parametrize("params", CONFIGS)
def test_multiclass_single_pass_equals_separate_binary_problems(params):
    # Three of the one-vs-rest problems are separable and stop at epochs of
    # their own; the class in the middle is not, and runs to max_iter.
    X, y = make_blobs(n_samples=90, centers=4, cluster_std=0.6, random_state=2)
    multi = quiet_fit(MarginPerceptron(**params, random_state=0, max_iter=300), X, y)
    for c, label in enumerate(multi.classes_):
        binary = quiet_fit(
            MarginPerceptron(**params, random_state=0, max_iter=300), X, y == label
        )
        assert_array_equal(multi.coef_[c], binary.coef_[0])
        assert_array_equal(multi.intercept_[c], binary.intercept_[0])
        assert multi.n_updates_[c] == binary.n_updates_[0]


@pytest.mark.parametrize("params", CONFIGS)
def test_n_jobs_gives_the_same_model(params):
    X, y = noisy_data(n_classes=5, n_samples=150)
    one = quiet_fit(MarginPerceptron(**params, random_state=0, n_jobs=1), X, y)
    two = quiet_fit(MarginPerceptron(**params, random_state=0, n_jobs=2), X, y)
    assert_same_model(one, two)


def test_n_jobs_inside_a_process_backend_shares_X(monkeypatch):
    # The blocks of problems run in this process, on the caller's X, even
    # when the caller chose a backend of processes.
    X, y = noisy_data(n_classes=5, n_samples=150)
    processes = set()

    def run_epochs(*args, **kwargs):
        processes.add(os.getpid())
        return compiled_run_epochs(*args, **kwargs)

    compiled_run_epochs = skperc._margin_perceptron.run_epochs
    monkeypatch.setattr(skperc._margin_perceptron, "run_epochs", run_epochs)
    with joblib.parallel_backend("loky"):
        pooled = quiet_fit(MarginPerceptron(random_state=0, n_jobs=2), X, y)
    assert processes == {os.getpid()}
    monkeypatch.undo()
    one = quiet_fit(MarginPerceptron(random_state=0, n_jobs=1), X, y)
    assert_same_model(one, pooled)


def test_random_state_gives_reproducible_shuffles():
    X, y = noisy_data()
    a = quiet_fit(MarginPerceptron(random_state=5, max_iter=3), X, y)
    b = quiet_fit(MarginPerceptron(random_state=5, max_iter=3), X, y)
    c = quiet_fit(MarginPerceptron(random_state=6, max_iter=3), X, y)
    assert_same_model(a, b)
    assert not np.array_equal(a.coef_, c.coef_)


# --- partial_fit and warm_start continue the same run ------------------------


@pytest.mark.parametrize("params", CONFIGS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_partial_fit_on_chunks_equals_one_epoch_of_fit(params, n_classes):
    X, y = noisy_data(n_classes=n_classes, n_samples=97)
    whole = quiet_fit(MarginPerceptron(**params, shuffle=False, max_iter=1), X, y)
    streamed = MarginPerceptron(**params, shuffle=False)
    for chunk in np.array_split(np.arange(len(y)), [10, 11, 50, 70]):
        streamed.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    assert_array_equal(streamed.coef_, whole.coef_)
    assert_array_equal(streamed.intercept_, whole.intercept_)
    assert_array_equal(streamed.n_updates_, whole.n_updates_)
    assert streamed.radius_ == whole.radius_


@pytest.mark.parametrize("params", CONFIGS)
def test_warm_start_continues_the_run(params):
    X, y = noisy_data(n_classes=3)
    at_once = quiet_fit(MarginPerceptron(**params, shuffle=False, max_iter=6), X, y)
    twice = MarginPerceptron(**params, shuffle=False, max_iter=2, warm_start=True)
    quiet_fit(twice, X, y)
    quiet_fit(twice.set_params(max_iter=4), X, y)
    assert_array_equal(twice.coef_, at_once.coef_)
    assert_array_equal(twice.intercept_, at_once.intercept_)
    assert_array_equal(twice.n_updates_, at_once.n_updates_)


def test_cold_fit_starts_over():
    X, y = noisy_data()
    estimator = MarginPerceptron(shuffle=False, max_iter=3)
    first = quiet_fit(estimator, X, y).coef_.copy()
    assert_array_equal(quiet_fit(estimator, X, y).coef_, first)


def test_warm_start_rejects_other_classes_or_features():
    X, y = noisy_data(n_classes=3)
    estimator = quiet_fit(MarginPerceptron(warm_start=True, max_iter=2), X, y)
    with pytest.raises(ValueError, match="same classes"):
        estimator.fit(X, np.where(y == 2, 1, y))
    with pytest.raises(ValueError, match="features"):
        estimator.fit(X[:, :3], y)


def test_partial_fit_checks_classes():
    X, y = noisy_data(n_classes=3)
    estimator = MarginPerceptron()
    with pytest.raises(ValueError, match="classes must be passed"):
        estimator.partial_fit(X, y)
    estimator.partial_fit(X[:10], y[:10], classes=[0, 1, 2])
    with pytest.raises(ValueError, match=re.escape("not in classes [0, 1, 2]")):
        estimator.partial_fit(X, y + 1)
    with pytest.raises(ValueError, match="not the same"):
        estimator.partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="balanced"):
        MarginPerceptron(class_weight="balanced").partial_fit(X, y, classes=[0, 1, 2])


def test_partial_fit_accepts_a_class_absent_from_the_batch():
    X, y = noisy_data(n_classes=3)
    estimator = MarginPerceptron(shuffle=False)
    estimator.partial_fit(X[y != 2], y[y != 2], classes=[0, 1, 2])
    assert estimator.coef_.shape == (3, X.shape[1])
    # the absent class only saw negatives
    assert estimator.n_updates_[2] >= 1
    assert np.all(estimator.decision_function(X[y != 2])[:, 2] < 0)


# --- Stopping, warnings, margins ---------------------------------------------


def test_stops_after_an_epoch_without_updates_on_separable_data():
    X, y = make_blobs(
        n_samples=100, centers=[[0, 4], [4, 0]], cluster_std=0.8, random_state=0
    )
    for beta in [0.0, 2.0, "scale", "power"]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            estimator = MarginPerceptron(beta=beta, max_iter=10_000).fit(X, y)
        assert estimator.converged_
        assert estimator.n_iter_ < 10_000
        assert estimator.score(X, y) == 1.0
        assert estimator.margin_[0] > 0


def test_warns_and_reports_on_non_separable_data():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 0, 1, 1])  # XOR
    estimator = MarginPerceptron(max_iter=25, random_state=0, tol=None)
    with pytest.warns(ConvergenceWarning, match="max_iter=25"):
        estimator.fit(X, y)
    assert not estimator.converged_
    assert estimator.stop_reason_ == "max_iter"
    assert estimator.n_iter_ == 25
    assert estimator.margin_[0] < 0


def test_the_stopping_rule_ends_a_stalled_run_without_warning():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([0, 0, 1, 1])  # XOR: every epoch makes a sign mistake
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        estimator = MarginPerceptron(max_iter=1000, random_state=0).fit(X, y)
    assert estimator.stop_reason_ == "no_improvement"
    assert not estimator.converged_
    # the mistakes cannot fall below their best for n_iter_no_change epochs
    assert estimator.n_iter_ < 1000
    longer = MarginPerceptron(max_iter=1000, n_iter_no_change=20, random_state=0)
    assert longer.fit(X, y).n_iter_ > estimator.n_iter_


def test_margin_is_the_geometric_margin_on_the_training_data():
    X, y = noisy_data(n_classes=3)
    estimator = quiet_fit(MarginPerceptron(max_iter=4, random_state=0), X, y)
    signs = np.where(y[:, None] == estimator.classes_, 1.0, -1.0)
    expected = (signs * estimator.decision_function(X)).min(axis=0) / np.linalg.norm(
        estimator.coef_, axis=1
    )
    assert_allclose(estimator.margin_, expected, rtol=1e-12)


def test_sample_weight_zero_drops_the_example():
    X, y = noisy_data()
    weight = np.ones(len(y))
    weight[::3] = 0
    weighted = quiet_fit(
        MarginPerceptron(shuffle=False, max_iter=5), X, y, sample_weight=weight
    )
    kept = quiet_fit(
        MarginPerceptron(shuffle=False, max_iter=5), X[weight > 0], y[weight > 0]
    )
    assert_same_model(weighted, kept)
    assert weighted.margin_[0] == kept.margin_[0]


def test_class_weight_scales_the_updates_of_a_class():
    X, y = noisy_data()
    balanced_weights = len(y) / (2 * np.bincount(y))
    by_class = quiet_fit(
        MarginPerceptron(class_weight="balanced", shuffle=False, max_iter=5), X, y
    )
    by_sample = quiet_fit(
        MarginPerceptron(shuffle=False, max_iter=5),
        X,
        y,
        sample_weight=balanced_weights[y],
    )
    assert_same_model(by_class, by_sample)
    dict_weights = quiet_fit(
        MarginPerceptron(class_weight={0: 1.0, 1: 3.0}, shuffle=False, max_iter=5),
        X,
        y,
    )
    assert not np.array_equal(dict_weights.coef_, by_sample.coef_)


def test_verbose_prints_one_line_per_epoch(capsys):
    X, y = noisy_data()
    quiet_fit(MarginPerceptron(verbose=1, max_iter=3), X, y)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "-- Epoch 1",
        "-- Epoch 2",
        "-- Epoch 3",
        "-- Stopped",
    ]
    assert lines[-1] == "-- Stopped: max_iter"


def test_predict_breaks_ties_towards_the_positive_class():
    X, y = noisy_data()
    estimator = quiet_fit(MarginPerceptron(max_iter=2), X, y)
    estimator.coef_[:] = 0.0
    estimator.intercept_[:] = 0.0
    assert_array_equal(estimator.predict(X), np.ones(len(y)))


# --- User schedules -----------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_subclass_runs_through_python_with_the_same_result(n_classes):
    class PythonPower(PowerThreshold):
        pass

    X, y = noisy_data(n_classes=n_classes)
    compiled = quiet_fit(
        MarginPerceptron(beta="power", alpha=1.6, random_state=0), X, y
    )
    python = quiet_fit(
        MarginPerceptron(beta=PythonPower(alpha=1.6), random_state=0), X, y
    )
    assert_same_model(python, compiled)


@pytest.mark.parametrize("estimator", ["linear", "kernel"])
def test_the_compiled_relative_threshold_is_its_formula(estimator):
    """RelativeThreshold runs in the compiled loops: the same bits as its
    threshold() called from Python."""

    class PythonRelative(RelativeThreshold):
        def threshold(self, t, radius):
            return super().threshold(t, radius)

    X, y = noisy_data(n_classes=2)
    make = (
        (lambda beta: MarginPerceptron(beta=beta, random_state=0))
        if estimator == "linear"
        else (lambda beta: KernelPerceptron(beta=beta, max_iter=20, random_state=0))
    )
    compiled = quiet_fit(make(RelativeThreshold(0.4)), X, y)
    python = quiet_fit(make(PythonRelative(0.4)), X, y)
    assert_array_equal(python.n_updates_, compiled.n_updates_)
    assert_array_equal(python.decision_function(X), compiled.decision_function(X))
    assert compiled.n_updates_[0] > 0


class _KeptRelative(RelativeThreshold):
    """A subclass that keeps RelativeThreshold's threshold."""


class _KeptScale(ScaleThreshold):
    """A subclass that keeps ScaleThreshold's threshold."""


@pytest.mark.parametrize("estimator", ["linear", "kernel"])
@pytest.mark.parametrize(
    "compiled, kept",
    [(RelativeThreshold(1.0), _KeptRelative(1.0)), (ScaleThreshold(), _KeptScale())],
)
def test_a_subclass_keeping_its_threshold_runs_compiled(estimator, compiled, kept):
    """Two examples of squared norm 26, where the first update's functional
    ties the threshold: a subclass that overrides nothing ran in Python,
    on sqrt(26)**2 = 25.999999999999996, and made fewer updates."""
    X = np.array([[1.0, 5.0], [-1.0, -5.0]])
    y = np.array([1, 0])
    make = (
        (
            lambda beta: MarginPerceptron(
                beta=beta, fit_intercept=False, shuffle=False, average=False
            )
        )
        if estimator == "linear"
        else (
            lambda beta: KernelPerceptron(
                kernel="linear", beta=beta, shuffle=False, average=False
            )
        )
    )
    reference = quiet_fit(make(compiled), X, y)
    subclassed = quiet_fit(make(kept), X, y)
    assert reference.n_updates_[0] > 1
    assert_array_equal(subclassed.n_updates_, reference.n_updates_)
    assert_array_equal(subclassed.decision_function(X), reference.decision_function(X))


def test_a_user_schedule_is_called_per_update():
    calls = []

    class Recorder(ThresholdSchedule):
        radius_rule = "none"

        def threshold(self, t, radius):
            calls.append(t)
            return 0.0

    X, y = noisy_data()
    estimator = quiet_fit(
        MarginPerceptron(beta=Recorder(), shuffle=False, max_iter=4), X, y
    )
    reference = quiet_fit(MarginPerceptron(beta=0.0, shuffle=False, max_iter=4), X, y)
    assert_same_model(estimator, reference)
    assert calls == list(range(1, estimator.n_updates_[0] + 2))


def test_a_broken_user_schedule_raises_clear_errors():
    class Negative(ThresholdSchedule):
        def threshold(self, t, radius):
            return -1.0

    class Wrong(ThresholdSchedule):
        radius_rule = "sometimes"

        def threshold(self, t, radius):
            return 0.0

    class Textual(ThresholdSchedule):
        def threshold(self, t, radius):
            return "1.5"

    class Forgetful(ThresholdSchedule):
        def threshold(self, t, radius):
            radius**2

    X, y = noisy_data()
    with pytest.raises(ValueError, match="finite number >= 0"):
        MarginPerceptron(beta=Negative()).fit(X, y)
    # a string read as its number, None as float(None)'s error
    for returning, text in [(Textual, "'1.5'"), (Forgetful, "None")]:
        with pytest.raises(TypeError, match=f"returned {text}; a threshold must"):
            MarginPerceptron(beta=returning()).fit(X, y)
    with pytest.raises(ValueError, match="radius_rule must be one of"):
        MarginPerceptron(beta=Wrong()).fit(X, y)
    with pytest.raises(NotImplementedError):
        MarginPerceptron(beta=ThresholdSchedule()).fit(X, y)


# --- Bad input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(beta=-1.0), "beta"),
        (dict(beta="huge"), "beta"),
        (dict(alpha=2.0), "alpha"),
        (dict(alpha=1.0), "alpha"),
        (dict(eta0=0.0), "eta0"),
        (dict(intercept_scaling=0.0), "intercept_scaling"),
        (dict(max_iter=0), "max_iter"),
        (dict(class_weight="auto"), "class_weight"),
    ],
)
def test_invalid_parameters_are_named(params, name):
    X, y = noisy_data()
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        MarginPerceptron(**params).fit(X, y)


def test_invalid_schedule_parameters_are_named():
    X, y = noisy_data()
    with pytest.raises(
        InvalidParameterError, match="'alpha' parameter of PowerThreshold"
    ):
        MarginPerceptron(beta=PowerThreshold(alpha=3)).fit(X, y)


@pytest.mark.parametrize(
    "X_change, y_change, message",
    [
        (lambda X: np.where(X > 1, np.nan, X), None, "NaN"),
        (lambda X: np.where(X > 1, np.inf, X), None, "infinity"),
        (lambda X: X + 1j, None, "Complex data not supported"),
        (lambda X: X[:0], lambda y: y[:0], "0 sample"),
        (None, lambda y: np.zeros_like(y), "at least 2 classes"),
        (None, lambda y: y + 0.5, "Unknown label type"),
    ],
)
def test_bad_input_fails_before_any_work(X_change, y_change, message):
    X, y = noisy_data()
    X = X_change(X) if X_change else X
    y = y_change(y) if y_change else y
    estimator = MarginPerceptron()
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)
    assert not hasattr(estimator, "coef_")
    assert not hasattr(estimator, "classes_")


def test_negative_sample_weight_is_rejected_before_any_work():
    X, y = noisy_data()
    for estimator, fit in [
        (MarginPerceptron(), "fit"),
        (MarginPerceptron(), "partial_fit"),
    ]:
        kwargs = {"classes": [0, 1]} if fit == "partial_fit" else {}
        with pytest.raises(ValueError, match="Negative values in data"):
            getattr(estimator, fit)(X, y, sample_weight=-np.ones(len(y)), **kwargs)
        assert not hasattr(estimator, "classes_")


def test_wrong_number_of_features_at_predict():
    X, y = noisy_data()
    estimator = quiet_fit(MarginPerceptron(), X, y)
    with pytest.raises(ValueError, match="features"):
        estimator.predict(X[:, :3])


def test_inputs_are_left_untouched():
    X, y = noisy_data()
    X_before, y_before = X.copy(), y.copy()
    weight = np.ones(len(y))
    quiet_fit(MarginPerceptron(), X, y, sample_weight=weight)
    assert_array_equal(X, X_before)
    assert_array_equal(y, y_before)
    assert_array_equal(weight, np.ones(len(y)))


# --- Ordinary scikit-learn use --------------------------------------------------


def test_grid_search_over_every_kind_of_beta():
    X, y = noisy_data(n_samples=120)
    search = GridSearchCV(
        make_pipeline(StandardScaler(), MarginPerceptron(random_state=0, max_iter=50)),
        {
            "marginperceptron__beta": [0.0, 1.0, "scale", "power", ScaleThreshold()],
            "marginperceptron__alpha": [1.3, 1.7],
        },
        cv=3,
    )
    quiet_fit(search, X, y)
    assert len(search.cv_results_["params"]) == 10
    assert search.best_score_ > 0.6


def test_nested_schedule_parameters_are_tunable():
    X, y = noisy_data(n_samples=120)
    search = GridSearchCV(
        MarginPerceptron(beta=PowerThreshold(), random_state=0, max_iter=50),
        {"beta__alpha": [1.2, 1.8]},
        cv=3,
    )
    quiet_fit(search, X, y)
    assert search.best_estimator_.beta.alpha in (1.2, 1.8)


def test_pickle_round_trip_keeps_the_model_and_the_run():
    X, y = noisy_data(n_classes=3)
    estimator = MarginPerceptron(average=True, shuffle=False)
    estimator.partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    restored = pickle.loads(pickle.dumps(estimator))
    assert_array_equal(restored.predict(X), estimator.predict(X))
    estimator.partial_fit(X[30:], y[30:])
    restored.partial_fit(X[30:], y[30:])
    assert_same_model(restored, estimator)


@pytest.mark.parametrize("seed", range(5))
def test_a_loaded_model_gives_the_decision_values_of_the_model_saved(seed, tmp_path):
    """The last weights of several classes are a view of the run's, whose
    layout sets the order of BLAS's sums on dense rows: a model loaded by
    pickle or joblib (memory-mapped too) keeps it, and so every bit."""
    X, y = make_classification(300, 20, n_informative=5, n_classes=3, random_state=seed)
    estimator = MarginPerceptron(average=False, max_iter=3, random_state=seed)
    fitted = quiet_fit(estimator, X, y)
    expected = fitted.decision_function(X)
    joblib.dump(fitted, tmp_path / "model.joblib")
    for loaded in (
        pickle.loads(pickle.dumps(fitted)),
        joblib.load(tmp_path / "model.joblib"),
        joblib.load(tmp_path / "model.joblib", mmap_mode="r"),
    ):
        assert_array_equal(loaded.decision_function(X), expected)
    assert_array_equal(fitted.decision_function(X), expected)


def test_feature_names_from_pandas():
    pd = pytest.importorskip("pandas")
    X, y = noisy_data()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    estimator = quiet_fit(MarginPerceptron(max_iter=3), frame, y)
    assert_array_equal(estimator.feature_names_in_, frame.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        unnamed = estimator.predict(X)
    assert_array_equal(estimator.predict(frame), unnamed)


def test_string_labels():
    X, y = noisy_data(n_classes=3)
    labels = np.array(["cat", "dog", "emu"])[y]
    estimator = quiet_fit(MarginPerceptron(max_iter=5, random_state=0), X, labels)
    assert_array_equal(estimator.classes_, ["cat", "dog", "emu"])
    assert set(estimator.predict(X)) <= {"cat", "dog", "emu"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
def test_fit_does_not_copy_the_training_data(dtype, sparse):
    import tracemalloc

    X, y = make_classification(n_samples=20_000, n_features=50, random_state=0)
    X = X.astype(dtype)
    if sparse:
        X = sp.csr_matrix(X)
        size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    else:
        size = X.nbytes
    estimator = MarginPerceptron(max_iter=2, random_state=0)
    quiet_fit(estimator, X, y)  # warm up imports and caches
    tracemalloc.start()
    quiet_fit(estimator, X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # per-sample arrays (labels, weights, order) come to 20 bytes a sample
    assert peak < 0.5 * size
