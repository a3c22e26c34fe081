# cython: language_level=3
"""The update thresholds of skperc.schedules, for the compiled loops.

A compiled schedule is a kind here and a class of skperc.schedules whose
``_kind`` names it: a new one adds its kind, its parameters to Threshold
and read_threshold, and its formula to threshold.
"""

from cpython.ref cimport PyObject
from libc.math cimport expm1, log1p, pow, sqrt
from libc.stdint cimport int64_t

cpdef enum ScheduleKind:
    CONSTANT = 0
    SCALE = 1
    POWER = 2
    PYTHON = 3
    RELATIVE = 4

# How the radius rho of the schedule follows the data.
cpdef enum RadiusRule:
    RADIUS_NONE = 0
    RADIUS_MAX = 1
    RADIUS_DOUBLE = 2


cdef struct Threshold:
    int kind
    double beta
    double alpha
    double scale        # every threshold is multiplied by it (eta0)
    PyObject* schedule  # the ThresholdSchedule, called for kind PYTHON
    int radius_rule


cdef inline Threshold read_threshold(object schedule, double scale) except *:
    """The struct of a validated schedule (which the caller keeps alive
    while the struct is in use), read once, with the GIL."""
    cdef Threshold rule
    rule.kind = schedule._kind
    rule.radius_rule = schedule._radius_code
    rule.schedule = <PyObject*>schedule
    rule.scale = scale
    rule.beta = (
        float(schedule.beta) if rule.kind == CONSTANT or rule.kind == RELATIVE
        else 0.0)
    rule.alpha = float(schedule.alpha) if rule.kind == POWER else 0.0
    return rule


cdef inline double power_step(double t, double alpha) noexcept nogil:
    """(t^alpha - (t-1)^alpha - 1) / 2, free of cancellation for large t."""
    if t == 1.0:
        return 0.0
    return 0.5 * (-pow(t, alpha) * expm1(alpha * log1p(-1.0 / t)) - 1.0)


cdef inline double python_threshold(PyObject* schedule, int64_t t,
                                    double rho2) except -1.0 nogil:
    with gil:
        return (<object>schedule)._checked_threshold(t, sqrt(rho2))


cdef inline double threshold(const Threshold* rule, int64_t t,
                             double rho2) except -1.0 nogil:
    """scale * beta_t for the t-th update (t = 1, 2, ...), with rho^2 = rho2."""
    if rule.kind == CONSTANT:
        return rule.scale * rule.beta
    if rule.kind == SCALE:
        return rule.scale * rho2
    if rule.kind == RELATIVE:
        return rule.scale * (rule.beta * rho2)
    if rule.kind == POWER:
        return rule.scale * (rho2 * power_step(<double>t, rule.alpha))
    return rule.scale * python_threshold(rule.schedule, t, rho2)


cdef inline bint follow_radius(const Threshold* rule, double norm2,
                               double* rho2) noexcept nogil:
    """Update rho^2 for an example of squared norm norm2, before it is
    examined; True when rho changed."""
    if rule.radius_rule == RADIUS_NONE or norm2 <= rho2[0]:
        return False
    rho2[0] = 4.0 * norm2 if rule.radius_rule == RADIUS_DOUBLE else norm2
    return True
