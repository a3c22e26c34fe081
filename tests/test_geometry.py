"""Sections 4 and 6 of the compression paper: every certificate checked
from its definition, on many random samples."""

import math
from itertools import product

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.random_projection import GaussianRandomProjection

from skperc.datasets import make_basis_subsets, make_margin_classification
from skperc.geometry import (
    novikoff_trace,
    projection_dimension,
    projection_margin_loss,
    robust_partitions_bound,
    sparse_separation,
    sparse_strategies,
)
from skperc.metrics import margin, optimal_margin


def _random_body(rng, n_features, center, spread):
    """The vertices of a random convex body: a cloud stretched by a random
    linear map, shifted to center."""
    n_points = rng.integers(1, 30)
    stretch = rng.normal(size=(n_features, n_features)) * spread
    return rng.normal(size=(n_points, n_features)) @ stretch + center


def _check_certificate(result, P, Q, eps):
    unit = result.unit
    # the unit is the lemma's sup ||p - q||, or larger
    assert unit >= cdist(P, Q).max() * (1 - 1e-12)
    counts_P, counts_Q = result.counts_P, result.counts_Q
    assert counts_P.min() >= 0 and counts_Q.min() >= 0
    n_updates = counts_P.sum() + counts_Q.sum()
    assert n_updates == result.n_updates <= result.max_updates
    assert result.max_updates <= (10 / eps) ** 2
    if result.outcome == "hyperplane":
        assert n_updates <= (10 / eps) ** 2
        center = result.center
        coef = counts_P @ (P - center) - counts_Q @ (Q - center)
        np.testing.assert_allclose(result.coef, coef, rtol=1e-12, atol=1e-12)
        norm = np.linalg.norm(coef)
        # every vertex, so every point of the hulls, beyond eps / 30
        assert ((P @ coef - result.offset) / norm).min() > eps * unit / 30
        assert ((result.offset - Q @ coef) / norm).min() > eps * unit / 30
    else:
        assert result.outcome == "close"
        assert n_updates == result.max_updates
        for weights, points, point in [
            (result.weights_P, P, result.point_P),
            (result.weights_Q, Q, result.point_Q),
        ]:
            assert weights.min() >= 0
            assert math.isclose(weights.sum(), 1.0)
            np.testing.assert_allclose(weights @ points, point, atol=1e-12)
        distance = np.linalg.norm(result.point_P - result.point_Q)
        assert math.isclose(distance, result.distance)
        assert distance < eps * unit


@pytest.mark.parametrize("n_features", [2, 3, 5, 10])
def test_sparse_separation_gives_a_valid_certificate_on_random_bodies(n_features):
    rng = np.random.default_rng(n_features)
    outcomes = []
    for _ in range(25):
        eps = rng.uniform(0.15, 0.6)
        scale = 10.0 ** rng.uniform(-3, 3)
        offset = rng.normal(size=n_features)
        gap = rng.choice([0.0, 0.5, 3.0, 10.0])
        P = _random_body(rng, n_features, offset * scale, scale)
        Q = _random_body(
            rng, n_features, (offset + gap * rng.normal(size=n_features)) * scale, scale
        )
        result = sparse_separation(P, Q, eps)
        _check_certificate(result, P, Q, eps)
        outcomes.append(result.outcome)
    # both outcomes happen on these bodies
    assert set(outcomes) == {"hyperplane", "close"}


def test_sparse_separation_on_overlapping_and_far_hulls():
    rng = np.random.default_rng(0)
    for n_features, eps in product([2, 4, 8], [0.2, 0.5, 1.0]):
        P = rng.normal(size=(20, n_features))
        # hulls sharing a point: only the close points are possible
        Q = np.vstack([rng.normal(size=(5, n_features)) + 1.0, P[:1]])
        meeting = sparse_separation(P, Q, eps)
        assert meeting.outcome == "close"
        _check_certificate(meeting, P, Q, eps)
        # hulls at distance nearly the unit: only the hyperplane is possible
        far = sparse_separation(P * 1e-3, P * 1e-3 + 100.0, eps)
        assert far.outcome == "hyperplane"
        _check_certificate(far, P * 1e-3, P * 1e-3 + 100.0, eps)


def test_sparse_separation_refuses_bad_input():
    with pytest.raises(ValueError, match="same number of features"):
        sparse_separation([[0.0, 1.0]], [[1.0, 2.0, 3.0]], 0.5)
    with pytest.raises(ValueError, match="eps"):
        sparse_separation([[0.0]], [[1.0]], 1.5)
    with pytest.raises(ValueError, match="NaN|infinity"):
        sparse_separation([[np.nan]], [[1.0]], 0.5)


