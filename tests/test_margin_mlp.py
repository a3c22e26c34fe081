import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_mlp import example_gradient, he_init, reference_fit
from sklearn.base import clone
from sklearn.datasets import load_digits, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network._stochastic_optimizers import (
    AdamOptimizer,
    SGDOptimizer,
)
from sklearn.utils._param_validation import InvalidParameterError

from skperc import MarginMLPClassifier
from skperc.schedules import (
    ConstantThreshold,
    ScaleThreshold,
    SublinearThreshold,
    ThresholdSchedule,
)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=90, centers=3, n_features=5, random_state=0)
    return X, y


def plain_gd(**params):
    """The estimator as plain gradient descent over batches in order."""
    return MarginMLPClassifier(
        solver="sgd", momentum=0.0, shuffle=False, random_state=0, **params
    )


@pytest.mark.parametrize(
    "beta, reference_beta",
    [(0.0, 0.0), (1.0, 1.0), ("sublinear", "power"), (ScaleThreshold(), "scale")],
)
@pytest.mark.parametrize("hidden", [(7,), (6, 4)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_matches_the_reference_network(
    blobs, beta, reference_beta, hidden, weighted, alpha
):
    X, y = blobs
    weight = np.random.RandomState(1).uniform(0, 2, len(y)) if weighted else None
    clf = plain_gd(
        hidden_layer_sizes=hidden,
        beta=beta,
        c=0.3,
        alpha=alpha,
        learning_rate_init=0.05,
        batch_size=32,
        max_iter=4,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y, sample_weight=weight)

    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    coefs, intercepts = he_init([5, *hidden, 3], seed=0)
    curve, steps = reference_fit(
        X,
        Y,
        np.ones(len(y)) if weight is None else weight,
        coefs,
        intercepts,
        beta=reference_beta,
        c=0.3,
        learning_rate=0.05,
        batch_size=32,
        epochs=4,
        alpha=alpha,
    )
    assert clf.n_updates_ == steps == 4 * 3
    assert clf.t_ == 4 * 90
    for ours, theirs in zip(
        clf.coefs_ + clf.intercepts_, coefs + intercepts, strict=True
    ):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.loss_curve_, curve, rtol=1e-10)
    # the reference moved: the comparison could have failed
    assert not np.allclose(coefs[0], he_init([5, *hidden, 3], seed=0)[0][0])


def test_invscaling_matches_the_reference_network(blobs):
    """learning_rate="invscaling": the step of each epoch is
    learning_rate_init / (t + 1) ** power_t, t the examples seen before it,
    as in MLPClassifier."""
    X, y = blobs
    params = dict(hidden_layer_sizes=(7,), learning_rate_init=0.05, batch_size=32)
    clf = plain_gd(learning_rate="invscaling", power_t=0.25, max_iter=4, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    coefs, intercepts = he_init([5, 7, 3], seed=0)
    curve, _ = reference_fit(
        X,
        Y,
        np.ones(len(y)),
        coefs,
        intercepts,
        beta=1.0,
        c=0.5,
        learning_rate=lambda seen: 0.05 / (seen + 1) ** 0.25,
        batch_size=32,
        epochs=4,
    )
    for ours, theirs in zip(
        clf.coefs_ + clf.intercepts_, coefs + intercepts, strict=True
    ):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.loss_curve_, curve, rtol=1e-10)
    # the schedule changed the steps: a constant one ends elsewhere
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        constant = plain_gd(max_iter=4, **params).fit(X, y)
    assert not np.allclose(constant.coefs_[0], clf.coefs_[0])


def steps_and_gradients(clf, batches):
    """partial_fit of clf (three classes, random_state=0) on each batch in
    turn: the change that each call made to every weight array, and the
    gradients of the loss of beta=1 at the weights it started from, by the
    reference (coefs first, then intercepts)."""
    units = [batches[0][0].shape[1], *clf.hidden_layer_sizes, 3]
    coefs, intercepts = he_init(units, seed=0)
    steps, gradients = [], []
    for X, y in batches:
        Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
        results = [
            example_gradient(coefs, intercepts, x, target, 1.0)
            for x, target in zip(X, Y, strict=True)
        ]
        gradients.append(
            [
                sum(r[which][layer] for r in results) / len(X)
                for which in (1, 2)
                for layer in range(len(coefs))
            ]
        )
        before = coefs + intercepts
        clf.partial_fit(X, y, classes=[0, 1, 2])
        coefs = [W.copy() for W in clf.coefs_]
        intercepts = [b.copy() for b in clf.intercepts_]
        steps.append([a - b for a, b in zip(coefs + intercepts, before, strict=True)])
    return steps, gradients


def three_batches(blobs):
    X, y = blobs
    return [(X[start : start + 30], y[start : start + 30]) for start in (0, 30, 60)]


def test_adam_uses_beta_1_beta_2_and_epsilon(blobs):
    """Adam's steps (Kingma and Ba, Algorithm 1): m = beta_1 m + (1 - beta_1)
    g, v = beta_2 v + (1 - beta_2) g^2, and the step of call t is -eta
    sqrt(1 - beta_2^t) / (1 - beta_1^t) m / (sqrt(v) + epsilon)."""
    rates = dict(beta_1=0.5, beta_2=0.8, epsilon=0.05)

    def network(**params):
        return MarginMLPClassifier(
            (6,), learning_rate_init=0.1, shuffle=False, random_state=0, **params
        )

    steps, gradients = steps_and_gradients(network(**rates), three_batches(blobs))
    m = [np.zeros_like(g) for g in gradients[0]]
    v = [np.zeros_like(g) for g in gradients[0]]
    for t, (step, grads) in enumerate(zip(steps, gradients, strict=True), start=1):
        m = [0.5 * a + 0.5 * g for a, g in zip(m, grads, strict=True)]
        v = [0.8 * a + 0.2 * g * g for a, g in zip(v, grads, strict=True)]
        eta = 0.1 * np.sqrt(1 - 0.8**t) / (1 - 0.5**t)
        for made, a, b in zip(step, m, v, strict=True):
            np.testing.assert_allclose(
                made, -eta * a / (np.sqrt(b) + 0.05), rtol=1e-9, atol=1e-12
            )
    # Adam's default rates make other steps: the comparison could have failed
    default, _ = steps_and_gradients(network(), three_batches(blobs))
    assert not np.allclose(default[2][0], steps[2][0], rtol=1e-3)


@pytest.mark.parametrize("nesterov", [True, False])
def test_sgd_momentum_is_nesterovs_or_the_classical_one(blobs, nesterov):
    """solver="sgd": the velocity v = mu v - eta g, and the step is v
    (classical momentum) or mu v - eta g (Nesterov's, which looks ahead)."""
    clf = MarginMLPClassifier(
        (6,),
        solver="sgd",
        momentum=0.7,
        nesterovs_momentum=nesterov,
        learning_rate_init=0.1,
        shuffle=False,
        random_state=0,
    )
    steps, gradients = steps_and_gradients(clf, three_batches(blobs))
    velocity = [np.zeros_like(g) for g in gradients[0]]
    for step, grads in zip(steps, gradients, strict=True):
        velocity = [0.7 * u - 0.1 * g for u, g in zip(velocity, grads, strict=True)]
        expected = (
            [0.7 * u - 0.1 * g for u, g in zip(velocity, grads, strict=True)]
            if nesterov
            else velocity
        )
        for made, want in zip(step, expected, strict=True):
            np.testing.assert_allclose(made, want, rtol=1e-9, atol=1e-12)


def test_adaptive_learning_rate_divides_the_step_until_1e_6(blobs):
    """learning_rate="adaptive" (solver="sgd"): where the stopping rule would
    end the run, the step is divided by 5 instead, and the run ends once the
    step is at most 1e-6, as in MLPClassifier."""
    X, y = blobs
    params = dict(
        hidden_layer_sizes=(6,),
        solver="sgd",
        learning_rate_init=1e-3,
        # no epoch gains tol: the rule fires n_iter_no_change + 1 epochs
        # after the first, and as many epochs after each division
        tol=100.0,
        n_iter_no_change=2,
        max_iter=100,
        random_state=0,
    )
    constant = MarginMLPClassifier(**params).fit(X, y)
    adaptive = MarginMLPClassifier(learning_rate="adaptive", **params).fit(X, y)
    assert constant.n_iter_ == 1 + 3
    # 1e-3 / 5**5 is the first step at most 1e-6: five divisions, and the
    # sixth firing ends the run
    assert adaptive.n_iter_ == 1 + 6 * 3
    assert adaptive.loss_curve_[:4] == constant.loss_curve_


def test_the_output_units_make_beta_perceptron_updates(blobs):
    """Section 3: gradient descent on ReLU(beta - y w.G(x)), one example at
    a time, moves each output unit as the beta-perceptron does on G(x): by
    eta y G(x) where y w.G(x) <= beta, not at all elsewhere."""
    X, y = blobs
    eta, beta = 0.1, 1.0
    clf = plain_gd(
        hidden_layer_sizes=(8,), beta=beta, batch_size=1, learning_rate_init=eta
    )
    clf.partial_fit(X[:30], y[:30], classes=[0, 1, 2])
    moved = []
    for x, label in zip(X[30:], y[30:], strict=True):
        W, b = clf.coefs_[-1].copy(), clf.intercepts_[-1].copy()
        hidden = np.maximum(x @ clf.coefs_[0] + clf.intercepts_[0], 0)
        signs = np.where(np.arange(3) == label, 1.0, -1.0)
        update = np.where(signs * (hidden @ W + b) <= beta, signs, 0.0)
        clf.partial_fit(x[None], [label])
        np.testing.assert_allclose(clf.coefs_[-1], W + eta * np.outer(hidden, update))
        np.testing.assert_allclose(clf.intercepts_[-1], b + eta * update)
        moved.extend(update != 0)
    # both cases were met
    assert 0 < np.mean(moved) < 1


def test_the_sublinear_margin_grows_as_t_to_the_one_minus_c(blobs):
    X, y = blobs

    class Recorder(ThresholdSchedule):
        radius_rule = "none"
        calls = []

        def threshold(self, t, radius):
            self.calls.append(t)
            return 0.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain_gd(beta=Recorder(), batch_size=10, max_iter=2).fit(X, y)
    # the (t + 1)-th step asks for the threshold of update t + 1
    assert Recorder.calls == list(range(1, 19))

    schedule = SublinearThreshold(c=0.25)
    assert [schedule.threshold(t + 1, 0.0) for t in (0, 1, 16)] == [0.0, 1.0, 8.0]


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_float32_is_trained_in_float32(blobs, alpha):
    X, y = blobs
    clf32 = MarginMLPClassifier((8,), alpha=alpha, max_iter=5, random_state=0)
    clf64 = MarginMLPClassifier((8,), alpha=alpha, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf32.fit(X.astype(np.float32), y)
        clf64.fit(X, y)
    for w in clf32.coefs_ + clf32.intercepts_:
        assert w.dtype == np.float32
    for w in clf64.coefs_ + clf64.intercepts_:
        assert w.dtype == np.float64
    assert clf32.decision_function(X.astype(np.float32)).dtype == np.float32
    for w32, w64 in zip(clf32.coefs_, clf64.coefs_, strict=True):
        np.testing.assert_allclose(w32, w64, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_sparse_input_gives_the_dense_model(blobs, alpha):
    X, y = blobs
    X = np.where(X > 0, X, 0.0)
    params = dict(hidden_layer_sizes=(6,), alpha=alpha, max_iter=3, batch_size=16)
    dense = plain_gd(**params)
    sparse = plain_gd(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense.fit(X, y)
        sparse.fit(sp.csr_matrix(X), y)
    for a, b in zip(dense.coefs_, sparse.coefs_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_binary_problems_have_one_output_unit():
    X, y = make_blobs(n_samples=60, centers=[[-3, 0], [3, 0]], random_state=0)
    labels = np.array(["no", "yes"])[y]
    clf = MarginMLPClassifier((8,), learning_rate_init=0.01, random_state=0)
    clf.fit(X, labels)
    assert clf.n_outputs_ == 1 and clf.coefs_[-1].shape == (8, 1)
    scores = clf.decision_function(X)
    assert scores.shape == (60,)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores >= 0, "yes", "no"))
    assert clf.score(X, labels) == 1.0


def test_partial_fit_on_chunks_is_one_epoch_of_fit(blobs):
    X, y = blobs
    whole = plain_gd(hidden_layer_sizes=(6,), batch_size=15, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        whole.fit(X, y)
    stream = plain_gd(hidden_layer_sizes=(6,), batch_size=15)
    for start in range(0, 90, 30):
        stream.partial_fit(
            X[start : start + 30], y[start : start + 30], classes=[0, 1, 2]
        )
    assert stream.n_updates_ == whole.n_updates_ == 6
    for a, b in zip(whole.coefs_, stream.coefs_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_partial_fit_checks_its_classes(blobs):
    X, y = blobs
    clf = MarginMLPClassifier((4,))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    with pytest.raises(ValueError, match=r"labels \[2\] that are not in classes"):
        clf.partial_fit(X, y, classes=[0, 1])
    clf.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="not the same as on the first call"):
        clf.partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(AttributeError, match="has no attribute 'partial_fit'") as info:
        MarginMLPClassifier(early_stopping=True).partial_fit(X, y, classes=[0, 1, 2])
    assert "not available with early_stopping=True" in str(info.value.__cause__)


def test_convergence_warning_and_stopping_rule(blobs):
    X, y = blobs
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        MarginMLPClassifier((4,), max_iter=3, random_state=0).fit(X, y)
    clf = MarginMLPClassifier(
        (8,), learning_rate_init=0.01, n_iter_no_change=5, max_iter=1000, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf.fit(X, y)
    assert clf.n_iter_ < 1000 and len(clf.loss_curve_) == clf.n_iter_
    # stopped after n_iter_no_change + 1 epochs without an improvement of tol
    best = np.minimum.accumulate(clf.loss_curve_)
    last_gain = np.flatnonzero(np.array(clf.loss_curve_[1:]) < best[:-1] - clf.tol)
    assert clf.n_iter_ - (last_gain[-1] + 2) == clf.n_iter_no_change + 1
    assert clf.best_loss_ == min(clf.loss_curve_)


def test_a_moving_threshold_runs_its_max_iter_epochs():
    # On digits the loss of beta="sublinear" rises after a few epochs while the
    # margin grows; watched like a constant margin's, it would stop the run
    # early, far from trained.
    X, y = load_digits(return_X_y=True)
    clf = MarginMLPClassifier((32,), beta="sublinear", max_iter=40, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf.fit(X, y)
    assert clf.n_iter_ == 40 and clf.best_loss_ is None
    best, count, stop = np.inf, 0, None
    for epoch, loss in enumerate(clf.loss_curve_, start=1):
        count = count + 1 if loss > best - clf.tol else 0
        best = min(best, loss)
        if count > clf.n_iter_no_change:
            stop = epoch
            break
    assert stop is not None and stop < 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cut = clone(clf).set_params(max_iter=stop).fit(X, y)
    assert clf.score(X, y) > cut.score(X, y) + 0.05


def test_early_stopping_keeps_the_best_epoch():
    X, y = load_digits(return_X_y=True)
    clf = MarginMLPClassifier(
        (32,),
        beta="sublinear",
        early_stopping=True,
        n_iter_no_change=3,
        max_iter=200,
        random_state=0,
    ).fit(X, y)
    assert clf.n_iter_ < 200 and len(clf.validation_scores_) == clf.n_iter_
    assert clf.best_validation_score_ == max(clf.validation_scores_)
    assert clf.best_loss_ is None
    # the kept weights are those of the best epoch, not of the last
    best_epoch = clf.validation_scores_.index(clf.best_validation_score_) + 1
    again = MarginMLPClassifier(
        (32,),
        beta="sublinear",
        early_stopping=True,
        n_iter_no_change=200,
        max_iter=best_epoch,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again.fit(X, y)
    for a, b in zip(clf.coefs_, again.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_warm_start_continues_the_run(blobs):
    X, y = blobs
    clf = MarginMLPClassifier((6,), max_iter=2, warm_start=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
        first = [w.copy() for w in clf.coefs_]
        clf.fit(X, y)
    assert len(clf.loss_curve_) == 4 and clf.n_iter_ == 2 and clf.n_updates_ == 4
    assert not np.allclose(first[0], clf.coefs_[0])
    with pytest.raises(ValueError, match="same classes"):
        clf.fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="5 features"):
        clf.fit(X[:, :3], y)


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(beta=-1.0), InvalidParameterError, "beta"),
        (dict(beta="scale"), InvalidParameterError, "beta"),
        (dict(beta="sublinear", c=1.0), InvalidParameterError, "'c'"),
        (dict(hidden_layer_sizes=(4, 0)), ValueError, "positive integers"),
        (dict(solver="lbfgs"), InvalidParameterError, "solver"),
        (dict(alpha=-1e-4), InvalidParameterError, "alpha"),
        (dict(learning_rate="optimal"), InvalidParameterError, "learning_rate"),
        (dict(power_t=-0.5), InvalidParameterError, "power_t"),
        (dict(nesterovs_momentum="yes"), InvalidParameterError, "nesterovs"),
        (dict(beta_1=1.0), InvalidParameterError, "beta_1"),
        (dict(beta_2=-0.1), InvalidParameterError, "beta_2"),
        (dict(epsilon=0.0), InvalidParameterError, "epsilon"),
    ],
)
def test_bad_parameters_are_refused(blobs, params, error, match):
    with pytest.raises(error, match=match):
        MarginMLPClassifier(**params).fit(*blobs)


def test_bad_input_is_refused(blobs):
    X, y = blobs

    class Sideways(ThresholdSchedule):
        radius_rule = "sideways"

    with pytest.raises(ValueError, match="radius_rule must be one of"):
        MarginMLPClassifier(beta=Sideways()).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MarginMLPClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="NaN"):
        MarginMLPClassifier().fit(np.where(X > 5, np.nan, X), y)


def test_scikit_learn_optimizers_update_in_place():
    """The solvers are private scikit-learn API: guard what is used of them."""
    for optimizer in (AdamOptimizer, SGDOptimizer):
        params = [np.ones(3, dtype=np.float32), np.zeros(2, dtype=np.float32)]
        kept = list(params)
        optimizer(params, 0.1).update_params(
            params, [np.ones(3, np.float32), -np.ones(2, np.float32)]
        )
        assert all(p is k for p, k in zip(params, kept, strict=True))
        assert (params[0] < 1).all() and (params[1] > 0).all()
        assert params[0].dtype == np.float32


def test_a_continued_run_may_change_beta_and_early_stopping(blobs):
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MarginMLPClassifier((8,), beta="sublinear", max_iter=5, warm_start=True)
        clf.fit(X, y)
        clf.set_params(beta=1.0).fit(X, y)
        assert clf.best_loss_ == min(clf.loss_curve_[5:])
        clf.set_params(early_stopping=True).fit(X, y)
        assert len(clf.validation_scores_) == clf.n_iter_
        online = MarginMLPClassifier((8,), beta="sublinear")
        online.partial_fit(X, y, classes=np.unique(y))
        online.set_params(beta=1.0).partial_fit(X, y)
        assert online.best_loss_ == online.loss_curve_[-1]


def test_beta_power_warns_and_is_the_sublinear_threshold(blobs):
    X, y = blobs
    params = dict(hidden_layer_sizes=(6,), c=0.3, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sublinear = MarginMLPClassifier(beta="sublinear", **params).fit(X, y)
        with pytest.warns(FutureWarning, match='beta="sublinear"') as record:
            power = MarginMLPClassifier(beta="power", **params).fit(X, y)
    # the warning points at the caller
    assert record[0].filename == __file__
    for a, b in zip(sublinear.coefs_, power.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


# --- internal clocks of the hidden units ------------------------------------


class _Recorder(ThresholdSchedule):
    """sqrt of the update number, recording every call."""

    radius_rule = "none"

    def __init__(self):
        self.calls = []

    def threshold(self, t, radius):
        self.calls.append(t)
        return 0.05 * (t - 1) ** 0.5


def test_a_hidden_unit_updates_when_its_incoming_weights_get_a_gradient(blobs):
    """With plain gradient descent one example at a time, a unit's incoming
    weights move exactly on its updates, and its clock counts them."""
    X, y = blobs
    clf = plain_gd(
        hidden_layer_sizes=(8,),
        hidden_beta=SublinearThreshold(c=0.5),
        batch_size=1,
        learning_rate_init=0.05,
    )
    clf.partial_fit(X[:5], y[:5], classes=[0, 1, 2])
    counts = [clf.hidden_n_updates_[0].copy()]
    moved_any = []
    for x, label in zip(X[5:], y[5:], strict=True):
        before = np.vstack([clf.coefs_[0], clf.intercepts_[0]]).copy()
        count = clf.hidden_n_updates_[0].copy()
        expected_beta = np.array(
            [SublinearThreshold(c=0.5).threshold(n + 1, 0) for n in count]
        )
        clf.partial_fit(x[None], [label])
        np.testing.assert_allclose(clf.hidden_thresholds_[0], expected_beta)
        moved = (np.vstack([clf.coefs_[0], clf.intercepts_[0]]) != before).any(axis=0)
        np.testing.assert_array_equal(clf.hidden_n_updates_[0] - count, moved)
        moved_any.append(moved)
        counts.append(clf.hidden_n_updates_[0].copy())
    moved_any = np.array(moved_any)
    # units moved on some steps and not on others: the check could fail
    assert 0 < moved_any.mean() < 1
    # the clocks differ between units
    assert len(np.unique(counts[-1])) > 1


def test_hidden_units_are_translated_by_their_thresholds(blobs):
    X, y = blobs
    schedule = _Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MarginMLPClassifier(
            (7, 5), hidden_beta=schedule, max_iter=5, random_state=0
        ).fit(X, y)
    a = X
    for layer in range(2):
        z = a @ clf.coefs_[layer] + clf.intercepts_[layer]
        a = np.maximum(z - clf.hidden_thresholds_[layer], 0)
        assert clf.hidden_thresholds_[layer].shape == ((7, 5)[layer],)
        assert np.all(clf.hidden_n_updates_[layer] <= clf.n_updates_)
        # each threshold is the schedule's at an update count of its unit
        counts = np.rint((clf.hidden_thresholds_[layer] / 0.05) ** 2)
        assert np.all(counts <= clf.hidden_n_updates_[layer])
        assert np.all(counts >= clf.hidden_n_updates_[layer] - 1)
    outputs = a @ clf.coefs_[2] + clf.intercepts_[2]
    np.testing.assert_allclose(clf.decision_function(X), outputs, rtol=1e-12)
    # the schedule was asked with each unit's update count + 1
    assert min(schedule.calls) == 1 and max(schedule.calls) <= clf.n_updates_ + 1
    assert clf.hidden_thresholds_[0].std() > 0


def test_zero_clocks_change_nothing(blobs):
    X, y = blobs
    params = dict(hidden_layer_sizes=(6, 4), max_iter=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = MarginMLPClassifier(**params).fit(X, y)
        clocked = MarginMLPClassifier(hidden_beta=ConstantThreshold(0.0), **params).fit(
            X, y
        )
    assert plain.hidden_n_updates_ is None and plain.hidden_thresholds_ is None
    for a, b in zip(plain.coefs_, clocked.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_clocks_cannot_start_midway(blobs):
    X, y = blobs
    clf = MarginMLPClassifier((4,))
    clf.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="clocks"):
        clf.set_params(hidden_beta=ConstantThreshold(1.0)).partial_fit(X, y)


# --- failures, threads and read-only models ---------------------------------


class _Returning(ThresholdSchedule):
    radius_rule = "none"

    def __init__(self, value=0.0):
        self.value = value

    def threshold(self, t, radius):
        return self.value


@pytest.mark.parametrize("where", ["beta", "hidden_beta"])
@pytest.mark.parametrize("value", [-1.0, np.nan, np.inf])
def test_a_threshold_must_be_finite_and_non_negative(blobs, where, value):
    X, y = blobs
    clf = MarginMLPClassifier((4,), **{where: _Returning(value)})
    with pytest.raises(ValueError, match="finite number >= 0") as error:
        clf.fit(X, y)
    assert "overflow" not in str(error.value) and "Scale" not in str(error.value)
    assert repr(value) in str(error.value)


def test_a_failed_refit_keeps_the_previous_model(blobs):
    from sklearn.exceptions import NotFittedError

    X, y = blobs
    clf = MarginMLPClassifier((8,), max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    state = {k: v for k, v in vars(clf).items()}
    coefs = [w.copy() for w in clf.coefs_]
    predicted = clf.predict(X)
    clf.set_params(solver="sgd", learning_rate_init=1e300)
    with pytest.raises(ValueError, match="non-finite"):
        clf.fit(X, np.array(["a", "b", "c"])[y])
    assert vars(clf).keys() == state.keys()
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    np.testing.assert_array_equal(clf.predict(X), predicted)
    for a, b in zip(clf.coefs_, coefs, strict=True):
        np.testing.assert_array_equal(a, b)
    # a first fit that fails leaves an unfitted estimator; seeded, because
    # about one initialisation in 170 keeps every weight finite under this
    # step and stops on the loss plateau instead
    fresh = MarginMLPClassifier(
        (8,), solver="sgd", learning_rate_init=1e300, random_state=0
    )
    with pytest.raises(ValueError, match="non-finite"):
        fresh.fit(X, y)
    with pytest.raises(NotFittedError):
        fresh.predict(X)


def test_adam_moments_that_overflow_stop_the_fit(blobs):
    """Inputs of 1e200 with the default solver: Adam's second moment of
    the gradients overflowed alone, no error came, and every step after
    was 0, on data of normal scale too. The error comes, and the model
    before the call stays, its solver able to learn."""
    X, y = blobs
    clf = MarginMLPClassifier((8,), max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    coefs = [w.copy() for w in clf.coefs_]
    with warnings.catch_warnings():
        # numpy's own warning of the square that overflows
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="solver's moments.*Scale the input"):
            clf.partial_fit(X * 1e200, y)
        for a, b in zip(clf.coefs_, coefs, strict=True):
            np.testing.assert_array_equal(a, b)
        clf.partial_fit(X, y)
        assert any(
            not np.array_equal(a, b) for a, b in zip(clf.coefs_, coefs, strict=True)
        )
        with pytest.raises(ValueError, match="solver's moments"):
            MarginMLPClassifier((8,), random_state=0).fit(X * 1e200, y)


@pytest.mark.parametrize("hidden_beta", [None, SublinearThreshold()])
def test_partial_fit_does_not_write_into_the_previous_model(blobs, hidden_beta):
    X, y = blobs
    clf = MarginMLPClassifier((6,), hidden_beta=hidden_beta, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    old = dict(vars(clf))
    kept = {
        name: [np.array(a, copy=True) for a in old[name] or []]
        for name in ["coefs_", "intercepts_", "hidden_n_updates_", "loss_curve_"]
    }
    clf.partial_fit(X, y)
    for name, arrays in kept.items():
        for a, b in zip(old[name] or [], arrays, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)
    assert old["_optimizer"].t == 1 and clf._optimizer.t == 2


@pytest.mark.parametrize("hidden_beta", [None, SublinearThreshold()])
def test_partial_fit_continues_a_read_only_loaded_model(blobs, hidden_beta, tmp_path):
    import joblib

    X, y = blobs
    clf = MarginMLPClassifier((6,), hidden_beta=hidden_beta, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    joblib.dump(clf, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    assert not loaded.coefs_[0].flags.writeable
    loaded.partial_fit(X, y)
    clf.partial_fit(X, y)
    for a, b in zip(loaded.coefs_, clf.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def frequent_thread_switches():
    """Threads switched every microsecond, so that races show."""
    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_refits_racing_predict_show_one_model(blobs, frequent_thread_switches):
    import threading

    X, y = blobs
    binary = np.where(y == 0, "a", "b")
    clf = MarginMLPClassifier((8,), max_iter=1, random_state=0).fit(X, y)
    errors = []
    stop = threading.Event()

    def read():
        try:
            while not stop.is_set():
                predicted = clf.predict(X)
                scores = clf.decision_function(X)
                assert set(predicted) <= {0, 1, 2} or set(predicted) <= {"a", "b"}
                assert scores.ndim in (1, 2)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(3)]
    # the filter holds while the readers run: a reader that leaves a
    # catch_warnings block (check_array has one) puts back the filters as it
    # found them, process-wide
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for thread in readers:
            thread.start()
        for _ in range(30):
            clf.fit(X, binary)
            clf.fit(X, y)
        stop.set()
        for thread in readers:
            thread.join()
    assert not errors, errors[:3]


def test_concurrent_partial_fit_counts_every_call_and_reads_see_one_model(
    blobs, frequent_thread_switches
):
    import threading

    X, y = blobs
    clf = MarginMLPClassifier((16,), batch_size=8, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    errors = []
    stop = threading.Event()

    def train():
        try:
            for _ in range(10):
                clf.partial_fit(X, y)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def read():
        try:
            while not stop.is_set():
                assert clf.predict(X).shape == (len(X),)
                assert clf.decision_function(X).shape == (len(X), 3)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(2)]
    trainers = [threading.Thread(target=train) for _ in range(3)]
    for thread in readers + trainers:
        thread.start()
    for thread in trainers:
        thread.join()
    stop.set()
    for thread in readers:
        thread.join()
    assert not errors
    batches = -(-len(X) // 8)
    assert clf.n_updates_ == 31 * batches and clf.t_ == 31 * len(X)
    assert len(clf.loss_curve_) == 31
