"""Charts of real models seen from inside (frames computed by
:mod:`posviz.page_models.inside_models`): lines with a spread band, head-class bars, and a grid of
head classes per layer and head. Frames in, Altair out; no statistics here."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from posviz.charts.style import (
    BAND_FILL_OPACITY,
    CONTROL_COLOR,
    FIT_WIDTH,
    GUIDE_COLOR,
    PALETTE,
    chart_title,
    legend_columns,
)

#: Colours of the head classes (broad is the grey of "nothing in particular").
CLASS_COLORS = {
    "previous-token": PALETTE[1],
    "first-token (sink)": PALETTE[2],
    "self": PALETTE[4],
    "next-token": PALETTE[3],
    "last-token": PALETTE[6],
    "broad": PALETTE[9],  # #c7c7c7 before: 1.7:1 on white, under WCAG 1.4.11's 3:1
}


def _series_scales(
    series: Sequence[str], controls: Sequence[str]
) -> tuple[alt.Color, alt.StrokeDash, alt.Stroke]:
    """Colour (its legend's swatches the lines' strokes at full opacity: the band's translucent
    fill read 1.2:1), dash and band-edge stroke of each series."""
    colors, dashes, k = [], [], 0
    for name in series:
        if name in controls:
            colors.append(CONTROL_COLOR)
            dashes.append([6, 3] if controls.index(name) % 2 == 0 else [2, 2])
        else:
            colors.append(PALETTE[k % len(PALETTE)])
            dashes.append([1, 0])
            k += 1
    color = (
        alt.Color("series:N", title=None, sort=list(series))
        .scale(domain=list(series), range=colors)
        .legend(orient="bottom", direction="vertical", labelLimit=500, symbolType="stroke",
                symbolStrokeWidth=3, symbolOpacity=1)
    )  # fmt: skip
    dash = alt.StrokeDash("series:N", sort=list(series), legend=None).scale(
        domain=list(series), range=dashes
    )
    edge = alt.Stroke("series:N", sort=list(series), legend=None).scale(
        domain=list(series), range=colors
    )
    return color, dash, edge


def band_lines_chart(
    frame: pd.DataFrame,
    *,
    x_title: str,
    y_title: str,
    title: str,
    subtitle: str | Sequence[str] = (),
    controls: Sequence[str] = (),
    rule: float | None = None,
    log_x: bool = False,
    height: int = 280,
) -> alt.LayerChart:
    """One line per ``series`` (``frame``: ``x``, ``series``, ``value``, ``lo``, ``hi``) with its
    ``lo``–``hi`` band (a faint fill, its edges thin lines of the series' colour: ≥ 3:1 on both
    themes); series named in ``controls`` grey and dashed; an optional dashed rule."""
    series = list(dict.fromkeys(frame["series"]))
    color, dash, edge = _series_scales(series, list(controls))
    x = alt.X("x:Q", title=x_title)
    if log_x:
        x = x.scale(type="log")
    base = alt.Chart(frame).encode(x=x)
    # 6 px of padding: a line at the data's maximum (a score of 1 at Δ = 0) is not drawn on
    # the plot's top border
    band = base.mark_area(fillOpacity=BAND_FILL_OPACITY, strokeWidth=0.75).encode(
        y=alt.Y("lo:Q", title=y_title).scale(padding=6), y2="hi:Q", color=color, stroke=edge
    )
    lines = base.mark_line(strokeWidth=1.8).encode(
        y=alt.Y("value:Q", title=y_title).scale(padding=6),
        color=color,
        strokeDash=dash,
        tooltip=[
            "series:N",
            alt.Tooltip("x:Q", title=x_title),
            alt.Tooltip("value:Q", format=".3g"),
            alt.Tooltip("lo:Q", format=".3g"),
            alt.Tooltip("hi:Q", format=".3g"),
        ],
    )
    layers: list[alt.Chart] = [band, lines]
    if rule is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"y": [rule]}))
            .mark_rule(color=GUIDE_COLOR, strokeDash=[4, 4])
            .encode(y="y:Q")
        )
    return alt.layer(*layers).properties(
        title=chart_title(title, subtitle), height=height, autosize=FIT_WIDTH
    )


def class_bars_chart(frame: pd.DataFrame, *, title: str, subtitle: str = "") -> alt.LayerChart:
    """Heads per class (``frame``: ``model``, ``condition``, ``class``, ``heads``), one bar per
    model and condition, stacked by class. Each bar is named on two lines (model, condition) so
    the chart fits a phone's width (a facet per model has a fixed width: 925 px at 390)."""
    classes = [c for c in CLASS_COLORS if c in set(frame["class"])]
    rows = frame.assign(bar=frame["model"] + "|" + frame["condition"])
    bars = (
        alt.Chart(rows)
        .mark_bar()
        .encode(
            y=alt.Y("bar:N", title=None, sort=list(dict.fromkeys(rows["bar"]))).axis(
                labelLimit=0, labelExpr="split(datum.label, '|')", labelPadding=6
            ),
            # the x title ends at the plot's right edge: centred under a phone's narrow plot it
            # ran past the chart's right edge
            x=alt.X("share:Q", title="share of the model's heads").axis(
                format="%", titleAnchor="end"
            ),
            color=alt.Color("class:N", title="head class", sort=classes)
            .scale(domain=classes, range=[CLASS_COLORS[c] for c in classes])
            .legend(orient="bottom", columns=legend_columns(classes)),
            order=alt.Order("order:Q"),
            tooltip=[
                "model:N",
                "condition:N",
                "class:N",
                "heads:Q",
                alt.Tooltip("share:Q", format=".0%"),
            ],
        )
        .properties(height=40 * rows["bar"].nunique())
    )
    # shown at the page's width (fit-x): the container's width replaces 520
    return alt.layer(bars).properties(
        title=chart_title(title, subtitle), width=520, autosize=FIT_WIDTH
    )