@pytest.mark.parametrize("n_features", [2, 5, 20])
def test_sparse_strategies_on_games_of_positive_value(n_features):
    rng = np.random.default_rng(n_features)
    for seed in range(10):
        margin_ = rng.uniform(0.05, 0.4)
        V, y = make_margin_classification(
            40, n_features, margin_, radius=rng.uniform(0.5, 5), random_state=seed
        )
        V = y[:, None] * V  # every point on the positive side of w*
        game = sparse_strategies(V)
        T = len(game.updates)
        t = np.arange(1, T + 1)
        assert game.stopped
        # mu_t from the updates alone
        Z = V / np.linalg.norm(V, axis=1).max()
        w = np.cumsum(Z[game.updates], axis=0)
        np.testing.assert_allclose(game.payoffs, np.linalg.norm(w, axis=1) / t)
        assert np.all(game.payoffs <= np.sqrt(3 / t) + 1e-12)
        supports = [np.unique(game.updates[:s]).size for s in t]
        np.testing.assert_array_equal(game.support_sizes, supports)
        assert np.all(game.support_sizes <= t)
        # the Hyperplane player's answer, against the value of the game
        value = margin_ / np.linalg.norm(V, axis=1).max()
        assert math.isclose(np.linalg.norm(game.hyperplane), 1.0)
        assert math.isclose(game.guaranteed_payoff, (Z @ game.hyperplane).min())
        assert value + 1e-12 >= game.guaranteed_payoff >= game.value_bound
        assert game.value_bound == pytest.approx(1 / math.sqrt(3 * T))
        assert T >= 1 / (3 * value**2)


def test_sparse_strategies_on_a_game_of_value_zero():
    rng = np.random.default_rng(0)
    for n_features in [2, 3, 6]:
        V = rng.normal(size=(30, n_features))
        V -= V.mean(axis=0)  # the origin is in the hull: the value is 0
        game = sparse_strategies(V, max_updates=3000)
        assert not game.stopped and game.hyperplane is None
        t = np.arange(1, 3001)
        assert np.all(game.payoffs <= np.sqrt(3 / t) + 1e-12)


def _perceptron_updates(X, y, max_epochs=100_000):
    """Rosenblatt's perceptron, cyclic, recording (index, sign) updates."""
    w = np.zeros(X.shape[1])
    updates = []
    for _ in range(max_epochs):
        mistakes = 0
        for i in range(len(X)):
            if y[i] * (X[i] @ w) <= 0:
                w += y[i] * X[i]
                updates.append((i, y[i]))
                mistakes += 1
        if mistakes == 0:
            return updates
    raise AssertionError("no convergence")


@pytest.mark.parametrize("n_features", [2, 5, 30])
def test_novikoff_trace_of_a_perceptron_run(n_features):
    rng = np.random.default_rng(n_features)
    for seed in range(8):
        eps = rng.uniform(0.02, 0.3)
        radius = 10.0 ** rng.uniform(-2, 2)
        X, y = make_margin_classification(
            60, n_features, eps * radius, radius=radius, random_state=seed
        )
        updates = _perceptron_updates(X, y)
        trace = novikoff_trace(X, updates)
        T = len(updates)
        assert np.all(trace.norms <= trace.bounds * (1 + 1e-12))
        # the optimal margin is at most R ||v_t|| for every t
        assert trace.margin_upper_bound >= eps * radius * (1 - 1e-9)
        assert T <= 1 / eps**2
        # v_T is the convex combination of the signed examples
        signed = y[:, None] * X / radius
        v_T = np.sum([s * X[i] for i, s in updates], axis=0) / (T * radius)
        np.testing.assert_allclose(trace.weights @ signed, v_T, atol=1e-12)
        assert math.isclose(trace.norms[-1], np.linalg.norm(v_T), rel_tol=1e-9)


def test_novikoff_trace_catches_updates_that_are_not_mistakes():
    # updating on every example, mistake or not, grows w linearly
    X, y = make_margin_classification(20, 3, 0.3, random_state=0)
    positive = np.flatnonzero(y == 1)[0]
    trace = novikoff_trace(X, [(positive, 1)] * 10)
    assert np.any(trace.norms > trace.bounds)


def test_novikoff_trace_with_a_threshold():
    X, y = make_margin_classification(50, 4, 0.1, radius=3.0, random_state=1)
    beta = 2.0
    w = np.zeros(4)
    updates = []
    for _ in range(10_000):
        changed = False
        for i in range(len(X)):
            if y[i] * (X[i] @ w) <= beta:
                w += y[i] * X[i]
                updates.append((i, y[i]))
                changed = True
        if not changed:
            break
    trace = novikoff_trace(X, updates, beta=beta)
    assert np.all(trace.norms <= trace.bounds * (1 + 1e-12))


def test_novikoff_trace_refuses_bad_updates():
    X = np.eye(3)
    with pytest.raises(ValueError, match="signs"):
        novikoff_trace(X, [(0, 2)])
    with pytest.raises(ValueError, match="indices"):
        novikoff_trace(X, [(3, 1)])
    with pytest.raises(ValueError, match="pairs"):
        novikoff_trace(X, [(0, 1, 1)])


