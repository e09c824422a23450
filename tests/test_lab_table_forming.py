"""The lab's "watch the table form" chart: every snapshot in one spec, stepped in the browser."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posviz.charts.lab import table_forming_chart
from posviz.charts.linked import PLAY_PARAM, POSITION_PARAM


def _spec(snapshots: np.ndarray, steps: list[int]) -> dict:
    return json.loads(json.dumps(table_forming_chart(snapshots, steps, title="t").to_dict()))


def test_every_snapshot_ships_and_the_slider_and_play_pick_one() -> None:
    rng = np.random.default_rng(0)
    tables = rng.normal(size=(4, 6, 8))
    spec = _spec(tables, [0, 10, 20, 30])
    params = {p["name"]: p for p in spec["params"]}
    assert params[PLAY_PARAM]["bind"]["input"] == "checkbox"
    slider = params[POSITION_PARAM]
    assert slider["value"] == 3 and slider["bind"]["max"] == 3  # starts on the trained table
    assert any(
        h["events"]["type"] == "timer" for h in slider["on"] if isinstance(h["events"], dict)
    )
    (rows,) = [v for v in spec["datasets"].values() if len(v) == 4 * 6 * 8]
    drawn = {(r["snapshot"], r["position"], r["dimension"]): r["value"] for r in rows}
    assert drawn[(2, 5, 7)] == pytest.approx(tables[2, 5, 7])
    assert {r["step"] for r in rows if r["snapshot"] == 1} == {10}
    layers = spec["layer"]
    assert all(f"datum.snapshot == {POSITION_PARAM}" in json.dumps(layer) for layer in layers)


def test_the_colour_scale_is_fixed_over_all_snapshots() -> None:
    """A table that grows during training looks like it grows (no rescaling per frame)."""
    tables = np.stack([np.full((3, 4), 0.1), np.full((3, 4), 1.0)])
    tables[1, 0, 0] = -1.0
    spec = _spec(tables, [0, 5])
    domain = spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert domain == pytest.approx([-1.0, 1.0])


def test_mismatched_steps_are_refused_with_the_shapes() -> None:
    with pytest.raises(ValueError, match="one step each"):
        table_forming_chart(np.zeros((3, 2, 2)), [0, 1], title="t")
