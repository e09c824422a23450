"""The sibling diff's charts: per-row change against position, the seam marked; two tables side
by side. Frames and numbers in (computed by :mod:`posviz.analysis.sibling`), Altair out."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.heatmap import Annotation, heatmap_chart
from posviz.charts.style import CONTROL_COLOR, FIT_WIDTH, GUIDE_COLOR, PALETTE, chart_title

#: The hero's series in drawing order, their colours and dashes (controls grey, dashed).
_COLORS = (PALETTE[0], PALETTE[2], CONTROL_COLOR, CONTROL_COLOR)
_DASHES = ([1, 0], [1, 0], [6, 3], [2, 2])


def sibling_hero_figure(
    rows: pd.DataFrame,
    *,
    series: Sequence[str],
    seams: Sequence[int],
    seam_labels: Sequence[str],
    threshold: float,
    title: str,
    height: int = 300,
) -> Figure:
    """Per-row change against position on a log axis: one line per ``series`` (``rows``:
    ``position``, ``series``, ``value``), a dashed rule at ``threshold``, and a labelled vertical
    rule at each of ``seams`` (``seam_labels`` one per seam); its export has one column per
    series, one row per position."""
    # a series is drawn in the style of the first of ``series`` its name starts with (a control
    # that coincides with another is one line, named for both)
    present = [s for s in dict.fromkeys(rows["series"]) if any(s.startswith(x) for x in series)]
    index = [next(i for i, x in enumerate(series) if s.startswith(x)) for s in present]
    color = (
        alt.Color("series:N", title=None, sort=present)
        .scale(domain=present, range=[_COLORS[i % len(_COLORS)] for i in index])
        .legend(orient="bottom", direction="vertical", labelLimit=400)
    )
    dash = alt.StrokeDash("series:N", sort=present, legend=None).scale(
        domain=present, range=[_DASHES[i % len(_DASHES)] for i in index]
    )
    top = float(max(rows["value"].max(), threshold)) * 2
    y = alt.Y("value:Q", title="per-row relative size (log)").scale(type="log")
    lines = (
        alt.Chart(rows)
        .mark_line(strokeWidth=1.5)
        .encode(
            x=alt.X("position:Q", title="position p").scale(
                domain=[0, int(rows["position"].max())], nice=False
            ),
            y=y,
            color=color,
            strokeDash=dash,
            tooltip=["series:N", "position:Q", alt.Tooltip("value:Q", format=".3g")],
        )
        .properties(height=height)
    )
    rule = pd.DataFrame({"value": [threshold], "label": [f"{threshold:.0%}: only scaled below"]})
    level = alt.Chart(rule).mark_rule(color=GUIDE_COLOR, strokeDash=[4, 4]).encode(y="value:Q")
    level_text = (
        alt.Chart(rule)
        .mark_text(align="left", dx=4, dy=-6, color=GUIDE_COLOR)
        .encode(x=alt.datum(0), y="value:Q", text="label:N")
    )
    layers = [lines, level, level_text]
    if seams:
        marks = pd.DataFrame({"position": list(seams), "label": list(seam_labels), "top": top})
        layers.append(
            alt.Chart(marks).mark_rule(color=PALETTE[4], strokeWidth=2).encode(x="position:Q")
        )
        layers.append(
            alt.Chart(marks)
            .mark_text(align="left", dx=5, baseline="top", color=PALETTE[4], fontWeight="bold")
            .encode(x="position:Q", y=alt.Y("top:Q").scale(type="log"), text="label:N")
        )
    chart = alt.layer(*layers).properties(
        title=chart_title(title, "red below the dashed line: only scaled"),
        autosize=FIT_WIDTH,
    )
    wide = rows.pivot(index="position", columns="series", values="value")
    return Figure(chart, wide.reset_index(), "sibling_row_change")


def side_by_side_figures(
    a: np.ndarray,
    b: np.ndarray,
    *,
    names: tuple[str, str],
    seams: Sequence[int],
    height: int = 320,
) -> tuple[Figure, Figure]:
    """Both tables as heatmaps on one colour scale (the 99th percentile of |value| over both, so
    outlier cells do not wash out the rest), each with the seams as horizontal rules."""
    vmax = float(np.quantile(np.abs(np.concatenate([a.ravel(), b.ravel()])), 0.99))
    notes = [Annotation(f"row {p}", y=p) for p in seams[:6]]
    figures = []
    for matrix, name in zip((a, b), names, strict=True):
        chart = heatmap_chart(
            matrix,
            vmax=vmax,
            reduce="absmax",
            title=name if len(name) <= 40 else name[:39] + "…",
            subtitle=[f"colours saturate at ±{vmax:.3g} (p99 of both)"],
            value_title="PE[p, i]",
            height=height,
            annotations=notes,
        )
        figures.append(Figure(chart, matrix, f"{name}_table"))
    return figures[0], figures[1]
