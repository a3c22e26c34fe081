"""Early stopping of MarginPerceptron and KernelPerceptron: the run on the
training part, the validation score, the run it answers with, and when
KernelPerceptron's "auto" turns it on."""

import collections
import copy
import warnings
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from margin_data import growing_lift_sample
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

import skperc._early_stopping
from skperc import KernelPerceptron, MarginPerceptron
from skperc._early_stopping import SETTLED_SHARE, validation_split
from skperc._kernel_perceptron_fast import ColumnCache

GAMMA = 0.1  # fixed: "scale" would be taken from the whole batch
# the epochs after the best score that end a run with n_iter_no_change="auto"
# (KernelPerceptron's default): as scikit-learn's default, but fewer under a
# budget that binds
AUTO_PATIENCE = 5
BUDGETED_AUTO_PATIENCE = 2


def noisy(n_samples=600, n_classes=2, random_state=0):
    return make_classification(
        n_samples=n_samples,
        n_features=8,
        n_informative=5,
        n_classes=n_classes,
        flip_y=0.15,
        random_state=random_state,
    )


def split(y, fraction, random_state):
    """The training and validation parts of early stopping, as fit draws
    them (codes and labels split alike)."""
    return validation_split(y, fraction, random_state)


def bits(rows):
    """The bits of dense or CSR rows (-0.0 is not +0.0)."""
    rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
    return rows.view(np.uint64 if rows.dtype == np.float64 else np.uint32)


