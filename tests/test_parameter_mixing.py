"""Iterative parameter mixing (skperc.distributed): one shard is the
single-machine run, the mixture keeps the theorems that the Notes of
ParameterMixingClassifier state, and bad parameters are refused."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_common import PERCEPTRON_SAMPLE_WEIGHT

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.distributed import ParameterMixingClassifier
from skperc.metrics import margin

SLACK = 1 + 1e-7

# Options under which one shard must be the single-machine fit: every
# schedule, averaging, both lifts, the stopping rule on and off, shuffling
# on and off.
ONE_SHARD_OPTIONS = [
    {},
    {"average": True},
    {"beta": "scale"},
    {"beta": "power", "alpha": 1.5},
    {"beta": 1.0, "intercept_scaling": 1.0},
    {"tol": None, "max_iter": 25},
    {"shuffle": False, "eta0": 0.37},
    {"fit_intercept": False, "average": True, "class_weight": "balanced"},
]


def noisy(n_classes, random_state=0, n_samples=300):
    return make_classification(
        n_samples=n_samples,
        n_features=6,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        flip_y=0.1,
        random_state=random_state,
    )


def same_model(a, b):
    return (
        np.array_equal(a.coef_, b.coef_)
        and np.array_equal(a.intercept_, b.intercept_)
        and np.array_equal(a.n_updates_, b.n_updates_)
        and a.n_iter_ == b.n_iter_
        and a.stop_reason_ == b.stop_reason_
    )


@pytest.mark.parametrize("options", ONE_SHARD_OPTIONS, ids=str)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("layout", ["float64", "float32", "csr"])
def test_one_shard_is_the_single_machine_run(options, n_classes, layout):
    X, y = noisy(n_classes)
    X = {"float64": X, "float32": X.astype(np.float32), "csr": sp.csr_array(X)}[layout]
    weight = np.random.RandomState(0).randint(0, 3, len(y)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        single = MarginPerceptron(random_state=0, **options).fit(X, y, weight)
        mixed = ParameterMixingClassifier(
            MarginPerceptron(random_state=0, **options), n_shards=1
        ).fit(X, y, weight)
    assert same_model(single, mixed)
    assert mixed.converged_ == single.converged_
    assert np.array_equal(mixed.predict(X), single.predict(X))


@pytest.mark.parametrize("n_shards", [2, 3, 5])
def test_results_do_not_depend_on_the_threads(n_shards):
    """The same shards give the same model, run after run, and the threads
    engine runs each shard on its own thread."""
    X, y = noisy(3)
    fits = [
        ParameterMixingClassifier(
            MarginPerceptron(random_state=1, average=True), n_shards=n_shards
        ).fit(X, y)
        for _ in range(3)
    ]
    assert all(same_model(fits[0], other) for other in fits[1:])
    assert fits[0].n_shards_ == n_shards


def separable_samples(count, margins=(0.02, 0.05, 0.1)):
    """Random separable samples of known radius R and optimal margin eps*
    (drawn from ``margins`` times R), through the origin."""
    rng = np.random.RandomState(0)
    for seed in range(count):
        n, d = rng.choice([80, 150, 300]), rng.choice([2, 5, 10])
        eps, R = rng.choice(margins), rng.choice([0.3, 1.0, 7.0])
        X, y = make_margin_classification(
            n, d, margin=eps * R, radius=R, random_state=seed
        )
        yield seed, X, y, R, eps * R


def mixed_fit(X, y, n_shards, **options):
    # tol=None: the papers' algorithms, which stop only when separated
    clf = ParameterMixingClassifier(
        MarginPerceptron(
            fit_intercept=False, max_iter=100_000, tol=None, eta0=0.37, **options
        ),
        n_shards=n_shards,
    ).fit(X, y)
    assert clf.converged_ and clf.stop_reason_ == "separated"
    assert clf.score(X, y) == 1.0
    return clf


@pytest.mark.parametrize("n_shards", [2, 4, 8])
def test_mixing_keeps_novikoff(n_shards):
    """McDonald, Hall and Mann's Theorem 3: the mixture's updates stay
    within (R / eps*)^2, and the run ends separated."""
    for seed, X, y, R, eps in separable_samples(12):
        clf = mixed_fit(X, y, n_shards, random_state=seed)
        assert clf.mixed_updates_[0] <= (R / eps) ** 2 * SLACK
        # each epoch with an update adds at least one to the mixture's updates
        assert clf.n_iter_ - 1 <= clf.mixed_updates_[0] + 1e-9


def test_the_bound_is_on_the_mixture_not_on_all_updates():
    """The shards' updates together exceed the bound on some sample: the
    theorem counts each epoch's updates once, weighted by the mixing."""
    over = 0
    for seed, X, y, _, _ in separable_samples(12):
        clf = mixed_fit(X, y, 8, random_state=seed)
        over += clf.n_updates_[0] > clf.mixed_updates_[0]
    assert over > 0


