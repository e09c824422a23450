"""Long-form frames of a stored lab result, ready for :mod:`posviz.charts.lab`.

The spreads over seeds are computed here (statistics live in the library; charts only draw): the
per-arm rows reuse the results table's 95 % intervals (:func:`posviz.analysis.evidence.spread`),
the per-position bands are mean ± one sample standard deviation over seeds. Every interval of an
accuracy is clipped to [0, 1], where an accuracy lives (a t-interval or mean ± std near 0 or 1
reaches past it). Frames read one cell of the sweep (default: the preset's own cell).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.lab import metrics as m
from posviz.lab.presets import Question, question
from posviz.lab.results import Cell, LabResult
from posviz.lab.rows import movement_frame, row_movement
from posviz.lab.tasks import length_probabilities


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
    """One row per arm for ``metric`` (an id or its :func:`posviz.lab.metrics.label`):
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


def length_frame(result: LabResult, *, cell: str | None = None) -> tuple[pd.DataFrame, str]:
    """Seen vs unseen positions of the longest held-out sequences (extrapolation questions).

    Rows ``variant, length, mean, low, high``: ``length`` is the longest training length for the
    seen positions and the longest evaluation length for the unseen ones; the second value is
    the metric's name. Empty for questions that do not measure unseen positions.
    """
    chosen = _cell(result, cell)
    config = result.config
    rows = []
    for metric, length in (
        ("accuracy_in_range", config.max_len),
        ("accuracy_unseen", max(config.eval_lengths)),
    ):
        name = m.label(metric)
        rows.extend(
            {"variant": r.label, "length": length, "mean": r.mean, "low": r.low, "high": r.high}
            for r in chosen.summary
            if r.metric == name and np.isfinite(r.mean)
        )
    frame = pd.DataFrame(rows, columns=["variant", "length", "mean", "low", "high"])
    return _finite_band(frame, unit_interval=True), "held-out accuracy (seen vs unseen positions)"


def seed_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and mean ± one standard deviation over seeds (axis 0) of ``(seeds, n)`` values.

    One seed: the band is the line itself. NaN entries (undefined) stay NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    mean = values.mean(axis=0)
    std = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros_like(mean)
    return mean, mean - std, mean + std


def position_frame(result: LabResult) -> pd.DataFrame:
    """Held-out accuracy per position in the preset's cell: ``variant, position, mean, low,
    high`` (± 1 std, clipped to [0, 1])."""
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
    frame[["low", "high"]] = frame[["low", "high"]].clip(0.0, 1.0)
    return frame[np.isfinite(frame["mean"])]


def loss_frame(result: LabResult) -> pd.DataFrame:
    """Training loss in the preset's cell, mean over seeds: ``variant, step, loss``."""
    steps = np.asarray(result.default_curve_steps)
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
    """Each learned table's per-row movement from its start (:mod:`posviz.lab.rows`) by position,
    at the preset's budget.

    ``variant, position, seen, mean, low, high`` (``seen``: the probability that one of that
    arm's training sequences reaches the row); empty when the run kept no snapshots.
    """
    preset = question(result.question_id)
    movement = {v: row_movement(s) for v, s in result.snapshots.items()}
    labels = {v: result.label(v) for v in movement}
    seen = {v: length_probabilities(preset.variant(v).config_for(result.config)) for v in movement}
    return movement_frame(movement, labels, seen)


def sweep_frame(result: LabResult) -> pd.DataFrame:
    """The sweep at a glance, long form for a grid chart: one row per cell.

    ``cell, task, init, budget, verdict, key, under_trained, preset`` (``key`` compares verdicts
    across cells; equal keys = the same verdict).
    """
    rows = [
        {
            "cell": c.id,
            "task": c.setting("task").label,
            "init": c.setting("init").label,
            "budget": c.setting("budget").label,
            "verdict": c.verdict.short,
            "key": c.verdict.key,
            "under_trained": ", ".join(result.label(a) for a, ok in c.converged.items() if not ok),
            "preset": c.default,
        }
        for c in result.cells
    ]
    columns = ["cell", "task", "init", "budget", "verdict", "key", "under_trained", "preset"]
    return pd.DataFrame(rows, columns=columns)


def ranking_frame(result: LabResult, *, cell: str | None = None) -> pd.DataFrame:
    """The ranking on unseen positions (extrapolation): ``rank, variant, mean, low, high,
    in_range, retention, retention_low, retention_high, holds`` (intervals clipped to [0, 1]
    for the accuracies)."""
    chosen = _cell(result, cell)
    rows = [
        {
            "rank": r.rank,
            "variant": r.label,
            "mean": r.mean,
            "low": r.low,
            "high": r.high,
            "in_range": r.in_range,
            "retention": r.retention,
            "retention_low": r.retention_low,
            "retention_high": r.retention_high,
            "holds": r.holds,
        }
        for r in chosen.ranking
    ]
    columns = ["rank", "variant", "mean", "low", "high", "in_range", "retention"]
    frame = pd.DataFrame(rows, columns=[*columns, "retention_low", "retention_high", "holds"])
    return _finite_band(frame, unit_interval=True)


def comparison_frame(result: LabResult, *, cell: str | None = None) -> pd.DataFrame:
    """Every comparison of a cell: ``a, b, metric, estimate, low, high, outcome, text``
    (``estimate`` = mean of a − b over seeds, paired 95 % interval)."""
    chosen = _cell(result, cell)
    rows = [
        {
            "a": result.label(c.a) if c.a in result.variant_ids else c.a,
            "b": result.label(c.b) if c.b in result.variant_ids else c.b,
            "metric": c.metric_label,
            "estimate": c.estimate,
            "low": c.low,
            "high": c.high,
            "outcome": c.outcome,
            "text": c.text,
        }
        for c in chosen.comparisons
    ]
    columns = ["a", "b", "metric", "estimate", "low", "high", "outcome", "text"]
    return pd.DataFrame(rows, columns=columns)


def findings_frame(result: LabResult) -> pd.DataFrame:
    """Every finding's verdict in every cell (the grid of setting × verdict, one row per pair):
    ``topic, cell, task, init, budget, verdict, same_as_preset, holds_everywhere``."""
    rows = []
    for f in result.findings:
        preset = f.keys.get(result.default_cell.id)
        for c in result.cells:
            rows.append(
                {
                    "topic": f.topic,
                    "cell": c.id,
                    "task": c.setting("task").label,
                    "init": c.setting("init").label,
                    "budget": c.setting("budget").label,
                    "verdict": f.shorts.get(c.id, ""),
                    "same_as_preset": f.keys.get(c.id) == preset,
                    "holds_everywhere": f.holds_everywhere,
                }
            )
    columns = ["topic", "cell", "task", "init", "budget", "verdict", "same_as_preset"]
    return pd.DataFrame(rows, columns=[*columns, "holds_everywhere"])
