"""The estimators in scikit-learn's ecosystem, for every configuration of
tests/estimators.py where it applies: probabilities through
CalibratedClassifierCV (self-training, soft voting, the log-loss and
Brier scorers), dask-ml-style blockwise training and prediction over a
dask array, skops files with the trusted types of the deployment guide,
and ONNX graphs."""

import ast
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from estimators import ESTIMATORS
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.ensemble import VotingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.model_selection import cross_validate, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier

from skperc import HalvingClassifier, KernelPerceptron, MarginPerceptron
from skperc.concepts import DecisionStumps
from skperc.distributed import ParameterMixingClassifier

DEPLOYMENT_GUIDE = Path(__file__).parents[1] / "doc" / "user_guide" / "deployment.rst"

# The functions of tests/estimators.py that some configurations hold: a user's
# own code, which the guide leaves to the user to trust.
TEST_FUNCTIONS = {
    "functools.partial",
    "estimators._cosine_kernel",
    "estimators._stump",
}


def _name(estimator):
    return f"{type(estimator).__name__}[{ESTIMATORS.index(estimator)}]"


def _seeded(estimator):
    estimator = clone(estimator)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator


def _precomputed(estimator):
    return getattr(estimator, "kernel", None) == "precomputed"


# CalibratedClassifierCV indexes the rows of X for its folds; a Gram matrix
# needs its columns indexed too, which it does not do.
CALIBRATED = [
    pytest.param(
        estimator,
        id=_name(estimator),
        marks=pytest.mark.skip(
            reason="CalibratedClassifierCV splits the rows of a precomputed "
            "Gram matrix but not its columns"
        )
        if _precomputed(estimator)
        else (),
    )
    for estimator in ESTIMATORS
]
# skperc.distributed's estimator, which test_common.py's registry of the
# estimators of skperc leaves to tests/test_parameter_mixing.py
MIXING = [
    ParameterMixingClassifier(
        MarginPerceptron(beta="scale", average=True, random_state=0), n_shards=2
    )
]
ALL = [pytest.param(estimator, id=_name(estimator)) for estimator in ESTIMATORS] + [
    pytest.param(estimator, id=type(estimator).__name__) for estimator in MIXING
]


def _data(n_classes):
    # informative features first: the explicit concepts of tests/estimators.py
    # are stumps of the first feature (and of the last)
    X, y = make_classification(
        n_samples=150,
        n_features=5,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        class_sep=1.5,
        shuffle=False,
        random_state=0,
    )
    return X, y


def _calibrated(estimator):
    return CalibratedClassifierCV(_seeded(estimator), method="sigmoid", cv=3)


def _quiet_fit(model, *args):
    with warnings.catch_warnings():
        # few epochs on noisy folds: the fits need not converge
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args)


