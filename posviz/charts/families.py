"""Charts for the encoding families (RoPE, ALiBi, T5, NoPE, ViT, compare): arrays in, charts out.

Data go to Altair in long form; callers bound the size (heatmaps ≤ ~40 000 cells). The ``*_figure``
builders return a :class:`~posviz.charts.figure.Figure`: the chart and the array a user exports,
made from the same data in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.figure import Figure
from posviz.charts.style import (
    ADAPTIVE_TEXT,
    GUIDE_COLOR,
    PALETTE,
    color_scale,
    sequential_colors,
)
from posviz.encodings.rope import RopeFrequencies, pair_regimes

MAX_HEATMAP_CELLS = 65_536
_REGIME_COLORS = {"kept": "#1b9e77", "smoothed": "#d95f02", "interpolated": "#7570b3"}


def _one_two_five(upper: float) -> list[float]:
    """Tick values 0, 1, 2, 5, 10, 20, 50, … up to ``upper`` (for symlog axes)."""
    ticks, decade = [0.0], 1.0
    while decade <= upper:
        ticks += [step * decade for step in (1, 2, 5) if step * decade <= upper]
        decade *= 10
    return ticks


#: A rule's label: right of the rule, or left of it near the plot's right edge (p-RoPE's
#: "context" at 100,000 tokens ran past the chart on a phone).
_NEAR_RIGHT = "scale('x', datum.x) > width - 60"
_RULE_LABEL = {
    "align": alt.ExprRef(f"{_NEAR_RIGHT} ? 'right' : 'left'"),
    "dx": alt.ExprRef(f"{_NEAR_RIGHT} ? -4 : 4"),
}
#: A y title that stands level above the axis: along the axis it is cut to the plot's height,
#: which a hero with a tall legend squeezes to ~85 px ("attention weight facto").
_LEVEL_TITLE = {
    "titleAngle": 0,
    "titleAlign": "left",
    "titleAnchor": "end",
    "titleX": 0,
    "titleY": -8,
}


def _x_scale_axis(x: np.ndarray, log_x: bool) -> tuple[Any, Any]:
    """The x scale and axis: symlog with 1-2-5 ticks when ``log_x`` (Vega picks linear-looking
    ticks on a symlog axis: 0, 800, 1600), else the defaults."""
    if not log_x:
        return alt.Undefined, alt.Undefined
    return alt.Scale(type="symlog"), alt.Axis(values=_one_two_five(float(np.nanmax(x))))


def _series_tooltip(x_title: str, y_title: str) -> list[alt.Tooltip]:
    """A line's tooltip: its series, x and value under the axes' titles."""
    return [
        alt.Tooltip("series:N"),
        alt.Tooltip("x:Q", title=x_title),
        alt.Tooltip("value:Q", format=".4f", title=y_title),
    ]


def _x_rule(x: np.ndarray, rule_x: float | None, rule_label: str) -> list[alt.Chart]:
    """A dashed vertical rule at ``rule_x`` and its label, when it lies within ``x``; else none."""
    if rule_x is None or not np.nanmin(x) <= rule_x <= np.nanmax(x):
        return []
    rule_data = pd.DataFrame({"x": [rule_x], "label": [rule_label]})
    rule = alt.Chart(rule_data).mark_rule(strokeDash=[4, 4], color=GUIDE_COLOR).encode(x="x:Q")
    text = (
        alt.Chart(rule_data)
        .mark_text(**_RULE_LABEL, dy=-6, color=alt.ExprRef(ADAPTIVE_TEXT["expr"]))
        .encode(x="x:Q", y=alt.value(10), text="label:N")
    )
    return [rule, text]


def readable_ramp(count: int) -> list[str]:
    """``count`` colours along viridis from 0.31 to 0.49 of its length, dark blue to green.

    The stretch of viridis that reads at ≥ 3:1 (WCAG 2.1 SC 1.4.11, non-text contrast) on both
    Streamlit's white and its dark background (#171614 as drawn): the whole ramp put ALiBi's
    steepest head at 1.19:1 on dark and its gentlest at 1.3:1 on white. Neighbours look alike,
    the ends differ.
    """
    ramp = sequential_colors(101)
    return [ramp[round(31 + 18 * k / max(count - 1, 1))] for k in range(count)]


def _legend_columns(names: Sequence[str]) -> alt.ExprRef:
    """Columns of a bottom legend as a Vega expression of the plot's width: as many as fit (a
    label of 11-px text is ~6 px a character, plus its swatch), so 16 ALiBi heads take 4 rows
    on a desktop and 8 on a phone, never cut and never squeezing a short hero's plot flat."""
    longest = max((len(name) for name in names), default=0)
    return alt.ExprRef(f"min({len(names)}, max(1, floor(width / {6 * longest + 30})))")


