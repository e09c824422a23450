"""posviz.analysis.difference: the difference of two arms with its 95% interval, against scipy and
by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from posviz.analysis.difference import paired_difference, welch_difference
from posviz.analysis.evidence import spread


def test_paired_equals_scipy_ttest_rel() -> None:
    a = np.array([0.91, 0.87, 0.95, 0.90, 0.93])
    b = np.array([0.88, 0.86, 0.90, 0.89, 0.90])
    d = paired_difference(a, b)
    ref = stats.ttest_rel(a, b)
    ci = ref.confidence_interval(0.95)
    assert d.estimate == pytest.approx(float((a - b).mean()))
    assert (d.low, d.high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-12) and d.dof == 4
    assert d.sign() == 1 and d.method == "paired t"


def test_paired_by_hand() -> None:
    # d = (1, 2, 3): mean 2, s_d = 1, t_{0.975, 2} = 4.30265272975
    d = paired_difference([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    half = 4.30265272975 / math.sqrt(3)
    assert (d.low, d.high) == pytest.approx((2 - half, 2 + half), rel=1e-10)
    assert d.sign() == 0 and not d.decided()  # the interval contains 0 (−0.484 … 4.484)


def test_welch_equals_scipy_ttest_ind() -> None:
    a, b = np.array([1.341, 1.29, 1.40]), np.array([0.416, 0.52, 0.47, 0.39])
    d = welch_difference(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert d.p_value == pytest.approx(ref.pvalue, rel=1e-10) and d.n == 7


def test_a_difference_can_be_decided_where_the_arms_intervals_overlap() -> None:
    """The old rule (non-overlapping 95% intervals) misses differences the paired test finds."""
    base = np.array([0.80, 0.90, 0.70, 0.85, 0.75])
    a, b = base + 0.05, base + np.array([0.0, 0.01, -0.01, 0.0, 0.005])
    assert spread(a).overlaps(spread(b))
    assert paired_difference(a, b).sign() == 1


def test_degenerate_cases() -> None:
    same = paired_difference([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert (same.low, same.high, same.p_value, same.sign()) == (0.0, 0.0, 1.0, 0)
    shifted = paired_difference([1.0, 1.0], [0.5, 0.5])
    assert shifted.sign() == 1 and shifted.low == shifted.high == 0.5
    single = paired_difference([0.3], [0.1])
    assert single.sign() == 0 and math.isinf(single.high) and math.isnan(single.p_value)
    assert "no interval" in single.interval_text()
    with pytest.raises(ValueError, match="one value per seed on both sides"):
        paired_difference([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="non-finite"):
        paired_difference([1.0, float("nan")], [1.0, 2.0])
