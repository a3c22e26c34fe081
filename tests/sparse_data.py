"""Sparse samples shaped as features often come: hashed ones."""

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