def test_import_skperc_imports_no_optional_dependency():
    code = (
        "import sys, skperc\n"
        "loaded = {'skl2onnx', 'onnxruntime', 'onnx', 'dask', 'skops'}"
        " & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("estimator", CALIBRATED)
def test_calibrated_probabilities_beat_the_class_frequencies(estimator):
    X, y = _data(n_classes=3)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = _quiet_fit(_calibrated(estimator), X_train, y_train)
    proba = model.predict_proba(X_test)
    assert proba.shape == (len(y_test), 3)
    assert_allclose(proba.sum(axis=1), 1.0)
    # the class frequencies are the best constant prediction
    frequencies = np.bincount(y_train) / len(y_train)
    constant = log_loss(y_test, np.tile(frequencies, (len(y_test), 1)))
    assert log_loss(y_test, proba) < constant


@pytest.mark.parametrize("estimator", CALIBRATED)
def test_self_training_labels_the_unlabeled_samples(estimator):
    X, y = _data(n_classes=3)
    unlabeled = np.random.RandomState(0).rand(len(y)) < 0.7
    y_partial = np.where(unlabeled, -1, y)
    # the k surest samples each round, whatever the calibrated probabilities
    model = SelfTrainingClassifier(
        _calibrated(estimator), criterion="k_best", k_best=10, max_iter=3
    )
    _quiet_fit(model, X, y_partial)
    pseudo = unlabeled & (model.labeled_iter_ > 0)
    assert pseudo.sum() == 30
    # its surest guesses are right much more often than chance (1 in 3)
    assert np.mean(model.transduction_[pseudo] == y[pseudo]) >= 0.7


@pytest.mark.parametrize("estimator", CALIBRATED)
def test_soft_voting_averages_the_calibrated_probabilities(estimator):
    X, y = _data(n_classes=3)
    voting = VotingClassifier(
        [
            ("skperc", _calibrated(estimator)),
            ("perceptron", _calibrated(MarginPerceptron(average=True))),
        ],
        voting="soft",
    )
    _quiet_fit(voting, X, y)
    members = [member.predict_proba(X) for member in voting.estimators_]
    proba = voting.predict_proba(X)
    assert_allclose(proba, np.mean(members, axis=0))
    assert_array_equal(voting.predict(X), voting.classes_[proba.argmax(axis=1)])


@pytest.mark.parametrize("estimator", CALIBRATED)
def test_log_loss_and_brier_scorers_through_calibration(estimator):
    X, y = _data(n_classes=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_validate(
            _calibrated(estimator),
            X,
            y,
            cv=3,
            scoring=["neg_log_loss", "neg_brier_score"],
            error_score="raise",
        )
    # better than predicting 1/2 everywhere: log-loss ln 2, Brier score 1/4
    assert scores["test_neg_log_loss"].mean() > -np.log(2)
    assert scores["test_neg_brier_score"].mean() > -0.25


def _blockwise_fit(estimator, X, y, classes):
    """partial_fit on each block of the dask arrays X and y in turn, as
    dask-ml's Incremental does."""
    for i in range(X.numblocks[0]):
        estimator.partial_fit(
            X.blocks[i].compute(), y.blocks[i].compute(), classes=classes
        )
    return estimator


@pytest.mark.parametrize("estimator", ALL)
def test_dask_blockwise_partial_fit_and_prediction(estimator):
    da = pytest.importorskip(
        "dask.array",
        reason="dask is the optional extra 'distributed': "
        'pip install -e ".[tests,distributed]"',
    )
    if not hasattr(estimator, "partial_fit"):
        pytest.skip(f"{estimator!r} has no partial_fit")
    X, y = _data(n_classes=3)
    classes = np.unique(y)
    # uneven blocks: the last is shorter
    chunks = (40, 40, 40, 30)
    dask_X = da.from_array(X, chunks=(chunks, X.shape[1]))
    dask_y = da.from_array(y, chunks=(chunks,))
    blockwise = _blockwise_fit(_seeded(estimator), dask_X, dask_y, classes)

    in_memory = _seeded(estimator)
    bounds = np.cumsum((0, *chunks))
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        in_memory.partial_fit(X[start:stop], y[start:stop], classes=classes)
    assert_array_equal(blockwise.decision_function(X), in_memory.decision_function(X))

    # dask-ml's ParallelPostFit: prediction block by block
    predicted = dask_X.map_blocks(
        blockwise.predict, drop_axis=1, dtype=blockwise.classes_.dtype
    )
    assert_array_equal(predicted.compute(), blockwise.predict(X))


def _documented_trusted_types():
    """The list SKPERC_TYPES of the skops example of the deployment guide."""
    text = DEPLOYMENT_GUIDE.read_text()
    found = re.search(r"SKPERC_TYPES = (\[.*?\])\n", text, flags=re.DOTALL)
    listing = "\n".join(
        line.split("#")[0] for line in found.group(1).replace("    ", "").splitlines()
    )
    return set(ast.literal_eval(listing))


@pytest.mark.parametrize("estimator", ALL)
def test_skops_round_trip_with_the_documented_trusted_types(estimator):
    sio = pytest.importorskip(
        "skops.io", reason='skops is in the extra tests: pip install -e ".[tests]"'
    )
    X, y = _data(n_classes=3)
    X_fit = X @ X.T if _precomputed(estimator) else X
    model = _quiet_fit(_seeded(estimator), X_fit, y)
    data = sio.dumps(model)
    untrusted = set(sio.get_untrusted_types(data=data))
    assert untrusted <= _documented_trusted_types() | TEST_FUNCTIONS
    loaded = sio.loads(data, trusted=sorted(untrusted))
    assert type(loaded) is type(model)
    assert_array_equal(loaded.decision_function(X_fit), model.decision_function(X_fit))
    assert_array_equal(loaded.predict(X_fit), model.predict(X_fit))


def _converts_to_onnx(estimator):
    if isinstance(estimator, KernelPerceptron):
        return isinstance(estimator.kernel, str) and not _precomputed(estimator)
    if isinstance(estimator, HalvingClassifier):
        return not estimator.randomized and (
            estimator.concepts == "stumps"
            or isinstance(estimator.concepts, DecisionStumps)
        )
    return True


@pytest.mark.parametrize("estimator", ALL)
def test_onnx_graph_gives_predict_and_calibrated_probabilities(estimator):
    reason = "the ONNX export needs the extra onnx: pip install -e '.[onnx]'"
    skl2onnx = pytest.importorskip("skl2onnx", reason=reason)
    onnxruntime = pytest.importorskip("onnxruntime", reason=reason)
    from test_onnx import _assert_same_as_estimator

    import skperc.onnx  # noqa: F401  (registers the converters)

    X, y = _data(n_classes=3)
    if not _converts_to_onnx(estimator):
        X_fit = X @ X.T if _precomputed(estimator) else X
        model = _quiet_fit(_seeded(estimator), X_fit, y)
        with pytest.raises(ValueError, match="cannot be converted|Only Halving"):
            skl2onnx.to_onnx(model, X_fit[:1])
        return
    pipeline = _quiet_fit(make_pipeline(StandardScaler(), _seeded(estimator)), X, y)
    for dtype in (np.float64, np.float32):
        _assert_same_as_estimator(pipeline, X.astype(dtype))

    # skl2onnx's converter of CalibratedClassifierCV runs the converted
    # estimator's decision values through the sigmoids
    calibrated = _quiet_fit(_calibrated(pipeline), X, y)
    onx = skl2onnx.to_onnx(calibrated, X[:1], options={"zipmap": False})
    session = onnxruntime.InferenceSession(
        onx.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    labels, proba = session.run(None, {session.get_inputs()[0].name: X})
    assert_array_equal(labels, calibrated.predict(X))
    assert_allclose(proba, calibrated.predict_proba(X), rtol=0, atol=1e-9)
