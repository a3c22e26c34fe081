"""Iterative parameter mixing (skperc.distributed): one shard is the
single-machine run, the mixture keeps the theorems that the Notes of
ParameterMixingClassifier state, and bad parameters are refused."""

import copy
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from margin_data import growing_lift_sample
from numpy.testing import assert_array_equal
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data
from test_common import PERCEPTRON_SAMPLE_WEIGHT, parametrize_with_listed_checks

from skperc import MarginPerceptron, distributed
from skperc._early_stopping import validation_split
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


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_one_shard_sees_the_lifted_norms_as_the_single_machine_run(
    early_stopping, seed
):
    """The single machine's run sees the lifted norms again in its second
    epoch, once the lift "rms" has settled (see test_margin_perceptron):
    so does the shard, and the mixed radius keeps what it saw."""
    X, y = growing_lift_sample(600, 3, seed)
    estimator = MarginPerceptron(
        beta="power", shuffle=False, early_stopping=early_stopping, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        single = clone(estimator).fit(X, y)
        mixed = ParameterMixingClassifier(clone(estimator), n_shards=1).fit(X, y)
    assert single.n_iter_ > 2
    assert same_model(single, mixed)


@pytest.mark.parametrize(
    "options",
    [{}, {"average": True}, {"beta": "scale"}, {"early_stopping": True}],
    ids=str,
)
@pytest.mark.parametrize("layout", ["float64", "float32", "csr"])
def test_one_shard_of_a_separable_sample_is_the_single_machine_run(options, layout):
    """Where problems separate, one shard is the single machine's fit too:
    a problem that separated trains no more, while the others go on, and
    under average="auto" answers toward its mean (toward_mean) from the
    margins of every shard."""
    for seed in range(6):
        X, y = make_margin_classification(500, 5, margin=0.05, random_state=seed)
        if seed % 2:
            # three classes, of which one separates before the others
            y = np.where(X[:, 0] > 0.4, 2, y)
        X = {"float64": X, "float32": X.astype(np.float32), "csr": sp.csr_array(X)}[
            layout
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            single = MarginPerceptron(random_state=0, **options).fit(X, y)
            mixed = ParameterMixingClassifier(
                MarginPerceptron(random_state=0, **options), n_shards=1
            ).fit(X, y)
        assert same_model(single, mixed)
        assert mixed.converged_ == single.converged_
        assert np.array_equal(mixed.margin_, single.margin_)


@pytest.mark.parametrize(
    "options",
    [{}, {"average": True, "class_weight": "balanced"}, {"beta": "scale"}],
    ids=str,
)
@pytest.mark.parametrize("early_stopping", ["auto", True, False])
@pytest.mark.parametrize("layout", ["float64", "float32", "csr"])
def test_one_shard_stops_early_as_the_single_machine_run(
    options, early_stopping, layout
):
    """On more than 2,000 examples, where early_stopping="auto" splits, one
    shard sets aside the same validation part as the single-machine run,
    scores each epoch the same and answers with the run at the same best
    epoch: the same model to the last bit."""
    X, y = noisy(3, n_samples=2500)
    X = {"float64": X, "float32": X.astype(np.float32), "csr": sp.csr_array(X)}[layout]
    weight = np.random.RandomState(0).randint(0, 3, len(y)).astype(float)
    estimator = MarginPerceptron(
        early_stopping=early_stopping, random_state=0, **options
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        single = clone(estimator).fit(X, y, weight)
        mixed = ParameterMixingClassifier(estimator, n_shards=1).fit(X, y, weight)
    assert same_model(single, mixed)
    assert (mixed.validation_scores_ is not None) == (early_stopping is not False)
    assert mixed.validation_scores_ == single.validation_scores_
    assert mixed.best_validation_score_ == single.best_validation_score_
    assert np.array_equal(mixed.margin_, single.margin_)


@pytest.mark.parametrize("n_shards", [2, 4])
def test_early_stopping_answers_with_the_run_on_the_training_part(n_shards):
    """The shards set aside the single machine's validation part, and the
    answer is, to the last bit, the mixed run of the other examples (the
    held-out ones of weight 0) for as many epochs as the best score took;
    on noisy data within half a point of the single machine's answer."""
    X, y = make_classification(
        n_samples=12_000, n_features=20, flip_y=0.05, random_state=0
    )
    train, test = slice(0, 8000), slice(8000, None)
    mixed = ParameterMixingClassifier(
        MarginPerceptron(average=True, random_state=0), n_shards=n_shards
    ).fit(X[train], y[train])
    assert mixed.stop_reason_ == "no_improvement"
    best = mixed.validation_scores_.index(mixed.best_validation_score_) + 1
    assert best < mixed.n_iter_
    held = np.zeros(8000, dtype=bool)
    held[validation_split(y[train], 0.1, 0)[1]] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        rule = ParameterMixingClassifier(
            MarginPerceptron(
                average=True,
                early_stopping=False,
                tol=None,
                max_iter=best,
                random_state=0,
            ),
            n_shards=n_shards,
        ).fit(X[train], y[train], sample_weight=(~held).astype(float))
    assert np.array_equal(mixed.coef_, rule.coef_)
    assert np.array_equal(mixed.intercept_, rule.intercept_)
    assert np.array_equal(mixed.n_updates_, rule.n_updates_)
    single = MarginPerceptron(average=True, random_state=0).fit(X[train], y[train])
    assert mixed.score(X[test], y[test]) >= single.score(X[test], y[test]) - 0.005


def test_shards_without_held_out_rows_stop_early():
    """With every default, 2,100 examples on 64 shards: a dense shard that
    held none of the validation part raised from gen_batches when scored.
    The dense fit is the CSR fit (whose scoring took no such loop)."""
    X, y = make_classification(n_samples=2100, n_features=10, random_state=0)
    dense = ParameterMixingClassifier(
        MarginPerceptron(random_state=0), n_shards=64
    ).fit(X, y)
    held = np.zeros(len(y), dtype=bool)
    held[validation_split(y, 0.1, 0)[1]] = True
    bounds = np.linspace(0, len(y), 65).astype(np.intp)
    assert min(np.add.reduceat(held, bounds[:-1])) == 0
    sparse = ParameterMixingClassifier(
        MarginPerceptron(random_state=0), n_shards=64
    ).fit(sp.csr_matrix(X), y)
    assert dense.validation_scores_ == sparse.validation_scores_
    assert np.array_equal(dense.coef_, sparse.coef_)
    assert np.array_equal(dense.intercept_, sparse.intercept_)


def test_early_stopping_lets_a_separable_run_end_separated():
    """A perfect validation score stops no run that may still separate its
    training part: on random separable samples of more than 2,000 examples,
    the mixed run with the default early stopping ends separated."""
    rng = np.random.RandomState(0)
    for seed in range(6):
        X, y = make_margin_classification(
            2500, rng.choice([3, 8]), margin=0.05, random_state=seed
        )
        clf = ParameterMixingClassifier(
            MarginPerceptron(random_state=seed), n_shards=rng.choice([2, 3])
        ).fit(X, y)
        assert clf.validation_scores_ is not None
        assert clf.converged_ and clf.stop_reason_ == "separated"
        assert (clf.margin_ > 0).all()


def test_early_stopping_refuses_a_sample_it_cannot_split_before_any_work():
    X, y = noisy(2, n_samples=2500)
    y[0] = 2  # a class of one example cannot be on both sides
    refused = ParameterMixingClassifier(MarginPerceptron(early_stopping=True))
    with pytest.raises(ValueError, match="every class on both sides"):
        refused.fit(X, y)
    assert not hasattr(refused, "estimator_")
    # "auto" trains it on the rule, as the single machine does
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        auto = ParameterMixingClassifier(MarginPerceptron(random_state=0)).fit(X, y)
    assert auto.validation_scores_ is None


def test_partial_fit_does_not_stop_early():
    X, y = noisy(2, n_samples=2500)
    clf = ParameterMixingClassifier(MarginPerceptron(early_stopping=True))
    clf.partial_fit(X, y, classes=[0, 1])
    assert clf.validation_scores_ is None and clf.n_iter_ == 1


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


@pytest.mark.parametrize("n_shards", [2, 3])
@pytest.mark.parametrize("early_stopping", [False, True])
def test_csr_shards_read_the_sample_where_it_lies(
    monkeypatch, n_shards, early_stopping
):
    """The shards of a CSR sample are views of its stored values and
    indices, read-only ones included, and train the model of the same
    sample dense."""
    X, y = make_classification(3000, 20, n_informative=6, n_classes=3, random_state=0)
    X[np.abs(X) < 0.7] = 0.0
    X_csr = sp.csr_array(X)
    for array in (X_csr.data, X_csr.indices, X_csr.indptr):
        array.flags.writeable = False
    engines = []

    class Recorded(distributed._Threads):
        def __init__(self, shards, starts):
            engines.append(shards)
            super().__init__(shards, starts)

    monkeypatch.setattr(distributed, "_Threads", Recorded)
    fits = [
        ParameterMixingClassifier(
            MarginPerceptron(random_state=0, early_stopping=early_stopping),
            n_shards=n_shards,
        ).fit(data, y)
        for data in (X, X_csr)
    ]
    assert same_model(*fits)
    shards = engines[-1]
    assert len(shards) == n_shards
    for shard in shards:
        data, indices, _ = shard.rows
        assert np.shares_memory(data, X_csr.data)
        assert np.shares_memory(indices, X_csr.indices)


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


def test_the_average_is_over_every_step_of_every_shard():
    """After one epoch from zero, each shard's steps are those of a
    single-machine epoch over its own rows: the mixed average is their
    averages weighted by the shards' sizes."""
    options = dict(average=True, max_iter=1, tol=None, shuffle=False)
    for seed in range(5):
        X, y = noisy(2, random_state=seed, n_samples=301)
        bounds = [0, 100, 200, 301]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            parts = [
                MarginPerceptron(fit_intercept=False, **options).fit(X[a:b], y[a:b])
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
            mixed = ParameterMixingClassifier(
                MarginPerceptron(fit_intercept=False, **options), n_shards=3
            ).fit(X, y)
        expected = sum(
            (b - a) * part.coef_
            for part, a, b in zip(parts, bounds[:-1], bounds[1:], strict=True)
        ) / len(y)
        np.testing.assert_allclose(mixed.coef_, expected, rtol=1e-12, atol=1e-12)
        # not the last mixed weights
        assert not np.allclose(mixed.coef_, mixed.estimator_._run.coef.T)


def test_a_stopped_run_answers_with_its_average():
    """As on one core, a mixed run that the stopping rule ends answers with
    its averaged weights (average="auto"), a separated one from its last
    weights toward their mean (toward_mean), where tol=None answers with
    the last weights of the same run."""
    X, y = noisy(2, n_samples=600)
    runs = {
        average: ParameterMixingClassifier(
            MarginPerceptron(average=average, random_state=0), n_shards=3
        ).fit(X, y)
        for average in ("auto", True, False)
    }
    assert runs["auto"].stop_reason_ == "no_improvement"
    assert np.array_equal(runs["auto"].coef_, runs[True].coef_)
    assert np.array_equal(runs["auto"].intercept_, runs[True].intercept_)
    assert not np.array_equal(runs["auto"].coef_, runs[False].coef_)
    X, y = make_margin_classification(300, 5, margin=0.1, random_state=0)
    separated = ParameterMixingClassifier(
        MarginPerceptron(random_state=0), n_shards=3
    ).fit(X, y)
    last = ParameterMixingClassifier(
        MarginPerceptron(tol=None, random_state=0), n_shards=3
    ).fit(X, y)
    assert separated.stop_reason_ == last.stop_reason_ == "separated"
    assert np.array_equal(separated.n_updates_, last.n_updates_)
    assert np.array_equal(last.coef_, last.estimator_._run.coef.T)
    assert not np.array_equal(separated.coef_, last.coef_)


def batches(X, y, n_batches):
    bounds = np.linspace(0, len(y), n_batches + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@pytest.mark.parametrize(
    "options",
    [{}, {"average": True}, {"beta": "power"}, {"beta": "scale", "eta0": 0.37}],
    ids=str,
)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("layout", ["float64", "csr"])
def test_partial_fit_with_one_shard_is_the_single_machine_partial_fit(
    options, n_classes, layout
):
    X, y = noisy(n_classes, n_samples=450)
    if layout == "csr":
        X = sp.csr_array(X)
    classes = np.unique(y)
    single = MarginPerceptron(random_state=0, **options)
    mixed = ParameterMixingClassifier(
        MarginPerceptron(random_state=0, **options), n_shards=1
    )
    for Xb, yb in batches(X, y, 3):
        single.partial_fit(Xb, yb, classes=classes)
        mixed.partial_fit(Xb, yb, classes=classes)
        assert same_model(single, mixed)
        assert mixed.converged_ == single.converged_
        assert mixed.estimator_.radius_ == single.radius_


def rosenblatt_epoch(w, X, s):
    """One epoch of Rosenblatt's perceptron in order from w on labels s in
    {-1, 1}: the last weights, the updates, the sum of the weights after
    every example."""
    w, updates, total = w.copy(), 0, np.zeros_like(w)
    for x, label in zip(X, s, strict=True):
        if label * (w @ x) <= 0:
            w += label * x
            updates += 1
        total += w
    return w, updates, total


@pytest.mark.parametrize("n_shards", [2, 3])
def test_partial_fit_mixes_once_per_call(n_shards):
    """Each call runs one epoch of every shard from the mixed weights and
    mixes them by their updates; the average is that of the weights after
    every example of every shard of every call (a reference written
    apart)."""
    options = dict(fit_intercept=False, shuffle=False, eta0=1.0)
    for seed in range(4):
        X, y = noisy(2, random_state=seed, n_samples=420)
        runs = {
            average: ParameterMixingClassifier(
                MarginPerceptron(average=average, **options), n_shards=n_shards
            )
            for average in (False, True)
        }
        w, total, steps, all_updates, mixture = np.zeros(X.shape[1]), 0.0, 0, 0, 0.0
        for Xb, yb in batches(X, y, 3):
            for clf in runs.values():
                clf.partial_fit(Xb, yb, classes=[0, 1])
            bounds = np.linspace(0, len(yb), n_shards + 1).astype(int)
            epochs = [
                rosenblatt_epoch(w, Xb[a:b], 2 * yb[a:b] - 1)
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
            updates = np.array([u for _, u, _ in epochs])
            if updates.sum():
                w = sum(u * last for last, u, _ in epochs) / updates.sum()
            total = total + sum(t for _, _, t in epochs)
            steps += len(yb)
            all_updates += updates.sum()
            mixture += (updates**2).sum() / max(updates.sum(), 1)
            np.testing.assert_allclose(runs[False].coef_[0], w, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(
                runs[True].coef_[0], total / steps, rtol=1e-9, atol=1e-9
            )
            assert runs[True].n_updates_[0] == all_updates
            assert runs[True].estimator_._run.n_steps[0] == steps
            assert runs[True].mixed_updates_[0] == pytest.approx(mixture)


def test_partial_fit_once_is_one_epoch_of_fit():
    """From a new run, a call is the first mixed epoch of fit, to the last
    bit."""
    for n_classes in (2, 3):
        X, y = noisy(n_classes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fitted = ParameterMixingClassifier(
                MarginPerceptron(max_iter=1, tol=None, random_state=0), n_shards=3
            ).fit(X, y)
        once = ParameterMixingClassifier(
            MarginPerceptron(random_state=0), n_shards=3
        ).partial_fit(X, y, classes=np.unique(y))
        assert same_model(fitted, once)
        assert np.array_equal(fitted.mixed_updates_, once.mixed_updates_)


def test_partial_fit_continues_the_clone_of_its_first_call():
    """As scikit-learn's meta-estimators: parameters set on ``estimator``
    wait for the next fit, those set on ``estimator_`` change the run from
    the next call, as between a perceptron's own partial_fit calls (one
    shard is that perceptron, to the last bit), and are validated."""
    X, y = noisy(2, n_samples=450)
    (X1, y1), (X2, y2) = batches(X, y, 2)
    template = MarginPerceptron(random_state=0)
    single = MarginPerceptron(random_state=0).partial_fit(X1, y1, classes=[0, 1])
    untouched, on_template, on_run = (
        ParameterMixingClassifier(clone(template), n_shards=1).partial_fit(
            X1, y1, classes=[0, 1]
        )
        for _ in range(3)
    )
    single.set_params(eta0=0.1, beta="scale")
    on_template.set_params(estimator__eta0=0.1, estimator__beta="scale")
    on_run.estimator_.set_params(eta0=0.1, beta="scale")
    for clf in (single, untouched, on_template, on_run):
        clf.partial_fit(X2, y2)
    assert same_model(single, on_run)
    assert same_model(untouched, on_template)
    assert not np.array_equal(on_run.coef_, untouched.coef_)
    on_run.estimator_.set_params(eta0=-1.0)
    with pytest.raises(ValueError, match="eta0"):
        on_run.partial_fit(X2, y2)
    # a new fit takes the parameters of estimator
    fitted = on_template.fit(X, y)
    assert same_model(
        fitted,
        ParameterMixingClassifier(
            MarginPerceptron(eta0=0.1, beta="scale", random_state=0), n_shards=1
        ).fit(X, y),
    )


def test_partial_fit_refuses_what_it_cannot_continue():
    X, y = noisy(2)
    clf = ParameterMixingClassifier(MarginPerceptron(random_state=0))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[2\]"):
        clf.partial_fit(X, np.where(y == 1, 2, y))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :3], y)
    with pytest.raises(ValueError, match="balanced"):
        ParameterMixingClassifier(
            MarginPerceptron(class_weight="balanced")
        ).partial_fit(X, y, classes=[0, 1])


@pytest.mark.parametrize(
    "options", [{}, {"average": True, "beta": "power"}, {"tol": None}], ids=str
)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("layout", ["float64", "csr"])
def test_warm_start_with_one_shard_is_the_single_machine_warm_start(
    options, n_classes, layout
):
    X, y = noisy(n_classes)
    if layout == "csr":
        X = sp.csr_array(X)
    options = dict(random_state=0, warm_start=True, max_iter=4, **options)
    single = MarginPerceptron(**options)
    mixed = ParameterMixingClassifier(MarginPerceptron(**options), n_shards=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(3):
            single.fit(X, y)
            mixed.fit(X, y)
            assert same_model(single, mixed)
            assert np.array_equal(single.margin_, mixed.margin_)


@pytest.mark.parametrize("n_shards", [2, 4])
def test_warm_start_continues_the_mixed_run(n_shards):
    """A warm-started fit continues the mixture: its updates over both fits
    stay within Novikoff's bound, and the run counts every step once."""
    for seed, X, y, R, eps in separable_samples(8):
        options = dict(fit_intercept=False, tol=None, eta0=0.37, random_state=seed)
        clf = ParameterMixingClassifier(
            MarginPerceptron(max_iter=2, warm_start=True, **options),
            n_shards=n_shards,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        first = clf.mixed_updates_.copy()
        epochs = clf.n_iter_
        clf.set_params(estimator__max_iter=100_000).fit(X, y)
        assert clf.converged_ and clf.score(X, y) == 1.0
        assert clf.mixed_updates_[0] >= first[0]
        assert clf.mixed_updates_[0] <= (R / eps) ** 2 * SLACK
        assert clf.estimator_._run.n_steps[0] == len(y) * (epochs + clf.n_iter_)
    with pytest.raises(ValueError, match="same classes"):
        clf.fit(
            X[y == y[0]][:3].tolist() + X[y != y[0]][:3].tolist(), [5] * 3 + [6] * 3
        )


@pytest.mark.parametrize("n_shards", [1, 2, 3, 5])
def test_margin_is_that_of_the_model_on_the_sample(n_shards):
    """margin_ is the smallest over the shards of the examples of positive
    weight, that of skperc.metrics.margin on them, to the last bit."""
    for n_classes, sample in [(2, "separable"), (2, "noisy"), (3, "noisy")]:
        if sample == "separable":
            X, y = make_margin_classification(300, 5, margin=0.1, random_state=0)
        else:
            X, y = noisy(n_classes)
        weight = np.ones(len(y))
        # the shards of the first rows have no example of positive weight
        weight[: len(y) // 2] = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = ParameterMixingClassifier(
                MarginPerceptron(random_state=0), n_shards=n_shards
            ).fit(X, y, weight)
            unweighted = ParameterMixingClassifier(
                MarginPerceptron(random_state=0), n_shards=n_shards
            ).fit(X, y)
        kept = weight > 0
        assert np.array_equal(clf.margin_, margin(clf, X[kept], y[kept]))
        assert np.array_equal(unweighted.margin_, margin(unweighted, X, y))
        if sample == "separable":
            assert unweighted.margin_[0] > 0


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


@parametrize_with_listed_checks(
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


def test_input_whose_products_underflow_is_refused_before_any_work():
    """As in MarginPerceptron: separable data scaled to 1e-170 would train
    on products that vanish and end in a wrong model without a sign."""
    X, y = make_margin_classification(60, 3, margin=0.2, random_state=0)
    with pytest.raises(ValueError, match="underflows"):
        ParameterMixingClassifier(n_shards=2).fit(X * 1e-170, y)
    with pytest.raises(ValueError, match="underflows"):
        ParameterMixingClassifier(n_shards=2).partial_fit(
            X * 1e-170, y, classes=np.unique(y)
        )
    # the same data at a normal scale trains
    ParameterMixingClassifier(n_shards=2).fit(X, y)


# The serial passes of a fit (the finiteness of X, the labels) run per
# shard on the shards' threads; what they find is what a check of the
# whole finds.


def full_validation_error(X, y):
    """The error of scikit-learn's full validation of X and y for the
    mixing classifier, which checks X's values before y."""
    with pytest.raises((ValueError, TypeError)) as error:
        validate_data(
            ParameterMixingClassifier(), X, y, **MarginPerceptron()._validation()
        )
    return error.value


@pytest.fixture
def no_training(monkeypatch):
    """Any epoch of a shard fails the test."""

    def epoch(*args, **kwargs):
        raise AssertionError("a shard trained on input that should be refused")

    monkeypatch.setattr(distributed, "_shard_epoch", epoch)


@pytest.mark.parametrize("layout", ["float64", "float32", "csr"])
@pytest.mark.parametrize(
    "where, y_fault",
    [
        # rows of the second and the last of 3 shards of 300 rows
        ({150: np.nan}, None),
        ({299: np.inf}, None),
        ({250: -np.inf}, None),
        # infinity in the first shard, NaN in the last: the whole holds NaN
        ({0: np.inf, 299: np.nan}, None),
        # X's fault is named before y's, as the full validation names it
        ({150: np.nan}, "short"),
        ({150: np.nan}, "nan"),
    ],
)
@pytest.mark.usefixtures("no_training")
def test_non_finite_input_is_refused_as_validation_refuses_it(layout, where, y_fault):
    X, y = noisy(3)
    X = X.copy()
    for row, value in where.items():
        X[row, 1] = value
    if y_fault == "short":
        y = y[:-1]
    elif y_fault == "nan":
        y = y.astype(float)
        y[3] = np.nan
    X = {"float64": X, "float32": X.astype(np.float32), "csr": sp.csr_array(X)}[layout]
    expected = full_validation_error(X, y)
    for call in ("fit", "partial_fit"):
        kwargs = {"classes": [0, 1, 2]} if call == "partial_fit" else {}
        with pytest.raises(type(expected)) as error:
            getattr(ParameterMixingClassifier(n_shards=3), call)(X, y, **kwargs)
        assert str(error.value) == str(expected)
    # a fault of y alone is still y's
    X_finite = np.nan_to_num(X.toarray() if sp.issparse(X) else X)
    if y_fault is not None:
        with pytest.raises(type(full_validation_error(X_finite, y))):
            ParameterMixingClassifier(n_shards=3).fit(X_finite, y)


def test_assume_finite_skips_the_check_as_validation_does(monkeypatch):
    """Under scikit-learn's assume_finite the values of X are not checked,
    on the shards' threads as in validate_data."""
    X, y = noisy(2)
    X[200, 0] = np.nan
    checked = []
    monkeypatch.setattr(
        distributed, "assert_all_finite", lambda *a, **k: checked.append(a)
    )
    with config_context(assume_finite=True):
        with pytest.raises(ValueError) as error:
            ParameterMixingClassifier(n_shards=2).fit(X, y)
    assert checked == []
    assert "Input X contains NaN" not in str(error.value)


@pytest.mark.parametrize("n_shards", [2, 3])
def test_labels_seen_in_one_shard_only(n_shards):
    """The classes of the whole sample from those of each shard: the first
    class (of string labels) in the last shard only, every code that of the
    whole. A call of partial_fit, given the
    classes, is the first epoch of fit (the codes are found apart)."""
    X, y = noisy(3, n_samples=300)
    # class 1 first, then class 2, then 30 examples of class 0
    order = np.r_[np.flatnonzero(y == 1), np.flatnonzero(y == 2)]
    order = np.r_[order, np.flatnonzero(y == 0)[:30]]
    X, y = X[order], np.array(["ant", "bee", "cow"])[y[order]]
    assert "ant" not in y[:-30] and len(y) - len(y) // n_shards > 30
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = ParameterMixingClassifier(
            MarginPerceptron(max_iter=1, tol=None, random_state=0), n_shards=n_shards
        ).fit(X, y)
    once = ParameterMixingClassifier(
        MarginPerceptron(random_state=0), n_shards=n_shards
    ).partial_fit(X, y, classes=["cow", "ant", "bee"])
    assert fitted.classes_.tolist() == ["ant", "bee", "cow"]
    assert same_model(fitted, once)


@pytest.mark.parametrize("n_shards", [2, 3])
def test_labels_unknown_to_partial_fit_are_named_from_every_shard(n_shards):
    X, y = noisy(2)
    y = y.copy()
    y[0], y[-1] = 7, 9
    with pytest.raises(ValueError, match=r"labels \[7, 9\] that are not in classes"):
        ParameterMixingClassifier(n_shards=n_shards).partial_fit(X, y, classes=[0, 1])


@pytest.mark.parametrize(
    "y, error",
    [
        (np.r_[0.5, np.zeros(299)], "Unknown label type: continuous"),
        # objects of mixed types, which np.unique cannot sort
        (np.array([1] + ["a", "b"] * 149 + ["a"], dtype=object), "unknown"),
        (np.arange(300) % 200, None),
    ],
)
def test_labels_are_checked_as_scikit_learn_checks_them(y, error):
    """The check of the whole y, its warning included (more classes than
    half the examples), from the labels found per shard."""
    X, _ = noisy(2)
    if error is None:
        # the warning is scikit-learn's (from version 1.7 on): the same
        # warnings as its check of the whole y
        def class_warnings(call):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call()
            return [
                str(w.message) for w in caught if "unique classes" in str(w.message)
            ]

        estimator = ParameterMixingClassifier(MarginPerceptron(max_iter=1), n_shards=3)
        assert class_warnings(lambda: estimator.fit(X, y)) == class_warnings(
            lambda: check_classification_targets(y)
        )
        return
    for estimator in (ParameterMixingClassifier(n_shards=3), MarginPerceptron()):
        with pytest.raises(ValueError, match=error):
            estimator.fit(X, y)


def test_a_fit_that_fails_leaves_the_model_as_it_was(monkeypatch):
    """fit and partial_fit publish their model in one step, as the
    estimators' own fits: a call that raises (or is interrupted) leaves the
    previous model whole, and an unfitted estimator unfitted."""
    X, y = noisy(2, n_samples=200)
    model = ParameterMixingClassifier(MarginPerceptron(random_state=0), n_shards=3)
    model.fit(X, y)
    before = {k: copy.deepcopy(v) for k, v in vars(model).items() if k.endswith("_")}
    scores = model.decision_function(X)
    # refused after X with other features has been read
    with pytest.raises(ValueError, match="underflows"):
        model.fit(X[:, :3] * 1e-170, y)
    assert model.n_features_in_ == X.shape[1]
    assert_array_equal(model.decision_function(X), scores)

    # a failure after the mixed epoch has set the new run
    def fail(*args, **kwargs):
        raise RuntimeError("stopped")

    monkeypatch.setattr(ParameterMixingClassifier, "_set_margins", fail)
    for call in (model.fit, model.partial_fit):
        with pytest.raises(RuntimeError, match="stopped"):
            call(X, y)
        assert_array_equal(model.decision_function(X), scores)
        for name, value in before.items():
            kept = getattr(model, name)
            if isinstance(value, np.ndarray):
                assert_array_equal(kept, value)
            elif name == "estimator_":
                assert_array_equal(kept.coef_, value.coef_)
                assert kept.n_updates_.tolist() == value.n_updates_.tolist()
    unfitted = ParameterMixingClassifier(MarginPerceptron(random_state=0))
    with pytest.raises(RuntimeError, match="stopped"):
        unfitted.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(NotFittedError):
        unfitted.predict(X)
    # the failed calls left nothing behind: the run continues as if they
    # had not been made
    monkeypatch.undo()
    first = ParameterMixingClassifier(MarginPerceptron(random_state=0), n_shards=3)
    first.partial_fit(X, y, classes=[0, 1])
    model = clone(first).partial_fit(X, y, classes=[0, 1])
    monkeypatch.setattr(ParameterMixingClassifier, "_set_margins", fail)
    with pytest.raises(RuntimeError, match="stopped"):
        model.partial_fit(X, y)
    monkeypatch.undo()
    assert_array_equal(model.partial_fit(X, y).coef_, first.partial_fit(X, y).coef_)
