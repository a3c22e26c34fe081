"""Margins and the bounds that the theorems state in terms of them.

The notation is that of "On the Perceptron's Compression" (Moran, Nachum,
Panasoff and Yehudayoff): for a sample ``S`` with labels ``y_i`` in
``{-1, +1}``, the margin of a unit vector ``w`` is
``marg(w, S) = min_i y_i w . x_i``, the optimal margin is
``eps* = max_{||w|| = 1} marg(w, S)``, and ``R = max_i ||x_i||``. Labels
may be any two values: the larger, in sorted order, is ``+1``, as for a
classifier's ``classes_[1]``.
"""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lstsq
from scipy.optimize import nnls
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from ._base import class_codes, first_class, linear_margins, problem_count
from ._compat import Interval, StrOptions, validate_params
from ._norms import power_of_two_scale, stable_norm, unit_margins
from ._thresholds import ScheduleKind
from .schedules import (
    ConstantThreshold,
    PowerThreshold,
    RelativeThreshold,
    ScaleThreshold,
    ThresholdSchedule,
    checked_schedule,
)

__all__ = ["margin", "optimal_margin", "perceptron_bounds", "compression_bound"]

# The schedules whose theorems perceptron_bounds states, by the kind of their
# compiled threshold: a subclass that keeps its base's threshold and radius
# rule is bounded as its base.
_BOUNDED_SCHEDULES = {
    ScheduleKind.CONSTANT: ConstantThreshold,
    ScheduleKind.RELATIVE: RelativeThreshold,
    ScheduleKind.SCALE: ScaleThreshold,
    ScheduleKind.POWER: PowerThreshold,
}

# The smallest margin of v, relative to the radius, that optimal_margin
# tells from the rounding of z . v (exact to about 1e-16 ||z|| ||v|| per
# term).
_SEPARATED = 1e-12


def margin(estimator_or_coef, X, y):
    """The geometric margin of a linear or kernel model on a labelled sample.

    For a fitted estimator, the margin of each one-vs-rest problem ``c``:
    ``min_i y_i f_c(x_i) / ||w_c||``, with ``y_i = +1`` on the examples of
    class ``c`` (``classes_[1]`` for a binary problem) and ``-1`` on the
    others, and 0 where ``||w_c|| = 0``. It is negative when the model does
    not separate the sample. For a linear model, ``f_c(x) = coef_[c] . x +
    intercept_[c]`` and ``||w_c|| = ||coef_[c]||``, the intercept not
    counted: this is the ``margin_`` of :class:`~skperc.MarginPerceptron`
    on its training data, to the last bit. For a
    :class:`~skperc.KernelPerceptron`, ``f_c`` is its ``decision_function``
    and ``||w_c||`` the norm of its weights in the feature space. A
    :class:`~sklearn.pipeline.Pipeline` is measured on the output of its
    transformers.

    For a bare weight vector ``w``, the papers' ``marg(w / ||w||, S)`` of the
    hyperplane through the origin.

    Parameters
    ----------
    estimator_or_coef : estimator or array-like of shape (n_features,)
        A fitted classifier with ``coef_`` and ``intercept_`` (one row per
        one-vs-rest problem), or a :class:`~skperc.KernelPerceptron`; a
        pipeline ending in one; or a weight vector.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The sample.

    y : array-like of shape (n_samples,)
        Its labels: classes of the estimator, or two values for a weight
        vector.

    Returns
    -------
    margin : ndarray of shape (1,) or (n_classes,), or float
        The margin of each problem of the estimator, in the shape of
        ``MarginPerceptron.margin_``; a float for a weight vector.

    See Also
    --------
    optimal_margin : The largest margin of a hyperplane on a sample.

    Examples
    --------
    >>> import numpy as np
    >>> from skperc.metrics import margin
    >>> X = np.array([[2.0, 1.0], [1.0, -3.0]])
    >>> margin([3.0, 4.0], X, [1, -1])
    1.8
    """
    if isinstance(estimator_or_coef, Pipeline):
        check_is_fitted(estimator_or_coef)
        X = estimator_or_coef[:-1].transform(X)
        estimator_or_coef = estimator_or_coef[-1]
    if hasattr(estimator_or_coef, "fit"):
        return _estimator_margins(estimator_or_coef, X, y)

    coef = np.asarray(estimator_or_coef, dtype=np.float64)
    if coef.ndim != 1:
        raise ValueError(
            "A weight vector must be 1-dimensional, of shape (n_features,); "
            f"got an array of shape {coef.shape}. Pass a fitted estimator for "
            "the margins of several problems."
        )
    X, signs = _signed_sample(X, y)
    if X.shape[1] != len(coef):
        raise ValueError(
            f"X has {X.shape[1]} features, but the weight vector has {len(coef)}."
        )
    margins = unit_margins(
        coef, 0.0, lambda scaled, _: signs[:, None] * safe_sparse_dot(X, scaled.T)
    )
    return float(margins[0])


