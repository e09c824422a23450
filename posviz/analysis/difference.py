"""Statistics of a difference: ``mean(a − b)`` with its 95% interval, and the decision it supports.

A comparison of two arms is decided on the interval of their *difference*, not on whether each
arm's own interval overlaps the other's (that rule is a conservative non-test: two intervals can
overlap while the difference's interval excludes 0, e.g. a gap with Welch p ≈ 0.07 read as "no
difference").

The lab's design is **paired**: seed ``s`` of every arm draws its training batches and its
held-out sequences from the same streams (:mod:`posviz.lab.tasks`), so arm A's and arm B's
numbers for seed ``s`` share their data and differ only by the arm. The pairs are independent
across seeds, so the per-seed differences ``dₛ = aₛ − bₛ`` are i.i.d., and the one-sample
Student-t interval on them (:func:`paired_difference`; ``scipy.stats.ttest_rel``) is exact for
normal differences and removes the variance the two arms share through their data. It has
``n − 1`` degrees of freedom; :func:`welch_difference` (``scipy.stats.ttest_ind(equal_var=False)``,
Welch 1947) is there for arms that share nothing (different seeds or data), where pairing would
be wrong.

scipy is imported lazily, inside the functions that need it, to keep page start-up light.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

CONFIDENCE = 0.95
Method = Literal["paired t", "Welch t"]


@dataclass(frozen=True)
class Difference:
    """``mean(a) − mean(b)`` with its two-sided interval.

    Attributes:
        estimate: the difference of means (paired: the mean per-seed difference, the same number).
        low, high: the ``confidence`` interval; ``(-inf, inf)`` when the spread is unknown
            (fewer than two values on a side).
        std: paired: the sample std of the per-seed differences; Welch: the difference's
            standard error.
        n: paired: the number of pairs; Welch: ``n_a + n_b``.
        dof: degrees of freedom of the t distribution used (NaN when unknown).
        p_value: two-sided p-value of "no difference" (NaN when unknown; 1 when every
            difference is exactly 0).
        method: ``"paired t"`` or ``"Welch t"``.
        confidence: the interval's coverage (0.95).
    """

    estimate: float
    low: float
    high: float
    std: float
    n: int
    dof: float
    p_value: float
    method: Method
    confidence: float = CONFIDENCE

    def sign(self) -> int:
        """+1 when the whole interval is above 0, −1 when below, 0 when it contains 0."""
        if self.low > 0:
            return 1
        if self.high < 0:
            return -1
        return 0

    def decided(self) -> bool:
        """Whether the interval excludes 0 (the data support a difference)."""
        return self.sign() != 0

    def interval_text(self, digits: int = 3) -> str:
        """``"0.031 (95% interval 0.012 … 0.050)"``, signed."""
        level = f"{self.confidence:.0%}"
        if not math.isfinite(self.low):
            return f"{self.estimate:+.{digits}f} (no interval: one value per arm)"
        return (
            f"{self.estimate:+.{digits}f} ({level} interval {self.low:+.{digits}f} … "
            f"{self.high:+.{digits}f})"
        )


def _values(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size == 0:
        raise ValueError(f"{name} has no values; pass one value per seed.")
    if not np.isfinite(array).all():
        raise ValueError(
            f"{name} has non-finite values {array.tolist()}; leave undefined arms out of the "
            "comparison."
        )
    return array


def _unknown(estimate: float, n: int, method: Method) -> Difference:
    return Difference(estimate, -math.inf, math.inf, 0.0, n, math.nan, math.nan, method)


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
) -> Difference:
    """Paired Student-t interval of ``mean(a − b)`` over seeds (the lab's design).

    ``d̄ ± t_{(1+c)/2, n−1} · s_d / √n`` with ``s_d`` the sample std of ``dₛ = aₛ − bₛ``; the
    p-value equals ``scipy.stats.ttest_rel``'s (tested). When every difference is equal the
    interval is that single value (no spread): decided unless it is 0.

    Raises:
        ValueError: unequal lengths, no values, or non-finite values.
    """
    x, y = _values("a", a), _values("b", b)
    if x.shape != y.shape:
        raise ValueError(
            f"a paired difference needs one value per seed on both sides; got {x.size} and "
            f"{y.size}. Use welch_difference for arms that share no seeds."
        )
    d = x - y
    estimate = float(d.mean())
    if d.size < 2:
        return _unknown(estimate, int(d.size), "paired t")
    std = float(d.std(ddof=1))
    if std == 0.0:
        p = 1.0 if estimate == 0.0 else 0.0
        return Difference(estimate, estimate, estimate, 0.0, d.size, d.size - 1.0, p, "paired t")
    # Lazy: scipy is heavy and only needed once a difference is computed.
    from scipy import stats

    # t = d̄ / (s_d/√n) on n − 1 degrees of freedom, as scipy.stats.ttest_rel computes it (written
    # out: ttest_rel warns about "catastrophic cancellation" when the differences nearly agree).
    dof = float(d.size - 1)
    se = std / math.sqrt(d.size)
    p = float(2 * stats.t.sf(abs(estimate) / se, dof))
    half = float(stats.t.ppf((1 + confidence) / 2, dof)) * se
    return Difference(
        estimate, estimate - half, estimate + half, std, int(d.size), dof, p, "paired t", confidence
    )


def welch_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
) -> Difference:
    """Welch's interval of ``mean(a) − mean(b)`` for independent samples (Welch 1947).

    ``d ± t_{(1+c)/2, ν} · se``, ``se = √(s_a²/n_a + s_b²/n_b)``, ``ν`` by Welch–Satterthwaite;
    the p-value equals ``scipy.stats.ttest_ind(equal_var=False)``'s (tested).

    Raises:
        ValueError: no values or non-finite values.
    """
    x, y = _values("a", a), _values("b", b)
    estimate = float(x.mean() - y.mean())
    n = int(x.size + y.size)
    if x.size < 2 or y.size < 2:
        return _unknown(estimate, n, "Welch t")
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        p = 1.0 if estimate == 0.0 else 0.0
        return Difference(estimate, estimate, estimate, 0.0, n, math.nan, p, "Welch t")
    # Lazy: scipy is heavy and only needed once a difference is computed.
    from scipy import stats

    dof = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1))
    half = float(stats.t.ppf((1 + confidence) / 2, dof)) * se
    p = float(2 * stats.t.sf(abs(estimate) / se, dof))  # = ttest_ind(equal_var=False)
    return Difference(
        estimate, estimate - half, estimate + half, se, n, float(dof), p, "Welch t", confidence
    )
