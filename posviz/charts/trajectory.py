"""Charts of a position table as a path: PCA trajectory (2-D, 3-D projection) and norms.

Arrays in, ``alt.Chart`` out (never displayed here). Positions are coloured in order so the path's
direction is visible; large inputs are thinned with an even stride so a chart stays a few thousand
marks (Streamlit ships every row to the browser). The position × position cosine-similarity
matrix is drawn with :func:`posviz.charts.heatmap.heatmap_chart` (a 1:1 image, not rects).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import WithParams
from posviz.charts.linked import POSITION_PARAM, position_params
from posviz.charts.style import (
    ADAPTIVE_TEXT,
    GUIDE_COLOR,
    PAGE_BACKGROUND,
    PALETTE,
    chart_title,
)

_POSITION_COLOR = alt.Color("position:Q").scale(scheme="viridis").title("position")


def stride_for(n: int, max_points: int) -> int:
    """Smallest step ``s ≥ 1`` with ``ceil(n / s) ≤ max_points``."""
    return max(1, -(-n // max(1, max_points)))


def _positions(positions: np.ndarray | None, n: int) -> np.ndarray:
    return np.arange(n) if positions is None else np.asarray(positions)


def _pc_title(index: int, ratio: np.ndarray | None) -> str:
    share = f" ({100 * ratio[index]:.1f}% of variance)" if ratio is not None else ""
    return f"PC{index + 1}{share}"


def pca_trajectory_chart(
    scores: np.ndarray,
    *,
    x: int = 0,
    y: int = 1,
    explained: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    titles: tuple[str, str] | None = None,
    max_points: int = 2048,
    height: int = 420,
    width: int | None = None,
    current: int | None = None,
    title: str = "",
) -> alt.LayerChart | WithParams:
    """Positions on two principal components (or any two columns), joined in position order.

    With ``current`` (a position) the chart gets an in-browser position slider and ▶ play
    (:func:`posviz.charts.linked.position_params`): the current position is ringed and labelled,
    and pointing at any dot moves the highlight there.

    Args:
        scores: ``(n_positions, k)`` PCA scores (``posviz.analysis.stats.pca(...).scores``).
        x, y: component indices (0-based) for the axes.
        explained: ``(k,)`` explained-variance ratios for the axis titles.
        positions: ``(n_positions,)`` position of each score row (default ``0 … n-1``).
        titles: axis titles, replacing "PC…" (e.g. when ``scores`` are raw dimensions).
        width: the plot's width in pixels (default: the page's).
    """
    rows = np.arange(0, len(scores), stride_for(len(scores), max_points))
    x_title, y_title = titles or (_pc_title(x, explained), _pc_title(y, explained))
    frame = pd.DataFrame(
        {
            "position": _positions(positions, len(scores))[rows],
            "a": scores[rows, x],
            "b": scores[rows, y],
        }
    )
    base = alt.Chart(frame).encode(
        alt.X("a:Q").title(x_title).scale(zero=False),
        alt.Y("b:Q").title(y_title).scale(zero=False),
    )
    path = base.mark_line(color=GUIDE_COLOR, strokeWidth=1).encode(order="position:Q")
    points = base.mark_circle(size=28, opacity=0.9).encode(
        _POSITION_COLOR,
        tooltip=[
            alt.Tooltip("position:Q"),
            alt.Tooltip("a:Q", format=".3f", title="x"),
            alt.Tooltip("b:Q", format=".3f", title="y"),
        ],
    )
    props = {"title": chart_title(title)} if title else {}
    if width is not None:
        props["width"] = width
    chart = (path + points).properties(height=height, **props)
    if current is None:
        return chart
    shown = frame.position.to_numpy()
    start = int(shown[np.argmin(np.abs(shown - int(current)))])
    step = int(shown[1] - shown[0]) if shown.size > 1 else 1
    now = base.transform_filter(f"datum.position == {POSITION_PARAM}")
    ring = now.mark_point(size=260, strokeWidth=2.5, color=PALETTE[2], filled=False)
    text = {"align": "left", "dx": 10, "dy": -10, "fontWeight": "bold"}
    halo = now.mark_text(
        **text, color=alt.ExprRef(PAGE_BACKGROUND["expr"]),
        stroke=alt.ExprRef(PAGE_BACKGROUND["expr"]), strokeWidth=4, strokeJoin="round",
    )  # fmt: skip
    label = now.mark_text(**text, color=alt.ExprRef(ADAPTIVE_TEXT["expr"]))
    labels = [
        mark.encode(text=alt.Text("label:N")).transform_calculate(
            label="'position ' + datum.position"
        )
        for mark in (halo, label)
    ]
    chart = (path + points + ring + labels[0] + labels[1]).properties(height=height, **props)
    return WithParams(chart, position_params(current=start, last=int(shown[-1]), step=step))


def project_3d(points: np.ndarray, *, azimuth: float, elevation: float) -> np.ndarray:
    """Orthographic view of 3-D points: ``(n, 3) -> (n, 3)`` columns screen-x, screen-y, nearness.

    Rotate by ``azimuth`` (degrees) about the third axis, then look from −y with the camera
    raised by ``elevation`` degrees (third axis up). The map is a proper rotation (det +1), so 3-D
    distances are kept and the third column (larger = closer to the viewer) is a true depth cue.
    """
    a, e = np.radians(azimuth), np.radians(elevation)
    rz = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    # rows: screen right, screen up, towards the viewer (camera at −y, raised by ``elevation``)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, np.sin(e), np.cos(e)], [0.0, -np.cos(e), np.sin(e)]])
    return points @ rz.T @ tilt.T


def pca_3d_chart(
    scores: np.ndarray,
    *,
    azimuth: float = 30.0,
    elevation: float = 20.0,
    explained: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    max_points: int = 2048,
    height: int = 460,
) -> alt.LayerChart:
    """The first three PCs seen from a chosen angle: a flat projection, nearer points drawn larger.

    Args:
        scores: ``(n_positions, ≥3)`` PCA scores.
        positions: ``(n_positions,)`` position of each score row (default ``0 … n-1``).
    """
    rows = np.arange(0, len(scores), stride_for(len(scores), max_points))
    view = project_3d(scores[rows, :3], azimuth=azimuth, elevation=elevation)
    share = (
        ", ".join(f"PC{i + 1} {100 * r:.1f}%" for i, r in enumerate(explained[:3]))
        if explained is not None
        else "PC1–PC3"
    )
    frame = pd.DataFrame(
        {
            "position": _positions(positions, len(scores))[rows],
            "sx": view[:, 0],
            "sy": view[:, 1],
            "depth": view[:, 2],
            "pc1": scores[rows, 0],
            "pc2": scores[rows, 1],
            "pc3": scores[rows, 2],
        }
    )
    axis = alt.Axis(labels=False, ticks=False, grid=False)
    base = alt.Chart(frame).encode(
        alt.X("sx:Q").axis(axis).title(f"projection of {share}").scale(zero=False),
        alt.Y("sy:Q").axis(axis).title(None).scale(zero=False),
    )
    path = base.mark_line(color=GUIDE_COLOR, strokeWidth=1).encode(order="position:Q")
    points = base.mark_circle(opacity=0.9).encode(
        _POSITION_COLOR,
        alt.Size("depth:Q").scale(range=[8, 80]).legend(None),
        order="depth:Q",
        tooltip=[
            "position:Q",
            alt.Tooltip("pc1:Q", format=".3f"),
            alt.Tooltip("pc2:Q", format=".3f"),
            alt.Tooltip("pc3:Q", format=".3f"),
        ],
    )
    return (path + points).properties(height=height)


def norm_chart(norms: np.ndarray, *, label: str = "‖PE(p)‖", height: int = 260) -> alt.Chart:
    """Euclidean norm of each position's vector against the position.

    Args:
        norms: ``(n_positions,)``.
    """
    frame = pd.DataFrame({"position": np.arange(len(norms)), "norm": norms})
    return (
        alt.Chart(frame)
        .mark_line(color=PALETTE[0])
        .encode(
            alt.X("position:Q").title("position p"),
            alt.Y("norm:Q").title(label).scale(zero=False),
            tooltip=["position:Q", alt.Tooltip("norm:Q", format=".4f")],
        )
        .properties(height=height)
    )
