"""Sparse samples shaped as features often come: hashed ones, and words."""

import numpy as np
import scipy.sparse as sp


def spread_columns(X, n_columns, seed=0):
    """CSR X with its columns placed, in order, among n_columns columns that
    are otherwise empty, as hashed features are (HashingVectorizer has 2**20
    columns); and the places of its columns."""
    X = sp.csr_matrix(X)
    rng = np.random.default_rng(seed)
    at = np.sort(rng.choice(n_columns, X.shape[1], replace=False)).astype(np.int32)
    spread = sp.csr_matrix(
        (X.data, at[X.indices], X.indptr), shape=(X.shape[0], n_columns)
    )
    return spread, at


def word_rows(n_samples, n_features, per_row, n_classes=2, seed=0):
    """CSR rows of per_row random words (fewer where a row draws one twice)
    among n_features, of values in [0, 1), labelled by the largest of
    n_classes random linear functions, 10% of the labels of two classes
    flipped: X, y, and the number of features in use."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(
        (
            rng.random(n_samples * per_row),
            rng.integers(0, n_features, n_samples * per_row),
            np.arange(0, n_samples * per_row + 1, per_row),
        ),
        shape=(n_samples, n_features),
    )
    X.sum_duplicates()
    if n_classes == 2:
        y = X @ rng.standard_normal(n_features) > 0
        y ^= rng.random(n_samples) < 0.1
    else:
        y = np.argmax(X @ rng.standard_normal((n_features, n_classes)), axis=1)
    return X, y, len(np.unique(X.indices))