def lines_chart(
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    x_title: str,
    y_title: str,
    rule_x: float | None = None,
    rule_label: str = "",
    log_x: bool = False,
    y_domain: tuple[float, float] | None = None,
    y_scale: str = "linear",
    legend: str = "bottom",
    height: int = 320,
    dashed: bool = False,
    ordered: bool = False,
    whole_x: bool = False,
) -> alt.LayerChart:
    """One line per series over ``x`` (NaN gaps dropped), optional vertical rule (trained length).

    Colours: one palette colour per series, named entities keeping theirs (sinusoid orange,
    learned blue, …); ``ordered`` series (heads by slope, …) or more than the palette holds take
    a sequential ramp instead. ``dashed`` gives every series its own dash pattern too, so a line
    lying exactly on another (RoPE's kernel on the sinusoid's) still shows.

    Args:
        x: ``(n,)``.
        series: name → ``(n,)`` values.
        y_scale: "linear", "log" or "symlog" (linear near 0, for values that may be 0).
        legend: legend position, "bottom" or "right" (many series).
        whole_x: ``x`` counts things (heads, layers): integer ticks ("3", never "3.0" or "2.5").

    A linear ``y`` without ``y_domain`` gets a few pixels of room at both ends, so a line at the
    data's maximum (a band that stays at 1) is not drawn on the plot's border. The y title stands
    level above the axis, not along it, where a short plot would cut it.
    """
    frames = [
        pd.DataFrame({"x": np.asarray(x), "value": np.asarray(v, dtype=float), "series": name})
        for name, v in series.items()
    ]
    data = pd.concat(frames, ignore_index=True).dropna()
    x_scale, x_axis = _x_scale_axis(x, log_x)
    if whole_x:
        x_axis = alt.Axis(format="d", tickMinStep=1)
    y_kwargs: dict = {"domain": list(y_domain)} if y_domain else {"padding": 6}
    if y_scale == "symlog":
        y_kwargs |= {"type": "symlog", "constant": 1e-3}
    elif y_scale == "log":
        y_kwargs |= {"type": "log"}
    y_axis = alt.Axis(**_LEVEL_TITLE)
    names = list(series)
    sequential = ordered or len(names) > len(PALETTE)
    scale = (
        alt.Scale(domain=names, range=readable_ramp(len(names)))
        if sequential
        else color_scale(names)
    )
    extra = {}
    if dashed:
        patterns = [[1, 0], [6, 3], [2, 2], [8, 3, 2, 3], [4, 4], [1, 3], [10, 4], [3, 6]]
        extra["strokeDash"] = alt.StrokeDash("series:N", sort=names, legend=None).scale(
            domain=names, range=[patterns[i % len(patterns)] for i in range(len(names))]
        )
    lines = (
        alt.Chart(data)
        .mark_line(clip=True, strokeWidth=2)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=x_scale, axis=x_axis),
            y=alt.Y("value:Q", title=y_title, scale=alt.Scale(**y_kwargs), axis=y_axis),
            **extra,
            color=alt.Color("series:N", title=None, sort=names)
            .scale(scale)
            .legend(
                orient=legend,
                labelLimit=0,
                columns=1 if legend == "right" else _legend_columns(names),
                symbolStrokeWidth=3,
            ),
            tooltip=_series_tooltip(x_title, y_title),
        )
        .properties(height=height)
    )
    return alt.layer(lines, *_x_rule(x, rule_x, rule_label))


ROW_PX = 46  # one family's row in :func:`rows_chart`