def fit_quietly(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


INPUTS = {
    "dense": lambda X: X,
    "csr": sp.csr_matrix,
    "float32": lambda X: X.astype(np.float32),
}
BUDGETS = [
    dict(),
    dict(budget=40, budget_strategy="merge"),
    dict(budget=40, budget_strategy="remove", beta="power"),
    dict(budget=40, budget_strategy="project"),
]
BUDGET_IDS = ["plain", "merge", "remove-power", "project"]


def every_early_stopped_run(test):
    """test over every input form, 2 and 3 classes, each budget and 3
    seeds."""
    for mark in [
        pytest.mark.parametrize("seed", range(3)),
        pytest.mark.parametrize("budget", BUDGETS, ids=BUDGET_IDS),
        pytest.mark.parametrize("n_classes", [2, 3]),
        pytest.mark.parametrize("form", INPUTS),
    ]:
        test = mark(test)
    return test


@every_early_stopped_run
def test_the_answer_is_the_run_on_the_training_part_at_its_best_epoch(
    form, n_classes, budget, seed
):
    # The epochs run one call each, on the training part only; the answer
    # is that run as it stood at its best validation score: the same bits
    # as a run of that many epochs on the training part alone.
    X, y = noisy(n_classes=n_classes, random_state=seed)
    X = INPUTS[form](X)
    params = dict(
        gamma=GAMMA, average=True, random_state=seed, record_updates=True, **budget
    )
    stopped = fit_quietly(
        KernelPerceptron(
            early_stopping=True, n_iter_no_change=3, refit=False, **params
        ),
        X,
        y,
    )
    train, validation = split(y, 0.1, seed)
    best = int(np.argmax(stopped.validation_scores_)) + 1
    if stopped.stop_reason_ == "no_improvement":
        # under a full budget that merges or removes, 3 epochs after the
        # last score that beat the best by more than its standard error
        assert stopped.n_iter_ == (
            budgeted_stopping_epoch(stopped.validation_scores_, 3, len(validation))
            if budget.get("budget_strategy") in ("merge", "remove")
            else best + 3
        )

    def plain(average):
        model = KernelPerceptron(
            tol=None,
            max_iter=best,
            early_stopping=False,
            **{**params, "average": average},
        )
        return fit_quietly(model, X[train], y[train])

    expected = plain(True)
    if "budget" in budget and (
        expected.score(X[validation], y[validation]) < stopped.best_validation_score_
    ):
        # the mean of the averaging epoch that ends a fit on a full budget
        # answers only where it scores at least the best validation score;
        # else the last function, without that epoch, does
        expected = plain(False)
    support = np.where(expected.support_ >= 0, train[expected.support_], -1)
    assert_array_equal(stopped.support_, support)
    # the support vectors too (merged ones are no samples), to the bit
    assert_array_equal(bits(stopped.support_vectors_), bits(expected.support_vectors_))
    assert_array_equal(stopped.dual_coef_, expected.dual_coef_)
    assert_array_equal(stopped.n_updates_, expected.n_updates_)
    assert_array_equal(stopped.updates_[:, 0], train[expected.updates_[:, 0]])
    assert_array_equal(stopped.updates_[:, 1:], expected.updates_[:, 1:])


LINEAR = [
    dict(),
    dict(beta="power", n_jobs=2),
    dict(beta="scale", fit_intercept=False),
    dict(beta=0.5, intercept_scaling="auto", eta0=0.5),
]


@pytest.mark.parametrize("form", INPUTS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("params", LINEAR, ids=["rosenblatt", "power", "scale", "beta"])
@pytest.mark.parametrize("seed", range(3))
def test_the_linear_answer_is_the_run_on_the_training_part_at_its_best_epoch(
    form, n_classes, params, seed
):
    """The run of early stopping is the plain run of as many epochs on the
    whole sample, the held-out part of weight 0: the loop skips those
    examples, so that the training part need not be copied."""
    X, y = noisy(n_samples=1000, n_classes=n_classes, random_state=seed)
    X = INPUTS[form](X)
    params = dict(average=True, random_state=seed, record_updates=True, **params)
    stopped = fit_quietly(
        MarginPerceptron(early_stopping=True, n_iter_no_change=3, **params), X, y
    )
    train, validation = split(y, 0.1, seed)
    best = int(np.argmax(stopped.validation_scores_)) + 1
    held_out = np.ones(len(y))
    held_out[validation] = 0.0
    plain = MarginPerceptron(tol=None, max_iter=best, early_stopping=False, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain.fit(X, y, sample_weight=held_out)
    assert_array_equal(stopped.coef_, plain.coef_)
    assert_array_equal(stopped.intercept_, plain.intercept_)
    assert_array_equal(stopped.n_updates_, plain.n_updates_)
    assert_array_equal(stopped.margin_, plain.margin_)
    assert_array_equal(stopped.updates_, plain.updates_)
    # no held-out example was visited
    assert np.isin(stopped.updates_[:, 0], train).all()


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_linear_answer_sees_the_lifted_norms_as_the_plain_run(shuffle, seed):
    """The plain run sees the lifted norms again in its second epoch, once
    the lift "rms" has settled (see test_margin_perceptron); early stopping
    runs that epoch in a call of its own, which does the same."""
    X, y = growing_lift_sample(600, 3, seed)
    params = dict(beta="power", average=True, shuffle=shuffle, random_state=seed)
    stopped = fit_quietly(
        MarginPerceptron(early_stopping=True, n_iter_no_change=3, **params), X, y
    )
    assert stopped.n_iter_ > 1
    held_out = np.ones(len(y))
    held_out[split(y, 0.1, seed)[1]] = 0.0
    plain = fit_quietly(
        MarginPerceptron(
            tol=None,
            max_iter=int(np.argmax(stopped.validation_scores_)) + 1,
            early_stopping=False,
            **params,
        ),
        X,
        y,
        sample_weight=held_out,
    )
    assert_array_equal(stopped.coef_, plain.coef_)
    assert_array_equal(stopped.intercept_, plain.intercept_)
    assert_array_equal(stopped.n_updates_, plain.n_updates_)


@pytest.mark.parametrize("seed", range(4))
def test_the_linear_answer_scores_the_best_validation_score(seed):
    X, y = noisy(n_samples=1000, n_classes=3, random_state=seed)
    weight = np.random.RandomState(seed).uniform(0.5, 2.0, len(y))
    model = fit_quietly(
        MarginPerceptron(
            early_stopping=True, validation_fraction=0.2, random_state=seed
        ),
        X,
        y,
        sample_weight=weight,
    )
    _, validation = split(y, 0.2, seed)
    score = model.score(X[validation], y[validation], weight[validation])
    assert score == pytest.approx(model.best_validation_score_, abs=1e-12)
    assert model.stop_reason_ == "no_improvement" and not model.converged_


def test_the_linear_default_does_not_split():
    X, y = noisy()
    model = MarginPerceptron(random_state=0).fit(X, y)
    assert model.validation_scores_ is None and model.best_validation_score_ is None


@pytest.mark.parametrize("budget", BUDGETS, ids=BUDGET_IDS)
@pytest.mark.parametrize("seed", range(4))
def test_the_answer_scores_the_best_validation_score(budget, seed):
    X, y = noisy(n_classes=3, random_state=seed)
    weight = np.random.RandomState(seed).uniform(0.5, 2.0, len(y))
    model = fit_quietly(
        KernelPerceptron(
            gamma=GAMMA,
            early_stopping=True,
            validation_fraction=0.2,
            refit=False,
            random_state=seed,
            **budget,
        ),
        X,
        y,
        sample_weight=weight,
    )
    _, validation = split(y, 0.2, seed)
    score = model.score(X[validation], y[validation], weight[validation])
    if "budget" in budget:
        # the mean of the averaging epoch answers only where it scores at
        # least as well as the last function it started from
        assert score >= model.best_validation_score_ - 1e-12
    else:
        assert score == pytest.approx(model.best_validation_score_, abs=1e-12)
    assert model.best_validation_score_ == max(model.validation_scores_)
    # no example of the validation part enters the support
    assert not np.isin(model.support_, validation).any()


def answer_changes(X, y, weight, seed, n_epochs, **params):
    """The share of the training part of seed's split, weighted by weight,
    whose class the answer of each epoch 2 to n_epochs changes: the answers
    of runs of 1 to n_epochs epochs on the training part alone (the same
    bits as the run with early stopping, see above)."""
    train, _ = split(y, 0.1, seed)
    classes = [
        fit_quietly(
            KernelPerceptron(
                tol=None,
                max_iter=epochs,
                early_stopping=False,
                average=True,
                random_state=seed,
                **params,
            ),
            X[train],
            y[train],
            sample_weight=weight[train],
        ).predict(X[train])
        for epochs in range(1, n_epochs + 1)
    ]
    return [
        np.average(classes[e] != classes[e - 1], weights=weight[train])
        for e in range(1, n_epochs)
    ]


def stopping_epoch(scores, changes, n_iter_no_change):
    """The epoch the rule ends a noisy run at: the first whose answer changed
    the class of at most SETTLED_SHARE of the training part, or
    n_iter_no_change epochs after the best validation score (its first
    occurrence)."""
    for epoch in range(2, len(scores) + 1):
        best = int(np.argmax(scores[:epoch])) + 1
        if changes[epoch - 2] <= SETTLED_SHARE or epoch - best >= n_iter_no_change:
            return epoch
    return None


def budgeted_stopping_epoch(scores, n_iter_no_change, n_scored):
    """The epoch a run under a full budget ends at: n_iter_no_change epochs
    after the last validation score that beat the best before it by more
    than that best's standard error on n_scored examples, sqrt(p (1 - p) /
    n_scored) (p = 1/2 before the first score); None if no such epoch."""
    best, waited = -np.inf, 0
    for epoch, score in enumerate(scores, start=1):
        p = best if np.isfinite(best) else 0.5
        waited = 0 if score > best + np.sqrt(p * (1 - p) / n_scored) else waited + 1
        best = max(best, score)
        if waited >= n_iter_no_change:
            return epoch
    return None


def test_a_noisy_run_ends_when_its_answer_settles_or_its_score_stalls():
    """On random noisy samples of two and three classes, weighted, without a
    warning, the default run (the sample is split) ends at the first epoch
    whose answer settled or n_iter_no_change epochs after its best score;
    each rule ends some of them."""
    settled = []
    for seed in range(8):
        X, y = noisy(n_samples=2500, n_classes=2 + seed % 2, random_state=seed)
        # a tenth of the examples weigh 10 times the others
        weight = np.where(np.random.RandomState(seed).rand(len(y)) < 0.1, 10.0, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            # the run itself: refit="auto" would fit 2,500 examples again
            model = KernelPerceptron(gamma=GAMMA, refit=False, random_state=seed)
            model.fit(X, y, sample_weight=weight)
        assert model.stop_reason_ == "no_improvement"
        assert not model.converged_
        changes = answer_changes(X, y, weight, seed, model.n_iter_, gamma=GAMMA)
        assert model.n_iter_ == stopping_epoch(
            model.validation_scores_, changes, AUTO_PATIENCE
        )
        settled.append(changes[-1] <= SETTLED_SHARE)
    assert any(settled) and not all(settled), settled


@pytest.mark.parametrize(
    "strategy, patience, clear_gain",
    [
        ("merge", BUDGETED_AUTO_PATIENCE, True),
        ("remove", BUDGETED_AUTO_PATIENCE, True),
        ("project", AUTO_PATIENCE, False),
    ],
)
def test_the_default_patience_under_a_budget_follows_the_strategy(
    strategy, patience, clear_gain
):
    """On random noisy samples of two and three classes that a budget binds,
    some weighted, the default run ends BUDGETED_AUTO_PATIENCE epochs after
    the last validation score that beat the best by more than its standard
    error on the validation part (of its effective size where weighted)
    where merges or removals make room, and some of those runs end before
    that many epochs after the best score; AUTO_PATIENCE epochs after the
    best score where projections do. An explicit n_iter_no_change is kept.
    Unbudgeted, the same samples wait AUTO_PATIENCE after the best score."""
    stops, earlier = {}, []
    for seed in range(6):
        X, y = noisy(n_samples=1200, n_classes=2 + seed % 2, random_state=seed)
        weight = np.ones(len(y))
        if seed % 2:
            # a tenth of the examples weigh 10 times the others: the
            # validation part counts as about a third of its size
            weight[np.random.RandomState(seed).rand(len(y)) < 0.1] = 10.0
        _, validation = split(y, 0.1, seed)
        n_scored = weight[validation].sum() ** 2 / (weight[validation] ** 2).sum()
        for budget, n_iter_no_change, waits in [
            (60, "auto", patience),
            (60, 4, 4),
            (None, "auto", AUTO_PATIENCE),
        ]:
            model = KernelPerceptron(
                gamma=GAMMA,
                budget=budget,
                budget_strategy=strategy,
                early_stopping=True,
                n_iter_no_change=n_iter_no_change,
                refit=False,
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                model.fit(X, y, sample_weight=weight)
            assert model.stop_reason_ == "no_improvement"
            best = int(np.argmax(model.validation_scores_)) + 1
            after = model.n_iter_ - best
            if budget is None:
                # or earlier, where the answer settled
                assert after <= waits
            elif clear_gain:
                assert model.n_iter_ == budgeted_stopping_epoch(
                    model.validation_scores_, waits, n_scored
                )
                earlier.append(after < waits)
            else:
                assert after == waits
            stops.setdefault((budget, n_iter_no_change), []).append(after)
    assert max(stops[None, "auto"]) > BUDGETED_AUTO_PATIENCE, stops
    assert any(earlier) == clear_gain, stops


def wide_margin_sample():
    """Points of the square linearly separable with a margin of 0.2: a run
    separates them before a validation score can stall."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    X = X[np.abs(X[:, 0]) > 0.2]
    return X, (X[:, 0] > 0).astype(int)


def test_a_separated_training_part_ends_the_run_with_its_last_function():
    X, y = wide_margin_sample()
    model = KernelPerceptron(kernel="linear", early_stopping=True, random_state=0)
    model.fit(X, y)
    assert model.converged_ and model.stop_reason_ == "separated"
    train, _ = split(y, 0.1, 0)
    assert model.margin_[0] > 0
    assert (model.decision_function(X[train]) * np.where(y[train], 1, -1) > 0).all()


def test_running_out_of_epochs_warns_and_answers_with_the_best():
    X, y = noisy(random_state=2)
    model = KernelPerceptron(
        gamma=GAMMA,
        early_stopping=True,
        max_iter=2,
        n_iter_no_change=5,
        refit=False,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        model.fit(X, y)
    assert model.stop_reason_ == "max_iter"
    assert len(model.validation_scores_) == 2
    _, validation = split(y, 0.1, 0)
    assert model.score(X[validation], y[validation]) == pytest.approx(
        max(model.validation_scores_), abs=1e-12
    )


def test_a_precomputed_kernel_stops_on_its_validation_rows():
    X, y = noisy(random_state=3)
    gram = rbf_kernel(X, gamma=GAMMA)
    on_features = fit_quietly(
        KernelPerceptron(gamma=GAMMA, early_stopping=True, random_state=0), X, y
    )
    precomputed = fit_quietly(
        KernelPerceptron(kernel="precomputed", early_stopping=True, random_state=0),
        gram,
        y,
    )
    assert_array_equal(precomputed.support_, on_features.support_)
    assert precomputed.validation_scores_ == on_features.validation_scores_


@pytest.mark.parametrize("n_samples, on", [(2_000, False), (2_001, True)])
def test_auto_splits_samples_larger_than_2000(n_samples, on):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((n_samples, 2))
    y = (X[:, 0] > 0).astype(int)
    model = fit_quietly(
        KernelPerceptron(kernel="linear", max_iter=1, random_state=0), X, y
    )
    assert (model.validation_scores_ is not None) == on
    assert len(model.support_) and model.support_.max() < n_samples


def test_partial_fit_does_not_split():
    X, y = noisy(n_samples=200)
    model = KernelPerceptron(early_stopping=True).partial_fit(X, y, classes=[0, 1])
    assert model.validation_scores_ is None
    assert model.n_iter_ == 1


def test_verbose_prints_the_validation_scores(capsys):
    X, y = noisy(n_samples=300)
    fit_quietly(
        KernelPerceptron(gamma=GAMMA, early_stopping=True, verbose=1, random_state=0),
        X,
        y,
    )
    out = capsys.readouterr().out
    assert "-- Validation score: " in out
    assert "% of the training part" in out
    assert "-- Stopped: no_improvement" in out
    # the epochs of the run are numbered on from call to call
    assert "-- Epoch 2:" in out


def test_a_split_too_small_raises_before_training():
    X, y = noisy(n_samples=40)
    y[0] = 2  # a class of one example cannot be on both sides
    model = KernelPerceptron(early_stopping=True)
    with pytest.raises(ValueError, match="early_stopping=True sets aside"):
        model.fit(X, y)
    assert not hasattr(model, "classes_")


def test_a_perfect_validation_score_does_not_stop_a_separable_run():
    """On random separable samples, a run whose held-out part is classified
    without a mistake goes on to separate its training part, however many
    epochs after its best score that takes."""
    rng = np.random.RandomState(0)
    late = 0
    for seed in range(12):
        X = rng.uniform(-1, 1, size=(4000, 5))
        normal = rng.standard_normal(5)
        distance = X @ normal / np.linalg.norm(normal)
        X = X[np.abs(distance) >= 0.02][:2500]
        y = (X @ normal > 0).astype(int)
        for estimator in (
            KernelPerceptron(kernel="linear", early_stopping=True, random_state=seed),
            MarginPerceptron(early_stopping=True, random_state=seed),
        ):
            fit_quietly(estimator, X, y)
            if estimator.best_validation_score_ == 1.0:
                assert estimator.converged_
                assert estimator.stop_reason_ == "separated"
                best = estimator.validation_scores_.index(1.0) + 1
                patience = estimator.n_iter_no_change
                if patience == "auto":
                    patience = AUTO_PATIENCE
                late += estimator.n_iter_ > best + patience
    # runs that a count from the best score alone would have stopped
    assert late >= 3


def test_auto_splits_the_perceptrons_samples_of_more_than_2000_examples():
    """MarginPerceptron(early_stopping="auto") is early stopping on a sample
    of more than 2,000 examples, to the bit, and the rule on the training
    data on one of 2,000."""
    for n_samples, on in [(2001, True), (2000, False)]:
        X, y = noisy(n_samples=n_samples, random_state=1)
        auto = fit_quietly(MarginPerceptron(random_state=0), X, y)
        explicit = fit_quietly(
            MarginPerceptron(early_stopping=on, random_state=0), X, y
        )
        assert (auto.validation_scores_ is not None) == on
        assert_array_equal(auto.coef_, explicit.coef_)
        assert_array_equal(auto.intercept_, explicit.intercept_)
        assert auto.n_iter_ == explicit.n_iter_


@pytest.mark.parametrize("estimator", [MarginPerceptron, KernelPerceptron])
def test_auto_keeps_the_rule_where_the_split_cannot_be_made(estimator):
    """A class of one example cannot be on both sides of a stratified split:
    early_stopping=True refuses the sample, "auto" trains it on the rule."""
    X, y = noisy(n_samples=2500, random_state=2)
    y[0] = 2
    params = dict(kernel="linear") if estimator is KernelPerceptron else {}
    with pytest.raises(ValueError, match="every class on both sides"):
        estimator(early_stopping=True, **params).fit(X, y)
    auto = fit_quietly(estimator(random_state=0, **params), X, y)
    assert auto.validation_scores_ is None
    rule = fit_quietly(estimator(early_stopping=False, random_state=0, **params), X, y)
    assert_array_equal(auto.decision_function(X), rule.decision_function(X))


@pytest.mark.parametrize(
    "estimator",
    [
        MarginPerceptron(random_state=0),
        KernelPerceptron(gamma=GAMMA, random_state=0),
        KernelPerceptron(gamma=GAMMA, budget=50, random_state=0),
    ],
    ids=["linear", "kernel", "budget"],
)
def test_a_fit_draws_its_stratified_split_once(estimator):
    """The split is drawn once per fit (4 ms on 10,000 examples), not once
    to learn whether it can be made and again to use it."""
    X, y = noisy(n_samples=2500, random_state=3)
    draw = skperc._early_stopping.train_test_split
    with mock.patch.object(
        skperc._early_stopping, "train_test_split", wraps=draw
    ) as drawn:
        fit_quietly(estimator, X, y)
    assert estimator.validation_scores_ is not None
    assert drawn.call_count == 1


def same_model(model, expected):
    """The same function, to the bit, and the same counts."""
    assert_array_equal(model.support_, expected.support_)
    assert_array_equal(bits(model.support_vectors_), bits(expected.support_vectors_))
    assert_array_equal(model.dual_coef_, expected.dual_coef_)
    assert_array_equal(model.n_updates_, expected.n_updates_)
    assert model.n_iter_ == expected.n_iter_


@every_early_stopped_run
def test_refit_is_a_fit_of_the_whole_sample_for_the_epochs_of_the_best_score(
    form, n_classes, budget, seed
):
    # The second fit trains on every example, the held-out part included,
    # for as many epochs as the early-stopped run took to its best score,
    # and answers with their mean: the same bits as that fit made by hand.
    # The scores, and the reason the run stopped, stay the early-stopped
    # run's, and the epochs it was given raise no ConvergenceWarning.
    X, y = noisy(n_classes=n_classes, random_state=seed)
    X = INPUTS[form](X)
    params = dict(gamma=GAMMA, early_stopping=True, random_state=seed, **budget)
    stopped = fit_quietly(KernelPerceptron(refit=False, **params), X, y)
    assert not stopped.converged_ and stopped.stop_reason_ == "no_improvement"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        refitted = KernelPerceptron(refit=True, **params).fit(X, y)
    best = int(np.argmax(stopped.validation_scores_)) + 1
    by_hand = KernelPerceptron(
        **{**params, "early_stopping": False},
        max_iter=best,
        average=True,
        tol=None,
    )
    same_model(refitted, fit_quietly(by_hand, X, y))
    assert refitted.n_iter_ == best
    assert refitted.validation_scores_ == stopped.validation_scores_
    assert refitted.best_validation_score_ == stopped.best_validation_score_
    assert refitted.stop_reason_ == "no_improvement"
    # the held-out examples are in the second fit's sample: some of them
    # update (the early-stopped run's support holds none of them)
    _, validation = split(y, 0.1, seed)
    if "budget" not in budget:
        assert not np.isin(stopped.support_, validation).any()
        assert np.isin(refitted.support_, validation).any()


def test_refit_after_a_separated_training_part_fits_the_whole_sample_to_separation():
    # A run that separates its training part answers with its last
    # function; the second fit is then the fit without early stopping.
    X, y = wide_margin_sample()
    params = dict(kernel="linear", early_stopping=True, random_state=0)
    refitted = KernelPerceptron(refit=True, **params).fit(X, y)
    assert KernelPerceptron(**params).fit(X, y).converged_
    expected = KernelPerceptron(**{**params, "early_stopping": False}).fit(X, y)
    same_model(refitted, expected)
    assert refitted.converged_ and refitted.stop_reason_ == "separated"
    assert refitted.margin_[0] > 0


@pytest.mark.parametrize(
    "n_samples, kernel, budget, refits",
    [
        (2_500, "rbf", None, True),
        (5_000, "rbf", None, True),
        (5_001, "rbf", None, False),
        # a budget that binds: the second fit would be a whole budgeted fit,
        # whether the support fills it or not (less than half the examples)
        (2_500, "rbf", 40, False),
        (2_500, "rbf", 1_200, False),
        # a budget that the support stays below changes nothing
        (2_500, "rbf", 2_400, True),
        # nor does one of the loop of kernel columns, which removes
        (2_500, "laplacian", 40, True),
    ],
)
def test_refit_auto_fits_again_samples_of_at_most_5000_that_no_budget_binds(
    n_samples, kernel, budget, refits
):
    X, y = noisy(n_samples=n_samples)
    params = dict(gamma=GAMMA, kernel=kernel, budget=budget, random_state=0)
    default = fit_quietly(KernelPerceptron(**params), X, y)
    same_model(default, fit_quietly(KernelPerceptron(refit=refits, **params), X, y))
    other = fit_quietly(KernelPerceptron(refit=not refits, **params), X, y)
    assert default.n_updates_.sum() != other.n_updates_.sum()
    assert default.validation_scores_ == other.validation_scores_


@pytest.mark.parametrize(
    "n_samples, early_stopping", [(300, "auto"), (300, False), (2500, False)]
)
def test_refit_without_early_stopping_changes_nothing(n_samples, early_stopping):
    # "auto" splits samples of more than 2,000 examples only
    X, y = noisy(n_samples=n_samples)
    params = dict(gamma=GAMMA, early_stopping=early_stopping, random_state=0)
    plain = fit_quietly(KernelPerceptron(**params), X, y)
    refitted = fit_quietly(KernelPerceptron(refit=True, **params), X, y)
    same_model(refitted, plain)
    assert refitted.validation_scores_ is None


@pytest.mark.parametrize("average", ["auto", True, False])
def test_refit_continues_the_run_that_warm_start_continues(average):
    # average=False answers with the last function, and its run keeps no
    # averaging sums for the second fit to continue
    X, y = noisy(n_samples=600)
    first, second = (X[:300], y[:300]), (X[300:], y[300:])
    params = dict(
        gamma=GAMMA,
        early_stopping=True,
        warm_start=True,
        average=average,
        random_state=0,
    )
    model = fit_quietly(KernelPerceptron(refit=True, **params), *first)
    before = copy.deepcopy(model)
    fit_quietly(model, *second)
    stopped = fit_quietly(copy.deepcopy(before).set_params(refit=False), *second)
    by_hand = copy.deepcopy(before).set_params(
        refit=False,
        early_stopping=False,
        max_iter=int(np.argmax(stopped.validation_scores_)) + 1,
        average=average is not False,
        tol=None,
    )
    same_model(model, fit_quietly(by_hand, *second))
    # the update counts go on from the first call's
    assert (model.n_updates_ > before.n_updates_).all()


def test_refit_answers_with_the_last_function_under_average_false():
    X, y = noisy(n_samples=600)
    params = dict(gamma=GAMMA, early_stopping=True, average=False, random_state=0)
    stopped = fit_quietly(KernelPerceptron(refit=False, **params), X, y)
    refitted = fit_quietly(KernelPerceptron(refit=True, **params), X, y)
    by_hand = dict(
        params,
        early_stopping=False,
        max_iter=int(np.argmax(stopped.validation_scores_)) + 1,
        tol=None,
    )
    same_model(refitted, fit_quietly(KernelPerceptron(**by_hand), X, y))
    averaged = fit_quietly(KernelPerceptron(**{**by_hand, "average": True}), X, y)
    assert not np.array_equal(refitted.dual_coef_, averaged.dual_coef_)


@pytest.mark.parametrize(
    "n_samples, early_stopping, kernel, budget, copied",
    [
        (300, "auto", "rbf", None, False),
        (300, True, "rbf", None, True),
        (2500, "auto", "rbf", None, True),
        # "auto" splits any sample that a budget binds
        (300, "auto", "rbf", 20, True),
        # which with this kernel none does
        (300, "auto", "laplacian", 20, False),
    ],
)
def test_refit_copies_a_warm_model_only_where_early_stopping_may_end_the_run(
    n_samples, early_stopping, kernel, budget, copied
):
    # the second fit continues a copy of the model as it stood before the
    # run: a deep copy of every fitted array, made for nothing where "auto"
    # will not split the sample
    X, y = noisy(n_samples=n_samples)
    model = KernelPerceptron(
        gamma=GAMMA,
        kernel=kernel,
        budget=budget,
        early_stopping=early_stopping,
        refit=True,
        warm_start=True,
        max_iter=3,
        random_state=0,
    )
    fit_quietly(model, X, y)
    with mock.patch.object(copy, "deepcopy", wraps=copy.deepcopy) as deepcopy:
        fit_quietly(model, X, y)
    copies = [
        call
        for call in deepcopy.call_args_list
        if isinstance(call.args[0], KernelPerceptron)
    ]
    assert bool(copies) == copied


def test_refit_computes_each_kernel_column_once_over_its_two_runs():
    # the second fit runs on the points of the first, and reads from the
    # first run's cache the columns that run computed rather than computing
    # them again: the kernel records the point of each column it is called
    # for, which the last feature numbers
    X, y = noisy(n_samples=300)
    numbered = np.hstack([X, np.arange(len(X))[:, None]])
    calls = collections.Counter()

    def kernel(a, b):
        calls[int(b[-1])] += 1
        return np.exp(-GAMMA * np.sum((a[:-1] - b[:-1]) ** 2))

    def columns(**params):
        calls.clear()
        params = {"early_stopping": True, **params}
        model = KernelPerceptron(kernel=kernel, random_state=0, **params)
        model = fit_quietly(model, numbered, y)
        return model, {
            j: count // len(X) for j, count in calls.items() if count >= len(X)
        }

    refitted, computed = columns(refit=True)
    _, first = columns()
    epochs = int(np.argmax(refitted.validation_scores_)) + 1
    by_hand, second = columns(
        early_stopping=False, max_iter=epochs, average=True, tol=None
    )
    same_model(refitted, by_hand)
    assert set(first) & set(second)
    assert set(computed) == set(first) | set(second)
    assert max(computed.values()) == 1
    # and the fitted model keeps no cache
    assert not any(isinstance(value, ColumnCache) for value in vars(refitted).values())


def test_refit_says_so_when_verbose(capsys):
    X, y = noisy(n_samples=300)
    fit_quietly(
        KernelPerceptron(
            gamma=GAMMA, early_stopping=True, refit=True, verbose=1, random_state=0
        ),
        X,
        y,
    )
    out = capsys.readouterr().out
    assert out.index("-- Validation score: ") < out.index(
        "-- Fit again on the whole sample: "
    )
    # one line for the second fit, and the reason of the run that chose
    # its epochs
    assert out.count("-- Stopped: ") == 1
    assert out.rstrip().endswith("-- Stopped: no_improvement")
