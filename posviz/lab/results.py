"""What a lab run produces: :class:`LabResult`, live :class:`Progress`, and the results table."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from posviz.jobs import JobCancelled
from posviz.lab.config import LabConfig


class LabStopped(JobCancelled):
    """Raised by :func:`posviz.lab.run_question` when ``should_stop()`` turned true."""


@dataclass(frozen=True)
class Progress:
    """Live progress of a run, reported every few steps.

    Attributes:
        step: optimiser steps done in the current variant (1 … total_steps).
        total_steps: steps of one variant.
        loss: training loss per variant id so far (mean over seeds, latest step).
        elapsed_s: seconds since the run started.
        eta_s: estimated seconds left for the whole run (all variants).
        variant: id of the variant being trained now.
        queue_position: 0 while training; 1, 2, … while waiting for a job slot.
    """

    step: int
    total_steps: int
    loss: dict[str, float]
    elapsed_s: float
    eta_s: float
    variant: str = ""
    queue_position: int = 0


@dataclass(frozen=True)
class SummaryRow:
    """One line of the results table: a variant's metric over seeds."""

    variant: str
    label: str
    metric: str
    mean: float  # NaN where the metric is not defined (e.g. a learned table past its rows)
    std: float
    n: int
    low: float  # spread interval (posviz.analysis.evidence.spread)
    high: float
    values: tuple[float, ...]  # per seed
    note: str = ""


@dataclass(frozen=True)
class LabResult:
    """A finished run.

    Attributes:
        run_id: the store key (hash of question, config, variants and code version).
        question_id: the preset answered.
        config: the run's :class:`LabConfig`.
        code_version: hash of the lab's source files when it ran.
        variant_ids, variant_labels: the arms, in order.
        metrics: ``variant → metric → per-seed values`` (NaN where not defined).
        summary: the results table rows (mean ± spread over seeds).
        answer: plain-language answer built from the numbers.
        curve_steps: ``(n_points,)`` steps at which the training loss was recorded.
        curves: ``variant → (seeds, n_points)`` training loss.
        snapshot_steps: ``(n_snapshots,)`` steps of the table snapshots.
        snapshots: ``variant → (seeds, n_snapshots, rows, p)`` learned tables during training
            (learned-table variants only).
        position_accuracy: ``variant → (seeds, n)`` held-out accuracy per position at the longest
            evaluation length the variant can read.
        n_params: ``variant → parameters of one seed's model``.
        diverged: variant ids whose loss became NaN/inf (their metrics are NaN).
        notes: facts shown with the result (e.g. why a metric is not defined).
        wall_s: seconds the training took.
    """

    run_id: str
    question_id: str
    config: LabConfig
    code_version: str
    variant_ids: tuple[str, ...]
    variant_labels: tuple[str, ...]
    metrics: dict[str, dict[str, tuple[float, ...]]]
    summary: tuple[SummaryRow, ...]
    answer: str
    curve_steps: np.ndarray
    curves: dict[str, np.ndarray]
    snapshot_steps: np.ndarray
    snapshots: dict[str, np.ndarray]
    position_accuracy: dict[str, np.ndarray]
    n_params: dict[str, int]
    diverged: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    wall_s: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)

    def label(self, variant_id: str) -> str:
        """The display label of a variant id."""
        return dict(zip(self.variant_ids, self.variant_labels, strict=True))[variant_id]


def results_frame(result: LabResult) -> pd.DataFrame:
    """The results table the page and the CLI both print: one row per variant and metric.

    Columns: ``variant``, ``metric``, ``mean``, ``±`` (standard deviation over seeds), ``low``,
    ``high`` (spread interval), ``seeds`` (n), ``per seed`` (values joined), ``note``.
    """
    rows = [
        {
            "variant": row.label,
            "metric": row.metric,
            "mean": row.mean,
            "±": row.std,
            "low": row.low,
            "high": row.high,
            "seeds": row.n,
            "per seed": ", ".join("n/a" if np.isnan(v) else f"{v:.3f}" for v in row.values),
            "note": row.note,
        }
        for row in result.summary
    ]
    return pd.DataFrame(
        rows, columns=["variant", "metric", "mean", "±", "low", "high", "seeds", "per seed", "note"]
    )
