"""The defaults that take their scale from the data: MarginPerceptron's
``intercept_scaling="rms"`` and KernelPerceptron's ``gamma="scale"``.

Each is checked against its definition (the same run with the number
written out), held for the whole run across ``partial_fit`` calls, and
kept scale-free: the promise that makes them defaults.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from skperc import KernelPerceptron, MarginPerceptron

# the runs are cut short (max_iter) to compare two of them, not to converge
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _samples():
    rng = np.random.default_rng(0)
    for seed in range(8):
        X, y = make_classification(
            int(rng.integers(30, 150)),
            int(rng.integers(2, 12)),
            n_informative=2,
            n_redundant=0,
            n_classes=int(rng.integers(2, 4)),
            n_clusters_per_class=1,
            flip_y=0.05,
            random_state=seed,
        )
        # off-centre and of any scale: the lift must follow both
        X = (X + rng.normal(0, 3, X.shape[1])) * 10.0 ** rng.uniform(-3, 3)
        yield seed, X, y


def _rms(X):
    X = X.toarray() if sp.issparse(X) else X
    return float(np.sqrt(np.mean(np.sum(X**2, axis=1))))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("beta", [0.0, "scale", "power"])
def test_rms_lift_is_the_root_mean_square_norm_after_the_first_epoch(beta, sparse):
    """After the first epoch the lift is the root mean square of the
    norms (the reference test of test_margin_perceptron.py checks every
    step of the running mean)."""
    for seed, X, y in _samples():
        X = sp.csr_matrix(X) if sparse else X
        common = dict(beta=beta, shuffle=False, random_state=seed, tol=None)
        rms = MarginPerceptron(max_iter=1, **common).fit(X, y)
        lifts = rms.intercept_ / rms._run.lift_coef
        np.testing.assert_allclose(lifts[np.isfinite(lifts)], _rms(X), rtol=1e-12)


@pytest.mark.parametrize("beta", [0.0, "scale", "power"])
def test_defaults_are_scale_free(beta):
    """X times a power of 2 scales every quantity of the run exactly."""
    for seed, X, y in _samples():
        one = MarginPerceptron(beta=beta, random_state=seed).fit(X, y)
        scaled = MarginPerceptron(beta=beta, random_state=seed).fit(X * 2.0**-40, y)
        np.testing.assert_array_equal(one.predict(X), scaled.predict(X * 2.0**-40))
        kernel = KernelPerceptron(beta=beta, random_state=seed, max_iter=5, tol=None)
        kernel_scaled = KernelPerceptron(
            beta=beta, random_state=seed, max_iter=5, tol=None
        )
        np.testing.assert_array_equal(
            kernel.fit(X, y).predict(X),
            kernel_scaled.fit(X * 2.0**-40, y).predict(X * 2.0**-40),
        )


@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_and_auto_are_svcs(sparse):
    for seed, X, y in _samples():
        X = sp.csr_matrix(X) if sparse else X
        for gamma in ["scale", "auto"]:
            ours = KernelPerceptron(
                gamma=gamma, max_iter=2, tol=None, random_state=seed
            ).fit(X, y)
            theirs = SVC(gamma=gamma).fit(X, y)
            assert ours._gamma() == pytest.approx(theirs._gamma, rel=1e-9), seed
            fixed = KernelPerceptron(
                gamma=theirs._gamma, max_iter=2, tol=None, random_state=seed
            )
            np.testing.assert_allclose(
                ours.decision_function(X),
                fixed.fit(X, y).decision_function(X),
                rtol=1e-6,
                atol=1e-9,
            )


def test_gamma_scale_is_fixed_by_the_first_batch():
    X, y = make_classification(200, 4, random_state=1)
    clf = KernelPerceptron(random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    first = clf._gamma()
    clf.partial_fit(X[100:] * 50.0, y[100:])
    assert clf._gamma() == first


def test_gamma_none_is_auto_and_deprecated():
    X, y = make_classification(60, 4, random_state=2)
    with pytest.warns(FutureWarning, match="gamma='auto'"):
        old = KernelPerceptron(gamma=None, random_state=0).fit(X, y)
    new = KernelPerceptron(gamma="auto", random_state=0).fit(X, y)
    assert old._gamma() == new._gamma() == 1 / 4
    np.testing.assert_array_equal(old.dual_coef_, new.dual_coef_)
