"""The perceptrons under failures and threads: a fit that does not complete
leaves the model it had, concurrent reads see one model, concurrent
partial_fit calls all count, and out-of-range parameters are refused; on
high-dimensional sparse input a call costs what its batch holds."""

import contextlib
import pickle
import threading
import tracemalloc
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification

PERCEPTRONS = [
    MarginPerceptron(random_state=0),
    MarginPerceptron(random_state=0, n_jobs=2),
    KernelPerceptron(random_state=0),
]


def _data(n_classes, random_state=0):
    return make_classification(
        60,
        4,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=random_state,
    )


@pytest.mark.parametrize("estimator", PERCEPTRONS, ids=repr)
def test_a_refit_that_fails_keeps_the_previous_model(estimator):
    X, y = _data(2)
    clf = estimator.fit(X, y)
    before = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    prediction = clf.predict(X[:6])
    huge = X * 1e300
    # scikit-learn's Perceptron answers from old weights under new classes
    with pytest.raises(ValueError, match="overflowed"):
        clf.fit(huge, ["a", "b", "c"] * 20)
    np.testing.assert_array_equal(clf.predict(X[:6]), prediction)
    after = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    for name, value in before.items():
        assert after[name] is value, name
    # a first fit that fails leaves an unfitted estimator
    fresh = type(estimator)(**estimator.get_params())
    with pytest.raises(ValueError, match="overflowed"):
        fresh.fit(huge, ["a", "b", "c"] * 20)
    with pytest.raises(NotFittedError):
        fresh.predict(X)


