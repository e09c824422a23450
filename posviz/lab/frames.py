"""Long-form frames of a stored lab result, ready for :mod:`posviz.charts.lab`.

The spreads over seeds are computed here (statistics live in the library; charts only draw):
the per-variant rows reuse the results table's 95 % intervals
(:func:`posviz.analysis.evidence.spread`), the per-position bands are mean ± one sample standard
deviation over seeds.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from posviz.lab.presets import Question, question
from posviz.lab.results import LabResult
from posviz.lab.rows import movement_frame, row_movement
from posviz.lab.tasks import length_probabilities

_AT_LENGTH = re.compile(r"^(?P<metric>.+)@(?P<length>\d+)$")  # e.g. "accuracy@32"


def _finite_band(frame: pd.DataFrame) -> pd.DataFrame:
    """Bounds that are not finite (one seed: the spread is unknown) collapse onto the mean."""
    frame = frame.copy()
    for column in ("mean", "low", "high"):
        frame[column] = frame[column].astype(np.float64)  # an empty frame's columns are objects
    for bound in ("low", "high"):
        frame[bound] = frame[bound].where(np.isfinite(frame[bound]), frame["mean"])
    return frame


def metric_frame(result: LabResult, question: Question, metric: str) -> pd.DataFrame:
    """One row per variant for ``metric``: ``variant, mean, low, high, role`` (defined only)."""
    labels = dict(zip(result.variant_ids, result.variant_labels, strict=True))
    controls = {labels.get(question.control, "")}
    rows = [
        {
            "variant": row.label,
            "mean": row.mean,
            "low": row.low,
            "high": row.high,
            "role": "control" if row.label in controls else "variant",
        }
        for row in result.summary
        if row.metric == metric and np.isfinite(row.mean)
    ]
    return _finite_band(pd.DataFrame(rows, columns=["variant", "mean", "low", "high", "role"]))


def length_frame(result: LabResult) -> tuple[pd.DataFrame, str]:
    """``metric@length`` rows as ``variant, length, mean, low, high`` and the metric's name."""
    rows, names = [], set()
    for row in result.summary:
        match = _AT_LENGTH.match(row.metric)
        if match is None or not np.isfinite(row.mean):
            continue
        names.add(match["metric"])
        rows.append(
            {
                "variant": row.label,
                "length": int(match["length"]),
                "mean": row.mean,
                "low": row.low,
                "high": row.high,
            }
        )
    frame = pd.DataFrame(rows, columns=["variant", "length", "mean", "low", "high"])
    return _finite_band(frame), ", ".join(sorted(names)) or "metric"


def seed_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and mean ± one standard deviation over seeds (axis 0) of ``(seeds, n)`` values.

    One seed: the band is the line itself. NaN entries (undefined) stay NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    mean = values.mean(axis=0)
    std = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros_like(mean)
    return mean, mean - std, mean + std


def position_frame(result: LabResult) -> pd.DataFrame:
    """Held-out accuracy per position: ``variant, position, mean, low, high`` (± 1 std)."""
    parts = []
    for variant, values in result.position_accuracy.items():
        mean, low, high = seed_band(values)
        parts.append(
            pd.DataFrame(
                {
                    "variant": result.label(variant),
                    "position": np.arange(mean.shape[0]),
                    "mean": mean,
                    "low": low,
                    "high": high,
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=["variant", "position", "mean", "low", "high"])
    frame = pd.concat(parts, ignore_index=True)
    return frame[np.isfinite(frame["mean"])]


def loss_frame(result: LabResult) -> pd.DataFrame:
    """Training loss, mean over seeds: ``variant, step, loss``."""
    steps = np.asarray(result.curve_steps)
    parts = [
        pd.DataFrame(
            {
                "variant": result.label(variant),
                "step": steps,
                "loss": np.asarray(curve, dtype=np.float64).mean(axis=0),
            }
        )
        for variant, curve in result.curves.items()
    ]
    if not parts:
        return pd.DataFrame(columns=["variant", "step", "loss"])
    frame = pd.concat(parts, ignore_index=True)
    return frame[np.isfinite(frame["loss"])]


def row_movement_frame(result: LabResult) -> pd.DataFrame:
    """Each learned table's per-row movement from its start (:mod:`posviz.lab.rows`) by position.

    ``variant, position, seen, mean, low, high`` (``seen``: the probability that one of that
    variant's training sequences reaches the row); empty when the run kept no snapshots.
    """
    preset = question(result.question_id)
    movement = {v: row_movement(s) for v, s in result.snapshots.items()}
    labels = {v: result.label(v) for v in movement}
    seen = {v: length_probabilities(preset.variant(v).config_for(result.config)) for v in movement}
    return movement_frame(movement, labels, seen)
