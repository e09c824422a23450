"""Frames of a stored lab result for :mod:`posviz.lab.present.figures`: one metric per arm and the
per-position seed band.

The spreads over seeds are computed here (statistics live in the library; charts only draw): the
per-arm rows reuse the results table's 95 % intervals (:func:`posviz.analysis.evidence.spread`),
the per-position bands are mean ± one sample standard deviation over seeds. Every interval of an
accuracy is clipped to [0, 1], where an accuracy lives (a t-interval or mean ± std near 0 or 1
reaches past it). Frames read one cell of the sweep (default: the preset's own cell).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.lab.engine import metrics as m
from posviz.lab.engine.results import Cell, LabResult
from posviz.lab.studies.presets import Question


def _finite_band(frame: pd.DataFrame, *, unit_interval: bool = False) -> pd.DataFrame:
    """Bounds that are not finite (one seed: the spread is unknown) collapse onto the mean;
    with ``unit_interval`` (an accuracy) they are clipped to [0, 1]."""
    frame = frame.copy()
    for column in ("mean", "low", "high"):
        frame[column] = frame[column].astype(np.float64)  # an empty frame's columns are objects
    for bound in ("low", "high"):
        frame[bound] = frame[bound].where(np.isfinite(frame[bound]), frame["mean"])
        if unit_interval:
            frame[bound] = frame[bound].clip(0.0, 1.0)
    return frame


def is_accuracy(metric: str) -> bool:
    """Whether a metric id names an accuracy (a share in [0, 1])."""
    return metric in m.METRICS and m.METRICS[metric].unit


def _cell(result: LabResult, cell: str | None) -> Cell:
    return result.default_cell if cell is None else result.cell(cell)


def metric_frame(
    result: LabResult, question: Question, metric: str, *, cell: str | None = None
) -> pd.DataFrame:
    """One row per arm for ``metric`` (an id or its :func:`posviz.lab.engine.metrics.label`):
    ``variant, mean, low, high, role`` (defined values only; ``role``: control or variant)."""
    name = m.label(metric) if metric in m.METRICS else metric
    metric = next((k for k in m.METRICS if m.label(k) == name), metric)
    chosen = _cell(result, cell)
    controls = {result.label(question.control)} if question.control else set()
    rows = [
        {
            "variant": row.label,
            "mean": row.mean,
            "low": row.low,
            "high": row.high,
            "role": "control" if row.label in controls else "variant",
        }
        for row in chosen.summary
        if row.metric == name and np.isfinite(row.mean)
    ]
    frame = pd.DataFrame(rows, columns=["variant", "mean", "low", "high", "role"])
    return _finite_band(frame, unit_interval=is_accuracy(metric))


def seed_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and mean ± one standard deviation over seeds (axis 0) of ``(seeds, n)`` values.

    One seed: the band is the line itself. NaN entries (undefined) stay NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    mean = values.mean(axis=0)
    std = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros_like(mean)
    return mean, mean - std, mean + std