def rows_chart(
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    x_title: str,
    y_title: str,
    rule_x: float | None = None,
    rule_label: str = "",
    log_x: bool = False,
) -> alt.LayerChart:
    """Small multiples in one view: each series of values in [0, 1] in its own row, named on the
    left, 0 at the row's baseline (dotted) and 1 near the next row's.

    For series that would lie on one another in a shared plot (five of seven families at 0 or 1
    on /compare). One view (not a facet), so the chart still fits the page's width on a phone.

    Raises:
        ValueError: a value outside [0, 1] (it would run into the next row).
    """
    names = list(series)
    values = {name: np.asarray(v, dtype=float) for name, v in series.items()}
    bad = [n for n, v in values.items() if np.any((v < 0) | (v > 1))]
    if bad:
        raise ValueError(f"rows_chart draws values in [0, 1]; {bad} leave it (use lines_chart).")
    rows = len(names)
    frames = [
        pd.DataFrame(
            {"x": np.asarray(x), "value": v, "level": rows - 1 - i + 0.8 * v, "series": name}
        )
        for i, (name, v) in enumerate(values.items())
    ]
    data = pd.concat(frames, ignore_index=True).dropna()
    labels = "[" + ", ".join(repr(n) for n in reversed(names)) + "]"
    y = alt.Y("level:Q", title=f"{y_title} (each row 0 to 1)").scale(
        domain=[-0.1, rows - 0.05], nice=False, zero=False
    )
    y = y.axis(
        values=list(range(rows)),
        labelExpr=f"{labels}[datum.value]",
        labelOverlap=False,  # every row named, however short the plot
        labelLimit=0,
        grid=False,
        **_LEVEL_TITLE,
    )
    x_scale, x_axis = _x_scale_axis(x, log_x)
    x_enc = alt.X("x:Q", title=x_title, scale=x_scale, axis=x_axis)
    color = alt.Color("series:N", title=None, sort=names).scale(color_scale(names)).legend(None)
    base = alt.Chart(data).encode(x=x_enc)
    lines = base.mark_line(clip=True, strokeWidth=2).encode(
        y=y,
        color=color,
        tooltip=_series_tooltip(x_title, y_title),
    )
    baselines = (
        alt.Chart(pd.DataFrame({"level": np.arange(rows, dtype=float)}))
        .mark_rule(color=GUIDE_COLOR, strokeDash=[1, 3])
        .encode(y=y)  # the same axis: a default one merged in hid every other row's name
    )
    layers = [baselines, lines, *_x_rule(x, rule_x, rule_label)]
    return alt.layer(*layers).properties(height=ROW_PX * rows)


def rows_figure(
    x: np.ndarray, series: Mapping[str, np.ndarray], *, name: str, **chart_options: Any
) -> Figure:
    """:func:`rows_chart` with its export: columns ``[x, *series]``, ``(n, 1 + len(series))``."""
    data = np.column_stack([np.asarray(x), *(np.asarray(v) for v in series.values())])
    return Figure(rows_chart(x, series, **chart_options), data, name)


