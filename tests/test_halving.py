"""HalvingClassifier against the numpy reference, and the claims of notes 3
(sections 3 and 4) on realizable streams."""

import copy
import math
import subprocess
import sys
import threading
from functools import partial

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from reference_halving import reference_halving, vote_margins
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import gen_batches

import skperc._version_spaces
from skperc import HalvingClassifier
from skperc._halving_fast import run_stumps, stump_member, stump_votes
from skperc._version_spaces import ListedVersionSpaces, StumpVersionSpaces
from skperc.concepts import (
    ConceptClass,
    Conjunctions,
    DecisionStumps,
    ExplicitConcepts,
    IntegerHalfspaces,
)


def _boolean_sample(n_samples, n_features, seed):
    return np.random.RandomState(seed).randint(2, size=(n_samples, n_features))


def _real_sample(n_samples, n_features, seed):
    return np.random.RandomState(seed).randn(n_samples, n_features)


def _threshold(X, feature, threshold):
    return X[:, feature] >= threshold


def _labels(clf, X, concept):
    """The classes_ labels that a concept of clf.concepts_ gives to X."""
    return clf.concepts_.predict(X, [concept])[:, 0]


def _noisy(y, rate, seed):
    flip = np.random.RandomState(seed).rand(len(y)) < rate
    return np.where(flip, 1 - y, y)


CLASSES = {
    "stumps": (DecisionStumps(n_thresholds=9), _real_sample),
    "conjunctions": (Conjunctions(max_literals=3), _boolean_sample),
    "halfspaces": (IntegerHalfspaces(), _boolean_sample),
    "explicit": (
        ExplicitConcepts(
            [
                partial(_threshold, feature=j, threshold=t)
                for j in range(4)
                for t in (-1.0, 0.0, 0.5)
            ]
        ),
        _real_sample,
    ),
}


