"""The answers tier's cross-CPU pin rule (tests/pin_support.py): 2 std over seeds, recovered
from a condition's own t-interval, and a pin it must reject."""

from __future__ import annotations

import numpy as np
import pytest
from pin_support import FLOOR, interval_sd, near, within

from posviz.analysis.evidence import spread


@pytest.mark.parametrize("seeds", [3, 5])
def test_the_std_behind_an_interval_is_the_seeds_std(seeds) -> None:
    values = np.random.default_rng(seeds).normal(0.1, 0.03, seeds)
    s = spread(values)
    numbers = {"estimate": s.mean, "low": s.low, "high": s.high}
    assert interval_sd(numbers, seeds) == pytest.approx(s.std)
    assert near(numbers, s.mean + 1.99 * s.std, seeds=seeds)
    assert not near(numbers, s.mean + 2.01 * s.std, seeds=seeds)


def test_a_pin_is_never_looser_than_the_floor_nor_tighter() -> None:
    same = [0.2, 0.2, 0.2]  # no spread: the floor decides
    assert within(same, 0.2 + FLOOR * 0.99) and not within(same, 0.2 + FLOOR * 1.01)
    assert not within([0.1, 0.2, 0.3], 0.41) and within([0.1, 0.2, 0.3], 0.39)