def test_example_1_is_separated_as_stated_and_below_theorem_7():
    for n, k, seed in product([5, 12, 30], [1, 2, 4], range(3)):
        X, y, coef = make_basis_subsets(n, k, random_state=seed, return_coef=True)
        assert (y == 1).sum() == k
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
        stated = 1 / math.sqrt(2 * (4 * k + 1))
        assert margin(coef, X, y) == pytest.approx(stated)
        eps_star = optimal_margin(X, y)[0]
        assert eps_star >= stated * (1 - 1e-9)
        # all C(n, k) subsets are eps-partitions, fewer than Theorem 7 allows
        assert math.comb(n, k) <= robust_partitions_bound(n, stated)
        # and the perceptron names each by at most 1 / eps*^2 signed points
        assert len(_perceptron_updates(X, y)) <= 1 / eps_star**2


def test_make_basis_subsets_refuses_a_subset_of_all_points():
    with pytest.raises(ValueError, match="n_positive"):
        make_basis_subsets(3, 3)


def test_robust_partitions_bound_counts_signed_multisets():
    assert robust_partitions_bound(10, 0.5) == 22**4
    assert robust_partitions_bound(3, 1.0) == 8
    # a non-integer 1 / eps^2 rounds down: at most 2 updates at eps = 0.6
    assert robust_partitions_bound(3, 0.6) == 8**2


@pytest.mark.parametrize(
    "eps, updates",
    [(0.1, 100), (0.01, 10_000), (0.02, 2_500), (0.05, 400), (0.2, 25)]
    + [(1 / math.sqrt(k), k) for k in range(1, 200)],
)
def test_one_over_eps_squared_is_the_integer_the_float_eps_stands_for(eps, updates):
    """A margin of 0.1 allows 100 updates, of 1 / sqrt(3) 3: the floor of
    1 / eps**2 in floating point gave 99 and 2, and that of the float's
    exact value 9,999 at 0.01 and 9 at 1 / sqrt(10), one update short of
    the margin the user wrote. A bound of (2 (n + 1))^m for m updates."""
    bound = robust_partitions_bound(1, eps)
    assert bound == 4**updates
    k = projection_dimension(1, eps, 0.5)
    assert k == math.ceil(8 / (eps / 3) ** 2 * (updates * math.log(4) + math.log(16)))


def test_projection_dimension_is_of_order_log_n_over_eps_to_the_4():
    k = projection_dimension(100, 0.5, 0.05)
    assert k == math.ceil(72 / 0.25 * (4 * math.log(202) + math.log(2 * 301 / 0.05)))
    assert projection_dimension(10_000, 0.5, 0.05) < 2 * k
    ratio = projection_dimension(100, 0.05, 0.05) / projection_dimension(100, 0.1, 0.05)
    assert 15 < ratio < 17


def test_theorem_8_on_example_1_with_the_k_it_asks_for():
    n, subset_size, delta = 20, 1, 0.1
    eps = 1 / math.sqrt(2 * (4 * subset_size + 1))
    k = projection_dimension(n, eps, delta)
    directions = np.array(
        [
            make_basis_subsets(n, subset_size, random_state=seed, return_coef=True)[2]
            for seed in range(40)
        ]
    )
    X = make_basis_subsets(n, subset_size, random_state=0)[0]
    for seed in range(5):
        A = GaussianRandomProjection(n_components=k, random_state=seed).fit(X)
        measured = projection_margin_loss(A, X, eps * (1 - 1e-9), directions=directions)
        assert measured.n_partitions == len(directions)
        assert measured.kept and measured.worst_margin >= eps / 2
        np.testing.assert_allclose(measured.margins, eps)
        assert measured.worst_loss == pytest.approx(
            (measured.margins - measured.projected_margins).max()
        )
    # two dimensions lose the margin: the measurement can fail
    A = GaussianRandomProjection(n_components=2, random_state=0).fit(X)
    measured = projection_margin_loss(A, X, eps * (1 - 1e-9), directions=directions)
    assert not measured.kept and measured.worst_loss > eps / 2


def test_projection_margin_loss_keeps_only_robust_random_directions():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.05]])
    A = GaussianRandomProjection(n_components=2, random_state=0).fit(X)
    measured = projection_margin_loss(A, X, 0.5, n_directions=200, random_state=0)
    # a margin of 0.5 on the third point needs |w_2| >= 10: none reaches it
    assert measured.n_partitions == 0 and math.isnan(measured.worst_margin)


def test_projection_margin_loss_refuses_a_map_with_an_offset():
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).normal(size=(10, 3)) + 5
    with pytest.raises(ValueError, match="linear map"):
        projection_margin_loss(StandardScaler().fit(X), X, 0.1)
    with pytest.raises(TypeError, match="transform"):
        projection_margin_loss(np.eye(3), X, 0.1)


def test_projection_margin_loss_takes_a_sparse_projection():
    from sklearn.random_projection import SparseRandomProjection

    X, y, w = make_basis_subsets(30, 1, random_state=0, return_coef=True)
    A = SparseRandomProjection(n_components=3000, random_state=0).fit(X)
    measured = projection_margin_loss(A, X, 0.3, directions=[w])
    assert measured.n_partitions == 1 and measured.kept
