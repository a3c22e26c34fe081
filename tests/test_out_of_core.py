"""Out-of-core training: a dataset in a numpy.memmap file, streamed through
partial_fit in chunks, gives the model of fit(shuffle=False) on the whole."""

import warnings

import numpy as np
import pytest
from estimators import ESTIMATORS
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import gen_batches

from skperc import HalvingClassifier, KernelPerceptron, MarginPerceptron

CHUNK_SIZE = 32


def _streams_like_fit(estimator):
    if isinstance(estimator, MarginPerceptron | KernelPerceptron):
        # a precomputed Gram matrix has no partial_fit
        return hasattr(estimator, "partial_fit")
    # The default concept classes take their finite set from the data the
    # run starts on: the first chunk for partial_fit, the whole for fit.
    return isinstance(estimator, HalvingClassifier) and not isinstance(
        estimator.concepts, str
    )


ONLINE_LEARNERS = [e for e in ESTIMATORS if _streams_like_fit(e)]


def _name(estimator):
    return f"{type(estimator).__name__}[{ESTIMATORS.index(estimator)}]"


@pytest.fixture
def memmap_data(tmp_path):
    """320 samples of 3 classes, 10% of labels flipped so that no epoch is
    free of updates, in a read-only float64 memmap file."""
    X, y = make_classification(
        n_samples=320,
        n_features=6,
        n_informative=4,
        n_classes=3,
        flip_y=0.1,
        random_state=0,
    )
    path = tmp_path / "X.float64"
    X.tofile(path)
    return np.memmap(path, dtype=np.float64, mode="r", shape=X.shape), y


def stream(estimator, X, y, n_passes):
    """n_passes over X in chunks through partial_fit."""
    classes = np.unique(y)
    for _ in range(n_passes):
        for batch in gen_batches(len(y), CHUNK_SIZE):
            chunk = X[batch]
            # a view of the file, not the whole array in memory
            assert isinstance(chunk, np.memmap) and len(chunk) <= CHUNK_SIZE
            estimator.partial_fit(chunk, y[batch], classes=classes)
    return estimator


def whole_and_streamed(estimator, X, y, n_passes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        whole = clone(estimator).fit(np.asarray(X), y)
    return whole, stream(clone(estimator), X, y, n_passes)


def assert_same_predictions(whole, streamed, X):
    np.testing.assert_array_equal(streamed.predict(X), whole.predict(X))
    np.testing.assert_array_equal(
        streamed.decision_function(X), whole.decision_function(X)
    )


def test_the_dataset_is_larger_than_a_chunk(memmap_data):
    X, _ = memmap_data
    assert len(X) > 5 * CHUNK_SIZE


@pytest.mark.parametrize(
    "estimator",
    [e for e in ONLINE_LEARNERS if isinstance(e, MarginPerceptron)],
    ids=_name,
)
def test_margin_perceptron_passes_of_chunks_are_epochs(estimator, memmap_data):
    # fit stops early only after an epoch without updates, which the
    # flipped labels rule out: it runs max_iter epochs over the sample in
    # order, as many passes of partial_fit do.
    X, y = memmap_data
    n_passes = 3
    estimator = clone(estimator).set_params(shuffle=False, max_iter=n_passes)
    if estimator.intercept_scaling == "rms":
        # each pass of partial_fit adds its examples to the mean of the
        # norms again, where fit's later epochs do not: the same lift but
        # for its last bits (one pass is the same run: see
        # test_partial_fit_on_chunks_equals_one_epoch_of_fit)
        estimator.set_params(intercept_scaling="auto")
    whole, streamed = whole_and_streamed(estimator, X, y, n_passes)
    assert whole.n_iter_ == n_passes
    np.testing.assert_array_equal(streamed.coef_, whole.coef_)
    np.testing.assert_array_equal(streamed.intercept_, whole.intercept_)
    np.testing.assert_array_equal(streamed.n_updates_, whole.n_updates_)
    assert_same_predictions(whole, streamed, X)


@pytest.mark.parametrize(
    "estimator",
    [e for e in ONLINE_LEARNERS if isinstance(e, KernelPerceptron)],
    ids=_name,
)
def test_kernel_perceptron_one_pass_of_chunks_is_one_epoch(estimator, memmap_data):
    # One pass only: a second pass of partial_fit adds each chunk's samples
    # to the run again as new samples, where a second epoch of fit revisits
    # the same support vectors.
    X, y = memmap_data
    # fit holds out no validation part then, as partial_fit does not
    estimator = clone(estimator).set_params(
        shuffle=False, max_iter=1, early_stopping=False
    )
    if estimator.gamma == "scale":
        # "scale" is taken from the first batch: from the first chunk when
        # streamed, from the whole sample in fit (see
        # test_gamma_scale_is_fixed_by_the_first_batch)
        estimator.set_params(gamma="auto")
    whole, streamed = whole_and_streamed(estimator, X, y, n_passes=1)
    np.testing.assert_array_equal(streamed.support_, whole.support_)
    np.testing.assert_array_equal(streamed.dual_coef_, whole.dual_coef_)
    np.testing.assert_array_equal(streamed.n_updates_, whole.n_updates_)
    assert_same_predictions(whole, streamed, X)


@pytest.mark.parametrize(
    "estimator",
    [e for e in ONLINE_LEARNERS if isinstance(e, HalvingClassifier)],
    ids=_name,
)
def test_halving_one_pass_of_chunks_is_fit(estimator, memmap_data):
    # fit is one pass over the sample in order
    X, y = memmap_data
    estimator = clone(estimator).set_params(random_state=0)
    whole, streamed = whole_and_streamed(estimator, X, y, n_passes=1)
    np.testing.assert_array_equal(streamed.n_mistakes_, whole.n_mistakes_)
    np.testing.assert_array_equal(
        streamed.version_space_size_, whole.version_space_size_
    )
    assert_same_predictions(whole, streamed, X)
