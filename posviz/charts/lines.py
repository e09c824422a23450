"""Line and bar charts of a position table: chosen dimensions over positions, per-dimension
variance with an "active" threshold, and similarity of ``PE(p)`` with ``PE(p + k)``.

Charts take arrays and draw (never displayed here): the statistics come from
:mod:`posviz.analysis.stats` and are passed in (:func:`variance_bars_chart`,
:func:`shift_band_chart`); :mod:`posviz.notebook` has table-taking versions for notebooks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.style import (
    CONTROL_COLOR,
    FIT_WIDTH,
    GUIDE_COLOR,
    PALETTE,
    chart_title,
    color_scale,
    legend_columns,
)

MAX_LINE_POINTS = 2048  # per line; longer tables are bucketed into mean + min–max band
MAX_LINES = len(PALETTE)  # one palette colour per line, never two lines in one colour


def _bucket(column: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = column.size
    k = math.ceil(n / size)
    padded = np.full(k * size, np.nan)
    padded[:n] = column
    blocks = padded.reshape(k, size)
    return np.nanmean(blocks, axis=1), np.nanmin(blocks, axis=1), np.nanmax(blocks, axis=1)


def dimensions_chart(
    matrix: np.ndarray,
    dims: Sequence[int],
    *,
    labels: Sequence[str] | None = None,
    current: int | None = None,
    title: str | None = None,
    width: int = 800,
    height: int = 300,
) -> alt.Chart | alt.LayerChart:
    """Value of each chosen dimension (column) as a line over positions.

    Tables longer than 2048 positions are bucketed honestly: each point is the mean of
    ``ceil(n / 2048)`` positions, with a band from the bucket's min to its max (so a fast sine
    shows as a full band instead of an aliased line); the subtitle says so.

    Args:
        matrix: ``(n_positions, d_model)``.
        dims: up to 12 column indices.
        labels: legend label per dim (default ``"dim j"``).
        current: a position to mark with a vertical rule.
    """
    table = np.asarray(matrix)
    n, d = table.shape
    dims = [int(j) for j in dims][:MAX_LINES]
    if not dims:
        raise ValueError("No dimensions chosen; pick at least one column to plot.")
    bad = [j for j in dims if not 0 <= j < d]
    if bad:
        raise ValueError(f"dimension(s) {bad} out of range; this table has columns 0 … {d - 1}.")
    labels = list(labels) if labels is not None else [f"dim {j}" for j in dims]
    size = math.ceil(n / MAX_LINE_POINTS)
    frames = []
    for j, label in zip(dims, labels, strict=True):
        mean, lo, hi = _bucket(table[:, j].astype(np.float64), size)
        start = np.arange(mean.size) * size
        frames.append(
            pd.DataFrame({"position": start, "value": mean, "lo": lo, "hi": hi, "dimension": label})
        )
    data = pd.concat(frames, ignore_index=True)
    color = (
        alt.Color("dimension:N", sort=labels, title=None)
        .scale(color_scale(labels))
        # as many columns as fit a phone (the legend starts after the y axis, ~290 px are left)
        .legend(
            orient="top",
            labelLimit=0,
            columns=legend_columns(labels),
        )
    )
    x = alt.X("position:Q", title="position").scale(domain=[0, max(n - 1, 1)], nice=False)
    base = alt.Chart(data).encode(x=x, color=color)
    tooltip = ["dimension:N", "position:Q", alt.Tooltip("value:Q", format=".4f")]
    layers = [
        # 6 px of padding: a sinusoid's ±1 is not drawn on the plot's border
        base.mark_line(strokeWidth=1.5).encode(
            y=alt.Y("value:Q", title="value").scale(padding=6), tooltip=tooltip
        )
    ]
    subtitle = [f"every position of {n}"]
    if size > 1:
        layers.insert(0, base.mark_area(opacity=0.25).encode(y="lo:Q", y2="hi:Q"))
        subtitle = [f"{n} positions in buckets of {size}:", "line = mean, band = min…max"]
    if current is not None and 0 <= current < n:
        rule = pd.DataFrame({"position": [current]})
        layers.append(
            alt.Chart(rule).mark_rule(color=GUIDE_COLOR, strokeDash=[4, 3]).encode(x="position:Q")
        )
    return alt.layer(*layers).properties(
        autosize=FIT_WIDTH,
        width=width,
        height=height,
        title=chart_title(title or "Chosen dimensions over positions", subtitle),
    )


def variance_bars_chart(
    variance: np.ndarray,
    *,
    threshold: float = 1e-3,
    title: str | None = None,
    width: int = 800,
    height: int = 260,
    floor: float = 1e-12,
) -> alt.LayerChart:
    """Variance of every dimension across positions (log scale), bars above ``threshold`` "active".

    The title counts the active dimensions. Variances below ``floor`` are drawn at ``floor``.

    Args:
        variance: ``(d_model,)`` per-dimension variance
            (:func:`posviz.analysis.stats.dimension_variance`).
        threshold: variance above which a dimension counts as active (> 0).
    Raises:
        ValueError: ``threshold`` not a positive number, or ``variance`` not 1-D.
    """
    if not (isinstance(threshold, int | float) and math.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold={threshold!r} must be a positive number, e.g. 1e-3.")
    var = np.asarray(variance, dtype=np.float64)
    if var.ndim != 1:
        raise ValueError(
            f"variance has shape {var.shape}; pass one value per dimension, (d_model,)."
        )
    d = var.size
    active = var > threshold
    data = pd.DataFrame(
        {
            "dimension": np.arange(d),
            "variance": np.maximum(var, floor),
            "exact": var,
            "status": np.where(active, "active", "barely moves"),
            "floor": floor,
        }
    )
    y = alt.Y("variance:Q", title="variance across positions (log)").scale(type="log")
    bars = (
        alt.Chart(data)
        .mark_bar(width={"band": 1} if d > 400 else alt.Undefined)
        .encode(
            x=alt.X("dimension:Q", title="dimension").scale(domain=[0, d], nice=False),
            y=y,
            y2="floor:Q",
            color=alt.Color("status:N", title=None, sort=["active", "barely moves"])
            .scale(domain=["active", "barely moves"], range=[PALETTE[0], CONTROL_COLOR])
            .legend(orient="top"),
            tooltip=[
                "dimension:Q",
                alt.Tooltip("exact:Q", title="variance", format=".3e"),
                "status:N",
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(color=PALETTE[2], strokeDash=[5, 3])
        .encode(y="threshold:Q")
    )
    heading = title or f"{int(active.sum())} of {d} dimensions are active"
    return alt.layer(bars, rule).properties(
        autosize=FIT_WIDTH,
        width=width,
        height=height,
        title=chart_title(heading, f"active: variance > {threshold:g}"),
    )


def shift_band_chart(
    shifts: np.ndarray,
    mean: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    *,
    std: np.ndarray | None = None,
    count: np.ndarray | None = None,
    metric: str = "cosine",
    title: str | None = None,
    width: int = 800,
    height: int = 260,
) -> alt.LayerChart:
    """Similarity of ``M[p]`` and ``M[p+k]`` against ``k``: the mean over ``p`` with its min–max
    band, all computed by the caller (:func:`posviz.analysis.stats.shift_similarity`).

    A band of zero width means the similarity depends only on the offset ``k``, not on ``p``
    (true for sinusoids: ``PE(p)·PE(p+k) = Σ_i cos(ω_i k)``). The subtitle reports the largest
    spread over ``p``.

    Args:
        shifts, mean, low, high: ``(max_shift + 1,)``; optional ``std``/``count`` go in tooltips.
        metric: ``"cosine"`` or ``"dot"`` (axis label only).
    """
    columns = {"shifts": shifts, "mean": mean, "min": low, "max": high}
    if std is not None:
        columns["std"] = std
    if count is not None:
        columns["count"] = count
    data = pd.DataFrame({name: np.asarray(v) for name, v in columns.items()})
    spread = float((data["max"] - data["min"]).max())
    max_shift = int(data["shifts"].max())
    x = alt.X("shifts:Q", title="offset k (positions)").scale(domain=[0, max_shift], nice=False)
    label = "cosine similarity" if metric == "cosine" else "dot product"
    base = alt.Chart(data).encode(x=x)
    band = base.mark_area(opacity=0.3, color=PALETTE[2]).encode(y="min:Q", y2="max:Q")
    tooltip = [
        alt.Tooltip("shifts:Q", title="k"),
        alt.Tooltip("mean:Q", format=".4f"),
        alt.Tooltip("min:Q", format=".4f"),
        alt.Tooltip("max:Q", format=".4f"),
    ]
    if std is not None:
        tooltip.insert(2, alt.Tooltip("std:Q", title="std over p", format=".2e"))
    if count is not None:
        tooltip.append(alt.Tooltip("count:Q", title="pairs (p, p+k)"))
    line = base.mark_line(color=PALETTE[0]).encode(
        y=alt.Y("mean:Q", title=f"{label} of p and p+k"), tooltip=tooltip
    )
    subtitle = ["line: mean over p; band: min…max over p", f"(widest spread {spread:.2g})"]
    return alt.layer(band, line).properties(
        autosize=FIT_WIDTH,
        width=width,
        height=height,
        title=chart_title(title or f"{label.capitalize()} of PE(p) and PE(p+k)", subtitle),
    )


def dimensions_figure(
    matrix: np.ndarray,
    dims: Sequence[int],
    *,
    labels: Sequence[str] | None = None,
    name: str = "table-dims",
    **options: object,
) -> Figure:
    """:func:`dimensions_chart` with its export: the plotted columns, each named by its real index.

    The export's columns are ``dim 0``, ``dim 64``, … (not ``dim_0``, ``dim_1``, …), so the CSV
    header says which dimensions were chosen.
    """
    dims = [int(j) for j in dims][:MAX_LINES]
    chart = dimensions_chart(matrix, dims, labels=labels, **options)
    data = pd.DataFrame(np.asarray(matrix)[:, dims], columns=[f"dim {j}" for j in dims])
    return Figure(chart, data.loc[:, ~data.columns.duplicated()], name)