@pytest.mark.parametrize("relative_beta", [0.1, 1.0])
@pytest.mark.parametrize("n_shards", [2, 5])
def test_mixing_keeps_the_beta_perceptron_theorem(relative_beta, n_shards):
    for seed, X, y, R, eps in separable_samples(10, margins=(0.05, 0.1)):
        beta = relative_beta * R**2
        clf = mixed_fit(X, y, n_shards, beta=beta, random_state=seed)
        assert clf.mixed_updates_[0] <= (2 * beta + R**2) / eps**2 * SLACK
        assert margin(clf, X, y)[0] >= beta * eps / (2 * beta + R**2) / SLACK


@pytest.mark.parametrize("n_shards", [2, 5])
def test_mixing_keeps_the_r_independent_perceptron_theorem(n_shards):
    # beta="scale" takes thousands of epochs at eps* = 0.02 R, even alone
    for seed, X, y, R, eps in separable_samples(10, margins=(0.05, 0.1)):
        clf = mixed_fit(X, y, n_shards, beta="scale", random_state=seed)
        assert clf.mixed_updates_[0] <= 9 * R**2 / eps**2 * SLACK
        assert margin(clf, X, y)[0] >= eps / 3 / SLACK


def test_the_power_schedule_ends_separated():
    """No theorem carries over for beta="power" (see the Notes), but a run
    that converges has separated the sample."""
    for seed, X, y, _, _ in separable_samples(6, margins=(0.1,)):
        mixed_fit(X, y, 4, beta="power", alpha=1.2, random_state=seed)


def test_the_margin_guarantee_needs_the_common_radius():
    """With the intercept lifted by the largest norm (the default), every
    shard's lift is the whole sample's radius after the first epoch: the
    mixed model separates a separable sample that does not pass through
    the origin."""
    for seed, X, y, _, _ in separable_samples(6):
        X = X + 3.0
        clf = ParameterMixingClassifier(
            MarginPerceptron(tol=None, max_iter=100_000, random_state=seed),
            n_shards=3,
        ).fit(X, y)
        assert clf.converged_ and clf.score(X, y) == 1.0


def test_noisy_data_reaches_the_single_machine_accuracy():
    scores = []
    for seed in range(5):
        X, y = make_classification(
            n_samples=4000, n_features=20, flip_y=0.05, random_state=seed
        )
        train, test = slice(0, 3000), slice(3000, None)
        single = MarginPerceptron(random_state=seed).fit(X[train], y[train])
        mixed = ParameterMixingClassifier(
            MarginPerceptron(random_state=seed), n_shards=4
        ).fit(X[train], y[train])
        scores.append((single.score(X[test], y[test]), mixed.score(X[test], y[test])))
    single, mixed = np.mean(scores, axis=0)
    assert mixed >= single - 0.005


def test_pipeline_and_grid_search():
    """In a grid search over a pipeline, the candidates of one shard score
    as the perceptron itself does."""
    X, y = noisy(2)
    betas = [0.0, "scale"]
    mixed = GridSearchCV(
        make_pipeline(
            StandardScaler(),
            ParameterMixingClassifier(MarginPerceptron(random_state=0)),
        ),
        {
            "parametermixingclassifier__estimator__beta": betas,
            "parametermixingclassifier__n_shards": [1, 3],
        },
        cv=3,
    ).fit(X, y)
    single = GridSearchCV(
        make_pipeline(StandardScaler(), MarginPerceptron(random_state=0)),
        {"marginperceptron__beta": betas},
        cv=3,
    ).fit(X, y)
    one_shard = mixed.cv_results_["param_parametermixingclassifier__n_shards"] == 1
    assert np.array_equal(
        mixed.cv_results_["mean_test_score"][one_shard],
        single.cv_results_["mean_test_score"],
    )


def test_not_converged_warns():
    X, y = noisy(2)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        ParameterMixingClassifier(
            MarginPerceptron(tol=None, max_iter=3), n_shards=2
        ).fit(X, y)


@pytest.mark.parametrize(
    "params, error",
    [
        ({"n_shards": 0}, "n_shards"),
        ({"estimator": StandardScaler()}, "estimator"),
        ({"estimator": MarginPerceptron(eta0=-1.0)}, "eta0"),
    ],
)
def test_bad_parameters_are_refused(params, error):
    X, y = noisy(2)
    with pytest.raises(ValueError, match=error):
        ParameterMixingClassifier(**params).fit(X, y)


def test_importing_skperc_does_not_import_dask():
    code = (
        "import sys, skperc, skperc.distributed; "
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# The seed of a mixed run is its perceptron's random_state, which the checks
# do not set: they set a random_state of the estimator they are given only.
UNSEEDED = {
    check: "The seed is the perceptron's random_state, which the check does "
    "not set (it sets a top-level random_state only): two fits shuffle "
    "differently. The seeded configuration passes it."
    for check in (
        "check_fit_idempotent",
        "check_supervised_y_2d",
        "check_classifier_data_not_an_array",
    )
}


def expected_failed_checks(estimator):
    seeded = estimator.estimator is not None
    return {**PERCEPTRON_SAMPLE_WEIGHT, **({} if seeded else UNSEEDED)}


@parametrize_with_checks(
    [
        ParameterMixingClassifier(),
        ParameterMixingClassifier(
            MarginPerceptron(beta="scale", average=True, random_state=0), n_shards=3
        ),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
