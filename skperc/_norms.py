"""Norms and margins that neither overflow nor underflow.

``sqrt(sum x_j^2)`` overflows once an entry passes about ``1e154`` and
underflows to 0 below about ``1e-154``, although the norm itself is a
finite, positive float. Dividing by a power of 2 first is exact: the
scaled entries lie in [0.5, 1) at most, and the norm is scaled back.
"""

import numpy as np

# The smallest exponent whose power of 2 inverts to a finite float.
_MIN_EXPONENT = np.finfo(np.float64).minexp + 1


def power_of_two_exponents(largest):
    """The exponents ``e`` that bring each positive ``largest`` into
    [0.5, 1) as ``largest * 2**-e`` (as near as a finite ``2**-e`` can for
    subnormal values); 0 where ``largest`` is 0."""
    exponents = np.frexp(largest)[1]
    return np.where(largest > 0, np.maximum(exponents, _MIN_EXPONENT), 0)


def power_of_two_scale(values, axis=None):
    """The power of 2 that brings the largest ``|values|`` (along ``axis``)
    into [0.5, 1), exactly; 1 where they are all 0. ``values`` must not be
    empty."""
    largest = np.abs(np.asarray(values, dtype=np.float64)).max(axis=axis)
    return np.ldexp(1.0, -power_of_two_exponents(largest))


def stable_norm(values, axis=None):
    """The 2-norm of ``values`` (along ``axis``, the whole array for
    ``None``), finite and positive for every finite, non-zero input."""
    values = np.asarray(values, dtype=np.float64)
    scale = power_of_two_scale(values, axis=axis)
    scaled = values * (np.expand_dims(scale, axis) if axis is not None else scale)
    with np.errstate(over="ignore"):
        # only a norm beyond the largest float overflows: inf is its value
        return np.sqrt((scaled * scaled).sum(axis=axis)) / scale


def unit_margins(coef, intercept, scores_of):
    """``min_i y_i f(x_i) / ||w||`` of each row of ``coef``, where
    ``scores_of(coef, intercept)`` gives ``y_i f(x_i)`` (n_samples x rows)
    for those weights: computed on ``coef`` and ``intercept`` divided by
    the power of 2 of each row's largest weight, which changes no margin
    and keeps the decision values and the norm finite and non-zero. 0
    where ``||w|| = 0``."""
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    scale = power_of_two_scale(coef, axis=1)
    scaled_coef = coef * scale[:, None]
    scaled_intercept = np.asarray(intercept, dtype=np.float64) * scale
    smallest = np.asarray(scores_of(scaled_coef, scaled_intercept)).min(axis=0)
    norms = stable_norm(scaled_coef, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > 0, smallest / norms, 0.0)
