"""Unit-circle "clock hands": two columns of a table plotted against each other, one point per
position, the current position drawn as a hand from the origin.

For a sinusoidal pair ``(sin(pω), cos(pω))`` every position lies on the unit circle and the hand
turns by ``ω`` radians per position — clockwise from 12 o'clock with ``x = sin, y = cos``
("a clock with many hands at different speeds": shendawei, "Transformer Position Encoding",
cnblogs 2020). For a learned table the "pair" is any two dimensions or two principal components,
and the points need not lie on a circle.

The plot keeps one data unit equally long on both axes at any width (a circle stays round on a
phone), and with ``animate=True`` the chart carries its own position slider and ▶ play switch:
the hands turn in the browser, with no request to the server per frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import Figure, WithParams
from posviz.charts.linked import POSITION_PARAM, position_params
from posviz.charts.style import (
    ADAPTIVE_TEXT,
    GUIDE_COLOR,
    PALETTE,
    chart_title,
    equal_aspect_domain,
)

MAX_CIRCLE_POINTS = 2048  # per hand; longer tables are thinned with a stated stride
MAX_HANDS = 6
HAND_COLORS = PALETTE[:MAX_HANDS]
#: Positions drawn behind each hand as a fading trail, so a still frame shows the turning.
TRAIL = 8


def unit_circle_chart(
    matrix: np.ndarray,
    pair: tuple[int, int],
    *,
    current: int = 0,
    extra_pairs: Sequence[tuple[int, int]] = (),
    labels: Sequence[str] | None = None,
    axis_titles: tuple[str, str] = ("sin", "cos"),
    circle: bool = True,
    title: str | None = None,
    subtitle: str | Sequence[str] = "",
    size: int = 440,
    animate: bool = False,
    size_signals: tuple[str, str] = ("width", "height"),
) -> alt.LayerChart | WithParams:
    """Every position as a point ``(M[p, pair[0]], M[p, pair[1]])``, position ``current`` as a hand.

    Args:
        matrix: ``(n_positions, d_model)``.
        pair: ``(x_column, y_column)``; for a sinusoid pass ``(sin_col, cos_col)``.
        current: highlighted position (its hand is drawn from the origin).
        extra_pairs: more hands (up to 6 in all), each in its own colour.
        labels: one legend label per hand (default ``"x_col/y_col"``).
        circle: draw the unit circle for reference.
        size: height in pixels (the width follows the page; one unit is as long on both axes).
        animate: add an in-chart position slider and ▶ play (:func:`position_params`); the hands,
            their fading trails of the last :data:`TRAIL` positions and the position label then
            follow the slider in the browser.
        size_signals: the Vega expressions of the plot's width and height, which keep the circle
            round; in a :class:`posviz.charts.linked.LinkedChart` those of
            :func:`posviz.charts.linked.view_size`.
    """
    table = np.asarray(matrix)
    n, d = table.shape
    pairs = [tuple(int(c) for c in pair), *[tuple(int(c) for c in p) for p in extra_pairs]]
    pairs = pairs[:MAX_HANDS]
    bad = [c for p in pairs for c in p if not 0 <= c < d]
    if bad:
        raise ValueError(f"column(s) {bad} out of range; this table has columns 0 … {d - 1}.")
    if not 0 <= int(current) < n:
        raise ValueError(f"current={current} out of range; choose a position 0 … {n - 1}.")
    labels = list(labels) if labels is not None else [f"{x}/{y}" for x, y in pairs]
    stride = math.ceil(n / MAX_CIRCLE_POINTS)
    positions = np.arange(0, n, stride)
    asked = int(current)
    current = asked - asked % stride  # a drawn position
    frames = [
        pd.DataFrame(
            {"position": positions, "x": table[positions, cx], "y": table[positions, cy],
             "hand": label}
        )
        for (cx, cy), label in zip(pairs, labels, strict=True)
    ]  # fmt: skip
    points = pd.concat(frames, ignore_index=True)
    # With the unit circle drawn keep it in view; without it fit the data (learned tables: ~±0.1).
    data_reach = float(np.abs(points[["x", "y"]].to_numpy()).max()) * 1.05 or 1.0
    reach = max(1.08, data_reach) if circle else data_reach
    scales = (
        alt.Scale(nice=False, **_domain(reach, "x", size_signals)),
        alt.Scale(nice=False, **_domain(reach, "y", size_signals)),
    )
    x = alt.X("x:Q", title=axis_titles[0], scale=scales[0])
    y = alt.Y("y:Q", title=axis_titles[1], scale=scales[1])
    color = (
        alt.Color("hand:N", sort=labels, title=None)
        .scale(domain=labels, range=list(HAND_COLORS[: len(labels)]))
        .legend(orient="top", labelLimit=0, columns=min(len(labels), 2))
    )
    layers = []
    if circle:
        t = np.linspace(0, 2 * np.pi, 181)
        ring = pd.DataFrame({"x": np.sin(t), "y": np.cos(t), "order": np.arange(t.size)})
        layers.append(
            alt.Chart(ring)
            .mark_line(color=GUIDE_COLOR, strokeDash=[3, 3])
            .encode(x=x, y=y, order="order:Q")
        )
    layers.append(
        alt.Chart(points)
        .mark_circle(size=18, opacity=0.45)
        .encode(
            x=x,
            y=y,
            color=color,
            tooltip=[
                "hand:N",
                "position:Q",
                alt.Tooltip("x:Q", format=".4f"),
                alt.Tooltip("y:Q", format=".4f"),
            ],
        )
    )
    layers += _hand_layers(points, current, stride, (x, y), scales, color, axis_titles, animate)
    note = [subtitle] if isinstance(subtitle, str) else list(subtitle)
    if stride > 1:
        note.append(f"every {_ordinal(stride)} of {n} positions drawn")
        if current != asked:  # say which drawn position stands for the chosen one
            note.append(f"position {asked} is drawn as {current}")
    if animate:
        note.append("point to preview; ▶ play animates")
    heading = title or ("The hands at the chosen position" if animate else
                        f"Position {current} on the circle")  # fmt: skip
    chart = alt.layer(*layers).properties(
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        width=size,
        height=size,
        title=chart_title(heading, note),
    )
    if not animate:
        return chart
    return WithParams(chart, position_params(current=current, last=int(positions[-1]), step=stride))


def _ordinal(k: int) -> str:
    """``2`` → ``"2nd"``, ``4`` → ``"4th"``, ``11`` → ``"11th"``, ``23`` → ``"23rd"``."""
    suffix = "th" if k % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _domain(reach: float, axis: str, size: tuple[str, str]) -> dict[str, Any]:
    domain = equal_aspect_domain(reach, axis=axis, size=size)
    return {k: alt.ExprRef(v["expr"]) for k, v in domain.items()}


def _hand_layers(points, current, stride, xy, scales, color, axis_titles, animate) -> list:
    """Hand (rule from the origin), tip, and when animated a fading trail and a position label."""
    if animate:  # every position's tip ships once; the browser picks the current one
        tips = points.rename(columns={"x": "x2", "y": "y2"}).assign(x=0.0, y=0.0)
        base = alt.Chart(tips).transform_filter(f"datum.position == {POSITION_PARAM}")
    else:
        tips = points[points.position == current].rename(columns={"x": "x2", "y": "y2"})
        base = alt.Chart(tips.assign(x=0.0, y=0.0)[["hand", "x", "y", "x2", "y2", "position"]])
    base = base.encode(color=color)
    x, y = xy
    x2 = alt.X("x2:Q", title=axis_titles[0], scale=scales[0])
    y2 = alt.Y("y2:Q", title=axis_titles[1], scale=scales[1])
    layers = [
        base.mark_rule(strokeWidth=3).encode(x=x, y=y, x2="x2:Q", y2="y2:Q"),
        base.mark_point(size=160, filled=True, stroke="#000", strokeWidth=1).encode(
            x=x2,
            y=y2,
            tooltip=[
                "hand:N",
                "position:Q",
                alt.Tooltip("x2:Q", title="x", format=".4f"),
                alt.Tooltip("y2:Q", title="y", format=".4f"),
            ],
        ),
    ]
    if not animate:
        return layers
    age = f"({POSITION_PARAM} - datum.position) / {stride}"
    trail = (
        alt.Chart(tips)
        .transform_calculate(age=age)
        .transform_filter(f"datum.age > 0 && datum.age <= {TRAIL}")
        .mark_circle(size=70)
        .encode(
            x=x2,
            y=y2,
            color=color,
            opacity=alt.Opacity("age:Q", scale=alt.Scale(domain=[1, TRAIL], range=[0.7, 0.1]),
                                legend=None),
        )
    )  # fmt: skip
    label = (
        alt.Chart(tips.head(1))
        .mark_text(align="left", baseline="top", fontSize=13, fontWeight="bold",
                   color=alt.ExprRef(ADAPTIVE_TEXT["expr"]))
        .encode(x=alt.value(4), y=alt.value(4), text=alt.Text("label:N"))
        .transform_calculate(label=f"'position ' + {POSITION_PARAM}")
    )  # fmt: skip
    return [trail, *layers, label]


def unit_circle_figure(
    matrix: np.ndarray,
    pair: tuple[int, int],
    *,
    extra_pairs: Sequence[tuple[int, int]] = (),
    name: str = "pairs",
    **options: Any,
) -> Figure:
    """:func:`unit_circle_chart` and the columns it draws, as one :class:`Figure`.

    ``data`` holds ``matrix[:, [a0, b0, a1, b1, …]]`` for ``pair`` then ``extra_pairs`` as a
    frame whose columns name the table's real columns (``dim 0``, ``dim 1``, …): shape
    ``(n_positions, 2 × number of pairs)``, the exact numbers the chart plots. ``options`` go to
    :func:`unit_circle_chart`.
    """
    chart = unit_circle_chart(matrix, pair, extra_pairs=extra_pairs, **options)
    columns = [int(c) for p in (pair, *extra_pairs) for c in p]
    frame = pd.DataFrame(np.asarray(matrix)[:, columns], columns=[f"dim {c}" for c in columns]).loc[
        :, lambda f: ~f.columns.duplicated()
    ]
    return Figure(chart, frame, name)
