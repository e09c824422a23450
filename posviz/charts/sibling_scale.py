"""The sibling page's explanation charts: shares as horizontal bars, evidence beside its controls
(frames computed by :mod:`posviz.page_models.sibling_diff`; Altair out)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.style import ADAPTIVE_TEXT, CONTROL_COLOR, FIT_WIDTH, PALETTE, chart_title

#: Shares below this are drawn at it on a log axis (a float16 grid's chance level is ~1e-4).
LOG_FLOOR = 1e-5


def share_bars_figure(
    frame: pd.DataFrame, *, title: str, x_title: str, name: str, log: bool = False
) -> Figure:
    """One horizontal bar per row of ``frame`` (``item``, ``kind`` ∈ {evidence, control},
    ``share`` in [0, 1], ``label``: the number printed on the bar: inside a long bar, after a
    short one, so no label runs past the chart); ``log``: a log x axis from :data:`LOG_FLOOR`
    (shares below it drawn at it). Its export is ``frame`` itself."""
    floor = LOG_FLOOR if log else 0.0
    rows = frame.assign(
        drawn=frame["share"].clip(lower=LOG_FLOOR) if log else frame["share"],
        base=floor,
        inside=frame["share"] > (0.1 if log else 0.5),
    )
    if log:
        scale = alt.Scale(type="log", domain=[LOG_FLOOR, 1])
        axis = alt.Axis(format="%", titleAnchor="end", values=[1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1])
    else:
        scale, axis = alt.Scale(domain=[0, 1]), alt.Axis(format="%", titleAnchor="end")
    base = alt.Chart(rows).encode(
        y=alt.Y("item:N", title=None, sort=list(rows["item"])).axis(labelLimit=260),
        x=alt.X("drawn:Q", title=x_title, scale=scale, axis=axis),
        tooltip=["item:N", "kind:N", "label:N"],
    )
    bars = base.mark_bar().encode(
        x2="base:Q",
        color=alt.Color("kind:N", title=None)
        .scale(domain=["evidence", "control"], range=[PALETTE[0], CONTROL_COLOR])
        .legend(orient="bottom"),
    )
    inside = (
        base.mark_text(align="right", dx=-4, color="white")
        .encode(text="label:N")
        .transform_filter("datum.inside")
    )
    after = (
        base.mark_text(align="left", dx=4, color=alt.ExprRef(ADAPTIVE_TEXT["expr"]))
        .encode(text="label:N")
        .transform_filter("!datum.inside")
    )
    chart = alt.layer(bars, inside, after).properties(
        title=chart_title(title), height=28 * len(rows), width=520, autosize=FIT_WIDTH
    )
    return Figure(chart, frame.reset_index(drop=True), name)


def percent(share: float) -> str:
    """A share as a short percentage that never reads 0 % for a share above 0 (``0.0006 %``)."""
    if share == 0:
        return "0 %"
    return f"{share:.2%}".replace("%", " %") if share >= 1e-4 else f"{share * 100:.1g} %"
