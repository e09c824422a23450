"""The sibling page's explanation charts: shares as horizontal bars, evidence beside its controls
(frames computed by :mod:`posviz.page_models.sibling_diff`; Altair out)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.style import CONTROL_COLOR, FIT_WIDTH, PALETTE, chart_title

#: Shares below this are drawn at it on a log axis (a float16 grid's chance level is ~1e-4).
LOG_FLOOR = 1e-5


def share_bars_figure(
    frame: pd.DataFrame, *, title: str, x_title: str, name: str, log: bool = False
) -> Figure:
    """One horizontal bar per row of ``frame`` (``item``, ``kind`` ∈ {evidence, control},
    ``share`` in [0, 1], ``label``: the number printed at the bar's end); ``log``: a log x axis
    with shares below :data:`LOG_FLOOR` drawn at it. Its export is ``frame`` itself."""
    rows = frame.assign(drawn=frame["share"].clip(lower=LOG_FLOOR) if log else frame["share"])
    scale = alt.Scale(type="log", domain=[LOG_FLOOR, 1]) if log else alt.Scale(domain=[0, 1])
    base = alt.Chart(rows).encode(
        y=alt.Y("item:N", title=None, sort=list(rows["item"])).axis(labelLimit=260),
        x=alt.X("drawn:Q", title=x_title, scale=scale).axis(format="%", titleAnchor="end"),
        tooltip=["item:N", "kind:N", "label:N"],
    )
    bars = base.mark_bar().encode(
        color=alt.Color("kind:N", title=None)
        .scale(domain=["evidence", "control"], range=[PALETTE[0], CONTROL_COLOR])
        .legend(orient="bottom")
    )
    text = base.mark_text(align="left", dx=3).encode(text="label:N")
    chart = alt.layer(bars, text).properties(
        title=chart_title(title), height=28 * len(rows), width=520, autosize=FIT_WIDTH
    )
    return Figure(chart, frame.reset_index(drop=True), name)
