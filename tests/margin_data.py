"""Linearly separable samples for the theorem tests."""

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