def heatmap(
    matrix: np.ndarray,
    *,
    x_title: str,
    y_title: str,
    color_title: str,
    x_values: Sequence[float] | None = None,
    y_values: Sequence[float] | None = None,
    scheme: str = "viridis",
    domain_mid: float | None = None,
    height: int = 360,
) -> alt.Chart:
    """A matrix as a rect heatmap (row = y, column = x); ``-inf`` cells (masked) left blank.

    Args:
        matrix: ``(n_rows, n_cols)`` with at most 65 536 cells.
    """
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2 or values.size > MAX_HEATMAP_CELLS:
        raise ValueError(
            f"heatmap of shape {values.shape} is too large to draw; keep it under "
            f"{MAX_HEATMAP_CELLS:,} cells (fewer positions)."
        )
    rows, cols = np.indices(values.shape)
    xs = np.asarray(x_values if x_values is not None else np.arange(values.shape[1]))
    ys = np.asarray(y_values if y_values is not None else np.arange(values.shape[0]))
    data = pd.DataFrame({"x": xs[cols.ravel()], "y": ys[rows.ravel()], "v": values.ravel()})
    data = data[np.isfinite(data["v"])]
    scale = (
        alt.Scale(scheme=scheme, domainMid=domain_mid)
        if domain_mid is not None
        else alt.Scale(scheme=scheme)
    )
    return (
        alt.Chart(data)
        .mark_rect()
        .encode(
            x=alt.X("x:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
            y=alt.Y("y:O", title=y_title, axis=alt.Axis(labelOverlap=True)),
            color=alt.Color("v:Q", title=color_title, scale=scale),
            tooltip=[
                alt.Tooltip("y:O", title=y_title),
                alt.Tooltip("x:O", title=x_title),
                alt.Tooltip("v:Q", format=".4f", title=color_title),
            ],
        )
        .properties(height=height)
    )


def rope_wavelength_chart(freqs: RopeFrequencies, *, height: int = 340) -> alt.LayerChart:
    """Per-pair wavelength (tokens per turn, log scale) before and after scaling, coloured by what
    the scaling did (kept / smoothed / interpolated), with the original context length as a rule."""
    regimes = pair_regimes(freqs)
    pairs = np.arange(freqs.inv_freq.size)
    data = pd.DataFrame(
        {
            "pair": np.concatenate([pairs, pairs]),
            "wavelength": np.concatenate([freqs.original_wavelength, freqs.wavelength]),
            "which": ["original θᵢ"] * pairs.size + ["scaled θ′ᵢ"] * pairs.size,
            "regime": np.concatenate([regimes, regimes]),
            "ratio": np.concatenate([np.ones(pairs.size), freqs.ratio]),
        }
    )
    base = alt.Chart(data).encode(
        x=alt.X("pair:Q", title="rotary pair i (0 = fastest)"),
        y=alt.Y("wavelength:Q", title="wavelength 2π/θ (tokens, log)", scale=alt.Scale(type="log")),
        tooltip=[
            "pair:Q",
            "which:N",
            "regime:N",
            alt.Tooltip("wavelength:Q", format=",.1f"),
            alt.Tooltip("ratio:Q", format=".4f", title="θ′/θ"),
        ],
    )
    original = base.transform_filter(alt.datum.which == "original θᵢ").mark_line(
        color=GUIDE_COLOR, strokeDash=[3, 3]
    )
    scaled = (
        base.transform_filter(alt.datum.which == "scaled θ′ᵢ")
        .mark_circle(size=45)
        .encode(
            color=alt.Color(
                "regime:N",
                title="pair",
                scale=alt.Scale(domain=list(_REGIME_COLORS), range=list(_REGIME_COLORS.values())),
            ).legend(orient="bottom", labelLimit=0)
        )
    )
    layers = [original, scaled]
    if freqs.original_context:
        rule_data = pd.DataFrame(
            {
                "y": [freqs.original_context],
                "label": [f"original context {freqs.original_context:,}"],
            }
        )
        layers.append(
            alt.Chart(rule_data).mark_rule(color=GUIDE_COLOR, strokeDash=[4, 4]).encode(y="y:Q")
        )
        layers.append(
            alt.Chart(rule_data)
            .mark_text(**_RULE_LABEL, dy=-6, color=alt.ExprRef(ADAPTIVE_TEXT["expr"]))
            .encode(x=alt.value(4), y="y:Q", text="label:N")
        )
    return alt.layer(*layers).properties(height=height)


#: The RoPE clock's plot side in pixels.
CIRCLE_PX = 270


def rope_circle_chart(
    position: int, inv_freq: np.ndarray, pairs: Sequence[int], *, trail: int = 24
) -> alt.LayerChart:
    """Where a unit query pair ``(1, 0)`` points after rotation to ``position``, for chosen pairs.

    Each pair ``i`` turns by ``θ_i`` per token ("clock hands", multiplicative): a hand from the
    origin to ``(cos pθ_i, sin pθ_i)`` and a fading trail of the previous ``trail`` positions.
    """
    circle_t = np.linspace(0, 2 * np.pi, 121)
    circle = pd.DataFrame({"x": np.cos(circle_t), "y": np.sin(circle_t), "order": np.arange(121)})
    rows = []
    for i in pairs:
        theta = float(inv_freq[i])
        for p in range(max(0, position - trail), position + 1):
            rows.append(
                {
                    "pair": f"pair {i} (λ={2 * np.pi / theta:,.0f})",
                    "p": p,
                    "x": np.cos(p * theta),
                    "y": np.sin(p * theta),
                    "age": position - p,
                }
            )
    trail_df = pd.DataFrame(rows)
    names = list(dict.fromkeys(trail_df["pair"]))
    color = alt.Color("pair:N", title=None, sort=names).scale(color_scale(names))
    head = trail_df[trail_df["age"] == 0]
    hands = pd.concat([head.assign(x=0.0, y=0.0, end=0), head.assign(end=1)])
    axis = alt.Scale(domain=[-1.15, 1.15], nice=False)
    ring = (
        alt.Chart(circle)
        .mark_line(color=GUIDE_COLOR)
        .encode(
            x=alt.X("x:Q", scale=axis, title="first dim of the pair"),
            y=alt.Y("y:Q", scale=axis, title="second dim of the pair"),
            order="order:Q",
        )
    )
    dots = (
        alt.Chart(trail_df)
        .mark_circle()
        .encode(
            x="x:Q",
            y="y:Q",
            color=color.legend(orient="top", columns=2, labelLimit=0),
            opacity=alt.Opacity(
                "age:Q", scale=alt.Scale(domain=[0, trail], range=[1, 0.1]), legend=None
            ),
            tooltip=[
                "pair:N",
                "p:Q",
                alt.Tooltip("x:Q", format=".3f"),
                alt.Tooltip("y:Q", format=".3f"),
            ],
        )
    )
    lines = (
        alt.Chart(hands)
        .mark_line(strokeWidth=3)
        .encode(x="x:Q", y="y:Q", color=color, detail="pair:N", order="end:Q")
    )
    # square and whole on a phone-wide page too (shown at its own width): a 390-px phone leaves
    # ~358 px for the chart, axes and titles included (320 was 13 px wider than the phone)
    return alt.layer(ring, dots, lines).properties(
        width=CIRCLE_PX, height=CIRCLE_PX, autosize=alt.AutoSizeParams(type="pad")
    )


def bucket_chart(relative: np.ndarray, buckets: Mapping[str, np.ndarray]) -> alt.Chart:
    """T5 bucket index vs relative position ``key − query`` (step lines, one per variant)."""
    data = pd.concat(
        [
            pd.DataFrame({"relative": relative, "bucket": b, "variant": name})
            for name, b in buckets.items()
        ],
        ignore_index=True,
    )
    names = list(buckets)
    return (
        alt.Chart(data)
        .mark_line(interpolate="step-after", strokeWidth=2)
        .encode(
            x=alt.X("relative:Q", title="relative position key − query (tokens)"),
            y=alt.Y("bucket:Q", title="bucket index"),
            color=alt.Color("variant:N", title=None, sort=names)
            .scale(color_scale(names))
            .legend(orient="bottom", labelLimit=0, columns=1),
            tooltip=["variant:N", "relative:Q", "bucket:Q"],
        )
        .properties(height=320)
    )


def patch_grid_chart(similarity: np.ndarray, *, gap: int = 1, tile_px: int = 0) -> alt.Chart:
    """The ViT figure: a grid of ``h×w`` tiles, tile ``(r, c)`` = cosine of patch ``(r, c)``
    with every patch (Dosovitskiy et al. 2021, Fig. 7 centre).

    Args:
        similarity: ``(tiles_h, tiles_w, h, w)``: :func:`posviz.analysis.vit.patch_similarity_grid`
            or a strided subset of its tiles.
    """
    tiles_h, tiles_w, h, w = similarity.shape
    if similarity.size > 4 * MAX_HEATMAP_CELLS:
        raise ValueError(
            f"{tiles_h}×{tiles_w} tiles of {h}×{w} are too many cells to draw; show fewer tiles."
        )
    r, c, r2, c2 = np.indices(similarity.shape).reshape(4, -1)
    data = pd.DataFrame(
        {
            "X": c * (w + gap) + c2,
            "Y": r * (h + gap) + r2,
            "cos": similarity.ravel(),
            "tile": [f"({a}, {b})" for a, b in zip(r, c, strict=True)],
            "patch": [f"({a}, {b})" for a, b in zip(r2, c2, strict=True)],
        }
    )
    # at most 330 pixels a side: whole and square on a phone-wide page too
    side = tile_px or max(240, min(330, 3 * max(tiles_h * h, tiles_w * w)))
    hidden = alt.Axis(labels=False, ticks=False, grid=False, domain=False)
    return (
        alt.Chart(data)
        .mark_rect()
        .encode(
            x=alt.X("X:O", axis=hidden, title="input patch column →"),
            y=alt.Y("Y:O", axis=hidden, title="input patch row ↓"),
            color=alt.Color(
                "cos:Q", title="cosine", scale=alt.Scale(scheme="viridis", domain=[-1, 1])
            ),
            tooltip=[
                alt.Tooltip("tile:N", title="tile of patch"),
                alt.Tooltip("patch:N"),
                alt.Tooltip("cos:Q", format=".3f"),
            ],
        )
        .properties(width=side, height=side)
    )


def lines_figure(
    x: np.ndarray, series: Mapping[str, np.ndarray], *, name: str, **chart_options: Any
) -> Figure:
    """:func:`lines_chart` with its export: columns ``[x, *series]``, ``(n, 1 + len(series))``."""
    data = np.column_stack([np.asarray(x), *(np.asarray(v) for v in series.values())])
    return Figure(lines_chart(x, series, **chart_options), data, name)


def heatmap_figure(matrix: np.ndarray, *, name: str, **chart_options: Any) -> Figure:
    """:func:`heatmap` with the matrix itself as export (``-inf`` cells kept as they are)."""
    return Figure(heatmap(matrix, **chart_options), np.asarray(matrix), name)


def rope_wavelength_figure(freqs: RopeFrequencies) -> Figure:
    """:func:`rope_wavelength_chart`; export ``(pairs, 2)``: columns θ_i and θ′_i."""
    data = np.column_stack([freqs.original_inv_freq, freqs.inv_freq])
    return Figure(rope_wavelength_chart(freqs), data, "rope_inv_freq")


def rope_circle_figure(position: int, inv_freq: np.ndarray, pairs: Sequence[int]) -> Figure:
    """:func:`rope_circle_chart`; export ``(len(pairs), 3)``: pair, cos pθ_i, sin pθ_i."""
    theta = np.asarray(inv_freq, dtype=np.float64)[np.asarray(pairs, dtype=int)]
    data = np.column_stack([np.asarray(pairs), np.cos(position * theta), np.sin(position * theta)])
    return Figure(rope_circle_chart(position, inv_freq, pairs), data, "rope_circle")


def bucket_figure(relative: np.ndarray, buckets: Mapping[str, np.ndarray]) -> Figure:
    """:func:`bucket_chart`; export columns ``[relative, *buckets]``."""
    data = np.column_stack([np.asarray(relative), *buckets.values()])
    return Figure(bucket_chart(relative, buckets), data, "t5_buckets")


def alibi_slopes_figure(slopes: np.ndarray) -> Figure:
    """Slope ``m_h`` per head (log y); export: the ``(n_heads,)`` slopes."""
    slopes = np.asarray(slopes, dtype=np.float64)
    chart = lines_chart(
        np.arange(slopes.size),
        {"slope m_h": slopes},
        x_title="head h (0-based, model order)",
        y_title="slope m_h (log scale)",
        y_scale="log",
        whole_x=True,
    )
    return Figure(chart, slopes, "alibi_slopes")


def alibi_decay_figure(
    distances: np.ndarray, factors: np.ndarray, slopes: np.ndarray, shown: Sequence[int]
) -> Figure:
    """One line per shown head of ``factors[:, h]`` (log-x); export: every head, ``(n, heads)``.

    Args:
        distances: ``(n,)``; factors: ``(n, n_heads)``; slopes: ``(n_heads,)``.
    """
    steep_first = sorted(shown, key=lambda h: -float(slopes[h]))  # the ramp follows the slope
    series = {f"head {h} (m={slopes[h]:.3g})": factors[:, h] for h in steep_first}
    chart = lines_chart(
        distances,
        series,
        x_title="distance k = i − j (tokens)",
        y_title="attention weight factor",
        log_x=True,
        ordered=True,
        legend="bottom",
    )
    return Figure(chart, np.asarray(factors), "alibi_decay")


def patch_grid_figure(similarity: np.ndarray, tiles: np.ndarray) -> Figure:
    """:func:`patch_grid_chart` of ``tiles``; export: all of ``similarity`` as ``(h·w, h·w)``."""
    h, w = similarity.shape[:2]
    return Figure(patch_grid_chart(tiles), similarity.reshape(h * w, h * w), "vit_patch_similarity")