def _estimator_margins(estimator, X, y):
    check_is_fitted(estimator)
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], order="C")
    y = np.asarray(y)
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples, but y has {len(y)} labels.")
    classes = estimator.classes_
    codes = class_codes(classes, y, f"the classes of the estimator, {classes.tolist()}")
    weight = np.ones(len(y))
    if not hasattr(estimator, "coef_"):
        # skperc's kernel models measure their own margins in feature space
        if hasattr(estimator, "_geometric_margins"):
            return estimator._geometric_margins(X, codes, weight)
        raise TypeError(
            "margin measures linear classifiers (with coef_ and intercept_) "
            f"and KernelPerceptron; got {type(estimator).__name__}."
        )
    coef = np.atleast_2d(np.asarray(estimator.coef_, dtype=np.float64))
    if coef.shape[0] != problem_count(classes):
        raise TypeError(
            f"{type(estimator).__name__} has {coef.shape[0]} rows of "
            f"coef_ for {len(classes)} classes; margin measures one "
            "weight vector per one-vs-rest problem (one for two classes)."
        )
    if coef.shape[1] != X.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} "
            f"has {coef.shape[1]} weights per problem."
        )
    # skperc's linear models measure their own margins, summed as in training
    if hasattr(estimator, "_geometric_margins"):
        return estimator._geometric_margins(X, codes, weight)
    intercept = np.broadcast_to(
        np.asarray(estimator.intercept_, dtype=np.float64), len(coef)
    )
    return linear_margins(X, codes, first_class(classes), weight, coef, intercept)


def _signed_sample(X, y):
    """X, and y as -1/+1: labels in {-1, +1} as they are, two other labels
    with the larger as +1."""
    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    labels = np.unique(y)
    # string labels are never -1 or +1 (and NumPy 1 warns comparing them)
    if labels.dtype.kind in "iuf" and np.isin(labels, [-1, 1]).all():
        return X, y.astype(np.float64)
    if len(labels) != 2:
        raise ValueError(
            f"y must hold two labels, or labels in {{-1, 1}}; got "
            f"{labels.tolist()}. Measure one class against the rest."
        )
    return X, np.where(y == labels[1], 1.0, -1.0)