@pytest.mark.parametrize("name", sorted(CLASSES))
@pytest.mark.parametrize("randomized", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("keep_mistakes", [True, False])
def test_matches_reference(name, randomized, n_classes, keep_mistakes, monkeypatch):
    """Every path (compiled stumps, live index sets with or without the kept
    counts, restarts on noisy labels) runs the reference's halving: the same
    mistakes, counts, version spaces, draws and vote margins, in batches."""
    if not keep_mistakes:
        # The general path then keeps the examples and restarts from them.
        monkeypatch.setattr(skperc._version_spaces, "KEPT_MISTAKES_UP_TO", 0)
    concepts, sample = CLASSES[name]
    X = sample(90, 4, seed=0)
    y = (X[:, 0] + X[:, 1] + X[:, 2] > 1).astype(int) + (X[:, 3] > 0.5) * (
        n_classes - 2
    )
    y = np.where(np.random.RandomState(1).rand(len(y)) < 0.15, (y + 1) % n_classes, y)
    batches = [30, 1, 44, 15]
    clf = HalvingClassifier(concepts=concepts, randomized=randomized, random_state=7)
    start = 0
    for size in batches:
        clf.partial_fit(
            X[start : start + size], y[start : start + size], [0, 1, 2][:n_classes]
        )
        start += size
    n_problems = 1 if n_classes == 2 else n_classes
    predictions = clf.concepts_.predict(X)
    expected = reference_halving(predictions, y, batches, n_problems, randomized, 7)

    assert np.array_equal(clf.n_mistakes_, expected["mistakes"])
    assert clf.fewest_mistakes_.min() > 0, "the labels must be noisy"
    for p in range(n_problems):
        assert np.array_equal(clf.version_space(p), expected["version_spaces"][p])
    assert np.array_equal(clf.fewest_mistakes_, expected["counts"].min(axis=1))
    kept = name == "stumps" or keep_mistakes
    assert hasattr(clf, "concept_mistakes_") == kept
    if kept:
        assert np.array_equal(clf.concept_mistakes_, expected["counts"])
    X_test = sample(50, 4, seed=2)
    test_predictions = clf.concepts_.predict(X_test)
    if randomized:
        assert np.array_equal(clf.drawn_concept_, expected["drawn"])
        margins = test_predictions[:, expected["drawn"]]
    else:
        margins = vote_margins(test_predictions, expected["version_spaces"])
    assert np.allclose(clf.decision_function(X_test).reshape(len(X_test), -1), margins)


@pytest.mark.parametrize("randomized", [False, True])
def test_fit_is_partial_fit_in_one_batch(randomized):
    X = _real_sample(60, 3, seed=3)
    y = _noisy((X[:, 0] > 0).astype(int), 0.2, seed=4)
    fitted = HalvingClassifier(randomized=randomized, random_state=0).fit(X, y)
    streamed = HalvingClassifier(randomized=randomized, random_state=0)
    streamed.partial_fit(X, y, classes=[0, 1])
    assert np.array_equal(fitted.n_mistakes_, streamed.n_mistakes_)
    assert np.array_equal(fitted.concept_mistakes_, streamed.concept_mistakes_)
    assert np.array_equal(fitted.predict(X), streamed.predict(X))


@pytest.mark.parametrize("randomized", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_a_stream_of_chunks_is_the_run_of_fit(randomized, seed):
    """On a concept class that the sample does not shape (conjunctions of
    its boolean features), the sample in chunks through partial_fit makes
    the run of fit: the same mistakes and version spaces, and with
    randomized halving the same draws and drawn_concept_, which each call
    reads without advancing the draws."""
    rng = np.random.RandomState(seed)
    X = (rng.rand(150, 5) < 0.5).astype(np.float64)
    # 3 classes, a fifth of them at random: no conjunction is consistent
    y = np.where(rng.rand(150) < 0.2, rng.randint(3, size=150), X[:, :2].sum(1))
    params = dict(concepts="conjunctions", randomized=randomized, random_state=seed)
    fitted = HalvingClassifier(**params).fit(X, y)
    streamed = HalvingClassifier(**params)
    for rows in gen_batches(len(y), 7 + seed):
        streamed.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    for name in ("n_mistakes_", "fewest_mistakes_", "version_space_size_"):
        assert np.array_equal(getattr(streamed, name), getattr(fitted, name))
    assert (fitted.fewest_mistakes_ > 0).all()
    if randomized:
        assert np.array_equal(streamed.drawn_concept_, fitted.drawn_concept_)
    assert np.array_equal(streamed.decision_function(X), fitted.decision_function(X))


def _realizable_stream(name, seed):
    """A sample and the index of the concept of the class that labels it."""
    concepts, sample = CLASSES[name]
    X = sample(120, 6 if name != "halfspaces" else 5, seed=seed)
    fitted = HalvingClassifier(concepts=concepts).fit(X, np.arange(len(X)) % 2)
    labels = fitted.concepts_.predict(X)
    # targets that label the sample with both classes
    both = np.flatnonzero(np.ptp(labels, axis=0) > 0)
    target = np.random.RandomState(seed).choice(both)
    return X, labels[:, target], target


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_halving_mistake_bound(name):
    """Claim of section 3: at most log2 |C| mistakes on a realizable stream,
    for many targets and orders; the version space keeps the target."""
    for seed in range(25):
        X, y, target = _realizable_stream(name, seed)
        clf = HalvingClassifier(concepts=CLASSES[name][0]).fit(X, y)
        assert clf.n_mistakes_[0] <= math.log2(clf.n_concepts_)
        assert clf.mistake_bound_ == math.log2(clf.n_concepts_)
        assert clf.fewest_mistakes_[0] == 0
        assert target in clf.version_space()


def test_randomized_halving_expected_mistakes():
    """Claim 4.1: E[mistakes] <= ln |C| + O(1), here ln |C| + 1. On this
    stream every example refutes one more threshold, so the expectation is
    H_r - 1 and a mean above ln |C| + 1 would need a biased draw."""
    r = 400
    grid = np.arange(r, dtype=np.float64)[:, None]
    concepts = DecisionStumps(n_thresholds=r)
    target_labels = np.where(grid[:, 0] >= r - 1, 1, -1)
    # Increasing x: the stump "x >= theta_k" of sign +1 with k = i dies.
    mistakes = []
    for seed in range(300):
        clf = HalvingClassifier(concepts=concepts, randomized=True, random_state=seed)
        clf.fit(grid, target_labels)
        mistakes.append(clf.n_mistakes_[0])
    bound = math.log(2 * r) + 1
    assert clf.mistake_bound_ == bound
    assert np.mean(mistakes) <= bound
    # The draws do matter: the mean is near the harmonic estimate, far
    # from the deterministic run.
    deterministic = HalvingClassifier(concepts=concepts).fit(grid, target_labels)
    assert deterministic.n_mistakes_[0] <= math.log2(2 * r)
    assert np.mean(mistakes) > 1


@pytest.mark.parametrize("name", sorted(CLASSES))
@pytest.mark.parametrize("noise", [0.0, 0.2])
def test_version_space_does_not_depend_on_order(name, noise):
    X, y, _ = _realizable_stream(name, seed=5)
    y = np.where(np.random.RandomState(0).rand(len(y)) < noise, -y, y)
    spaces = []
    for seed in range(4):
        order = np.random.RandomState(seed).permutation(len(y))
        clf = HalvingClassifier(concepts=CLASSES[name][0]).fit(X[order], y[order])
        spaces.append(clf.version_space())
    for space in spaces[1:]:
        assert np.array_equal(space, spaces[0])


def test_conjunction_recovered_from_the_cube():
    """Labels on all of {0,1}^5 specify a conjunction: the version space is
    that conjunction alone."""
    cube = np.array(np.meshgrid(*[[0, 1]] * 5)).reshape(5, -1).T
    clf = HalvingClassifier(concepts="conjunctions").fit(cube, cube[:, 0])
    for target in (5, 50, 242):
        y = clf.concepts_.predict(cube, [target])[:, 0]
        fitted = HalvingClassifier(concepts="conjunctions").fit(cube, y)
        assert fitted.n_concepts_ == 3**5
        assert fitted.version_space().tolist() == [target]


def test_stump_recovered_from_its_grid():
    """The sample on the threshold grid itself specifies an inner stump."""
    X = np.linspace(-1, 1, 11)[:, None]
    clf = HalvingClassifier(concepts=DecisionStumps(n_thresholds=11))
    for target in (3, 15):
        y = clf.fit(X, X[:, 0] > 0).concepts_.predict(X, [target])[:, 0]
        assert clf.fit(X, y).version_space().tolist() == [target]
        assert clf.n_mistakes_[0] <= math.log2(22)


def test_halfspace_recovered_on_the_cube():
    """On all of {0,1}^3 the version space holds exactly the halfspaces that
    compute the target function."""
    cube = np.array(np.meshgrid(*[[0, 1]] * 3)).reshape(3, -1).T
    clf = HalvingClassifier(concepts="halfspaces").fit(cube, cube[:, 0])
    table = clf.concepts_.predict(cube)
    target = np.flatnonzero(np.ptp(table, axis=0) > 0)[10]
    fitted = HalvingClassifier(concepts="halfspaces").fit(cube, table[:, target])
    same = np.flatnonzero((table == table[:, [target]]).all(axis=0))
    assert np.array_equal(fitted.version_space(), same)
    assert np.array_equal(fitted.predict(cube), table[:, target])


def test_noisy_mistake_bound():
    """With a best concept of k mistakes, at most (k + 1) log2 |C| + k."""
    X, y, _ = _realizable_stream("stumps", seed=6)
    for seed in range(10):
        noisy = np.where(np.random.RandomState(seed).rand(len(y)) < 0.05, -y, y)
        clf = HalvingClassifier(concepts=CLASSES["stumps"][0]).fit(X, noisy)
        k = clf.fewest_mistakes_[0]
        assert k > 0
        assert clf.n_mistakes_[0] <= (k + 1) * math.log2(clf.n_concepts_) + k


def test_partial_fit_one_basis_vector_at_a_time():
    """The adversary of Claim 1.4 asks one standard basis vector at a time
    and labels it against the prediction; any two labels work."""
    d = 12
    clf = HalvingClassifier()
    for i in range(d):
        x = np.eye(d)[i : i + 1]
        guess = clf.predict(x)[0] if i else "yes"
        clf.partial_fit(x, ["no" if guess == "yes" else "yes"], classes=["no", "yes"])
    # its own online predictions were those asked for, all wrong (the
    # first one a tie of the vote: +1, "yes")
    assert clf.n_mistakes_[0] == d
    assert clf.n_concepts_ == 2 * d  # one threshold per feature from e_1
    assert set(clf.predict(np.eye(d))) <= {"no", "yes"}


def test_digits_one_vs_rest_with_threads():
    X, y = load_digits(return_X_y=True)
    single = HalvingClassifier(concepts=DecisionStumps(n_thresholds=8)).fit(X, y)
    threaded = HalvingClassifier(concepts=DecisionStumps(n_thresholds=8), n_jobs=2)
    threaded.fit(X, y)
    assert single.decision_function(X).shape == (len(X), 10)
    assert np.array_equal(single.concept_mistakes_, threaded.concept_mistakes_)
    assert np.array_equal(single.predict(X), threaded.predict(X))


def test_n_jobs_inside_a_process_backend():
    # The blocks of problems update the estimator in place: a process
    # backend chosen by the caller must not run them in copies.
    X, y = load_digits(return_X_y=True)
    single = HalvingClassifier(concepts=DecisionStumps(n_thresholds=8)).fit(X, y)
    with joblib.parallel_backend("loky"):
        pooled = HalvingClassifier(concepts=DecisionStumps(n_thresholds=8), n_jobs=2)
        pooled.fit(X, y)
    assert np.array_equal(single.n_mistakes_, pooled.n_mistakes_)
    assert np.array_equal(single.concept_mistakes_, pooled.concept_mistakes_)


def test_bad_input():
    with pytest.raises(ValueError, match="boolean"):
        HalvingClassifier(concepts="conjunctions").fit([[0.5, 1], [1, 0]], [0, 1])
    with pytest.raises(ValueError, match="max_literals"):
        HalvingClassifier(concepts="conjunctions").fit(np.zeros((2, 20)), [0, 1])
    with pytest.raises(ValueError, match="other than -1"):
        HalvingClassifier(concepts=ExplicitConcepts([partial(np.sum, axis=1)])).fit(
            [[2.0], [3.0]], [0, 1]
        )
    with pytest.raises(ValueError, match="one value per sample"):
        HalvingClassifier(concepts=ExplicitConcepts([np.isfinite])).fit(
            [[2.0, 1.0], [3.0, 1.0]], [0, 1]
        )
    with pytest.raises(TypeError, match="callable"):
        HalvingClassifier(concepts=ExplicitConcepts([3])).fit([[2.0], [3.0]], [0, 1])
    with pytest.raises(ValueError, match="classes must be passed"):
        HalvingClassifier().partial_fit([[1.0]], [1])
    with pytest.raises(ValueError, match="concepts"):
        HalvingClassifier(concepts="trees").fit([[1.0], [2.0]], [0, 1])
    clf = HalvingClassifier().fit([[1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match="problem"):
        clf.version_space(1)
    with pytest.raises(ValueError, match="indices"):
        clf.concepts_.predict([[1.0]], [clf.n_concepts_])


def test_a_refit_keeps_no_attribute_of_the_previous_run():
    rng = np.random.RandomState(0)
    X = rng.randint(0, 2, size=(40, 10)).astype(float)
    y = X[:, 0] * X[:, 1]
    clf = HalvingClassifier(concepts="conjunctions", randomized=True).fit(X, y)
    assert hasattr(clf, "concept_mistakes_") and hasattr(clf, "drawn_concept_")
    # 3^11 concepts are more than the counts are kept for
    wider = np.hstack([X, X[:, :1]])
    clf.set_params(randomized=False).fit(wider, y)
    assert not hasattr(clf, "concept_mistakes_")
    assert not hasattr(clf, "drawn_concept_")


# A fit publishes its model in one step; reads see one model.

_RACE = """
import sys, threading
import numpy as np
from skperc import HalvingClassifier

rng = np.random.RandomState(0)
Xa, Xb = rng.randn(400, 6), rng.randn(300, 9)[:, :6] * 3
ya, yb = (Xa[:, 0] > 0).astype(int), rng.randint(3, size=300)
clf = HalvingClassifier().fit(Xa, ya)
X = Xa[:200]
answers = [clf.predict(X), HalvingClassifier().fit(Xb, yb).predict(X)]
done, failures = threading.Event(), []

def read():
    while not done.is_set():
        try:
            prediction = clf.predict(X)
        except Exception as error:
            failures.append(repr(error))
            return
        if not any(np.array_equal(prediction, a) for a in answers):
            failures.append("a prediction of neither model")
            return

threads = [threading.Thread(target=read) for _ in range(3)]
for thread in threads:
    thread.start()
for _ in range(60):
    clf.fit(Xb, yb)
    clf.fit(Xa, ya)
done.set()
for thread in threads:
    thread.join()
print(failures[:3] or "ok")
"""


def test_refits_racing_predicts():
    """Three threads predict while the main thread refits on 2 and 3
    classes: every prediction is the old model's or the new one's. The race
    once crashed the process (double free), so it runs in a subprocess."""
    run = subprocess.run(
        [sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "ok", run.stdout


@pytest.mark.parametrize("name", ["stumps", "conjunctions"])
def test_two_threads_partial_fitting_both_count(name):
    """partial_fit from two threads at once: the fits run one at a time, so
    every example is counted; the counts and the version space do not
    depend on the order of the batches. (scikit-learn's SGDClassifier loses
    updates under the same calls.)"""
    rng = np.random.RandomState(0)
    if name == "stumps":
        X = rng.randn(8000, 30)
        # few thresholds: concurrent passes would write the same counts
        concepts = DecisionStumps(n_thresholds=3)
    else:
        X = rng.randint(2, size=(2000, 8))
        concepts = Conjunctions(max_literals=2)
    y = rng.randint(3, size=len(X))
    batches = np.array_split(np.arange(200, len(X)), 18)
    serial = HalvingClassifier(concepts=concepts)
    for batch in [np.arange(200), *batches]:
        serial.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
    for _ in range(3):
        shared = HalvingClassifier(concepts=concepts)
        shared.partial_fit(X[:200], y[:200], classes=[0, 1, 2])
        threads = [
            threading.Thread(
                target=_partial_fits, args=(shared, X, y, batches[start::2])
            )
            for start in (0, 1)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert np.array_equal(shared.concept_mistakes_, serial.concept_mistakes_)
        for p in range(3):
            assert np.array_equal(shared.version_space(p), serial.version_space(p))


def _partial_fits(clf, X, y, batches):
    for batch in batches:
        clf.partial_fit(X[batch], y[batch])


def _raising_concept(X):
    if (X > 3).any():
        raise RuntimeError("this concept fails on values above 3")
    return X[:, 0] > 0


FAILING_CLASSES = {
    "stumps": (
        DecisionStumps(n_thresholds=5),
        ExplicitConcepts(
            [partial(_threshold, feature=0, threshold=0), _raising_concept]
        ),
    ),
    "explicit": (
        ExplicitConcepts(
            [_raising_concept, partial(_threshold, feature=1, threshold=0)]
        ),
        ExplicitConcepts([_raising_concept]),
    ),
}


@pytest.mark.parametrize("name", sorted(FAILING_CLASSES))
def test_a_failed_fit_leaves_the_previous_model(name):
    """A refit that raises half way leaves the model as it was, attribute
    for attribute; a first fit that raises leaves the estimator unfitted."""
    good, failing = FAILING_CLASSES[name]
    rng = np.random.RandomState(0)
    X = np.clip(rng.randn(100, 3), -2.5, 2.5)
    y = (X[:, 1] > 0).astype(int)
    clf = HalvingClassifier(concepts=good).fit(X, y)
    before = copy.deepcopy(clf.__dict__)
    decision = clf.decision_function(X)
    X_bad = X.copy()
    X_bad[50, 2] = 4.0
    # 3 classes, a new concept class: the run starts, then fails at row 50
    with pytest.raises((RuntimeError, ValueError)):
        clf.set_params(concepts=failing).fit(X_bad, np.arange(100) % 3)
    clf.set_params(concepts=good)
    if name == "explicit":
        # the run continues, then fails at row 50
        with pytest.raises(RuntimeError):
            clf.partial_fit(X_bad, y)
    assert np.array_equal(clf.decision_function(X), decision)
    assert clf.__dict__.keys() == before.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(clf.__dict__[key], value), key
    with pytest.raises(RuntimeError):
        HalvingClassifier(concepts=failing).fit(X_bad, y)
    unfitted = HalvingClassifier(concepts=failing)
    with pytest.raises(RuntimeError):
        unfitted.fit(X_bad, y)
    with pytest.raises(NotFittedError):
        unfitted.predict(X)


@pytest.mark.parametrize("name", ["stumps", "conjunctions"])
def test_partial_fit_continues_a_memory_mapped_model(name, tmp_path):
    """A model loaded read-only by joblib.load(mmap_mode="r") continues its
    run as the model in memory does, and stays as it was on disk."""
    concepts, sample = CLASSES[name]
    X = sample(300, 4, seed=0)
    y = np.random.RandomState(1).randint(3, size=len(X))
    clf = HalvingClassifier(concepts=concepts, randomized=True, random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    joblib.dump(clf, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    loaded.partial_fit(X[100:], y[100:])
    clf.partial_fit(X[100:], y[100:])
    assert np.array_equal(loaded.n_mistakes_, clf.n_mistakes_)
    assert np.array_equal(loaded.concept_mistakes_, clf.concept_mistakes_)
    assert np.array_equal(loaded.predict(X), clf.predict(X))
    on_disk = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    assert on_disk.n_mistakes_.sum() < clf.n_mistakes_.sum()


class _Answering(ConceptClass):
    """A class of two concepts whose predictions are given."""

    def __init__(self, answer=None):
        self.answer = answer

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    @property
    def n_concepts(self):
        return 2

    def _predict_concepts(self, X, indices):
        return self.answer(X, indices)


@pytest.mark.parametrize("concepts", [DecisionStumps(n_thresholds=3), Conjunctions()])
def test_concept_indices_must_be_integers_of_the_class(concepts):
    """An index of 0.7 was truncated to concept 0, silently; -1 reached the
    stumps' arrays as an index from the end."""
    X = _boolean_sample(20, 3, seed=0).astype(float)
    concepts.fit(X)
    n = concepts.n_concepts
    assert concepts.predict(X, [n - 1, 0]).shape == (20, 2)
    assert concepts.predict(X, []).shape == (20, 0)
    for indices, error, match in [
        ([0.7], TypeError, "must be integers"),
        ([True], TypeError, "must be integers"),
        ([-1], ValueError, rf"in \[0, {n}\)"),
        ([n], ValueError, rf"in \[0, {n}\)"),
    ]:
        with pytest.raises(error, match=match):
            concepts.predict(X, indices)
        if isinstance(concepts, DecisionStumps):
            with pytest.raises(error, match=match):
                concepts.stump_parameters(indices)


class _Unreturning(_Answering):
    def fit(self, X, y=None):
        super().fit(X)


class _Counting(_Answering):
    def __init__(self, answer=None, count=2):
        super().__init__(answer)
        self.count = count

    @property
    def n_concepts(self):
        return self.count


@pytest.mark.parametrize(
    "concepts, error, match",
    [
        (_Unreturning(), TypeError, "_Unreturning.fit must return self"),
        (_Counting(count=4.0), ValueError, "n_concepts must be a positive int"),
        (_Counting(count=True), ValueError, "n_concepts must be a positive int"),
        (_Counting(count=0), ValueError, "n_concepts must be a positive int"),
    ],
)
def test_a_user_class_breaking_the_protocol_is_named(concepts, error, match):
    """A fit that forgot its return said "'NoneType' object has no
    attribute 'n_concepts'"; n_concepts=4.0 that the class had no
    concepts, and True failed in the compiled code."""
    X = _real_sample(20, 3, seed=0)
    with pytest.raises(error, match=match):
        HalvingClassifier(concepts=concepts).fit(X, X[:, 0] > 0)


def _ones(X, indices, dtype):
    return np.ones((X.shape[0], len(indices)), dtype=dtype)


@pytest.mark.parametrize(
    "answer, error, match",
    [
        (lambda X, i: _ones(X, i, np.int8) - 1, ValueError, "other than"),
        (lambda X, i: _ones(X, i, bool), TypeError, "dtype bool"),
        (lambda X, i: _ones(X, i, float) / 2, TypeError, "dtype float64"),
        (lambda X, i: _ones(X, i, float) * np.nan, TypeError, "dtype float64"),
        (lambda X, i: _ones(X, i, np.int64)[:, :1], ValueError, "shape"),
        (lambda X, i: _ones(X, i, np.int8).T, ValueError, "shape"),
        (lambda X, i: _ones(X, i, np.int8).tolist(), ValueError, "list"),
        (lambda X, i: np.asmatrix(_ones(X, i, np.int8)), ValueError, "matrix"),
    ],
)
def test_a_user_class_answering_wrong_is_refused(answer, error, match):
    """A user class answering 0/1, booleans, halves, NaN or a wrong shape
    would count mistakes silently wrong: it is refused, by name."""
    X = _real_sample(20, 3, seed=0)
    concepts = _Answering(answer)
    with pytest.raises(error, match=match) as raised:
        HalvingClassifier(concepts=concepts).fit(X, X[:, 0] > 0)
    assert "_Answering._predict_concepts" in str(raised.value)
    with pytest.raises(error, match=match):
        clone(concepts).fit(X).predict(X)


class _FlippedStumps(DecisionStumps):
    """Stumps that predict the other way: not the structure of stumps."""

    def _predict_concepts(self, X, indices):
        return -super()._predict_concepts(X, indices)


class _OppositeStumps(DecisionStumps):
    """Stumps whose parameters say the other sign: the compiled stumps read
    their thresholds past stump_parameters, and learned plain stumps."""

    def stump_parameters(self, indices=None):
        feature, sign, threshold = super().stump_parameters(indices)
        return feature, -sign, threshold


@pytest.mark.parametrize("randomized", [False, True])
@pytest.mark.parametrize("stumps", [_FlippedStumps, _OppositeStumps])
def test_a_stumps_subclass_predicting_otherwise_is_honoured(randomized, stumps):
    X = _real_sample(80, 3, seed=0)
    y = _noisy((X[:, 0] + X[:, 1] > 0).astype(int), 0.1, seed=1)
    clf = HalvingClassifier(
        concepts=stumps(n_thresholds=7), randomized=randomized, random_state=3
    ).fit(X, y)
    predictions = clf.concepts_.predict(X)
    expected = reference_halving(predictions, y, [len(y)], 1, randomized, 3)
    assert np.array_equal(clf.n_mistakes_, expected["mistakes"])
    assert np.array_equal(clf.version_space(), expected["version_spaces"][0])
    assert np.array_equal(clf.concept_mistakes_, expected["counts"])


def test_fitted_classifiers_as_concepts():
    """The documented use of ExplicitConcepts: fitted binary classifiers,
    kept fitted through the estimator's clone, and a grid search's."""
    X, y = load_digits(n_class=2, return_X_y=True)
    trees = [
        DecisionTreeClassifier(max_depth=1, random_state=0).fit(X[:, [j]], y)
        for j in range(X.shape[1])
    ]
    concepts = [
        partial(lambda X, tree, j: tree.predict(X[:, [j]]) == 1, tree=tree, j=j)
        for j, tree in enumerate(trees)
    ] + [LogisticRegression(max_iter=1000).fit(X, y)]
    clf = HalvingClassifier(concepts=ExplicitConcepts(concepts)).fit(X, y)
    assert clf.concepts_.concepts[-1] is concepts[-1]
    assert clf.version_space().tolist() == [len(trees)]
    assert clf.score(X, y) == concepts[-1].score(X, y)
    searched = GridSearchCV(clf, {"randomized": [False, True]}, cv=2).fit(X, y)
    assert searched.best_estimator_.score(X, y) >= 0.9


def test_classifiers_as_concepts_through_a_restart_at_a_batch_end():
    """The last example of a batch rules out every live concept: the
    restart counted the mistakes of every concept on the 0 examples after
    it, and LogisticRegression refuses 0 rows. Fitted, each batch size of
    a stream, as the reference runs."""
    X = np.array([[0.9], [0.2], [0.1], [0.7], [0.3], [0.95]])
    y = np.array([1, 0, 1, 1, 0, 0])
    up = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    down = LogisticRegression().fit([[0.0], [1.0]], [1, 0])
    concepts = ExplicitConcepts([up, down])
    predictions = concepts.fit(X).predict(X)
    for n in [3, len(y)]:
        clf = HalvingClassifier(concepts=concepts).fit(X[:n], y[:n])
        expected = reference_halving(predictions[:n], y[:n], [n], 1, False, 0)
        assert np.array_equal(clf.n_mistakes_, expected["mistakes"])
        assert np.array_equal(clf.concept_mistakes_, expected["counts"])
    stream = HalvingClassifier(concepts=concepts)
    for i in range(len(y)):
        stream.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    expected = reference_halving(predictions, y, [1] * len(y), 1, False, 0)
    assert np.array_equal(stream.n_mistakes_, expected["mistakes"])
    assert np.array_equal(stream.concept_mistakes_, expected["counts"])


class _ShiftedScores(ExplicitConcepts):
    """Callables that score the rows, each concept positive above shift: a
    subclass with a parameter of its own."""

    _parameter_constraints: dict = {
        **ExplicitConcepts._parameter_constraints,
        "shift": [float],
    }

    def __init__(self, concepts, shift=0.0):
        super().__init__(concepts)
        self.shift = shift

    def _predict_concepts(self, X, indices):
        scores = np.column_stack([self.concepts[i](X) for i in indices])
        return np.where(scores > self.shift, 1, -1).astype(np.int8)


def test_a_clone_of_explicit_concepts_keeps_the_parameters_of_a_subclass():
    """The clone kept the concepts only: the fit (of a clone) and a grid
    search over concepts__shift ran every model at shift 0."""
    columns = [partial(np.take, indices=j, axis=1) for j in range(2)]
    concepts = _ShiftedScores(columns, shift=0.5)
    copy_ = clone(concepts)
    assert copy_.shift == 0.5
    assert copy_.concepts[0] is columns[0]
    X = np.random.RandomState(0).rand(100, 2)
    y = (X[:, 0] > 0.5).astype(int)
    clf = HalvingClassifier(concepts=concepts).fit(X, y)
    assert clf.concepts_.shift == 0.5
    assert clf.score(X, y) == 1.0
    searched = GridSearchCV(
        HalvingClassifier(concepts=_ShiftedScores(columns)),
        {"concepts__shift": [0.0, 0.5]},
        cv=2,
    ).fit(X, y)
    assert searched.best_params_ == {"concepts__shift": 0.5}
    assert searched.cv_results_["mean_test_score"][1] == 1.0


SHAPES = {
    "prefix": lambda a: a.update(prefix=a["prefix"][:, :-1].copy()),
    "lo": lambda a: a.update(lo=a["lo"][:, :-1].copy()),
    "hi": lambda a: a.update(hi=a["hi"] + 1000),
    "threshold_ptr": lambda a: a.update(threshold_ptr=a["threshold_ptr"][:-1].copy()),
    "thresholds": lambda a: a.update(thresholds=a["thresholds"][1:].copy()),
    "X": lambda a: a.update(X=np.ascontiguousarray(a["X"][:, 1:])),
}


@pytest.mark.parametrize("broken", sorted(SHAPES))
def test_compiled_functions_check_their_shapes(broken):
    """The compiled functions refuse arrays that do not fit together (as
    arrays of two different fits would), before reading any of them."""
    X = _real_sample(40, 4, seed=0)
    clf = HalvingClassifier().fit(X, np.arange(40) % 3)
    spaces, stumps = clf._spaces, clf.concepts_
    arrays = dict(
        X=X,
        thresholds=stumps.thresholds_,
        threshold_ptr=stumps.threshold_ptr_,
        prefix=spaces.prefix.copy(),
        lo=spaces.lo.copy(),
        hi=spaces.hi.copy(),
    )
    SHAPES[broken](arrays)
    a = arrays
    with pytest.raises(ValueError):
        stump_votes(
            a["X"],
            a["thresholds"],
            a["threshold_ptr"],
            a["prefix"],
            a["lo"],
            a["hi"],
            np.zeros((40, 3), dtype=np.int64),
            np.zeros(3, dtype=np.int64),
        )
    with pytest.raises(ValueError):
        run_stumps(
            a["X"],
            np.zeros(40, dtype=np.int32),
            0,
            a["thresholds"],
            a["threshold_ptr"],
            a["prefix"].copy(),
            a["prefix"],
            a["lo"],
            a["hi"],
            np.zeros(3, dtype=np.int64),
            np.zeros(3, dtype=np.int64),
            np.zeros((40, 3)),
            False,
            np.zeros(1, dtype=np.uint8),
        )
    if broken not in ("X", "thresholds"):  # stump_member reads neither
        with pytest.raises(ValueError):
            stump_member(
                a["threshold_ptr"], a["prefix"][0], a["lo"][0], a["hi"][0], 0.5
            )


# Sparse input, and a concept class fixed before a stream.


def _messy_csr(X, seed):
    """X as a CSR matrix in the forms CSR allows: unsorted column indices,
    stored zeros, and an entry given as two duplicates that add up."""
    rng = np.random.RandomState(seed)
    data, indices, indptr = [], [], [0]
    for row in X:
        (columns,) = np.nonzero(row)
        values = list(row[columns])
        columns = list(columns)
        if columns:
            values[0] /= 2
            values.append(values[0])
            columns.append(columns[0])
        columns.append(rng.randint(len(row)))
        values.append(0.0)
        order = rng.permutation(len(columns))
        data.extend(np.array(values)[order])
        indices.extend(np.array(columns)[order])
        indptr.append(len(data))
    return sp.csr_matrix((data, indices, indptr), shape=X.shape)


@pytest.mark.parametrize("name", ["stumps", "conjunctions", "halfspaces"])
@pytest.mark.parametrize("randomized", [False, True])
def test_csr_input_runs_as_its_dense_array(name, randomized):
    """A CSR matrix gives the run of its dense array, batch by batch: the
    class, the mistakes, the version spaces, the decision values."""
    concepts, sample = CLASSES[name]
    for seed in range(6):
        X = sample(120, 5, seed=seed).astype(np.float64)
        X[np.random.RandomState(seed).rand(*X.shape) < 0.6] = 0.0
        y = np.random.RandomState(seed).randint(3, size=len(X))
        sparse = _messy_csr(X, seed)
        assert not sparse.has_canonical_format
        dense_clf, sparse_clf = (
            HalvingClassifier(concepts=concepts, randomized=randomized, random_state=1)
            for _ in range(2)
        )
        for batch in (slice(0, 50), slice(50, 51), slice(51, None)):
            dense_clf.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
            sparse_clf.partial_fit(sparse[batch], y[batch], classes=[0, 1, 2])
        assert sparse_clf.n_concepts_ == dense_clf.n_concepts_
        assert np.array_equal(sparse_clf.n_mistakes_, dense_clf.n_mistakes_)
        for p in range(3):
            assert np.array_equal(
                sparse_clf.version_space(p), dense_clf.version_space(p)
            )
        assert np.array_equal(
            sparse_clf.decision_function(sparse), dense_clf.decision_function(X)
        )


def test_stump_quantiles_of_a_csr_matrix():
    """The thresholds of a CSR matrix are those of its dense array, read off
    the stored values, on columns of every mix of signs and zeros."""
    rng = np.random.RandomState(0)
    for n_samples in (1, 2, 7, 100):
        X = rng.randn(n_samples, 40) * rng.choice([1e-300, 1, 1e300], size=40)
        X[rng.rand(*X.shape) < rng.rand(40)] = 0.0
        X[:, :3] = np.abs(X[:, :3])
        X[:, 3:6] = -np.abs(X[:, 3:6])
        for n_thresholds in (1, 2, 5, 32):
            dense = DecisionStumps(n_thresholds=n_thresholds).fit(X)
            stumps = DecisionStumps(n_thresholds=n_thresholds).fit(sp.csr_matrix(X))
            assert np.array_equal(stumps.thresholds_, dense.thresholds_)
            assert np.array_equal(stumps.threshold_ptr_, dense.threshold_ptr_)


def test_sparse_input_where_the_class_cannot_read_it():
    X = sp.csr_matrix(np.eye(4))
    clf = HalvingClassifier(concepts=CLASSES["explicit"][0])
    with pytest.raises(TypeError, match="[Ss]parse"):
        clf.fit(X, [0, 1, 0, 1])
    assert not clf.__sklearn_tags__().input_tags.sparse
    assert HalvingClassifier().__sklearn_tags__().input_tags.sparse


def test_a_malformed_csr_matrix_is_refused():
    """A column index outside the declared shape (which SciPy builds without
    complaint) is refused before any work, not read out of bounds."""
    X = sp.csr_matrix(
        (np.ones(4), np.array([0, 10**7, 1, 2]), np.array([0, 2, 4])), shape=(2, 5)
    )
    with pytest.raises(ValueError, match="malformed CSR"):
        HalvingClassifier().fit(X, [0, 1])
    clf = HalvingClassifier().fit(np.eye(5), [0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="malformed CSR"):
        clf.predict(X)


def test_stumps_on_a_fixed_grid():
    X = _real_sample(30, 3, seed=0)
    stumps = DecisionStumps(n_thresholds=5, value_range=([-1, 0, 2], 2)).fit(X[:1])
    assert np.array_equal(stumps.threshold_ptr_, [0, 5, 10, 11])
    assert np.array_equal(stumps.thresholds_[:5], np.linspace(-1, 2, 5))
    assert np.array_equal(stumps.thresholds_[5:10], np.linspace(0, 2, 5))
    # the same class whatever the samples it is fitted on
    other = DecisionStumps(n_thresholds=5, value_range=([-1, 0, 2], 2)).fit(X)
    assert np.array_equal(other.thresholds_, stumps.thresholds_)
    for value_range, match in [
        ((1, 0), "low <= high"),
        ((0, np.inf), "finite"),
        ((0, 1, 2), "pair"),
        (([0, 1], 2), "one value per feature"),
    ]:
        with pytest.raises(ValueError, match=match):
            DecisionStumps(value_range=value_range).fit(X)


def _progressive_accuracy(clf, X, y, classes):
    """Progressive validation: each example is predicted by the model of
    the examples before it, then learned, one at a time."""
    correct = 0
    for i in range(len(X)):
        if i:
            correct += clf.predict(X[i : i + 1])[0] == y[i]
        clf.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return correct / (len(X) - 1)


def test_a_stream_on_a_class_fixed_in_advance():
    """One example at a time, stumps fitted on the first example have one
    threshold per feature (36 stumps over 18 features), whatever the rest of
    the stream; stumps on a grid fixed before the first example make the
    stream realizable, and halving learns it within log2 |C| mistakes."""
    grid = DecisionStumps(n_thresholds=21, value_range=(0.0, 1.0))
    n_samples, fixed_accuracies, first_accuracies = 300, [], []
    for seed in range(5):
        rng = np.random.RandomState(seed)
        X = rng.rand(n_samples, 18)
        classes = ["no", "yes"]
        # a stump of the grid labels the stream
        feature, threshold = rng.randint(18), rng.randint(3, 18) / 20
        y = np.where(X[:, feature] >= threshold, "yes", "no")
        fixed = HalvingClassifier(concepts=grid)
        accuracy = _progressive_accuracy(fixed, X, y, classes)
        assert fixed.n_concepts_ == 2 * 18 * 21
        assert fixed.fewest_mistakes_[0] == 0
        # predict is the online prediction: the same mistakes, bar the first
        online = fixed.n_mistakes_[0] - (y[0] == "no")
        assert round((1 - accuracy) * (n_samples - 1)) == online
        assert online <= fixed.mistake_bound_
        fixed_accuracies.append(accuracy)
        first = HalvingClassifier()
        first_accuracies.append(_progressive_accuracy(first, X, y, classes))
        assert first.n_concepts_ == 36
    assert np.mean(first_accuracies) < np.mean(fixed_accuracies) - 0.1


class _ListedStumps(DecisionStumps):
    """Stumps that choose the general way of keeping version spaces."""

    def _version_spaces(self, n_problems):
        return ListedVersionSpaces(self, n_problems)


@pytest.mark.parametrize("randomized", [False, True])
def test_the_concept_class_chooses_its_version_spaces(randomized):
    """The hook of the concept class picks the version space object; the
    compiled stumps and the same stumps kept as live index sets run the
    same halving, in dense and in sparse batches."""
    X = _real_sample(150, 4, seed=0)
    X[X < -0.5] = 0.0
    y = _noisy((X[:, 0] + X[:, 2] > 0).astype(int), 0.1, seed=1) + (X[:, 1] > 1)
    runs = []
    for concepts in (DecisionStumps(n_thresholds=9), _ListedStumps(n_thresholds=9)):
        clf = HalvingClassifier(
            concepts=concepts, randomized=randomized, random_state=2
        )
        for batch in (slice(0, 60), slice(60, None)):
            clf.partial_fit(sp.csr_matrix(X[batch]), y[batch], classes=[0, 1, 2])
        runs.append(clf)
    compiled, listed = runs
    assert isinstance(compiled._spaces, StumpVersionSpaces)
    assert isinstance(listed._spaces, ListedVersionSpaces)
    assert np.array_equal(compiled.n_mistakes_, listed.n_mistakes_)
    assert np.array_equal(compiled.concept_mistakes_, listed.concept_mistakes_)
    for p in range(3):
        assert np.array_equal(compiled.version_space(p), listed.version_space(p))
    assert np.array_equal(compiled.decision_function(X), listed.decision_function(X))


class _UnsortedStumps(DecisionStumps):
    def fit(self, X, y=None):
        super().fit(X)
        self.thresholds_[: self.threshold_ptr_[1]] *= -1
        return self


def test_stumps_with_thresholds_out_of_order_are_refused():
    X = _real_sample(30, 3, seed=0)
    with pytest.raises(ValueError, match="increase within each feature"):
        HalvingClassifier(concepts=_UnsortedStumps(n_thresholds=4)).fit(X, X[:, 0] > 0)
    # a feature of one threshold next to others is in order
    X[:, 1] = 1.0
    HalvingClassifier(concepts=DecisionStumps(n_thresholds=4)).fit(X, X[:, 0] > 0)


@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(randomized=True, random_state=0),
        dict(concepts=IntegerHalfspaces()),
    ],
    ids=["stumps", "randomized", "listed"],
)
@pytest.mark.parametrize("form", ["dense", "fortran", "csr"])
def test_float32_rows_score_in_blocks_as_float64_rows_in_one(params, form):
    """decision_function converts float32 rows (dense or CSR) to the
    float64 the concepts read a block at a time within working_memory, and
    counts the votes of dense rows a block at a time: the scores of every
    block size are those of float64 rows scored at once, for a binary and
    a multiclass run."""
    rng = np.random.RandomState(0)
    X = rng.randn(300, 3).astype(np.float32)
    X[np.abs(X) < 0.5] = 0
    to_form = {"dense": np.asarray, "fortran": np.asfortranarray}.get(
        form, sp.csr_matrix
    )
    for y in (X[:, 0] + X[:, 1] > 0, np.digitize(X[:, 2], [-0.5, 0.5])):
        model = HalvingClassifier(**params).fit(
            to_form(X[:100].astype(np.float64)), y[:100]
        )
        whole = model.decision_function(to_form(X.astype(np.float64)))
        labels = model.predict(to_form(X.astype(np.float64)))
        n_problems = 1 if whole.ndim == 1 else whole.shape[1]
        for block_rows in (1, 7, 1000):
            row_bytes = 8 * X.shape[1] + 32 * n_problems
            with config_context(working_memory=(block_rows + 0.5) * row_bytes / 2**20):
                scores = model.decision_function(to_form(X))
                np.testing.assert_array_equal(scores, whole, err_msg=str(block_rows))
                np.testing.assert_array_equal(model.predict(to_form(X)), labels)
