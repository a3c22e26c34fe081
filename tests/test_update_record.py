"""The per-update record of the perceptrons (``record_updates=True``).

The record is checked against what it claims to be: summing the recorded
updates, in order, rebuilds the weights the run ended with, bit for bit;
the counts per problem and per epoch are the run's own; and on separable
samples its sequence satisfies the alternative proof of Novikoff's theorem
(the compression paper, Section 4).
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.geometry import novikoff_trace


def _weights_from(record, X, n_problems):
    """sum of sign * x over the recorded updates, in order, per problem."""
    coef = np.zeros((n_problems, X.shape[1]))
    for example, sign, problem, _ in record:
        coef[problem] += sign * X[example]
    return coef


# 30 epochs on noisy data: the run ends at max_iter on purpose
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("beta", [0.0, 1.0, "scale", "power"])
def test_the_record_rebuilds_the_weights(beta):
    rng = np.random.default_rng(0)
    for seed in range(6):
        n_classes = int(rng.integers(2, 5))
        X, y = make_classification(
            120,
            6,
            n_informative=4,
            n_classes=n_classes,
            n_clusters_per_class=1,
            flip_y=0.05,
            random_state=seed,
        )
        clf = MarginPerceptron(
            beta=beta,
            fit_intercept=False,
            record_updates=True,
            max_iter=30,
            tol=None,
            random_state=seed,
        ).fit(X, y)
        record = clf.updates_
        n_problems = clf.coef_.shape[0]
        np.testing.assert_array_equal(
            np.bincount(record[:, 2], minlength=n_problems), clf.n_updates_
        )
        # each update adds sign * x in the loop's order: the same sums
        np.testing.assert_array_equal(_weights_from(record, X, n_problems), clf.coef_)
        # the sign is the example's label in its problem
        labels = clf.classes_[record[:, 2]] if n_classes > 2 else clf.classes_[1]
        np.testing.assert_array_equal(
            record[:, 1], np.where(y[record[:, 0]] == labels, 1, -1)
        )
        assert np.all(np.diff(record[:, 3])[np.diff(record[:, 2]) == 0] >= 0)
        assert record[:, 3].max() < clf.n_iter_


def test_the_record_does_not_depend_on_n_jobs():
    X, y = load_digits(return_X_y=True)
    fits = [
        MarginPerceptron(record_updates=True, random_state=0, n_jobs=n_jobs).fit(X, y)
        for n_jobs in (1, 2, 3)
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0].updates_, other.updates_)
    assert np.all(np.diff(fits[0].updates_[:, 2]) >= 0)


def test_the_record_is_off_by_default_and_belongs_to_the_last_call():
    X, y = make_classification(200, 5, random_state=0)
    assert MarginPerceptron().fit(X, y).updates_ is None
    clf = MarginPerceptron(record_updates=True, random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    first = clf.n_updates_.copy()
    clf.partial_fit(X[100:110], y[100:110])
    assert len(clf.updates_) == clf.n_updates_[0] - first[0]
    assert np.all(clf.updates_[:, 0] < 10)


def test_kernel_record_rebuilds_the_dual_coefficients():
    rng = np.random.default_rng(1)
    for seed in range(5):
        X, y = make_classification(
            80, 4, n_classes=3, n_informative=3, n_redundant=0, random_state=seed
        )
        X_old = rng.normal(size=(20, 4))
        y_old = rng.integers(0, 3, 20)
        clf = KernelPerceptron(
            kernel="rbf", record_updates=True, random_state=seed, average=False
        )
        clf.partial_fit(X_old, y_old, classes=[0, 1, 2])
        before = clf.dual_coef_.copy(), clf.support_.copy()
        clf.partial_fit(X, y)
        record = clf.updates_
        # indices of the call's X: its points come after the 20 old ones
        dual = np.zeros((3, 100))
        dual[:, before[1]] = before[0]
        np.add.at(dual, (record[:, 2], 20 + record[:, 0]), record[:, 1])
        np.testing.assert_array_equal(dual[:, clf.support_], clf.dual_coef_)
        np.testing.assert_array_equal(np.delete(dual, clf.support_, axis=1), 0)


@pytest.mark.parametrize("estimator", ["linear", "kernel"])
def test_the_recorded_run_keeps_novikoffs_bound(estimator):
    """v_t = w_t / (t R) has ||v_t|| <= 1 / sqrt(t), and the run stops
    within (R / eps*)^2 updates, on many random separable samples."""
    rng = np.random.default_rng(2)
    for seed in range(20):
        eps = rng.uniform(0.05, 0.4)
        radius = 10.0 ** rng.uniform(-2, 2)
        n_features = int(rng.integers(2, 20))
        X, y = make_margin_classification(
            80, n_features, eps * radius, radius=radius, random_state=seed
        )
        if estimator == "linear":
            clf = MarginPerceptron(fit_intercept=False, random_state=seed)
        else:
            clf = KernelPerceptron(kernel="linear", beta=0.0, random_state=seed)
        clf.set_params(record_updates=True).fit(X, y)
        assert clf.converged_
        trace = novikoff_trace(X, clf.updates_[:, :2])
        assert np.all(trace.norms <= trace.bounds * (1 + 1e-12))
        assert trace.margin_upper_bound >= eps * radius * (1 - 1e-9)
        assert len(clf.updates_) <= 1 / eps**2


def test_a_threshold_run_keeps_its_bound():
    rng = np.random.default_rng(3)
    for seed in range(10):
        X, y = make_margin_classification(60, 4, 0.1, radius=3.0, random_state=seed)
        beta = float(rng.uniform(0.5, 5.0))
        clf = MarginPerceptron(
            beta=beta, fit_intercept=False, record_updates=True, random_state=seed
        ).fit(X, y)
        trace = novikoff_trace(X, clf.updates_[:, :2], beta=beta)
        assert np.all(trace.norms <= trace.bounds * (1 + 1e-12))
        # v_t stays in the hull of the signed examples, whatever the
        # threshold: R min ||v_t|| still bounds the optimal margin
        assert trace.margin_upper_bound >= 0.1 * (1 - 1e-9)
