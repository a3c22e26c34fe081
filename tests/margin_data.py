"""Linearly separable samples, and the theorems asserted on runs over them."""

import numpy as np


def separable_sample(n_samples, n_features, gap, scale, random_state):
    """Points of norm <= scale, labelled by a random hyperplane through the
    origin, keeping only those at distance >= gap * scale from it."""
    rng = np.random.RandomState(random_state)
    direction = rng.randn(n_features)
    direction /= np.linalg.norm(direction)
    kept = np.empty((0, n_features))
    while len(kept) < n_samples:
        points = rng.uniform(-1, 1, size=(4 * n_samples, n_features))
        points /= np.maximum(1, np.linalg.norm(points, axis=1))[:, None]
        kept = np.vstack([kept, points[np.abs(points @ direction) >= gap]])
    X = scale * kept[:n_samples]
    y = np.where(X @ direction > 0, 1, -1)
    return X, y


# The theorems of Section 2 of "On the Perceptron's Compression", for a run
# that stopped on a sample of radius R and optimal margin eps*; T is the
# number of updates and the margin that of the output.
SLACK = 1 + 1e-7  # eps* comes from a numerical solver


def assert_novikoff(estimator, R, eps):
    assert estimator.n_updates_[0] <= (R / eps) ** 2 * SLACK
    assert estimator.margin_[0] > 0


def assert_theorem_1(estimator, beta, R, eps):
    """The beta-perceptron."""
    assert estimator.n_updates_[0] <= (2 * beta + R**2) / eps**2 * SLACK
    assert estimator.margin_[0] >= beta * eps / (2 * beta + R**2) / SLACK


def assert_theorem_2(estimator, R, eps):
    """The R-independent perceptron."""
    # The proof gives ||w_T||^2 <= T (2 rho^2 + R^2) with rho <= 2R, so
    # T <= 9 R^2 / eps*^2, inside the 10 R^2 / eps*^2 that the paper states.
    assert estimator.n_updates_[0] <= 9 * R**2 / eps**2 * SLACK
    assert estimator.margin_[0] >= eps / 3 / SLACK


def assert_theorem_3(estimator, alpha, R, eps):
    """The infinity-perceptron."""
    T = estimator.n_updates_[0]
    assert T <= (R / eps) ** (2 / (2 - alpha)) * SLACK
    # The statement, for the data scaled to radius 1 ...
    assert (
        estimator.margin_[0] / R
        >= (alpha * (eps / R) / 2 - (eps / R) ** (alpha / (2 - alpha))) / SLACK
    )
    # ... and the sharper bound (1) of its proof, at the final T.
    assert estimator.margin_[0] >= (
        R * 0.5 * ((T + 1) ** alpha - T**alpha - 1) / T ** (alpha / 2) / SLACK
    )
