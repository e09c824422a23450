"""Chart builders for the position lab: arms with intervals, lines with bands, the extrapolation
ranking, and the live loss chart's spec.

Each takes a long-form ``DataFrame`` (means and spreads precomputed by :mod:`posviz.lab.views`)
and ``colors``, ``arm label → colour``, the same mapping for every chart of a page so an arm keeps
its colour everywhere. Long labels wrap onto several lines (never cut with "…"); every line also
gets its own dash pattern, so a line lying exactly on another still shows.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import WithParams, accessible_spec
from posviz.charts.linked import POSITION_PARAM, position_params
from posviz.charts.style import ADAPTIVE_TEXT, BAND_FILL_OPACITY, FIT_WIDTH, GUIDE_COLOR

_HEIGHT = 260
#: characters per line of a wrapped arm label (about 170 px at Vega's 11 px font).
WRAP = 30
#: characters per subtitle line (about 7 px each in a browser: a phone-wide chart, 358 px at 390,
#: cut longer ones; tests/test_lab_browser.py checks no chart text passes its chart's edge).
WRAP_TITLE = 40
DASHES = ([1, 0], [6, 3], [2, 2], [8, 3, 2, 3], [4, 4], [1, 3], [10, 4], [3, 6])
_ADAPTIVE = alt.ExprRef(ADAPTIVE_TEXT["expr"])
#: drawn as SVG (Streamlit honours ``usermeta.embedOptions``): crisp text, and the browser tests
#: can measure every label.
_SVG = {"embedOptions": {"renderer": "svg"}}


def _title(
    title: str | list[str],
    subtitle: str | Sequence[str],
    *,
    frame: str = "bounds",
    width: int = WRAP_TITLE,
) -> alt.Title:
    """A chart title whose subtitle lines wrap (a phone-wide chart cuts long ones with "…")."""
    lines = [subtitle] if isinstance(subtitle, str) else list(subtitle)
    wrapped = []
    for line in lines:  # break at " · " between settings first, then inside a long one
        current = ""
        for piece in line.split(" · "):
            joined = f"{current} · {piece}" if current else piece
            if len(joined) <= width or not current:
                current = joined
            else:  # a long setting wraps inside itself too (it ran 60 px past a phone's chart)
                wrapped += textwrap.wrap(current, width)
                current = piece
        wrapped += textwrap.wrap(current, width)
    return alt.Title(
        title, subtitle=wrapped, anchor="start", frame=frame,
        offset=16,  # room for a rule's label
        subtitleColor=_ADAPTIVE,
    )  # fmt: skip


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}.")


def wrap_expr(labels: Sequence[str], *, width: int = WRAP) -> str:
    """A Vega expression giving each label as lines of at most ``width`` characters (an array:
    Vega draws it as multi-line text); other values unchanged."""
    expr = "datum.label"
    for label in reversed(list(labels)):
        lines = [line for part in label.split("\n") for line in textwrap.wrap(part, width)]
        expr = f"datum.label === {json.dumps(label)} ? {json.dumps(lines)} : {expr}"
    return expr


def _color(colors: Mapping[str, str], *, legend: bool, symbol: str = "circle") -> alt.Color:
    names = list(colors)
    encoding = alt.Color("variant:N", title=None, sort=names).scale(
        domain=names, range=list(colors.values())
    )
    if not legend:
        return encoding.legend(None)
    return encoding.legend(
        orient="bottom", direction="vertical", labelLimit=0, labelExpr=wrap_expr(names),
        symbolType=symbol, symbolStrokeWidth=3, symbolOpacity=1,
    )  # fmt: skip


def _edge(colors: Mapping[str, str]) -> alt.Stroke:
    """A band's edges in its arm's full colour (≥ 3:1 on both themes, as the palette is)."""
    names = list(colors)
    return alt.Stroke("variant:N", sort=names, legend=None).scale(
        domain=names, range=list(colors.values())
    )


def _dash(colors: Mapping[str, str]) -> alt.StrokeDash:
    names = list(colors)
    return alt.StrokeDash("variant:N", sort=names, legend=None).scale(
        domain=names, range=[DASHES[i % len(DASHES)] for i in range(len(names))]
    )


def _rules(
    rules: Sequence[tuple[float, str]], *, field: str, right_of: float | None = None
) -> list[alt.Chart]:
    """Dashed guide rules with their labels (a bound, the training length)."""
    if not rules:
        return []
    data = pd.DataFrame({field: [r[0] for r in rules], "label": [r[1] for r in rules]})
    base = alt.Chart(data)
    rule = base.mark_rule(color=GUIDE_COLOR, strokeDash=[4, 4], strokeWidth=2).encode(
        x=f"{field}:Q", tooltip=["label:N", f"{field}:Q"]
    )
    # the label sits just above the plot area, where no data point can lie under it, on the side
    # of the rule with more room (rules past ``right_of`` get theirs on the left)
    left = right_of is not None and rules[0][0] > right_of
    text = base.mark_text(
        align="right" if left else "left", dx=-3 if left else 3, baseline="bottom",
        color=_ADAPTIVE,
    ).encode(x=f"{field}:Q", y=alt.value(-3), text="label:N")  # fmt: skip
    return [rule, text]


def interval_chart(
    frame: pd.DataFrame,
    *,
    colors: Mapping[str, str],
    x_title: str,
    title: str,
    subtitle: str | Sequence[str] = (),
    unit: bool = False,
    rules: Sequence[tuple[float, str]] = (),
) -> alt.LayerChart:
    """Each arm's mean (a point) and interval (a bar), one arm per row, in the frame's order.

    ``frame``: ``variant, mean, low, high``; ``unit`` keeps the axis on [0, 1] (an accuracy);
    ``rules``: ``(value, label)`` dashed vertical guides (e.g. the position-blind ceiling).
    """
    _require(frame, ("variant", "mean", "low", "high"), "The interval chart")
    order = list(frame["variant"])
    scale = alt.Scale(domain=[0, 1]) if unit else alt.Scale(zero=False)
    y = alt.Y("variant:N", title=None, sort=order).axis(
        labelLimit=0, labelExpr=wrap_expr(order), labelPadding=6
    )
    base = alt.Chart(frame).encode(y=y, color=_color(colors, legend=False))
    bars = base.mark_rule(strokeWidth=3).encode(  # a long axis title in lines: one line wider
        x=alt.X("low:Q", title=textwrap.wrap(x_title, WRAP) or x_title).scale(scale),
        x2="high:Q",  # than the plot squeezed the plot and was cut at both ends (/lab_sinks)
    )
    points = base.mark_point(size=110, filled=True).encode(
        x="mean:Q",
        tooltip=[
            "variant:N",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("low:Q", format=".4f", title="95% interval from"),
            alt.Tooltip("high:Q", format=".4f", title="to"),
        ],
    )
    # a rule in the right half gets its label on its left (the ceiling near 1 ran 43 px past a
    # phone-wide chart)
    values = [*frame["low"], *frame["high"], *(value for value, _ in rules)]
    middle = 0.5 if unit else (min(values) + max(values)) / 2
    return alt.layer(bars, points, *_rules(rules, field="low", right_of=middle)).properties(
        title=_title(textwrap.wrap(title, 30) or title, subtitle),  # fits a phone-wide chart
        height=max(120, 52 * len(order)),
        # room on the left: the title starts where the arm labels do, and wrapped labels
        # measured up to 16 px wider than Vega's padding for them, which cut the title's start
        # (/lab_sinks at 1440 and 390)
        padding={"left": 24, "top": 5, "right": 5, "bottom": 5},
        autosize=FIT_WIDTH,
        usermeta=_SVG,
    )


def lines_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    x_title: str,
    y_title: str,
    colors: Mapping[str, str],
    title: str,
    subtitle: str | Sequence[str] = (),
    whole: bool = False,
    band: bool = False,
    log: bool = False,
    unit: bool = False,
    rules: Sequence[tuple[float, str]] = (),
    height: int = _HEIGHT,
) -> alt.LayerChart:
    """One line per arm of ``y`` against ``x``; with ``band``, a shaded ``low``–``high`` band.

    ``frame``: ``variant``, ``x``, ``y`` (and ``low``, ``high`` for the band); ``whole``: ``x``
    takes whole numbers (positions, layers); ``log`` puts ``y`` on a log axis, ``unit`` on
    [0, 1]; ``rules``: ``(x, label)`` dashed vertical guides.
    """
    _require(frame, ("variant", x, y, *(("low", "high") if band else ())), "The line chart")
    y_scale = alt.Scale(type="log") if log else alt.Scale(domain=[0, 1]) if unit else alt.Scale()
    x_axis = alt.X(f"{x}:Q", title=x_title)
    base = alt.Chart(frame).encode(x=x_axis.axis(tickMinStep=1, format="d") if whole else x_axis)
    layers = []
    if band:
        layers.append(
            base.mark_area(fillOpacity=BAND_FILL_OPACITY, strokeWidth=0.75).encode(
                y=alt.Y("low:Q", title=y_title).scale(y_scale),
                y2="high:Q",
                color=_color(colors, legend=True, symbol="stroke"),  # None would hide the legend
                stroke=_edge(colors),  # the band's edges: its fill alone read 1.2:1
            )
        )
    tips = ["variant:N", f"{x}:Q", alt.Tooltip(f"{y}:Q", format=".4f", title=y_title)]
    line = base.mark_line(strokeWidth=2, clip=True, point=alt.OverlayMarkDef(size=18))
    y_axis = alt.Y(f"{y}:Q", title=y_title).scale(y_scale)
    color = _color(colors, legend=True, symbol="stroke")
    layers.append(line.encode(y=y_axis, color=color, strokeDash=_dash(colors), tooltip=tips))
    middle = (float(frame[x].min()) + float(frame[x].max())) / 2 if len(frame) else None
    return alt.layer(*layers, *_rules(rules, field=x, right_of=middle)).properties(
        title=_title(title, subtitle), height=height, autosize=FIT_WIDTH, usermeta=_SVG
    )


def ranking_chart(
    frame: pd.DataFrame,
    *,
    colors: Mapping[str, str],
    title: str,
    subtitle: str | Sequence[str] = (),
) -> alt.LayerChart:
    """Arms ranked on unseen positions: the 95 % interval and mean (filled point) of the unseen
    accuracy, the same arm's accuracy on seen positions (hollow point), a note per row.

    ``frame``: ``variant, row, mean, low, high, in_range, ranked`` in rank order; ``row`` is the
    row's label (arm and note joined by a newline: drawn on two lines); rows of arms that are not
    ranked (not defined, under-trained) keep their colour (a faded one read 1.7–3.0:1) and are
    drawn with a dotted interval; their note says why.
    """
    _require(frame, ("variant", "row", "mean", "low", "high", "in_range", "ranked"), "Ranking")
    order = list(frame["row"])
    y = alt.Y("row:N", title=None, sort=order).axis(
        labelLimit=0, labelExpr=wrap_expr(order), labelPadding=6
    )
    base = alt.Chart(frame).encode(y=y, color=_color(colors, legend=False))
    unranked = alt.StrokeDash("ranked:N").scale(domain=[True, False], range=[[1, 0], [2, 3]])
    x = alt.X("low:Q", title="accuracy, unseen positions").scale(domain=[0, 1])
    bars = base.mark_rule(strokeWidth=3).encode(x=x, x2="high:Q", strokeDash=unranked.legend(None))
    seen = base.mark_point(size=260, filled=False, strokeWidth=2).encode(x="in_range:Q")
    tips = [
        "variant:N",
        alt.Tooltip("mean:Q", format=".3f", title="unseen positions"),
        alt.Tooltip("low:Q", format=".3f", title="95% interval from"),
        alt.Tooltip("high:Q", format=".3f", title="to"),
        alt.Tooltip("in_range:Q", format=".3f", title="seen positions"),
    ]
    unseen = base.mark_point(size=120, filled=True).encode(x="mean:Q", tooltip=tips)
    return alt.layer(bars, unseen, seen).properties(
        title=_title(textwrap.wrap(title, 30) or title, subtitle),  # fits a phone-wide chart
        height=max(140, 56 * len(order)),
        autosize=FIT_WIDTH,
        usermeta=_SVG,
    )


def live_loss_spec(colors: Mapping[str, str], *, title: str) -> dict:
    """The live loss chart as a Vega-Lite spec WITHOUT data (``st.vega_lite_chart(frame, spec)``):
    the spec stays the same while a run trains, so the browser updates the data in place instead
    of redrawing the chart on every poll. Data: ``variant, step, loss``."""
    chart = (
        alt.Chart()
        .mark_line(strokeWidth=2, interpolate="monotone")
        .encode(
            x=alt.X("step:Q", title="optimiser step"),
            y=alt.Y("loss:Q", title="training loss (cross-entropy)").scale(type="log"),
            color=_color(colors, legend=True, symbol="stroke"),
            strokeDash=_dash(colors),
            tooltip=["variant:N", "step:Q", alt.Tooltip("loss:Q", format=".4f")],
        )
        .properties(title=_title(title, ()), height=_HEIGHT, autosize=FIT_WIDTH, usermeta=_SVG)
    )
    spec = chart.to_dict(validate=False)
    for key in ("data", "datasets"):  # Altair's placeholder dataset would hide the page's data
        spec.pop(key, None)
    # drawn by st.vega_lite_chart (not through posviz.ui.display.show_chart): its description is
    # set here, or a screen reader announces "Vega visualization"
    arms = ", ".join(colors)
    return accessible_spec(spec, f"{title}: each arm's training loss by optimiser step, on a "
                           f"log scale, redrawn as the run trains ({arms}).")  # fmt: skip


def table_forming_chart(
    snapshots: np.ndarray,
    steps: Sequence[int],
    *,
    title: str,
    subtitle: str | Sequence[str] = (),
    width: int = 420,
) -> WithParams:
    """A learned table at every saved training step, one heatmap, stepped through in the browser.

    ``snapshots``: ``(s, rows, p)`` the table at ``steps`` (``s`` values). Every snapshot ships in
    the spec; the ``pos`` parameter (a slider and a ▶ play switch, :func:`posviz.charts.linked.
    position_params`) picks the one drawn, so playing sends nothing to the server. The colour
    scale is fixed over all snapshots (symmetric, clipped at the 99th percentile of ``|value|``),
    so what changes between frames is the table, not the scale.

    Raises:
        ValueError: ``snapshots`` is not 3-D, or ``steps`` does not match its first axis.
    """
    values = np.asarray(snapshots, dtype=np.float64)
    if values.ndim != 3 or len(steps) != values.shape[0] or values.shape[0] == 0:
        raise ValueError(
            f"snapshots of shape {values.shape} need one step each (got {len(steps)} steps)."
        )
    s, rows, p = values.shape
    index, row, col = np.meshgrid(np.arange(s), np.arange(rows), np.arange(p), indexing="ij")
    frame = pd.DataFrame(
        {
            "snapshot": index.ravel(),
            "step": np.asarray(steps)[index.ravel()],
            "position": row.ravel(),
            "dimension": col.ravel(),
            "value": values.ravel(),
        }
    )
    vmax = float(np.quantile(np.abs(values), 0.99)) or 1.0
    now = alt.Chart(frame).transform_filter(f"datum.snapshot == {POSITION_PARAM}")
    # quantitative cells (x..x+1, y..y+1): discrete scales collapsed in Streamlit's renderer
    cells = (
        now.transform_calculate(x2="datum.dimension + 1", y2="datum.position + 1")
        .mark_rect()
        .encode(
            alt.X("dimension:Q").title("dimension").scale(domain=[0, p], nice=False),
            alt.X2("x2:Q"),
            alt.Y("position:Q").title("position").scale(domain=[rows, 0], nice=False),
            alt.Y2("y2:Q"),
            alt.Color("value:Q")
            .scale(scheme="redblue", domain=[-vmax, vmax], clamp=True, reverse=True)
            .legend(title=None, gradientLength=120),
            tooltip=["step:Q", "position:Q", "dimension:Q", alt.Tooltip("value:Q", format=".3f")],
        )
    )
    label = (
        now.transform_filter("datum.position == 0 && datum.dimension == 0")
        .transform_calculate(text="'training step ' + datum.step")
        .mark_text(
            align="left",
            baseline="bottom",
            dy=-6,
            fontWeight="bold",
            color=alt.ExprRef(ADAPTIVE_TEXT["expr"]),
        )
        .encode(x=alt.value(0), y=alt.value(0), text="text:N")
    )
    chart = (cells + label).properties(
        # Streamlit sizes the whole chart to fit (title, labels, axes included): ~110 px of frame
        width=width,
        height=110 + max(96, min(8 * rows, 320)),
        title=_title(textwrap.wrap(title, 30) or title, subtitle),  # fits a phone-wide chart
    )
    return WithParams(
        chart, position_params(current=s - 1, last=s - 1, label="snapshot", hover=False)
    )
