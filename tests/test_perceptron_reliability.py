"""The perceptrons under failures and threads: a fit that does not complete
leaves the model it had, concurrent reads see one model, concurrent
partial_fit calls all count, and out-of-range parameters are refused."""

import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError

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
    errors, seen, stop = [], [], threading.Event()

    def predict():
        while not stop.is_set():
            try:
                seen.append(clf.predict(Xa))
            except Exception as error:  # noqa: BLE001 - any error fails the test
                errors.append(error)

    threads = [threading.Thread(target=predict) for _ in range(3)]
    for thread in threads:
        thread.start()
    for _ in range(15):
        clf.fit(Xb, yb)
        clf.fit(Xa, ya)
    stop.set()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    assert seen
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