def head_grid_chart(frame: pd.DataFrame, *, title: str | list[str]) -> alt.Chart:
    """Each head's class (``frame``: ``layer``, ``head``, ``class``, ``score``), layer down, head
    across. The plot is 16 px a head: a long ``title`` goes in lines (one line was cut with "…"
    when the chart was redrawn for a new theme)."""
    classes = [c for c in CLASS_COLORS if c in set(frame["class"])]
    return (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("head:O", title="head"),
            y=alt.Y("layer:O", title="layer"),
            color=alt.Color("class:N", title="head class", sort=classes)
            .scale(domain=classes, range=[CLASS_COLORS[c] for c in classes])
            .legend(orient="bottom", columns=legend_columns(classes)),
            tooltip=["layer:O", "head:O", "class:N", alt.Tooltip("score:Q", format=".2f")],
        )
        .properties(title=chart_title(title), width=alt.Step(16), height=alt.Step(9))
    )


def usage_heatmap_chart(frame: pd.DataFrame, *, title: str, subtitle: str = "") -> alt.Chart:
    """Each layer's share per rotary pair (``frame``: ``layer``, ``pair``, ``share``, 1 = even),
    layer down, pair across (fast → slow), on a diverging scale centred on the even share."""
    top = float(max(frame["share"].max(), 2.0))
    return (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("pair:O", title="rotary pair (0 = fastest)").axis(labelAngle=0, values=list(
                range(0, int(frame["pair"].max()) + 1, 4))),
            y=alt.Y("layer:O", title="layer"),
            color=alt.Color("share:Q", title="share (1 = even)")
            .scale(scheme="blueorange", domainMid=1.0, domain=[0, top])
            .legend(orient="bottom", gradientLength=240),
            tooltip=["layer:O", "pair:O", alt.Tooltip("share:Q", format=".2f")],
        )
        .properties(title=chart_title(title, subtitle), height=alt.Step(9), autosize=FIT_WIDTH)
    )  # fmt: skip
