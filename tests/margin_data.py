"""Linearly separable samples and their optimal margin, for the theorem tests."""

import numpy as np
from scipy.optimize import nnls


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


def optimal_margin(X, y):
    """eps* = max over unit w of min_i y_i w.x_i.

    It is 1 / ||w|| for the hard-margin SVM through the origin, min ||w||
    subject to y_i w.x_i >= 1: a least distance program, solved exactly by
    non-negative least squares (Lawson and Hanson, "Solving Least Squares
    Problems", chapter 23).
    """
    Z = y[:, None] * X
    E = np.vstack([Z.T, np.ones(len(y))])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    u = nnls(E, f, maxiter=100 * len(y))[0]
    r = E @ u - f
    w = -r[:-1] / r[-1]
    assert (Z @ w).min() > 1 - 1e-9
    return (Z @ w).min() / np.linalg.norm(w)