@contextlib.contextmanager
def reading_threads(read, n_threads):
    """Threads calling ``read`` until the block ends; yields the list of
    what they read, and asserts that no call raised and some returned."""
    errors, seen, stop = [], [], threading.Event()

    def loop():
        while not stop.is_set():
            try:
                seen.append(read())
            except Exception as error:  # noqa: BLE001 - any error fails the test
                errors.append(error)

    threads = [threading.Thread(target=loop) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    try:
        yield seen
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors, errors[:3]
    assert seen


@pytest.mark.parametrize("estimator", PERCEPTRONS, ids=repr)
def test_predictions_during_refits_come_from_one_model(estimator):
    """Threads predict while the main thread refits between a 2-class and a
    3-class model (scikit-learn's Perceptron raises AttributeError or
    IndexError here)."""
    Xa, ya = _data(2, 1)
    Xb, yb = _data(3, 2)
    clf = estimator.fit(Xa, ya)
    answers = {
        "a": estimator.__class__(**estimator.get_params()).fit(Xa, ya).predict(Xa),
        "b": estimator.__class__(**estimator.get_params()).fit(Xb, yb).predict(Xa),
    }
    with reading_threads(lambda: clf.predict(Xa), 3) as seen:
        for _ in range(15):
            clf.fit(Xb, yb)
            clf.fit(Xa, ya)
    for prediction in seen:
        assert any(np.array_equal(prediction, a) for a in answers.values())


@pytest.mark.parametrize("estimator", PERCEPTRONS, ids=repr)
def test_concurrent_partial_fits_all_count(estimator):
    """scikit-learn's SGD loses updates here: two threads calling partial_fit
    run one after the other, so every example visited counts."""
    X, y = _data(2, 3)
    clf = estimator.__class__(**estimator.get_params())
    clf.partial_fit(X, y, classes=[0, 1])
    barrier = threading.Barrier(2)

    def feed():
        barrier.wait()
        for _ in range(20):
            clf.partial_fit(X, y)

    threads = [threading.Thread(target=feed) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # one step per example visited, by every problem: 41 calls of 60
    np.testing.assert_array_equal(clf._run.n_steps, 41 * len(y))


def test_out_of_range_integers_are_refused_before_any_work():
    X, y = _data(2)
    with pytest.raises(ValueError, match="max_iter"):
        MarginPerceptron(max_iter=2**63).fit(X, y)
    with pytest.raises(ValueError, match="budget"):
        KernelPerceptron(budget=2**64).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        MarginPerceptron(class_weight={0: -1.0, 1: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        KernelPerceptron(class_weight={0: 1.0, 1: -2.0}).fit(X, y)


@pytest.mark.parametrize("eta0", [1e-300, 1.0, 1e200])
def test_the_margin_of_huge_or_tiny_weights(eta0):
    """The weights scale with eta0, the margin does not; their norm would
    overflow or underflow if computed directly."""
    X, y = make_margin_classification(60, 3, margin=0.1, random_state=0)
    clf = MarginPerceptron(eta0=eta0, fit_intercept=False, random_state=0).fit(X, y)
    reference = MarginPerceptron(fit_intercept=False, random_state=0).fit(X, y)
    assert clf.converged_
    assert clf.margin_[0] == pytest.approx(reference.margin_[0], rel=1e-12)
    assert clf.margin_[0] > 0


# --- high-dimensional sparse input: a call costs what its batch holds ------


def _hashed_batches(n_batches, n_features=2**18, n_classes=10, seed=0):
    """Batches of 50 CSR rows of 20 values at random columns among many
    (HashingVectorizer sizes), labelled by the largest of random scores."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(n_batches):
        X = sp.random(50, n_features, density=20 / n_features, random_state=rng)
        batches.append((X.tocsr(), rng.integers(n_classes, size=50)))
    return batches


def test_partial_fit_memory_follows_the_batch_not_the_model():
    """Each call used to copy, transpose and pad the whole weight matrix
    several times (n_features x n_classes, 34 MB here, for a batch of 1,000
    values); now it copies the weights of the batch's features only."""
    batches = _hashed_batches(3)
    clf = MarginPerceptron(random_state=0)
    clf.partial_fit(*batches[0], classes=np.arange(10))
    model_bytes = clf._run.coef.nbytes + clf._run.avg_coef.nbytes
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for X, y in batches[1:]:
            clf.partial_fit(X, y)
        extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert extra < 0.05 * model_bytes, extra / model_bytes


def test_partial_fit_memory_does_not_grow_with_the_features_seen():
    """A call after many that touched many features costs what its own
    batch holds: margin_'s norms read the weights of the features seen in
    place, and the features seen are a bitset marked in place (both were
    copies of every weight seen, per call)."""
    rng = np.random.default_rng(1)
    n_features, n_classes = 2**18, 10
    wide = sp.random(5000, n_features, density=20 / n_features, random_state=rng)
    clf = MarginPerceptron(random_state=0)
    clf.partial_fit(
        wide.tocsr(), rng.integers(n_classes, size=5000), classes=np.arange(n_classes)
    )
    X, y = _hashed_batches(1, n_features=n_features, seed=2)[0]
    n_seen = np.count_nonzero((clf.coef_ != 0).any(axis=0))
    assert n_seen > 50 * X.nnz  # the features seen far outnumber the batch's
    # the weights and averaging sums of the batch's features, as trained
    batch_bytes = 2 * X.nnz * clf._run.coef.shape[1] * 8
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        clf.partial_fit(X, y)
        extra = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert extra < 10 * batch_bytes, extra / batch_bytes


@pytest.mark.parametrize("average", [False, True, "auto"])
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_sparse_partial_fit_in_place_equals_dense(average, n_jobs):
    """The weights of the batch's features, trained apart and written back,
    are those of a run on the same rows given dense, to the last bit."""
    batches = _hashed_batches(4, n_features=300, n_classes=3)
    sparse, dense = (
        MarginPerceptron(average=average, n_jobs=n_jobs, random_state=0)
        for _ in range(2)
    )
    for X, y in batches:
        sparse.partial_fit(X, y, classes=np.arange(3))
        dense.partial_fit(X.toarray(), y, classes=np.arange(3))
        np.testing.assert_array_equal(sparse.coef_, dense.coef_)
        np.testing.assert_array_equal(sparse.intercept_, dense.intercept_)
        np.testing.assert_array_equal(sparse.margin_, dense.margin_)


def test_a_call_that_fails_after_writing_in_place_restores_the_model():
    """A warm-started fit whose ConvergenceWarning is an error fails after
    its weights were written back into the run: the writes are undone."""
    (X1, y1), (X2, y2) = _hashed_batches(2, n_features=2000, n_classes=3)
    clf = MarginPerceptron(warm_start=True, max_iter=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X1, y1)
    coef, intercept = clf.coef_.copy(), clf.intercept_.copy()
    run = {name: np.copy(value) for name, value in vars(clf._run).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            clf.fit(X2, y2)
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf.intercept_, intercept)
    for name, value in vars(clf._run).items():
        np.testing.assert_array_equal(value, run[name], err_msg=name)
    # and the run goes on as if the failed call had not been made
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X2, y2)
        fresh = MarginPerceptron(warm_start=True, max_iter=1, random_state=0)
        fresh.fit(X1, y1).fit(X2, y2)
    np.testing.assert_array_equal(clf.coef_, fresh.coef_)


def _reads_during_sparse_partial_fits(read):
    """What ``read(clf, X_test)`` returned in threads while one MarginPerceptron
    ran partial_fit on CSR batches (which writes its weights in place),
    the decision values of each model that a call published, the test
    rows and a batch."""
    batches = _hashed_batches(30, n_features=5000, n_classes=4)
    X_test = sp.vstack([X for X, _ in batches[:4]]).tocsr()
    clf = MarginPerceptron(random_state=0)
    clf.partial_fit(*batches[0], classes=np.arange(4))
    models = [clf.decision_function(X_test)]
    with reading_threads(lambda: read(clf, X_test), 2) as seen:
        for X, y in batches[1:]:
            clf.partial_fit(X, y)
            models.append(clf.decision_function(X_test))
    return seen, models, X_test, batches[1]


def test_reads_during_sparse_partial_fits_see_one_model():
    """Threads reading while partial_fit writes the batch's weights into
    the model in place see the model before a call or after it."""
    seen, models, _, _ = _reads_during_sparse_partial_fits(
        lambda clf, X_test: clf.decision_function(X_test)
    )
    for scores in seen:
        assert any(np.array_equal(scores, model) for model in models)


def test_pickles_during_sparse_partial_fits_hold_one_model():
    """pickle writes the arrays after __getstate__ returns, while partial_fit
    writes the run's weights in place: a pickle taken meanwhile holds the
    model before a call or after it, never a mixture."""
    seen, models, X_test, batch = _reads_during_sparse_partial_fits(
        lambda clf, _: pickle.dumps(clf)
    )
    assert len(seen) > 10
    for dumped in seen:
        scores = pickle.loads(dumped).decision_function(X_test)
        assert any(np.array_equal(scores, model) for model in models)
        # and the copy goes on as a model of its own
        pickle.loads(dumped).partial_fit(*batch)


def test_the_state_a_pickle_writes_shares_no_array_that_partial_fit_writes():
    """pickle writes the arrays of __getstate__'s state after it returns:
    the partial_fit calls that follow, which write the run's weights in
    place, leave them as they were."""
    batches = _hashed_batches(3, n_features=3000, n_classes=3)
    clf = MarginPerceptron(random_state=0)
    clf.partial_fit(*batches[0], classes=np.arange(3))
    state = clf.__getstate__()
    held = {name: np.copy(value) for name, value in vars(state["_run"]).items()}
    for X, y in batches[1:]:
        clf.partial_fit(X, y)
    for name, value in held.items():
        np.testing.assert_array_equal(getattr(state["_run"], name), value, name)


def test_sparse_partial_fit_continues_a_model_loaded_read_only(tmp_path):
    """Weights memory-mapped read-only by joblib.load(mmap_mode="r") cannot
    be written in place: the run goes on in a copy, as a model in memory."""
    batches = _hashed_batches(3, n_features=3000, n_classes=3)
    clf = MarginPerceptron(random_state=0)
    clf.partial_fit(*batches[0], classes=np.arange(3))
    joblib.dump(clf, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    assert not loaded._run.coef.flags.writeable
    for X, y in batches[1:]:
        clf.partial_fit(X, y)
        loaded.partial_fit(X, y)
    np.testing.assert_array_equal(loaded.coef_, clf.coef_)
