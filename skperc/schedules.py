"""Update thresholds of the margin perceptrons.

A margin perceptron updates on an example ``(x, y)`` when
``y * f(x) <= eta0 * beta_t``, where ``f`` is the current decision function
and ``beta_t`` is the threshold a schedule gives for the ``t``-th update
(``t = 1, 2, ...``). The schedules here are the margin variants of Moran,
Nachum, Panasoff and Yehudayoff, "On the Perceptron's Compression"
(Section 2); :class:`ThresholdSchedule` is the base class for new ones.

A schedule may follow the scale of the data through a running radius
``rho``, updated before each example ``x`` is examined (with the lifted
intercept coordinate counted in ``||x||`` when there is one):

- ``radius_rule = "none"``: the threshold does not use ``rho``;
- ``radius_rule = "max"``: ``rho`` is the largest norm seen so far;
- ``radius_rule = "double"``: when ``||x|| > rho``, ``rho`` becomes
  ``2 ||x||`` (Algorithm 3 of the paper).

Four of the schedules here (constant, relative, scale and power) run
inside the compiled training loop, and so does a subclass of one that keeps
its :meth:`ThresholdSchedule.threshold`; any other schedule runs its
:meth:`ThresholdSchedule.threshold` from Python, once per update and per
change of ``rho``, which must return a finite real number ``>= 0``.

:class:`~skperc.MarginMLPClassifier` takes the same schedules as the margin
``beta_t`` of its loss ``ReLU(beta_t - y o(x))``, asked once per gradient
step; there ``x`` is the output of the network's last hidden layer.
"""

import math
from numbers import Real

from sklearn.base import BaseEstimator

from ._compat import Interval
from ._thresholds import RadiusRule, ScheduleKind

# The radius rules of the schedules, as the compiled loops number them.
_RADIUS_RULES = {
    "none": RadiusRule.RADIUS_NONE,
    "max": RadiusRule.RADIUS_MAX,
    "double": RadiusRule.RADIUS_DOUBLE,
}

__all__ = [
    "ThresholdSchedule",
    "ConstantThreshold",
    "RelativeThreshold",
    "ScaleThreshold",
    "PowerThreshold",
    "SublinearThreshold",
]


