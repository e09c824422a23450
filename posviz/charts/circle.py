"""Unit-circle "clock hands": two columns of a table plotted against each other, one point per
position, the current position drawn as a hand from the origin.

For a sinusoidal pair ``(sin(pω), cos(pω))`` every position lies on the unit circle and the hand
turns by ``ω`` radians per position — clockwise from 12 o'clock with ``x = sin, y = cos``
("a clock with many hands at different speeds": shendawei, "Transformer Position Encoding",
cnblogs 2020). For a learned table the "pair" is any two dimensions or two principal components,
and the points need not lie on a circle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.style import FIT_WIDTH

MAX_CIRCLE_POINTS = 2048  # per hand; longer tables are thinned with a stated stride
MAX_HANDS = 6
HAND_COLORS = ("#4c51bf", "#d6604d", "#2a9d8f", "#e9a23b", "#8e44ad", "#555555")


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
) -> alt.LayerChart:
    """Every position as a point ``(M[p, pair[0]], M[p, pair[1]])``, position ``current`` as a hand.

    Args:
        matrix: ``(n_positions, d_model)``.
        pair: ``(x_column, y_column)``; for a sinusoid pass ``(sin_col, cos_col)``.
        current: highlighted position (its hand is drawn from the origin).
        extra_pairs: more hands (up to 6 in all), each in its own colour.
        labels: one legend label per hand (default ``"x_col/y_col"``).
        circle: draw the unit circle for reference.
        size: width and height in pixels (square, so circles look round).
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
    frames, hands = [], []
    for (cx, cy), label in zip(pairs, labels, strict=True):
        frames.append(
            pd.DataFrame(
                {
                    "position": positions,
                    "x": table[positions, cx],
                    "y": table[positions, cy],
                    "hand": label,
                }
            )
        )
        hands.append(
            {
                "hand": label,
                "x": 0.0,
                "y": 0.0,
                "x2": float(table[current, cx]),
                "y2": float(table[current, cy]),
                "position": int(current),
            }
        )
    points = pd.concat(frames, ignore_index=True)
    hand_frame = pd.DataFrame(hands)
    # With the unit circle drawn keep it in view; without it fit the data (learned tables: ~±0.1).
    data_reach = float(np.abs(points[["x", "y"]].to_numpy()).max()) * 1.05 or 1.0
    reach = max(1.05, data_reach) if circle else data_reach
    scale = alt.Scale(domain=[-reach, reach], nice=False)
    x = alt.X("x:Q", title=axis_titles[0], scale=scale)
    y = alt.Y("y:Q", title=axis_titles[1], scale=scale)
    color = (
        alt.Color("hand:N", sort=labels, title=None)
        .scale(domain=labels, range=list(HAND_COLORS[: len(labels)]))
        .legend(orient="top")
    )
    layers = []
    if circle:
        t = np.linspace(0, 2 * np.pi, 181)
        ring = pd.DataFrame({"x": np.sin(t), "y": np.cos(t), "order": np.arange(t.size)})
        layers.append(
            alt.Chart(ring)
            .mark_line(color="#bbb", strokeDash=[3, 3])
            .encode(x=x, y=y, order="order:Q")
        )
    layers.append(
        alt.Chart(points)
        .mark_circle(size=18, opacity=0.55)
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
    hand_base = alt.Chart(hand_frame).encode(color=color)
    layers.append(hand_base.mark_rule(strokeWidth=3).encode(x=x, y=y, x2="x2:Q", y2="y2:Q"))
    layers.append(
        hand_base.mark_point(size=160, filled=True, stroke="#000", strokeWidth=1).encode(
            x=alt.X("x2:Q", scale=scale, title=axis_titles[0]),
            y=alt.Y("y2:Q", scale=scale, title=axis_titles[1]),
            tooltip=[
                "hand:N",
                "position:Q",
                alt.Tooltip("x2:Q", title="x", format=".4f"),
                alt.Tooltip("y2:Q", title="y", format=".4f"),
            ],
        )
    )
    note = [subtitle] if isinstance(subtitle, str) else list(subtitle)
    if stride > 1:
        note.append(f"every {stride}th of {n} positions drawn")
    return alt.layer(*layers).properties(
        autosize=FIT_WIDTH,
        width=size,
        height=size,
        title=alt.Title(
            title or f"Position {current} on the circle",
            subtitle=[s for s in note if s],
            anchor="start",
        ),
    )


def unit_circle_figure(
    matrix: np.ndarray,
    pair: tuple[int, int],
    *,
    extra_pairs: Sequence[tuple[int, int]] = (),
    name: str = "pairs",
    **options: Any,
) -> Figure:
    """:func:`unit_circle_chart` and the columns it draws, as one :class:`Figure`.

    ``data`` is ``matrix[:, [a0, b0, a1, b1, …]]`` for ``pair`` then ``extra_pairs``: shape
    ``(n_positions, 2 × number of pairs)``, the exact numbers the chart plots. ``options`` go to
    :func:`unit_circle_chart`.
    """
    chart = unit_circle_chart(matrix, pair, extra_pairs=extra_pairs, **options)
    columns = [int(c) for p in (pair, *extra_pairs) for c in p]
    return Figure(chart, np.asarray(matrix)[:, columns], name)
