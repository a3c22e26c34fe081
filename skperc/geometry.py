"""Geometry from the perceptron's compression.

The perceptron's output is the signed sum of the few examples it updated
on. Sections 4 and 6 of "On the Perceptron's Compression" (Moran, Nachum,
Panasoff and Yehudayoff) draw geometric consequences from this:

- :func:`sparse_separation`: Lemma 1, two convex hulls are either close or
  separated by a hyperplane whose normal is a short signed sum of their
  points;
- :func:`sparse_strategies`: the Point player's mixed strategies of small
  support in the game of Section 4, and the Hyperplane player's answer;
- :func:`novikoff_trace`: the alternative proof of Novikoff's theorem,
  ``w_t / t`` in the convex hull of the examples with norm at most
  ``1 / sqrt(t)``, read from the updates of a run;
- :func:`robust_partitions_bound`, :func:`projection_dimension` and
  :func:`projection_margin_loss`: Theorems 7 and 8, the robust concepts of
  a sample and the random projections that keep them.
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_array

from ._compat import Interval, validate_params

__all__ = [
    "sparse_separation",
    "sparse_strategies",
    "novikoff_trace",
    "robust_partitions_bound",
    "projection_dimension",
    "projection_margin_loss",
]

# Above this many points the margins are updated from the points, not from
# their Gram matrix, which would not fit in memory.
_GRAM_MAX_POINTS = 2048


def _points(X, name):
    return check_array(X, dtype=np.float64, input_name=name)


def _transformed(projection, Z):
    """``projection.transform(Z)`` as a float64 array."""
    return np.asarray(projection.transform(Z), dtype=np.float64)


def _threshold_run(Z, max_updates):
    """Algorithm 2 with ``beta = 1`` on the rows of ``Z``, all labelled
    ``+1``: while some row has ``w . z < 1``, add the next such row, in
    cyclic order, to ``w``.

    Returns the indices of the rows added, in order, whether the run
    stopped with every ``w . z >= 1``, and the squared norm of ``w``
    after each update.
    """
    n_points = Z.shape[0]
    gram = Z @ Z.T if n_points <= _GRAM_MAX_POINTS else None
    scores = np.zeros(n_points)
    updates = []
    squared_norms = []
    squared_norm = 0.0
    last = -1
    while True:
        violated = np.flatnonzero(scores < 1.0)
        if violated.size == 0 or len(updates) == max_updates:
            return np.asarray(updates, dtype=np.intp), violated.size == 0, squared_norms
        after = violated[violated > last]
        last = int(after[0] if after.size else violated[0])
        row = gram[last] if gram is not None else Z @ Z[last]
        squared_norm += 2.0 * scores[last] + row[last]
        scores += row
        updates.append(last)
        squared_norms.append(squared_norm)


def _whole(ratio, rounding):
    """``rounding(ratio)`` (``math.floor`` or ``math.ceil``), a ratio within
    rounding of an integer taken as that integer: 1 / eps**2 is
    99.99999999999999 at eps = 0.1, 2.999999999999999 at 1 / sqrt(3), and
    the margin the float stands for has 100 and 3."""
    nearest = round(ratio)
    if math.isclose(ratio, nearest, rel_tol=1e-9):
        return nearest
    return rounding(ratio)


def _enclosing_center(X, n_iter=100):
    """An approximate center of the smallest ball around the rows of X
    (Badoiu and Clarkson's iteration: radius within ``1 + 1 / sqrt(n_iter)``
    of the smallest)."""
    center = X.mean(axis=0)
    for step in range(1, n_iter + 1):
        far = X[np.argmax(((X - center) ** 2).sum(axis=1))]
        center = center + (far - center) / (step + 1)
    return center


@validate_params(
    {
        "P": ["array-like"],
        "Q": ["array-like"],
        "eps": [Interval(Real, 0, 1, closed="right")],
    },
    prefer_skip_nested_validation=True,
)
def sparse_separation(P, Q, eps):
    """Lemma 1: the hulls of P and Q are close, or sparsely separated.

    For the convex hulls ``K`` of the rows of ``P`` and ``L`` of the rows of
    ``Q``, one of two certificates, as the proof of Lemma 1 of "On the
    Perceptron's Compression" produces them:

    - ``outcome == "hyperplane"``: a hyperplane ``{x : coef . x = offset}``
      with every point of ``K`` more than ``eps * unit / 30`` on its
      positive side and every point of ``L`` more than ``eps * unit / 30``
      on its negative side, whose normal ``coef`` is a signed sum of at
      most ``(10 / eps)^2`` of the (centered) listed points:
      ``coef = sum_i counts_P[i] (P[i] - center) - sum_j counts_Q[j]
      (Q[j] - center)``;
    - ``outcome == "close"``: a point of ``K`` and a point of ``L``,
      convex combinations of the rows of ``P`` and ``Q`` with the weights
      returned, closer than ``eps * unit``.

    The points are translated to ``center`` and divided by ``unit``, the
    lemma's normalisation, lifted to ``(x, 1)``, and Algorithm 2 with
    ``beta = 1`` runs on them (``K`` labelled ``+1``, ``L`` labelled
    ``-1``) for at most ``T = floor(96 / eps^2) + 1`` updates, the first
    ``T`` with ``sqrt(6 / T) < eps / 4``. A run that stops earlier gives the
    hyperplane; a run still going gives the two points ``sum(counts_P[i]
    P[i]) / t_1`` and ``sum(counts_Q[j] Q[j]) / t_2`` of its updates. One
    of the two always comes out.

    Parameters
    ----------
    P : array-like of shape (n_points_P, n_features)
        The points whose hull is ``K``.

    Q : array-like of shape (n_points_Q, n_features)
        The points whose hull is ``L``.

    eps : float
        The distance, in the unit of the lemma, in (0, 1]: at ``eps > 1``
        the hulls are always closer than ``eps``.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With the keys:

        - ``outcome``: ``"hyperplane"`` or ``"close"``;
        - ``center``, ``unit``: the normalisation. ``unit`` is the lemma's
          ``sup ||p - q||`` over ``p`` in ``K`` and ``q`` in ``L``, or the
          largest distance of a point from ``center`` when it is larger
          (the proof needs every normalised point within the unit ball);
        - ``n_updates``: the updates made, ``t_1 + t_2``;
        - ``max_updates``: the step bound ``T`` of the proof;
        - ``counts_P``, ``counts_Q``: how many times each point was
          added (with sign ``+1`` for ``P``, ``-1`` for ``Q``);

        and for a hyperplane ``coef``, ``offset`` and ``margin``, the
        smallest distance of a listed point to the hyperplane on its
        side (every point of the hulls is at least as far); for two close
        points ``point_P``, ``weights_P``, ``point_Q``, ``weights_Q`` and
        their ``distance``.

    See Also
    --------
    sparse_strategies : The same run on one set, as a game.

    Notes
    -----
    The run makes ``||w_t||^2 <= 6 t`` (each lifted point has norm at
    most ``sqrt(2)``). When it stops after ``t < T`` updates, every lifted
    point of ``K`` has ``w . x >= 1``, so its distance to the hyperplane is
    at least ``1 / sqrt(6 t) > eps / 30`` in the unit; when it runs ``T``
    updates, ``w_T / T = a p - (1 - a) q`` has norm below ``eps / 4``, so
    ``|a - 1/2| < eps / 8`` and ``||p - q|| < eps``.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Lemma 1.
    .. [2] M. Badoiu and K. L. Clarkson, "Smaller core-sets for balls",
       SODA 2003 (the center of the normalisation).

    Examples
    --------
    >>> from skperc.geometry import sparse_separation
    >>> apart = sparse_separation([[0.0, 0.0], [0.0, 1.0]], [[3.0, 0.0]], 0.5)
    >>> apart.outcome, bool(apart.margin > 0.5 * apart.unit / 30)
    ('hyperplane', True)
    >>> meeting = sparse_separation([[0.0, 0.0], [2.0, 0.0]], [[1.0, 0.0]], 0.2)
    >>> meeting.outcome, bool(meeting.distance < 0.2 * meeting.unit)
    ('close', True)
    """
    P = _points(P, "P")
    Q = _points(Q, "Q")
    if P.shape[1] != Q.shape[1]:
        raise ValueError(
            f"P and Q must have the same number of features; got {P.shape[1]} "
            f"and {Q.shape[1]}."
        )
    center = _enclosing_center(np.vstack([P, Q]))
    reach = np.sqrt(
        max(
            ((P - center) ** 2).sum(axis=1).max(), ((Q - center) ** 2).sum(axis=1).max()
        )
    )
    unit = float(max(cdist(P, Q).max(), reach))
    if unit == 0.0:
        # every point is the same point: the hulls meet
        unit = 1.0
    lifted = np.vstack(
        [
            np.hstack([(P - center) / unit, np.ones((len(P), 1))]),
            -np.hstack([(Q - center) / unit, np.ones((len(Q), 1))]),
        ]
    )
    max_updates = _whole(96 / eps**2, math.floor) + 1
    updates, stopped, _ = _threshold_run(lifted, max_updates)
    counts = np.bincount(updates, minlength=len(lifted))
    counts_P, counts_Q = counts[: len(P)], counts[len(P) :]
    result = Bunch(
        center=center,
        unit=unit,
        n_updates=len(updates),
        max_updates=max_updates,
        counts_P=counts_P,
        counts_Q=counts_Q,
    )
    if stopped:
        coef = counts_P @ (P - center) - counts_Q @ (Q - center)
        # the lifted coordinate of w is t_1 - t_2
        offset = float(coef @ center - unit**2 * (counts_P.sum() - counts_Q.sum()))
        norm = np.linalg.norm(coef)
        margin = min((P @ coef - offset).min(), (offset - Q @ coef).min()) / norm
        result.update(
            outcome="hyperplane", coef=coef, offset=offset, margin=float(margin)
        )
        return result
    weights_P = counts_P / counts_P.sum()
    weights_Q = counts_Q / counts_Q.sum()
    point_P, point_Q = weights_P @ P, weights_Q @ Q
    result.update(
        outcome="close",
        point_P=point_P,
        weights_P=weights_P,
        point_Q=point_Q,
        weights_Q=weights_Q,
        distance=float(np.linalg.norm(point_P - point_Q)),
    )
    return result


@validate_params(
    {
        "V": ["array-like"],
        "max_updates": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def sparse_strategies(V, *, max_updates=10_000):
    """The sparse strategies of the game of Section 4.

    In the game, a Point player picks a point ``v`` of a finite set ``V``
    with ``max ||v|| = 1``, a Hyperplane player picks a unit vector ``w``,
    and the Hyperplane player wins ``v . w``. Algorithm 2 with
    ``beta = 1`` on ``V`` (every point labelled ``+1``) adds a point of
    ``V`` to ``w`` while some ``v . w < 1``: after ``t`` updates,
    ``v_t = w_t / t`` is the Point player's mixed strategy ``mu_t``,
    uniform over the multiset of the ``t`` points added (its support has at
    most ``t`` points), and the Hyperplane player's best answer to it wins
    ``||v_t|| <= sqrt(3 / t)``. When the run stops after ``T`` updates,
    ``w~ = v_T / ||v_T||`` is a strategy of the Hyperplane player that
    wins at least ``1 / sqrt(3 T)`` against every point, so the value of
    the game is ``eps* >= 1 / sqrt(3 T)``.

    ``V`` is divided by its largest norm, as the game asks; payoffs are in
    that unit.

    Parameters
    ----------
    V : array-like of shape (n_points, n_features)
        The Point player's pure strategies; not all zero.

    max_updates : int, default=10_000
        When to stop a run that goes on: with the value ``eps* = 0`` (the
        origin in the hull of ``V``), it never stops by itself.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With the keys:

        - ``updates``: the index in ``V`` of each point added, in order;
          ``mu_t`` is ``np.bincount(updates[:t], minlength=len(V)) / t``;
        - ``support_sizes``: the support size of each ``mu_t``;
        - ``payoffs``: ``||v_t||``, what the best answer to ``mu_t`` wins,
          for ``t = 1, ..., T``;
        - ``payoff_bounds``: ``sqrt(3 / t)``, the claim's bound on them;
        - ``stopped``: whether the run stopped by itself;
        - ``hyperplane``: ``w~`` (``None`` when the run did not stop);
        - ``guaranteed_payoff``: ``min_v v . w~``, what ``w~`` wins against
          every mixed strategy, a lower bound of ``eps*``;
        - ``value_bound``: ``1 / sqrt(3 T)``, the claim's lower bound of it.

    See Also
    --------
    sparse_separation : The same run on two sets, lifted.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 4, Claim (Sparse
       Strategies).

    Examples
    --------
    >>> from skperc.geometry import sparse_strategies
    >>> game = sparse_strategies([[1.0, 0.2], [1.0, -0.2], [0.5, 0.0]])
    >>> game.stopped, bool(game.guaranteed_payoff >= game.value_bound)
    (True, True)
    >>> bool((game.payoffs <= game.payoff_bounds).all())
    True
    """
    V = _points(V, "V")
    radius = np.linalg.norm(V, axis=1).max()
    if radius == 0:
        raise ValueError("V must hold a point other than the origin.")
    Z = V / radius
    updates, stopped, squared_norms = _threshold_run(Z, max_updates)
    t = np.arange(1, len(updates) + 1)
    first_seen = np.zeros(len(V), dtype=bool)
    support_sizes = np.empty(len(updates), dtype=np.intp)
    size = 0
    for step, index in enumerate(updates):
        size += not first_seen[index]
        first_seen[index] = True
        support_sizes[step] = size
    result = Bunch(
        updates=updates,
        support_sizes=support_sizes,
        payoffs=np.sqrt(np.maximum(squared_norms, 0.0)) / t,
        payoff_bounds=np.sqrt(3.0 / t),
        stopped=stopped,
        hyperplane=None,
        guaranteed_payoff=None,
        value_bound=None,
    )
    if stopped:
        w = np.bincount(updates, minlength=len(V)) @ Z
        hyperplane = w / np.linalg.norm(w)
        result.update(
            hyperplane=hyperplane,
            guaranteed_payoff=float((Z @ hyperplane).min()),
            value_bound=1.0 / math.sqrt(3.0 * len(updates)),
        )
    return result


@validate_params(
    {
        "X": ["array-like"],
        "updates": ["array-like"],
        "beta": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def novikoff_trace(X, updates, *, beta=0.0):
    """The alternative proof of Novikoff's theorem, read from a run.

    A perceptron that adds ``s_t x_{i_t}`` to its weights at its ``t``-th
    update (``s_t`` the label of the example) has ``w_t = sum_{u <= t} s_u
    x_{i_u}``, so ``v_t = w_t / (t R)`` is in the convex hull of the
    examples ``y_i x_i / R`` (``R`` the largest norm), and the perceptron's
    rule keeps ``||v_t|| <= 1 / sqrt(t)``. For every unit vector ``w``
    some example then has ``y_i x_i . w <= R ||v_t||``: the optimal margin
    is at most ``R min_t ||v_t||``, and a sample of margin ``eps*`` stops
    the perceptron within ``(R / eps*)^2`` updates, without the optimal
    hyperplane ever appearing in the argument.

    With a threshold ``beta`` (an update when ``y w . x <= beta``), the
    bound is ``sqrt((1 + 2 beta / R^2) / t)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The examples of the run (lifted with their intercept coordinate
        when the run had one).

    updates : array-like of shape (n_updates, 2)
        The run's updates in order: the index of the example and the sign
        (``-1`` or ``+1``, its label) with which it was added.

    beta : float, default=0.0
        The run's update threshold, on the scale of ``X``.

    Returns
    -------
    trace : :class:`~sklearn.utils.Bunch`
        With the keys:

        - ``norms``: ``||v_t||`` for ``t = 1, ..., n_updates``;
        - ``bounds``: their bound ``sqrt((1 + 2 beta / R^2) / t)``;
        - ``radius``: ``R``;
        - ``weights``: the convex combination of the examples that makes
          ``v_T``, ``weights[i]`` the share of updates on example ``i``;
        - ``margin_upper_bound``: ``R min_t ||v_t||``, an upper bound of the
          optimal margin of the examples labelled by the signs.

    See Also
    --------
    skperc.metrics.perceptron_bounds : The update bounds of the margin
        perceptrons.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 4, Alternative Proof of
       the Perceptron's Convergence.
    .. [2] A. B. J. Novikoff, "On convergence proofs on perceptrons",
       Symposium on the Mathematical Theory of Automata, 1962.

    Examples
    --------
    Rosenblatt's perceptron on two examples labelled ``+1`` updates on
    the first, then on the second:

    >>> from skperc.geometry import novikoff_trace
    >>> X = [[2.0, 1.0], [1.0, -3.0]]
    >>> trace = novikoff_trace(X, [(0, 1), (1, 1)])
    >>> trace.norms.round(4).tolist(), trace.bounds.round(4).tolist()
    ([0.7071, 0.5701], [1.0, 0.7071])
    """
    X = _points(X, "X")
    updates = check_array(updates, dtype=None, input_name="updates")
    if updates.shape[1] != 2:
        raise ValueError(
            "updates must be a sequence of (index, sign) pairs, of shape "
            f"(n_updates, 2); got shape {updates.shape}."
        )
    indices, signs = updates[:, 0], updates[:, 1]
    if not np.all(np.isin(signs, [-1, 1])):
        raise ValueError("The signs of updates must be -1 or +1.")
    if np.any(indices != np.round(indices)) or np.any(
        (indices < 0) | (indices >= X.shape[0])
    ):
        raise ValueError(
            f"The indices of updates must be integers in [0, {X.shape[0]})."
        )
    indices = indices.astype(np.intp)
    radius = float(np.linalg.norm(X, axis=1).max())
    if radius == 0:
        raise ValueError("X must hold an example other than the origin.")
    steps = signs.astype(np.float64)[:, None] * X[indices] / radius
    t = np.arange(1, len(indices) + 1)
    norms = np.linalg.norm(np.cumsum(steps, axis=0), axis=1) / t
    counts = np.bincount(indices, minlength=X.shape[0])
    return Bunch(
        norms=norms,
        bounds=np.sqrt((1.0 + 2.0 * beta / radius**2) / t),
        radius=radius,
        weights=counts / len(indices),
        margin_upper_bound=float(radius * norms.min()),
    )


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "eps": [Interval(Real, 0, 1, closed="right")],
    },
    prefer_skip_nested_validation=True,
)
def robust_partitions_bound(n_samples, eps):
    """Theorem 7: at most ``(2 (n + 1))^(1 / eps^2)`` robust concepts.

    An ``eps``-partition of a set of ``n`` points of norm at most 1 is a
    labelling that a unit vector separates with margin at least ``eps``.
    The perceptron finds each within ``m = floor(1 / eps^2)`` updates and
    its output is the signed sum of the points it updated on, so the
    partition is named by a multiset of at most ``m`` points with signs:
    there are at most ``(2 (n + 1))^m`` of them.

    Parameters
    ----------
    n_samples : int
        The number of points ``n``.

    eps : float
        The margin, in (0, 1], relative to the largest norm.

    Returns
    -------
    bound : int
        ``(2 (n + 1))^floor(1 / eps^2)``, exactly; a ``1 / eps^2`` within
        ``1e-9`` (relative) of an integer counts as that integer, the
        margin that the float ``eps`` rounds (``0.1``, ``1 / sqrt(3)``).

    See Also
    --------
    skperc.datasets.make_basis_subsets : Example 1, where the bound is
        nearly reached.
    projection_dimension : Theorem 8, which the bound proves.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 7.
    .. [2] S. Ben-David, N. Eiron and H. U. Simon, "Limitations of learning
       via embeddings in Euclidean half spaces", JMLR 3, 441-461, 2002.

    Examples
    --------
    >>> from skperc.geometry import robust_partitions_bound
    >>> robust_partitions_bound(10, 0.5)
    234256
    """
    return (2 * (n_samples + 1)) ** _whole(1 / eps**2, math.floor)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "eps": [Interval(Real, 0, 1, closed="right")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def projection_dimension(n_samples, eps, delta):
    """Theorem 8: the dimension ``k`` of a Gaussian map that keeps margins.

    With probability at least ``1 - delta`` over a ``k x d`` matrix ``A`` of
    independent Gaussian entries, every ``eps``-partition of ``n`` points
    (margin at least ``eps`` relative to their largest norm) is an
    ``eps / 2``-partition of their images ``A x`` (relative to the largest
    norm of the images), when ``k`` is at least

    ``ceil((72 / eps^2) (floor(1 / eps^2) ln(2 (n + 1)) + ln(2 (3 n + 1) /
    delta)))``,

    of the order of ``log(n / delta) / eps^4`` as the theorem states, with
    its constant made explicit by the proof in the Notes.

    Parameters
    ----------
    n_samples : int
        The number of points ``n``.

    eps : float
        The margin, in (0, 1].

    delta : float
        The probability of failure, in (0, 1).

    Returns
    -------
    k : int
        A sufficient number of rows of ``A``.

    See Also
    --------
    projection_margin_loss : The margins a given projection keeps.
    sklearn.random_projection.GaussianRandomProjection : Such a map.

    Notes
    -----
    Fix one of the at most ``N = (2 (n + 1))^floor(1 / eps^2)``
    ``eps``-partitions (:func:`robust_partitions_bound`) and a unit vector
    ``w`` that separates it with margin ``eps``. If ``A / sqrt(k)`` keeps
    the squared norms of the ``3 n + 1`` vectors ``w``, ``x_i`` and
    ``x_i +- w`` within a factor ``1 +- tau``, then by polarization every
    ``A x_i . A w / k`` is within ``tau`` of ``x_i . w``, and the margin of
    ``A w`` on the images is at least ``(eps - tau) / (1 + tau)``, which is
    ``eps / 2`` at ``tau = eps / 3``. For one vector this fails with
    probability at most ``2 exp(-k tau^2 / 8)`` (Dasgupta and Gupta), and a
    union bound over the ``N (3 n + 1)`` vectors gives ``k``.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 8.
    .. [2] S. Dasgupta and A. Gupta, "An elementary proof of a theorem of
       Johnson and Lindenstrauss", Random Structures and Algorithms 22(1),
       60-65, 2003.

    Examples
    --------
    >>> from skperc.geometry import projection_dimension
    >>> projection_dimension(100, 0.5, 0.05)
    8822
    """
    tau = eps / 3.0
    log_partitions = _whole(1 / eps**2, math.floor) * math.log(2 * (n_samples + 1))
    log_vectors = math.log(2 * (3 * n_samples + 1) / delta)
    return math.ceil(8.0 / tau**2 * (log_partitions + log_vectors))


@validate_params(
    {
        "projection": "no_validation",
        "X": ["array-like"],
        "eps": [Interval(Real, 0, 1, closed="right")],
        "directions": ["array-like", None],
        "n_directions": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def projection_margin_loss(
    projection, X, eps, *, directions=None, n_directions=1000, random_state=None
):
    """The margins that a fitted linear projection keeps, measured.

    Theorem 8 promises that a random projection to enough dimensions
    (:func:`projection_dimension`) turns every ``eps``-partition of ``X``
    into an ``eps / 2``-partition of its image. This measures it for one
    projection: for each direction ``w`` whose partition ``sign(X w)`` has
    margin ``m = min_i |x_i . w| / (||w|| R) >= eps`` (an ``eps``-partition),
    the margin ``m'`` of the image of ``w`` on the image of ``X``,
    ``min_i sign(x_i . w) A x_i . A w / (||A w|| R')``, with ``R`` and
    ``R'`` the largest norms of ``X`` and of its image. ``m'`` is a lower
    bound of the image's optimal margin for that partition, and the one the
    theorem's proof bounds.

    Parameters
    ----------
    projection : fitted transformer
        A linear map without offset, such as a fitted
        :class:`~sklearn.random_projection.GaussianRandomProjection` or
        :class:`~sklearn.random_projection.SparseRandomProjection`: its
        ``transform`` is applied to the rows of ``X`` and to the
        directions.

    X : array-like of shape (n_samples, n_features)
        The sample.

    eps : float
        The margin of the partitions measured, relative to ``R``, in (0, 1].

    directions : array-like of shape (n_directions, n_features), default=None
        The normals of the partitions to measure. By default,
        ``n_directions`` Gaussian random directions, of which only those
        that make an ``eps``-partition are kept.

    n_directions : int, default=1000
        The number of random directions drawn when ``directions`` is None.

    random_state : int, RandomState instance or None, default=None
        The seed of the random directions.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        With the keys ``margins`` (the ``m`` of each ``eps``-partition
        measured), ``projected_margins`` (their ``m'``), ``n_partitions``,
        ``worst_margin`` (the smallest ``m'``), ``worst_loss`` (the largest
        ``m - m'``), both NaN when no direction made an ``eps``-partition,
        and ``kept`` (whether every ``m' >= eps / 2``, the theorem's
        promise).

    See Also
    --------
    projection_dimension : The ``k`` that Theorem 8 asks for.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 8.

    Examples
    --------
    >>> from sklearn.random_projection import GaussianRandomProjection
    >>> from skperc.datasets import make_basis_subsets
    >>> from skperc.geometry import projection_margin_loss
    >>> X, y, w = make_basis_subsets(50, 2, random_state=0, return_coef=True)
    >>> A = GaussianRandomProjection(n_components=2000, random_state=0).fit(X)
    >>> loss = projection_margin_loss(A, X, 0.2, directions=[w])
    >>> loss.n_partitions, bool(loss.kept)
    (1, True)
    """
    X = _points(X, "X")
    if directions is None:
        rng = check_random_state(random_state)
        directions = rng.standard_normal((n_directions, X.shape[1]))
    directions = _points(directions, "directions")
    if directions.shape[1] != X.shape[1]:
        raise ValueError(
            f"directions have {directions.shape[1]} features, but X has {X.shape[1]}."
        )
    if not hasattr(projection, "transform"):
        raise TypeError(
            "projection must be a fitted transformer with a transform "
            f"method; got {type(projection).__name__}."
        )
    if np.any(_transformed(projection, np.zeros((1, X.shape[1]))) != 0):
        raise ValueError(
            "projection must be a linear map: it moves the origin, so margins "
            "through the origin are not carried over."
        )
    norms = np.linalg.norm(directions, axis=1)
    directions = directions[norms > 0] / norms[norms > 0, None]
    radius = np.linalg.norm(X, axis=1).max()
    scores = X @ directions.T / radius
    margins = np.abs(scores).min(axis=0)
    robust = margins >= eps
    if not robust.any():
        return Bunch(
            margins=margins[robust],
            projected_margins=margins[robust],
            n_partitions=0,
            worst_margin=math.nan,
            worst_loss=math.nan,
            kept=True,
        )
    images = _transformed(projection, X)
    image_directions = _transformed(projection, directions[robust])
    image_radius = np.linalg.norm(images, axis=1).max()
    image_norms = np.linalg.norm(image_directions, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        projected = (np.sign(scores[:, robust]) * (images @ image_directions.T)).min(
            axis=0
        ) / (image_norms * image_radius)
    projected = np.where(image_norms > 0, projected, 0.0)
    margins = margins[robust]
    return Bunch(
        margins=margins,
        projected_margins=projected,
        n_partitions=int(margins.size),
        worst_margin=float(projected.min()),
        worst_loss=float((margins - projected).max()),
        kept=bool(np.all(projected >= eps / 2)),
    )
