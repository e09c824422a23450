"""Pinned numbers of trained answers, checked so that the check holds on any CPU.

A trained answer's numbers are one machine's float results. PyTorch's CPU softmax and
log-softmax round the last bit differently with AVX-512 and with AVX2 kernels at most row widths,
and a few hundred training steps amplify that as a change of seed would (measured, with the
three sets of numbers: docs/benchmarks.md, "The answers on another CPU"). So a pinned number is
checked within **2 standard deviations over seeds** of the run at hand (at least 0.005): a
statement the docs make from that number stays true on another CPU only if the number moves less
than its seeds do. The pins are the docs' numbers, unchanged; a decision (a condition holding, a
verdict) is pinned where it came out the same on every numerics measured, and the docs say which
ones depend on the machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from posviz.analysis.evidence import _t_quantile, spread

#: the least tolerance (the docs quote 3 decimals; a 1-seed spread can be near 0)
FLOOR = 0.005


def within(values: Sequence[float], pinned: float, *, floor: float = FLOOR) -> bool:
    """``mean(values)`` (one value per seed) equals ``pinned`` within 2 std over the seeds."""
    s = spread(values)
    return abs(s.mean - pinned) <= max(2 * s.std, floor)


def interval_sd(numbers: Mapping[str, float], seeds: int) -> float:
    """The std over seeds behind a paired 95 % t-interval ``numbers["low"] … ["high"]`` of a
    mean over ``seeds`` (posviz.analysis.evidence.spread: half-width ``t · std / √n``)."""
    half = (numbers["high"] - numbers["low"]) / 2
    return half * math.sqrt(seeds) / _t_quantile(seeds - 1)


def near(
    numbers: Mapping[str, float],
    pinned: float,
    *,
    seeds: int,
    pinned_interval: tuple[float, float] | None = None,
    floor: float = FLOOR,
) -> bool:
    """A judged condition's ``numbers["estimate"]`` equals ``pinned`` within 2 std over seeds,
    recovered from its own interval or, where the docs quote the pinned run's
    (``pinned_interval``), from the wider of the two: 3 seeds estimate a spread only within a
    factor of about 2 (the need_positions encoder's std was 0.113 on one machine, 0.059 on
    another)."""
    sd = interval_sd(numbers, seeds)
    if pinned_interval is not None:
        sd = max(sd, interval_sd({"low": pinned_interval[0], "high": pinned_interval[1]}, seeds))
    return abs(numbers["estimate"] - pinned) <= max(2 * sd, floor)


def near_comparison(comparison, pinned: float, interval: tuple[float, float]) -> bool:
    """:func:`near` for a :class:`posviz.lab.engine.results.Comparison` (paired over its ``n``
    seeds) against the docs' ``pinned`` estimate and its quoted ``interval``."""
    numbers = {"estimate": comparison.estimate, "low": comparison.low, "high": comparison.high}
    return near(numbers, pinned, seeds=comparison.n, pinned_interval=interval)
