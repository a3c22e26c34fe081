"""Samples for the margin perceptrons' tests (linearly separable ones, and
one on which the lift "rms" grows), and the theorems asserted on runs over
them."""

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


def growing_lift_sample(n_each, n_classes, random_state):
    """Rows in the order short, longest, nearly as long (n_each short rows
    of norm 1, one of norm 3, n_each of norm 2.9) and random labels: the
    mean of the norms that the lift "rms" follows through the first epoch
    grows past the one the longest row was seen with, so that its lifted
    norm grows after it was seen."""
    rng = np.random.RandomState(random_state)
    lengths = np.r_[np.ones(n_each), 3.0, np.full(n_each, 2.9)]
    X = rng.normal(size=(len(lengths), 5))
    X *= (lengths / np.linalg.norm(X, axis=1))[:, None]
    return X, rng.randint(n_classes, size=len(lengths))


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
