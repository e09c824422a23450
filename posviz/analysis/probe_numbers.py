"""What the Probing page shows of its probes: the results table, the chart frame, the warnings.

Each input is a list of ``(table name, ProbeReport)`` from
:func:`posviz.analysis.probes.probe_with_control`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from posviz.analysis.evidence import Spread
from posviz.analysis.probes import ProbeReport

#: points per table in the probe charts, so big tables keep a light chart.
MAX_CHART_POINTS = 1500
#: an OLS fit with between these many times as many training rows as columns sits at its
#: interpolation threshold, where least squares' test error blows up (double descent).
THRESHOLD_BAND = (0.8, 1.25)

Reports = list[tuple[str, ProbeReport]]


def _sig(value: float) -> str:
    """Three significant digits, no exponent for everyday sizes (21.5, 182, 0.0712)."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    digits = max(0, 2 - int(np.floor(np.log10(abs(value)))))
    return f"{value:.{min(digits, 6)}f}"


def spread_text(spread: Spread) -> str:
    """``"21.5 ± 2.56"`` for a :class:`~posviz.analysis.evidence.Spread` (mean, then std)."""
    if spread.n < 2:
        return f"{_sig(spread.mean)} (one value, no spread)"
    return f"{_sig(spread.mean)} ± {_sig(spread.std)}"


def probe_row(name: str, report: ProbeReport) -> dict[str, Any]:
    """One results row: the probe's numbers each beside the random-table control's."""
    result = report.result
    row: dict[str, Any] = {
        "table": name,
        "protocol": result.protocol
        + (", rounded" if result.rounded else "")
        + (" (in-sample: a fit, not a held-out score)" if result.in_sample else ""),
        "train rows": result.n_train,
        "MAE (positions)": spread_text(report.mae.value),
        "MAE, random table": spread_text(report.mae.control),
        "R²": round(result.r2, 4),
        "R², random table": round(report.control.r2, 4),
        "MAE verdict": report.mae.verdict(),
    }
    if report.order is not None:
        row["order error (chance 0.5)"] = spread_text(report.order.value)
        row["order error, random table"] = spread_text(report.order.control)
        row["order verdict"] = report.order.verdict()
    return row


def probe_results_frame(reports: Reports) -> pd.DataFrame:
    """One :func:`probe_row` per table."""
    return pd.DataFrame([probe_row(name, report) for name, report in reports])


def probe_chart_frame(reports: Reports, *, max_points: int = MAX_CHART_POINTS) -> pd.DataFrame:
    """Every table's ``position, predicted, abs_error`` with a ``table`` column, each table
    thinned to ``max_points`` evenly spaced rows."""
    frames = []
    for name, report in reports:
        frame = report.result.frame()
        frame["table"] = name
        if len(frame) > max_points:
            frame = frame.iloc[np.linspace(0, len(frame) - 1, max_points).astype(int)]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def interpolation_threshold(
    reports: Reports, matrices: dict[str, tuple[np.ndarray, Any]]
) -> list[str]:
    """Tables whose OLS fit has about as many training rows as columns (double descent)."""
    low, high = THRESHOLD_BAND
    names = []
    for name, report in reports:
        width = np.shape(matrices[name][0])[1]
        ols = all(a == 0.0 for a in report.result.alphas)
        if ols and low * width <= report.result.n_train <= high * width:
            names.append(name)
    return names
