"""The "why sin *and* cos?" panel: one pair's sine alone beside the same pair as a point on the
circle, with two positions the sine confuses marked in both.

Arrays in, charts out; the two positions come from :func:`posviz.analysis.sincos.sine_collision`.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.style import (
    FIT_WIDTH,
    GUIDE_COLOR,
    PALETTE,
    chart_title,
    equal_aspect_domain,
)

LINE_COLOR = PALETTE[0]
MARK_COLORS = (PALETTE[1], PALETTE[2])  # the two confused positions, the same in both charts


def _marked(positions: tuple[int, int]) -> alt.Color:
    labels = [f"position {positions[0]}", f"position {positions[1]}"]
    return (
        alt.Color("label:N", title=None, sort=labels)
        .scale(domain=labels, range=list(MARK_COLORS))
        .legend(orient="top", labelLimit=0)
    )


def sine_only_chart(
    sines: np.ndarray, *, pair: int, positions: tuple[int, int], height: int = 300
) -> alt.LayerChart:
    """``sin(ω_i p)`` against ``p`` with the two ``positions`` marked at (nearly) the same height.

    Args:
        sines: ``(n_positions,)`` the pair's sine column.
        positions: the two positions the sine confuses (a dashed rule joins their values).
    """
    values = np.asarray(sines, dtype=np.float64)
    frame = pd.DataFrame({"position": np.arange(values.size), "sine": values})
    picked = frame.iloc[list(positions)].assign(
        label=[f"position {p}" for p in positions],
        text=[f"p = {p}: sin = {values[p]:+.3f}" for p in positions],
    )
    x = alt.X("position:Q", title="position p").scale(
        domain=[0, max(values.size - 1, 1)], nice=False
    )
    y = alt.Y("sine:Q", title=f"sin(ω{pair}·p)").scale(domain=[-1.1, 1.1], nice=False)
    line = alt.Chart(frame).mark_line(color=LINE_COLOR, strokeWidth=1.5).encode(x=x, y=y)
    dots = (
        alt.Chart(frame)
        .mark_circle(color=LINE_COLOR, size=14)
        .encode(x=x, y=y, tooltip=["position:Q", alt.Tooltip("sine:Q", format=".4f")])
    )
    level = (
        alt.Chart(pd.DataFrame({"sine": [float(values[positions[0]])]}))
        .mark_rule(color=GUIDE_COLOR, strokeDash=[5, 3])
        .encode(y="sine:Q")
    )
    marks = alt.Chart(picked).mark_point(size=220, filled=True, stroke="#000", strokeWidth=1)
    marks = marks.encode(x=x, y=y, color=_marked(positions), tooltip=["text:N"])
    return alt.layer(line, dots, level, marks).properties(
        autosize=FIT_WIDTH,
        width=420,
        height=height,
        title=chart_title(  # short lines: a title wider than a phone's chart is cut
            f"Sine alone (pair {pair})",
            [f"positions {positions[0]} and {positions[1]} look alike:",
             f"sin = {values[positions[0]]:+.3f} and {values[positions[1]]:+.3f}"],
        ),
    )  # fmt: skip


def sine_cosine_chart(
    sines: np.ndarray,
    cosines: np.ndarray,
    *,
    pair: int,
    positions: tuple[int, int],
    height: int = 300,
) -> alt.LayerChart:
    """The same pair as points ``(sin, cos)`` on the unit circle, the two positions marked.

    The circle stays round at any width (one unit is equally long on both axes).
    """
    s, c = np.asarray(sines, dtype=np.float64), np.asarray(cosines, dtype=np.float64)
    frame = pd.DataFrame({"position": np.arange(s.size), "sin": s, "cos": c})
    picked = frame.iloc[list(positions)].assign(
        label=[f"position {p}" for p in positions],
        text=[f"p = {p}: (sin, cos) = ({s[p]:+.2f}, {c[p]:+.2f})" for p in positions],
    )
    x_scale = alt.Scale(nice=False, **_expr_domain(1.15, "x"))
    y_scale = alt.Scale(nice=False, **_expr_domain(1.15, "y"))
    x = alt.X("sin:Q", title=f"sin(ω{pair}·p)", scale=x_scale)
    y = alt.Y("cos:Q", title=f"cos(ω{pair}·p)", scale=y_scale)
    t = np.linspace(0, 2 * np.pi, 121)
    ring = alt.Chart(pd.DataFrame({"sin": np.sin(t), "cos": np.cos(t), "order": np.arange(121)}))
    ring = ring.mark_line(color=GUIDE_COLOR, strokeDash=[3, 3]).encode(x=x, y=y, order="order:Q")
    dots = alt.Chart(frame).mark_circle(color=LINE_COLOR, size=16, opacity=0.6).encode(
        x=x, y=y, tooltip=["position:Q", alt.Tooltip("sin:Q", format=".3f"),
                           alt.Tooltip("cos:Q", format=".3f")]
    )  # fmt: skip
    marks = alt.Chart(picked).mark_point(size=220, filled=True, stroke="#000", strokeWidth=1)
    marks = marks.encode(x=x, y=y, color=_marked(positions), tooltip=["text:N"])
    return alt.layer(ring, dots, marks).properties(
        autosize=FIT_WIDTH,
        width=300,
        height=height,
        title=chart_title(
            f"Sine and cosine (pair {pair})",
            [
                "every position its own angle:",
                f"cos = {c[positions[0]]:+.2f} and {c[positions[1]]:+.2f} differ",
            ],
        ),
    )


def _expr_domain(reach: float, axis: str) -> dict[str, alt.ExprRef]:
    return {k: alt.ExprRef(v["expr"]) for k, v in equal_aspect_domain(reach, axis=axis).items()}
