"""The stopping rule for data that is not separable, on by default.

Its promise (skperc/_epochs.pxd, end_epoch): it ends a run only when the
function has moved less than tol * R per unit of update, which proves that
the (lifted) sample has no separator of margin tol * R. So a default run
on a sample separable with a margin above tol * R ends separated, with
its theorem's guarantees, and every run the rule ends is on a sample
without such a separator.
"""

import warnings

import numpy as np
import pytest
from margin_data import assert_novikoff, assert_theorem_1, assert_theorem_2
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.metrics import optimal_margin
from skperc.schedules import PowerThreshold

TOL = MarginPerceptron().tol


def _separable_samples():
    """Many random samples of margins eps*/R from 0.3 down to 1.5 tol, of
    several radii and dimensions."""
    rng = np.random.RandomState(0)
    for seed in range(30):
        relative = np.exp(rng.uniform(np.log(1.5 * TOL), np.log(0.3)))
        radius = 10.0 ** rng.uniform(-2, 2)
        n_features = rng.randint(2, 8)
        X, y = make_margin_classification(
            rng.randint(20, 120),
            n_features,
            relative * radius,
            radius,
            random_state=seed,
        )
        yield seed, X, y, radius, relative * radius


SAMPLES = list(_separable_samples())


@pytest.mark.parametrize("beta", [0.0, 1.0, "scale", "power"])
def test_default_runs_end_separated_on_separable_samples(beta):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for seed, X, y, R, eps in SAMPLES:
            if beta == 1.0:
                beta_value = R**2  # the threshold has the units of R^2
            else:
                beta_value = beta
            clf = MarginPerceptron(
                beta=beta_value,
                fit_intercept=False,
                max_iter=1_000_000,
                random_state=seed,
            ).fit(X, y)
            assert clf.stop_reason_ == "separated", (seed, eps / R)
            assert clf.converged_
            if beta == 0.0:
                assert_novikoff(clf, R, eps)
            elif beta == 1.0:
                assert_theorem_1(clf, beta_value, R, eps)
            elif beta == "scale":
                assert_theorem_2(clf, R, eps)


@pytest.mark.parametrize("beta", [0.0, "scale", "power"])
def test_default_runs_with_an_intercept_end_separated(beta):
    """An affine separator: with the lift, the lifted sample's margin is
    what the rule sees. Shifted by 0.2 R and lifted by about 1.2 R, a sample
    of eps* / R >= 0.05 keeps a lifted margin above 0.025 of its radius."""
    wide = [sample for sample in SAMPLES if sample[4] / sample[3] >= 0.05]
    assert len(wide) >= 10
    for seed, X, y, R, eps in wide:
        clf = MarginPerceptron(beta=beta, max_iter=1_000_000, random_state=seed)
        clf.fit(X + 0.2 * R, y)
        assert clf.stop_reason_ == "separated", (seed, eps / R)


def test_kernel_default_runs_end_separated():
    for seed, X, y, _, _ in SAMPLES[:10]:
        clf = KernelPerceptron(
            kernel="linear", max_iter=1_000_000, random_state=seed
        ).fit(X, y)
        assert clf.stop_reason_ == "separated"


@pytest.mark.parametrize("estimator", [MarginPerceptron, KernelPerceptron])
def test_every_run_the_rule_ends_has_no_wide_separator(estimator):
    """The certificate: a run the rule ends is on a sample whose optimal
    margin (through the origin, without intercept) is below tol * R."""
    stopped = 0
    for seed in range(20):
        X, y = make_classification(
            80,
            4,
            n_informative=3,
            n_redundant=0,
            flip_y=0.05 * (seed % 4),
            class_sep=2.0,
            random_state=seed,
        )
        params = dict(fit_intercept=False) if estimator is MarginPerceptron else {}
        if estimator is KernelPerceptron:
            params = dict(kernel="linear")
        clf = estimator(max_iter=100_000, random_state=seed, **params).fit(X, y)
        if clf.stop_reason_ == "no_improvement":
            stopped += 1
            try:
                eps = optimal_margin(X, y)[0]
            except ValueError:  # not separable through the origin at all
                continue
            assert eps < TOL * np.linalg.norm(X, axis=1).max()
        else:
            assert clf.stop_reason_ == "separated"
    assert stopped >= 5  # the rule did act: the test could fail


@pytest.mark.parametrize("beta", ["power", PowerThreshold(alpha=1.9)])
def test_a_growing_threshold_out_of_epochs_names_the_remedy(beta):
    # breast cancer has no separator (beta=0 stops on the rule within 30
    # epochs); the infinity-perceptron's threshold grows with its updates,
    # so its runs keep updating and the rule does not end them
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        plain = MarginPerceptron(random_state=0, max_iter=30).fit(X, y)
    assert plain.stop_reason_ == "no_improvement"
    clf = MarginPerceptron(beta=beta, alpha=1.9, random_state=0, max_iter=30)
    with pytest.warns(ConvergenceWarning) as record:
        clf.fit(X, y)
    assert clf.stop_reason_ == "max_iter"
    message = str(record[0].message)
    assert "beta='power' raises the threshold" in message
    assert "Choose a constant beta" in message


def test_a_constant_threshold_out_of_epochs_asks_for_more():
    X, y = make_classification(3000, 20, flip_y=0.1, random_state=0)
    clf = MarginPerceptron(beta=1.0, random_state=0, max_iter=2)
    with pytest.warns(ConvergenceWarning) as record:
        clf.fit(X, y)
    assert str(record[0].message).endswith("Consider increasing max_iter.")


def test_noisy_data_stops_early_and_averages():
    X, y = make_classification(3000, 20, flip_y=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # the rule on the training data: "auto" would split 3,000 examples
        clf = MarginPerceptron(random_state=0, early_stopping=False).fit(X, y)
    assert clf.stop_reason_ == "no_improvement" and not clf.converged_
    assert clf.n_iter_ < 50
    last = MarginPerceptron(random_state=0, average=False, early_stopping=False)
    last.fit(X, y)
    assert last.n_iter_ == clf.n_iter_
    assert not np.array_equal(last.coef_, clf.coef_)
    off = MarginPerceptron(random_state=0, tol=None, max_iter=50, early_stopping=False)
    with pytest.warns(ConvergenceWarning, match="tol=0.01"):
        off.fit(X, y)
    assert off.stop_reason_ == "max_iter"
