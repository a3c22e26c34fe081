"""Kernels of the source texts that scikit-learn does not define.

Each is a function in the style of :mod:`sklearn.metrics.pairwise`: called
on two matrices of samples it returns their kernel matrix, called on two
single samples (as :func:`sklearn.metrics.pairwise.pairwise_kernels` calls a
callable ``metric``) it returns their kernel value.
"""

from numbers import Real

import numpy as np
from sklearn.metrics.pairwise import check_pairwise_arrays
from sklearn.utils.extmath import safe_sparse_dot

from ._compat import Interval, validate_params

__all__ = ["inverse_dot_kernel"]


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "Y": ["array-like", "sparse matrix", None],
        "nu": [Interval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def inverse_dot_kernel(X, Y=None, nu=None):
    """The inverse dot-product kernel ``k(x, y) = 1 / (1 - nu <x, y>)``.

    For ``nu <x, y>`` in ``(-1, 1)`` it is the power series
    ``sum_k nu^k <x, y>^k``: the inner product of feature maps holding every
    monomial of every degree, each weighted by a power of ``nu`` (R. Livni,
    "Lecture 5: Linear Classification", lecture notes, Tel Aviv University,
    section 5.2.1, for ``0 < nu < 1`` on data in the
    unit ball). It is undefined where ``nu <x, y> >= 1``, which is an error
    here; over a sample the largest ``<x, y>`` is the largest ``||x||^2``,
    so the sample must lie inside the ball of radius ``1 / sqrt(nu)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features) \
            or (n_features,)
        A matrix of samples, or one sample.

    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features) \
            or (n_features,), default=None
        A second matrix of samples (or one sample, with one sample ``X``).
        ``None`` means ``Y = X``.

    nu : float, default=None
        The coefficient of the dot product, ``> 0``. ``None`` means
        ``1 / n_features``, as ``gamma`` in scikit-learn's kernels.

    Returns
    -------
    kernel : ndarray of shape (n_samples_X, n_samples_Y), or float
        The kernel matrix, or the kernel value of two single samples.

    Raises
    ------
    ValueError
        If ``nu <x, y> >= 1`` for a pair of samples.

    See Also
    --------
    sklearn.metrics.pairwise.polynomial_kernel : ``(gamma <x, y> + coef0)^d``,
        the truncation of this series at degree ``d``.

    Examples
    --------
    >>> import numpy as np
    >>> from skperc.kernels import inverse_dot_kernel
    >>> X = np.array([[0.5, 0.0], [0.0, 0.5]])
    >>> inverse_dot_kernel(X, nu=1.0)
    array([[1.33333333, 1.        ],
           [1.        , 1.33333333]])
    >>> inverse_dot_kernel(X[0], X[0], nu=1.0)
    1.3333333333333333
    """
    if np.ndim(X) == 1 and (Y is None or np.ndim(Y) == 1):
        X = np.asarray(X).reshape(1, -1)
        Y = None if Y is None else np.asarray(Y).reshape(1, -1)
        return float(inverse_dot_kernel(X, Y, nu=nu)[0, 0])
    X, Y = check_pairwise_arrays(X, Y)
    if nu is None:
        nu = 1.0 / X.shape[1]
    K = safe_sparse_dot(X, Y.T, dense_output=True)
    K *= nu
    if K.size and K.max() >= 1:
        raise ValueError(
            "The inverse_dot kernel 1 / (1 - nu <x, y>) is undefined where "
            f"nu <x, y> >= 1; here nu <x, y> reaches {K.max():.6g} (nu={nu:.6g})."
            " Scale the samples into the ball of radius 1 / sqrt(nu), or "
            "lower nu."
        )
    np.subtract(1.0, K, out=K)
    np.reciprocal(K, out=K)
    return K