class ThresholdSchedule(BaseEstimator):
    """Base class of the update thresholds ``beta_t`` of a margin perceptron.

    A subclass sets the class attribute :attr:`radius_rule` and implements
    :meth:`threshold`. Its parameters follow the scikit-learn conventions
    (an ``__init__`` that stores them, ``_parameter_constraints`` to check
    them), so a schedule can be cloned, printed and tuned in a grid search
    through ``beta__<parameter>``.

    Attributes
    ----------
    radius_rule : {"none", "max", "double"}
        How the running radius ``rho`` passed to :meth:`threshold` follows
        the data; see :mod:`skperc.schedules`.

    See Also
    --------
    ConstantThreshold : Rosenblatt's perceptron and the beta-perceptron.
    ScaleThreshold : The R-independent perceptron.
    PowerThreshold : The infinity-perceptron.

    Examples
    --------
    A threshold that grows like the square root of the update count, on the
    scale of the data:

    >>> from skperc.schedules import ThresholdSchedule
    >>> class SqrtThreshold(ThresholdSchedule):
    ...     radius_rule = "max"
    ...     def threshold(self, t, radius):
    ...         return radius**2 * t**0.5
    >>> SqrtThreshold().threshold(4, 1.5)
    4.5
    """

    radius_rule = "max"

    _parameter_constraints: dict = {}

    # How the compiled loops compute the threshold: in Python, by calling
    # threshold(), unless the class itself (not a base) names a compiled kind.
    _kind = ScheduleKind.PYTHON

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A subclass that overrides threshold() runs it from Python, so that
        # the override is honoured. One that keeps its base's threshold keeps
        # its base's compiled kind: from Python, the threshold of rho^2 would
        # be that of sqrt(rho^2)**2, a rounding away on ties.
        if "_kind" not in cls.__dict__ and "threshold" in cls.__dict__:
            cls._kind = ScheduleKind.PYTHON

    @property
    def _radius_code(self):
        """The radius rule, as the compiled loops number it."""
        return _RADIUS_RULES[self.radius_rule]

    def threshold(self, t, radius):
        """Threshold for the ``t``-th update.

        Parameters
        ----------
        t : int
            The number of the update this threshold decides, ``t >= 1``
            (one more than the updates made so far).
        radius : float
            The running radius ``rho`` (0 with ``radius_rule="none"``).

        Returns
        -------
        beta : float
            A finite threshold ``>= 0``. The perceptron multiplies it by
            ``eta0``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement threshold(t, radius)."
        )

    def _checked_threshold(self, t, radius):
        """``threshold(t, radius)`` as a float, refused unless a finite real
        number ``>= 0``: what the learners call."""
        value = self.threshold(t, radius)
        numeric = isinstance(value, Real)
        if numeric:
            value = float(value)
        if not (numeric and value >= 0.0 and math.isfinite(value)):
            raise (ValueError if numeric else TypeError)(
                f"{type(self).__name__}.threshold({t}, {radius!r}) returned "
                f"{value!r}; a threshold must be a finite number >= 0."
            )
        return value


class ConstantThreshold(ThresholdSchedule):
    """A constant threshold: the perceptron and the beta-perceptron.

    ``beta=0`` is Rosenblatt's perceptron: at most ``(R / eps*)^2`` updates
    (Novikoff). ``beta > 0`` is the beta-perceptron (Algorithm 2 of the
    paper): at most ``(2 beta + R^2) / eps*^2`` updates, and an output
    margin of at least ``beta eps* / (2 beta + R^2)``.

    Parameters
    ----------
    beta : float, default=0.0
        The threshold, ``>= 0``.

    See Also
    --------
    ScaleThreshold : A threshold on the scale of the data.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 1.

    Examples
    --------
    >>> from skperc.schedules import ConstantThreshold
    >>> ConstantThreshold(beta=1.0).threshold(t=10, radius=3.0)
    1.0
    """

    radius_rule = "none"
    _kind = ScheduleKind.CONSTANT

    _parameter_constraints: dict = {
        "beta": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, beta=0.0):
        self.beta = beta

    def threshold(self, t, radius):
        return float(self.beta)


class RelativeThreshold(ThresholdSchedule):
    """The beta-perceptron on the scale of the data: ``beta_t = beta rho^2``.

    ``rho`` is the largest norm seen so far, so once every example has been
    seen the run is the beta-perceptron with the constant threshold
    ``beta R^2``: at most ``(2 beta + 1) (R / eps*)^2`` updates, and an
    output margin of at least ``beta eps* / (2 beta + 1)``. The proof of the
    beta-perceptron carries over, since no threshold before exceeds
    ``beta R^2``. Unlike :class:`ConstantThreshold`, the learned classifier
    does not change when every input is multiplied by the same constant;
    unlike :class:`ScaleThreshold`, whose threshold is four times the
    squared norm of the longest example and so asks for a margin of
    ``eps* / 3``, ``beta`` sets the margin it asks for, and with it the
    price in updates.

    Parameters
    ----------
    beta : float, default=0.25
        The threshold as a multiple of the squared radius, ``>= 0``.

    See Also
    --------
    ConstantThreshold : The same threshold on a fixed scale.
    ScaleThreshold : Margin ``eps* / 3``, with no knowledge of ``R``.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 1.

    Examples
    --------
    >>> from skperc.schedules import RelativeThreshold
    >>> RelativeThreshold(beta=0.25).threshold(t=10, radius=3.0)
    2.25
    """

    radius_rule = "max"
    _kind = ScheduleKind.RELATIVE

    _parameter_constraints: dict = {
        "beta": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, beta=0.25):
        self.beta = beta

    def threshold(self, t, radius):
        return float(self.beta) * float(radius) ** 2


class ScaleThreshold(ThresholdSchedule):
    """The R-independent perceptron: ``beta = rho^2`` with a doubling radius.

    Before an example ``x`` is examined, ``rho`` becomes ``2 ||x||`` if
    ``||x|| > rho`` (Algorithm 3 of the paper). The output margin is at
    least ``eps* / 3`` after at most ``9 R^2 / eps*^2`` updates, with no
    knowledge of ``R``, and the learned classifier does not change when
    every input is multiplied by the same constant.

    See Also
    --------
    PowerThreshold : Margins arbitrarily close to the optimum.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 2.

    Examples
    --------
    >>> from skperc.schedules import ScaleThreshold
    >>> ScaleThreshold().threshold(t=10, radius=3.0)
    9.0
    """

    radius_rule = "double"
    _kind = ScheduleKind.SCALE

    def threshold(self, t, radius):
        return float(radius) ** 2


class PowerThreshold(ThresholdSchedule):
    """The infinity-perceptron: a threshold that grows with the update count.

    ``beta_t = rho^2 (t^alpha - (t-1)^alpha - 1) / 2`` for the ``t``-th
    update, with ``rho`` the largest norm seen so far (Algorithm 4 of the
    paper combined with the scaling of Algorithm 3, as in its Remark 2).
    This keeps ``||w_t||^2 <= rho^2 t^alpha``, so on data of radius ``R``
    the run makes at most ``(R / eps*)^(2 / (2 - alpha))`` updates and its
    output margin is at least ``alpha eps* / 2 - R (eps* / R)^(alpha / (2 -
    alpha))``: close to ``eps*`` for ``alpha`` near 2, at a steep price in
    updates.

    Parameters
    ----------
    alpha : float, default=1.3
        The exponent, in the open interval (1, 2).

    See Also
    --------
    ScaleThreshold : Margin ``eps* / 3`` in ``O((R / eps*)^2)`` updates.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Theorem 3 and Remark 2.

    Examples
    --------
    >>> from skperc.schedules import PowerThreshold
    >>> PowerThreshold(alpha=1.5).threshold(t=1, radius=2.0)
    0.0
    >>> round(PowerThreshold(alpha=1.5).threshold(t=100, radius=1.0), 4)
    6.9812
    """

    radius_rule = "max"
    _kind = ScheduleKind.POWER

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 1, 2, closed="neither")],
    }

    def __init__(self, alpha=1.3):
        self.alpha = alpha

    def threshold(self, t, radius):
        if t == 1:
            return 0.0
        alpha = float(self.alpha)
        # t^a - (t-1)^a = t^a (1 - (1 - 1/t)^a), computed without
        # cancellation when t is large.
        step = -(float(t) ** alpha) * math.expm1(alpha * math.log1p(-1.0 / t))
        return float(radius) ** 2 * (0.5 * (step - 1.0))


class SublinearThreshold(ThresholdSchedule):
    """A threshold that grows with time as ``t^(1 - c)``.

    ``beta_t = (t - 1)^(1 - c)`` for the ``t``-th update: the number of
    updates made before it, to the power ``1 - c``. Section 3 of the paper
    trains the output units of a neural network with the loss
    ``ReLU(beta_t - y o(x))`` and this threshold, after the analysis of
    Algorithm 4, which predicts that a smaller ``c`` (a faster growth)
    gives a smaller error. It is the ``beta="sublinear"`` threshold of
    :class:`~skperc.MarginMLPClassifier`; it does not follow the scale of
    the data.

    Parameters
    ----------
    c : float, default=0.5
        The exponent, in the open interval (0, 1).

    See Also
    --------
    PowerThreshold : The threshold of the infinity-perceptron.

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 3.

    Examples
    --------
    >>> from skperc.schedules import SublinearThreshold
    >>> SublinearThreshold(c=0.5).threshold(t=1, radius=0.0)
    0.0
    >>> SublinearThreshold(c=0.5).threshold(t=101, radius=0.0)
    10.0
    """

    radius_rule = "none"

    _parameter_constraints: dict = {
        "c": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, c=0.5):
        self.c = c

    def threshold(self, t, radius):
        return float(t - 1) ** (1.0 - float(self.c))


def _resolve_schedule(beta, alpha):
    """The schedule that the ``beta`` and ``alpha`` parameters select."""
    if isinstance(beta, ThresholdSchedule):
        return beta
    if beta == "auto":
        return RelativeThreshold()
    if isinstance(beta, str):
        return ScaleThreshold() if beta == "scale" else PowerThreshold(alpha)
    return ConstantThreshold(beta)


def _checked(schedule):
    """The schedule, its parameters and its radius rule validated."""
    schedule._validate_params()
    if schedule.radius_rule not in _RADIUS_RULES:
        raise ValueError(
            f"{type(schedule).__name__}.radius_rule must be one of "
            f"{sorted(_RADIUS_RULES)}; got {schedule.radius_rule!r}."
        )
    return schedule


def checked_schedule(beta, alpha):
    """The schedule selected by ``beta`` and ``alpha``, validated: the object
    the compiled loops read their threshold from."""
    return _checked(_resolve_schedule(beta, alpha))
