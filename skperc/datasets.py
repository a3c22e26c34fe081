"""Samples on which the theorems about the perceptron can be watched.

Separable data of known margin and radius, the hard instance of Anthony and
Shawe-Taylor, the standard-basis adversary that forces any online learner
into ``ceil(1 / delta^2)`` mistakes, the two-point example where the
infinity-perceptron's running time is sharp, and the standard-basis subsets
that make Theorem 7 of the compression paper nearly sharp.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch, check_random_state

from ._compat import Interval, validate_params
from .geometry import _whole

__all__ = [
    "make_margin_classification",
    "make_nested_boolean",
    "adversarial_basis_mistakes",
    "make_two_point_example",
    "make_basis_subsets",
]


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 2, None, closed="left")],
        "margin": [Interval(Real, 0, None, closed="neither")],
        "radius": [Interval(Real, 0, None, closed="neither")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "return_coef": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_margin_classification(
    n_samples,
    n_features,
    margin,
    radius=1.0,
    *,
    shuffle=True,
    random_state=None,
    return_coef=False,
):
    """A separable sample whose optimal margin and radius are known exactly.

    A unit vector ``w*`` is drawn at random. Two examples, one of each
    label, lie on the margin, ``x = +-margin w* + u`` with ``u`` orthogonal
    to ``w*`` and ``||x|| = radius``; their sum is along ``w*``, which makes
    ``w*`` the hard-margin separator through the origin. Every other
    example has a projection ``t`` on ``w*`` drawn uniformly from
    ``[margin, radius]``, a random sign that is its label, and a component
    orthogonal to ``w*`` drawn uniformly from the ball of radius
    ``sqrt(radius^2 - t^2)``. So the sample's radius ``R = max ||x_i||`` is
    ``radius`` and its optimal margin ``eps*`` is ``margin``, reached by
    ``w*``.

    Parameters
    ----------
    n_samples : int
        The number of examples, ``>= 2``.

    n_features : int
        The dimension, ``>= 2``.

    margin : float
        The optimal margin ``eps*``, ``0 < margin <= radius``.

    radius : float, default=1.0
        The largest norm of an example.

    shuffle : bool, default=True
        Whether to shuffle the examples; otherwise the two on the margin
        come first.

    random_state : int, RandomState instance or None, default=None
        The seed of the random draws. Pass an int for reproducible output.

    return_coef : bool, default=False
        Whether to return ``w*`` too.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The examples.

    y : ndarray of shape (n_samples,)
        The labels, ``-1`` or ``+1``: the side of ``w*`` of each example.

    coef : ndarray of shape (n_features,)
        The unit vector ``w*``; only if ``return_coef=True``.

    Examples
    --------
    >>> from skperc.datasets import make_margin_classification
    >>> from skperc.metrics import optimal_margin
    >>> X, y = make_margin_classification(100, 3, margin=0.2, random_state=0)
    >>> round(optimal_margin(X, y)[0], 9)
    0.2
    """
    if margin > radius:
        raise ValueError(
            f"margin={margin} cannot exceed radius={radius}: the examples on "
            "the margin are at distance margin from the hyperplane."
        )
    rng = check_random_state(random_state)
    coef = rng.standard_normal(n_features)
    coef /= np.linalg.norm(coef)

    signs = np.concatenate([[1.0, -1.0], rng.choice([-1.0, 1.0], n_samples - 2)])
    along = np.concatenate(
        [[margin, margin], rng.uniform(margin, radius, n_samples - 2)]
    )
    # Uniform in the ball orthogonal to coef: a uniform direction, and a
    # radius distributed as the (n_features - 1)-th root of a uniform.
    across = rng.standard_normal((n_samples, n_features))
    across -= np.outer(across @ coef, coef)
    across /= np.linalg.norm(across, axis=1)[:, None]
    # sqrt(radius^2 - along^2), in the ratio along / radius: the squares
    # overflow beyond 1e154 and underflow below 1e-154.
    ratio = along / radius
    room = radius * np.sqrt(np.maximum((1 - ratio) * (1 + ratio), 0.0))
    spread = rng.uniform(size=n_samples) ** (1 / (n_features - 1))
    spread[:2] = 1.0
    across *= (room * spread)[:, None]
    across[1] = across[0]

    X = np.outer(signs * along, coef) + across
    y = signs.astype(np.int64)
    if shuffle:
        order = rng.permutation(n_samples)
        X, y = X[order], y[order]
    return (X, y, coef) if return_coef else (X, y)


def _nested_boolean_sample(n):
    """S_n of Proposition 2, one row per example, coordinates u_1 .. u_2n."""
    sample = [[0, 1], [1, 0], [1, 1]]
    for k in range(1, n):
        sample = [row + [0, 1] for row in sample]
        sample.append([1] * (2 * k + 1) + [0])
        sample.append([0] * (2 * k) + [1, 1])
    return np.array(sample, dtype=np.float64)


def _nested_boolean(X):
    """f_2n = u_2n and (u_2n-1 or (u_2n-2 and (... (u_2 and u_1))))."""
    X = X.astype(bool)
    value = X[:, 0] & X[:, 1]
    for k in range(2, X.shape[1], 2):
        value = X[:, k + 1] & (X[:, k] | value)
    return value


@validate_params(
    {"n": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def make_nested_boolean(n):
    """The hard instance of Anthony and Shawe-Taylor: ``f_2n`` on ``S_n``.

    The boolean function of ``2n`` variables
    ``f_2n = u_2n and (u_2n-1 or (u_2n-2 and (... (u_2 and u_1))))`` is a
    halfspace, but every weight vector that represents it has
    ``alpha_2n >= sqrt(3)^(n-1) min(alpha_1, alpha_2)`` (Proposition 1).
    The sample ``S_n`` of ``2n + 1`` points, ``S_1 = {01, 10, 11}`` and
    ``S_n+1 = {x01 : x in S_n} + {11...10, 00...011}``, specifies it: the
    only halfspace consistent with ``f_2n`` on ``S_n`` is ``f_2n``
    (Proposition 2). So the perceptron with a learned threshold makes at
    least ``sqrt(3)^(n-1)`` updates on ``S_n`` before it is consistent
    (Theorem 3), exponentially many in the sample size, while a linear
    program (:class:`~skperc.LinearProgramClassifier`) finds a consistent
    halfspace in polynomial time.

    Parameters
    ----------
    n : int
        Half the number of variables, ``>= 1``.

    Returns
    -------
    X : ndarray of shape (2 n + 1, 2 n)
        The points of ``S_n`` in ``{0, 1}^(2n)``, column ``j`` the variable
        ``u_(j+1)``, in the order of the recursion.

    y : ndarray of shape (2 n + 1,)
        ``f_2n`` on each point, 0 or 1.

    References
    ----------
    .. [1] M. Anthony and J. Shawe-Taylor, "Using the perceptron algorithm
       to find consistent hypotheses", Combinatorics, Probability and
       Computing 2(4), 1993.

    Examples
    --------
    >>> from skperc.datasets import make_nested_boolean
    >>> X, y = make_nested_boolean(2)
    >>> X.astype(int)
    array([[0, 1, 0, 1],
           [1, 0, 0, 1],
           [1, 1, 0, 1],
           [1, 1, 1, 0],
           [0, 0, 1, 1]])
    >>> y
    array([0, 0, 1, 0, 1])
    """
    X = _nested_boolean_sample(n)
    return X, _nested_boolean(X).astype(np.int64)


@validate_params(
    {"delta": [Interval(Real, 0, 1, closed="right")]},
    prefer_skip_nested_validation=True,
)
def adversarial_basis_mistakes(estimator, delta):
    """Force ``ceil(1 / delta^2)`` mistakes on an online learner (Claim 1.4).

    The adversary of Claim 1.4 of S. O. Chan, "Notes 3: Perceptron and
    Halving algorithms", CSCI4230 Computational Learning Theory, The
    Chinese University of Hong Kong, 2019: with ``n = ceil(1 / delta^2)``, it
    shows the learner the standard basis vectors ``e_1, ..., e_n`` of
    ``R^n`` one at a time, each labelled the opposite of the learner's
    prediction, and lets the learner learn it with ``partial_fit`` before
    the next. Every prediction is a mistake, yet the labels are those of
    the unit vector ``v = y / sqrt(n)``, whose margin on the unit vectors
    ``e_i`` is ``1 / sqrt(n)``: ``delta`` when ``1 / delta^2`` is an
    integer. So no deterministic online learner can promise fewer than
    ``1 / delta^2`` mistakes on samples of margin ``delta``, and the
    perceptron's ``1 / delta^2`` (Novikoff) is the best possible. When
    ``1 / delta^2`` is not an integer, the margin of the sequence is a
    little below ``delta``, and ``floor(1 / delta^2)`` is what a margin of
    exactly ``delta`` can force.

    Parameters
    ----------
    estimator : estimator
        A classifier with ``partial_fit(X, y, classes=...)`` and
        ``predict``, deterministic. It is cloned: the estimator passed is
        not changed. A scikit-learn estimator cannot predict before its
        first ``partial_fit``, so the first example is labelled -1, against
        the +1 that the learners of skperc predict from their empty start
        (``sign(0) = +1``, a tie of the vote); it counts as a mistake.

    delta : float
        The margin, in (0, 1].

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With ``n_mistakes`` (int), ``X`` (the identity matrix of size
        ``n``, the examples in order), ``y`` (the labels, -1 or +1),
        ``coef`` (the unit vector ``v``), ``margin`` (``1 / sqrt(n)``) and
        ``estimator`` (the clone, after the last example).

    Examples
    --------
    >>> from skperc import MarginPerceptron
    >>> from skperc.datasets import adversarial_basis_mistakes
    >>> result = adversarial_basis_mistakes(MarginPerceptron(), delta=0.25)
    >>> result.n_mistakes, result.margin
    (16, 0.25)
    """
    n = _whole(1 / delta**2, math.ceil)
    learner = clone(estimator)
    X = np.eye(n)
    classes = np.array([-1, 1])
    y = np.empty(n, dtype=np.int64)
    y[0] = -1
    learner.partial_fit(X[:1], y[:1], classes=classes)
    for i in range(1, n):
        y[i] = -learner.predict(X[i : i + 1])[0]
        learner.partial_fit(X[i : i + 1], y[i : i + 1])
    return Bunch(
        # every label is the opposite of the prediction made before it
        n_mistakes=n,
        X=X,
        y=y,
        coef=y / math.sqrt(n),
        margin=1 / math.sqrt(n),
        estimator=learner,
    )


@validate_params(
    {"epsilon": [Interval(Real, 0, 1, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def make_two_point_example(epsilon):
    """Two points where the infinity-perceptron's running time is sharp.

    Remark 1 of "On the Perceptron's Compression": the unit vectors
    ``(sqrt(1 - epsilon^2), epsilon)`` labelled ``+1`` and
    ``(sqrt(1 - epsilon^2), -epsilon)`` labelled ``-1``. Their optimal
    margin through the origin is ``epsilon``, reached by ``(0, 1)``, and
    the infinity-perceptron (``beta="power"``) stops only after
    ``Omega((1 / epsilon)^(2 / (2 - alpha)))`` updates, the order of its
    upper bound.

    Parameters
    ----------
    epsilon : float
        The margin, in (0, 1).

    Returns
    -------
    X : ndarray of shape (2, 2)
        The two points.

    y : ndarray of shape (2,)
        Their labels, ``[1, -1]``.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Remark 1.

    Examples
    --------
    >>> from skperc.datasets import make_two_point_example
    >>> X, y = make_two_point_example(0.6)
    >>> X.tolist(), y.tolist()
    ([[0.8, 0.6], [0.8, -0.6]], [1, -1])
    """
    first = math.sqrt(1 - epsilon**2)
    X = np.array([[first, epsilon], [first, -epsilon]])
    return X, np.array([1, -1])


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "n_positive": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "return_coef": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_basis_subsets(n_samples, n_positive, *, random_state=None, return_coef=False):
    """Example 1: a subset of the standard basis, a robust concept.

    Example 1 of "On the Perceptron's Compression": the ``n`` standard unit
    vectors ``e_i``, a random subset ``I`` of ``k`` of them labelled ``+1``
    and the others ``-1``. Each of the ``C(n, k)`` subsets is separated with
    margin ``Omega(1 / sqrt(k))``, which makes the bound
    ``(2 (n + 1))^(1 / eps^2)`` of Theorem 7 nearly sharp. The margin needs
    a threshold, so the vectors are lifted to ``(e_i + e_{n+1}) / sqrt(2)``
    (norm 1): the unit vector along ``(1_I, -1/2)`` separates the labels
    through the origin with margin ``1 / sqrt(2 (4 k + 1))``.

    Parameters
    ----------
    n_samples : int
        The number of points ``n``, at least 2.

    n_positive : int
        The size ``k`` of the subset labelled ``+1``, in ``[1, n)``.

    random_state : int, RandomState instance or None, default=None
        The seed of the subset.

    return_coef : bool, default=False
        Whether to return the separating unit vector as well.

    Returns
    -------
    X : ndarray of shape (n_samples, n_samples + 1)
        The lifted unit vectors.

    y : ndarray of shape (n_samples,)
        ``+1`` on the subset, ``-1`` elsewhere.

    coef : ndarray of shape (n_samples + 1,)
        The unit vector of margin ``1 / sqrt(2 (4 k + 1))``; only when
        ``return_coef=True``.

    See Also
    --------
    skperc.geometry.robust_partitions_bound : Theorem 7.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Example 1.

    Examples
    --------
    >>> from skperc.datasets import make_basis_subsets
    >>> from skperc.metrics import margin
    >>> X, y, w = make_basis_subsets(5, 2, random_state=0, return_coef=True)
    >>> X.shape, int((y == 1).sum()), round(margin(w, X, y), 6)
    ((5, 6), 2, 0.235702)
    """
    if n_positive >= n_samples:
        raise ValueError(
            f"n_positive must be smaller than n_samples={n_samples}; got {n_positive}."
        )
    rng = check_random_state(random_state)
    positive = rng.choice(n_samples, size=n_positive, replace=False)
    X = np.hstack([np.eye(n_samples), np.ones((n_samples, 1))]) / math.sqrt(2)
    y = -np.ones(n_samples, dtype=int)
    y[positive] = 1
    if not return_coef:
        return X, y
    coef = np.append(np.where(y == 1, 1.0, 0.0), -0.5)
    return X, y, coef / np.linalg.norm(coef)
