from decimal import Decimal, getcontext

import pytest
from sklearn.base import clone

from skperc.schedules import (
    ConstantThreshold,
    PowerThreshold,
    RelativeThreshold,
    ScaleThreshold,
    ThresholdSchedule,
)


def exact_power_threshold(t, alpha, radius):
    """(t^a - (t-1)^a - 1) / 2 * radius^2 with 60 significant digits."""
    getcontext().prec = 60
    t, a, r = Decimal(t), Decimal(alpha), Decimal(radius)
    return float(r * r * (t**a - (t - 1) ** a - 1) / 2)


def test_constant_and_scale_thresholds():
    assert ConstantThreshold(0.3).threshold(7, 2.0) == 0.3
    assert ScaleThreshold().threshold(7, 2.0) == 4.0
    assert ConstantThreshold().radius_rule == "none"
    assert ScaleThreshold().radius_rule == "double"
    assert PowerThreshold().radius_rule == "max"
    assert RelativeThreshold(0.3).threshold(7, 2.0) == 0.3 * 4.0
    assert RelativeThreshold().radius_rule == "max"


@pytest.mark.parametrize("alpha", [1.01, 1.3, 1.5, 1.99])
@pytest.mark.parametrize("t", [1, 2, 3, 10, 1000, 10**6, 10**12])
def test_power_threshold_is_accurate(alpha, t):
    assert PowerThreshold(alpha).threshold(t, 1.7) == pytest.approx(
        exact_power_threshold(t, alpha, 1.7), rel=1e-12, abs=1e-300
    )


def test_the_textbook_power_formula_cancels_where_ours_does_not():
    t, alpha = 10**12, 1.3
    exact = exact_power_threshold(t, alpha, 1.0)
    textbook = (t**alpha - (t - 1) ** alpha - 1) / 2
    assert abs(textbook - exact) > 1e-6 * exact
    assert PowerThreshold(alpha).threshold(t, 1.0) == pytest.approx(exact, rel=1e-12)


def test_power_threshold_keeps_the_norm_bound():
    """The thresholds are chosen so that 2 beta_t + R^2 telescopes to
    ||w_t||^2 <= R^2 t^alpha (Theorem 3): check the telescoping sum."""
    schedule, R = PowerThreshold(1.5), 2.0
    bound = sum(2 * schedule.threshold(t, R) + R**2 for t in range(1, 501))
    assert bound == pytest.approx(R**2 * 500**1.5, rel=1e-12)


def test_schedules_are_scikit_learn_parameters():
    schedule = PowerThreshold(alpha=1.7)
    assert repr(schedule) == "PowerThreshold(alpha=1.7)"
    assert clone(schedule).get_params() == {"alpha": 1.7}
    assert schedule.set_params(alpha=1.2).alpha == 1.2


def test_the_base_class_must_be_implemented():
    with pytest.raises(NotImplementedError, match="must implement threshold"):
        ThresholdSchedule().threshold(1, 1.0)