@validate_params(
    {"X": ["array-like", "sparse matrix"], "y": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def optimal_margin(X, y):
    """The hard-margin separator through the origin and its margin ``eps*``.

    ``eps* = max_{||w|| = 1} min_i y_i w . x_i`` is ``1 / ||v||`` for the
    hard-margin SVM ``v``, the shortest vector with ``y_i v . x_i >= 1`` for
    all ``i``: a least distance program, solved through non-negative least
    squares (Lawson and Hanson, "Solving Least Squares Problems", chapter
    23) with :func:`scipy.optimize.nnls`. The examples whose constraint the
    solution makes tight (its support vectors) then give ``v`` as the
    shortest solution of ``y_i v . x_i = 1`` on them
    (:func:`scipy.linalg.lstsq`). For a separator with an intercept, lift
    the sample to ``(x, s)`` first.

    The program is solved on the sample divided by the power of 2 of its
    largest entry, so that ``eps*`` scales with the sample to the last bit
    at every scale a float holds. Its relative precision is about
    ``1e-16 R / eps*`` (``R`` the largest norm of the examples), where the
    least distance program's own solution gives ``1e-16 (R / eps*)^2``. A
    sample whose ``eps* / R`` is below about ``1e-12`` raises the error of
    a sample that is not separable, separable or not: the margin is then
    within the rounding of the products ``v . x_i``.

    The margin returned is the one that the unit vector returned reaches on
    the sample, up to the rounding of its products: a margin below
    ``eps*`` at worst, never above it by more than that rounding.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The sample (used as a dense array).

    y : array-like of shape (n_samples,)
        Its labels, two values at most; the larger is ``+1``.

    Returns
    -------
    margin : float
        The optimal margin ``eps* > 0``.

    coef : ndarray of shape (n_features,)
        The unit vector ``w*`` that reaches it.

    Raises
    ------
    ValueError
        When no hyperplane through the origin separates the sample, or
        none that double precision finds (``eps* / R`` below about
        ``1e-12``).

    See Also
    --------
    margin : The margin of a given model.
    sklearn.svm.SVC : With ``kernel="linear"`` and a very large ``C``, the
        same separator, to the solver's tolerance, with an intercept.

    Examples
    --------
    The examples ``(1, 2)`` and ``(2, 1)`` (the second, of label ``0``,
    with its sign): the point of their hull nearest the origin is
    ``(1.5, 1.5)``.

    >>> from skperc.metrics import optimal_margin
    >>> eps, w = optimal_margin([[1.0, 2.0], [-2.0, -1.0]], [1, 0])
    >>> round(eps, 12), w.round(12).tolist()
    (2.12132034356, [0.707106781187, 0.707106781187])
    """
    X, signs = _signed_sample(X, y)
    Z = signs[:, None] * (X.toarray() if sp.issparse(X) else X)
    # eps* scales with the sample: solved on the sample divided by the power
    # of 2 of its largest entry (exactly), so that no scale over- or
    # underflows, and scaled back.
    scale = power_of_two_scale(Z)
    Z *= scale
    n_samples, n_features = Z.shape
    E = np.vstack([Z.T, np.ones(n_samples)])
    f = np.zeros(n_features + 1)
    f[-1] = 1.0
    u = nnls(E, f, maxiter=max(100 * n_samples, 1000))[0]
    # The residual E u - f gives v, but to a relative precision of about
    # 1e-16 (R / eps*)^2: it is of the order of eps*^2 next to 1. The
    # support of u, the examples whose constraint binds, gives v anew as
    # the shortest solution of z_i . v = 1 on them (the hard-margin SVM is
    # that solution), to about 1e-16 R / eps*.
    support = u > 0
    # by a complete orthogonal factorization (gelsy): a QR of the support,
    # where the SVD of numpy's lstsq rounds a square system of 2 examples
    # off the exact v, and missed by up to 14 times 1e-16 R / eps* where
    # this misses by 2.4
    v = lstsq(Z[support], np.ones(support.sum()), lapack_driver="gelsy")[0]
    functional = Z @ v
    norm = stable_norm(v)
    radius = stable_norm(Z, axis=1).max()
    # Separated when the margin of v, relative to the radius, is beyond the
    # rounding of z . v: a test that no scale of the sample changes, and
    # that no v passes on a sample that is not separable.
    if 0 < norm < np.inf and functional.min() > _SEPARATED * norm * radius:
        return float(functional.min() / norm / scale), v / norm
    raise ValueError(
        "The sample is not linearly separable by a hyperplane through the "
        "origin, so its optimal margin is not positive, or its margin eps* "
        "is below about 1e-12 times its radius R, which this program cannot "
        "tell from 0. Lift it to (x, s) for a separator with an intercept."
    )


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"auto", "scale", "power"}),
            ThresholdSchedule,
        ],
        "alpha": [Interval(Real, 1, 2, closed="neither")],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def perceptron_bounds(X, y, *, beta=0.0, alpha=1.3, intercept_scaling=None):
    """The update bound and margin guarantee of a perceptron on a sample.

    From ``R`` and ``eps*`` of the sample, the theorems of Section 2 of "On
    the Perceptron's Compression" for the threshold that ``beta`` and
    ``alpha`` select, with the meaning they have in
    :class:`~skperc.MarginPerceptron`:

    - ``beta=0``, the perceptron: at most ``(R / eps*)^2`` updates, and
      the output separates the sample (margin ``> 0``);
    - ``beta=b > 0``: at most ``(2 b + R^2) / eps*^2`` updates, margin at
      least ``b eps* / (2 b + R^2)`` (Theorem 1);
    - ``beta=RelativeThreshold(b)`` (``"auto"`` is ``b = 0.25``, the
      default of :class:`~skperc.KernelPerceptron`): Theorem 1 with the
      threshold ``b R^2``, at most ``(2 b + 1) (R / eps*)^2`` updates, margin
      at least ``b eps* / (2 b + 1)``;
    - ``beta="scale"``: at most ``9 R^2 / eps*^2`` updates, margin at least
      ``eps* / 3`` (Theorem 2);
    - ``beta="power"``: at most ``(R / eps*)^(2 / (2 - alpha))`` updates,
      margin at least ``alpha eps* / 2 - R (eps* / R)^(alpha / (2 - alpha))``
      (Theorem 3).

    The bound for ``"scale"`` is the one its proof gives (the paper states
    ``10 R^2 / eps*^2``); those for ``"power"`` are Theorem 3 on the sample
    scaled to radius 1. A fitted perceptron's ``n_updates_`` and
    ``margin_`` can be put next to them: they hold for every order of the
    examples and every ``eta0``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The sample.

    y : array-like of shape (n_samples,)
        Its labels, two values; the larger is ``+1``.

    beta : float, {"auto", "scale", "power"} or ThresholdSchedule, \
            default=0.0
        The threshold, as in :class:`~skperc.MarginPerceptron` (``"auto"``
        as in :class:`~skperc.KernelPerceptron`). A schedule must be a
        :class:`~skperc.schedules.ConstantThreshold`,
        :class:`~skperc.schedules.RelativeThreshold`,
        :class:`~skperc.schedules.ScaleThreshold` or
        :class:`~skperc.schedules.PowerThreshold` (or a subclass that keeps
        its ``threshold`` and ``radius_rule``): no theorem bounds the others.
        Its parameters are checked as the learners check them.

    alpha : float, default=1.3
        The exponent of ``beta="power"``, in (1, 2).

    intercept_scaling : float, default=None
        ``None`` for a perceptron through the origin
        (``fit_intercept=False``). A float ``s`` for one with an intercept
        and a fixed lift (``fit_intercept=True, intercept_scaling=s``): the
        bounds are those of the lifted sample ``(x, s)``. Their margin is
        that of the lifted weights, which is at most ``margin_`` (that
        leaves the intercept out of the norm).

    Returns
    -------
    bounds : :class:`~sklearn.utils.Bunch`
        With ``max_updates`` (float, ``inf`` beyond the float range, as
        for ``alpha`` near 2), ``min_margin`` (float; it can be
        negative, and then says nothing), ``radius`` (``R``) and
        ``optimal_margin`` (``eps*``), of the lifted sample if lifted.

    Raises
    ------
    ValueError
        When the (lifted) sample is not separable through the origin.

    See Also
    --------
    optimal_margin : ``eps*`` and the separator that reaches it.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorems 1 to 3.

    Examples
    --------
    >>> from skperc import MarginPerceptron
    >>> from skperc.datasets import make_margin_classification
    >>> from skperc.metrics import perceptron_bounds
    >>> X, y = make_margin_classification(200, 5, margin=0.1, random_state=0)
    >>> bounds = perceptron_bounds(X, y, beta="scale")
    >>> round(bounds.optimal_margin, 6), round(bounds.max_updates)
    (0.1, 900)
    >>> clf = MarginPerceptron(beta="scale", fit_intercept=False).fit(X, y)
    >>> bool(clf.n_updates_[0] <= bounds.max_updates)
    True
    >>> bool(clf.margin_[0] >= bounds.min_margin)
    True
    """
    schedule = checked_schedule(beta, alpha)
    bounded = _BOUNDED_SCHEDULES.get(schedule._kind)
    if bounded is None or schedule.radius_rule != bounded.radius_rule:
        raise ValueError(
            f"No theorem bounds the perceptron with {type(schedule).__name__}; "
            "beta must be a float, 'auto', 'scale', 'power', or a "
            "ConstantThreshold, RelativeThreshold, ScaleThreshold or "
            "PowerThreshold."
        )
    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    if intercept_scaling is not None:
        lift = np.full((X.shape[0], 1), float(intercept_scaling))
        X = (
            sp.hstack([X, lift], format="csr")
            if sp.issparse(X)
            else np.hstack([X, lift])
        )
    eps = optimal_margin(X, y)[0]
    R = float(stable_norm(X.toarray() if sp.issparse(X) else X, axis=1).max())

    # In the ratios R / eps and beta / R^2, which no scale of the sample
    # over- or underflows; a bound beyond the float range is inf.
    ratio = R / eps
    with np.errstate(over="ignore", under="ignore"):
        if bounded is ConstantThreshold:
            relative_beta = np.float64(schedule.beta) / R / R
            max_updates = (2 * relative_beta + 1) * np.float64(ratio) ** 2
            min_margin = eps * relative_beta / (2 * relative_beta + 1)
        elif bounded is RelativeThreshold:
            relative_beta = np.float64(schedule.beta)
            max_updates = (2 * relative_beta + 1) * np.float64(ratio) ** 2
            min_margin = eps * relative_beta / (2 * relative_beta + 1)
        elif bounded is ScaleThreshold:
            max_updates = 9 * np.float64(ratio) ** 2
            min_margin = eps / 3
        else:
            a = float(schedule.alpha)
            max_updates = np.float64(ratio) ** (2 / (2 - a))
            # R (eps / R)^(a / (2 - a)) = eps (eps / R)^(a / (2 - a) - 1)
            min_margin = eps * (
                a / 2 - np.float64(1 / ratio) ** (2 * (a - 1) / (2 - a))
            )
    return Bunch(
        max_updates=float(max_updates),
        min_margin=float(min_margin),
        radius=R,
        optimal_margin=eps,
    )


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "compression_size": [Interval(Integral, 0, None, closed="left")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "training_error": [Interval(Real, 0, 1, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def compression_bound(n_samples, compression_size, delta, *, training_error=0.0):
    """The generalization bound of a selection scheme (compression of size d).

    Theorem 6 of "On the Perceptron's Compression" (from David, Moran and
    Yehudayoff): let a learner's output be determined by a sub-sample of
    size at most ``d`` of its ``m`` training examples, drawn independently
    from a distribution ``D``. Then with probability at least ``1 - delta``
    over the sample, its true error ``L_D`` satisfies

    ``L_D <= L_S + sqrt(eps L_S) + eps``, with
    ``eps = 50 (d log(m / d) + log(1 / delta)) / m``,

    ``L_S`` its error on the training sample. The perceptron's output is
    the sum of the examples it updated on, so a perceptron that made ``T``
    updates (``n_updates_``) is such a learner with ``d = T``; on a
    separable sample it reaches ``L_S = 0`` and the bound is ``eps``. The
    bound says something only while ``d < m`` (``d log(m / d)`` is negative
    beyond): a ``compression_size`` above ``n_samples`` raises a
    ``ValueError``, as for a perceptron that made more updates than it has
    examples.

    Parameters
    ----------
    n_samples : int
        The number of training examples ``m``, ``>= 1``.

    compression_size : int
        The size ``d`` of the compression, ``0 <= d <= m``.

    delta : float
        The probability that the bound fails, in (0, 1).

    training_error : float, default=0.0
        The error ``L_S`` of the learner on its training sample.

    Returns
    -------
    bound : float
        The bound on the true error. A value of 1 or more says nothing.

    Notes
    -----
    ``log`` is taken in base 2, the computer-science convention and the
    larger of the two common readings, so the bound holds under either;
    ``d log(m / d)`` is 0 for ``d = 0``.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 5, Theorem 6.
    .. [2] O. David, S. Moran and A. Yehudayoff, "Supervised learning
       through the lens of compression", NIPS 2016.

    Examples
    --------
    >>> from skperc.metrics import compression_bound
    >>> round(compression_bound(100_000, 20, delta=0.05), 4)
    0.125
    """
    m, d = n_samples, compression_size
    if d > m:
        raise ValueError(
            f"compression_size={d} cannot exceed n_samples={m}: the "
            "compression is a sub-sample, and a larger one bounds nothing."
        )
    complexity = d * math.log2(m / d) if d > 0 else 0.0
    # -log2(delta), not log2(1 / delta): 1 / delta overflows for subnormal delta
    eps = 50 * (complexity - math.log2(delta)) / m
    return training_error + math.sqrt(eps * training_error) + eps
