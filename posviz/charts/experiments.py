"""Chart builders for the experiment views (probes, add vs concat, permutation, layers, lookup).

Each takes a long-form ``DataFrame`` (or small arrays) and returns an ``alt.Chart``; nothing is
displayed here. Payloads stay small: at most a few thousand marks per chart.
"""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.style import (
    ADAPTIVE_TEXT,
    FIT_WIDTH,
    GUIDE_COLOR,
    PALETTE,
    chart_title,
    color_scale,
    legend_columns,
)

_WIDTH = 480
_HEIGHT = 320


def _tables(frame: pd.DataFrame) -> alt.Color:
    """One colour per table, the same in every chart of the page (MiniLM blue, sinusoid orange)."""
    names = list(dict.fromkeys(frame["table"]))
    return (
        alt.Color("table:N", title=None, sort=names)
        .scale(color_scale(names))
        .legend(orient="top", columns=1, labelLimit=0)
    )


def predicted_vs_actual_chart(
    frame: pd.DataFrame, *, title: str = "Predicted vs actual position"
) -> alt.LayerChart:
    """Points ``(position, predicted)`` per table with the ideal diagonal ``y = x`` (the blog's
    plot).

    ``frame``: columns ``table``, ``position``, ``predicted``.
    """
    lo = float(min(frame.position.min(), 0))
    hi = float(frame.position.max())
    diagonal = pd.DataFrame({"position": [lo, hi], "predicted": [lo, hi]})
    points = (
        alt.Chart(frame)
        .mark_circle(size=14, opacity=0.7)
        .encode(
            x=alt.X("position:Q", title="actual position"),
            y=alt.Y("predicted:Q", title="predicted position"),
            color=_tables(frame),
            tooltip=["table:N", "position:Q", alt.Tooltip("predicted:Q", format=".2f")],
        )
    )
    ideal = (
        alt.Chart(diagonal)
        .mark_line(color=alt.ExprRef(ADAPTIVE_TEXT["expr"]), strokeDash=[6, 4], strokeWidth=2)
        .encode(x="position:Q", y="predicted:Q")
    )
    # the ideal drawn last: over the points, not hidden under them
    return (points + ideal).properties(title=title, width=_WIDTH, height=_HEIGHT + 60)


def probe_error_chart(frame: pd.DataFrame, *, window: int = 16) -> alt.LayerChart:
    """Absolute error by position per table: faint points plus a rolling mean over ``window`` rows.

    ``frame``: columns ``table``, ``position``, ``abs_error`` (one row per test position).
    """
    frame = frame.sort_values(["table", "position"]).copy()
    frame["rolling"] = frame.groupby("table")["abs_error"].transform(
        lambda s: s.rolling(window, min_periods=1, center=True).mean()
    )
    base = alt.Chart(frame).encode(
        x=alt.X("position:Q", title="position"),
        color=_tables(frame),
    )
    points = base.mark_circle(size=10, opacity=0.3).encode(
        y=alt.Y("abs_error:Q", title="|predicted − actual| (positions)"),
        tooltip=["table:N", "position:Q", alt.Tooltip("abs_error:Q", format=".2f")],
    )
    line = base.mark_line().encode(y="rolling:Q")
    return (points + line).properties(
        title=f"Error by position (line: mean of {window})", width=_WIDTH, height=_HEIGHT + 60
    )


def cloud_chart(frame: pd.DataFrame, *, title: str, x_title: str, y_title: str) -> alt.LayerChart:
    """Scatter of ``word + PE[p]`` coloured by position, with the word alone as a red cross.

    ``frame``: output of ``posviz.analysis.add_concat.word_position_cloud``.
    """
    cloud = frame[frame.position >= 0]
    word = frame[frame.position < 0]
    points = (
        alt.Chart(cloud)
        .mark_circle(size=22)
        .encode(
            x=alt.X("x:Q", title=x_title).scale(zero=False),
            y=alt.Y("y:Q", title=y_title).scale(zero=False),
            color=alt.Color("position:Q").scale(scheme="viridis"),
            tooltip=[
                "position:Q",
                alt.Tooltip("x:Q", format=".3f"),
                alt.Tooltip("y:Q", format=".3f"),
            ],
        )
    )
    centre = (
        alt.Chart(word)
        .mark_point(shape="cross", size=220, color=PALETTE[2], filled=True)
        .encode(
            x="x:Q",
            y="y:Q",
            tooltip=[
                alt.Tooltip("kind:N"),
                alt.Tooltip("x:Q", format=".3f"),
                alt.Tooltip("y:Q", format=".3f"),
            ],
        )
    )
    return (points + centre).properties(title=title, width=_WIDTH, height=_HEIGHT)


def magnitude_chart(frame: pd.DataFrame) -> alt.Chart:
    """Per-dimension spread of PE (across positions) vs WE (across the vocabulary).

    ``frame``: output of ``posviz.analysis.add_concat.dimension_magnitudes``.
    """
    names = {
        "pe_std": "PE: std over positions",
        "we_std": "WE: std over vocabulary",
        "word_abs": "|this word's WE|",
    }
    keep = [c for c in names if c in frame]
    long = frame.melt(id_vars="dimension", value_vars=keep, var_name="series", value_name="value")
    long["series"] = long.series.map(names)
    shown = [names[c] for c in keep]
    return (
        alt.Chart(long)
        .mark_line(strokeWidth=1)
        .encode(
            x=alt.X("dimension:Q", title="dimension"),
            y=alt.Y("value:Q", title="magnitude").scale(padding=6),  # the top line off the border
            color=alt.Color("series:N", title=None, sort=shown)
            .scale(domain=shown, range=list(PALETTE[: len(shown)]))
            .legend(orient="top", labelLimit=0, columns=legend_columns(shown)),
            # the single word is spiky; keep the two spreads readable on top of it
            opacity=alt.condition(
                alt.datum.series == names["word_abs"], alt.value(0.35), alt.value(1.0)
            ),
            tooltip=["series:N", "dimension:Q", alt.Tooltip("value:Q", format=".4f")],
        )
        .properties(title="Magnitude per dimension", width=_WIDTH * 2, height=_HEIGHT)
    )


_INPUTS = ("without position embeddings", "with position embeddings")


def _stacked(
    frame: pd.DataFrame,
    keep: list[str],
    labels: Mapping[str, str],
    *,
    var_name: str,
    value_name: str,
) -> pd.DataFrame:
    """``frame``'s columns ``labels`` stacked into one ``value_name`` column (long form), with
    ``var_name`` holding each value's column by its label (``labels``: column → label) and the
    ``keep`` columns repeated beside it."""
    long = frame.melt(
        id_vars=keep, value_vars=list(labels), var_name=var_name, value_name=value_name
    )
    long[var_name] = long[var_name].map(labels)
    return long


def permutation_chart(per_token: pd.DataFrame) -> alt.LayerChart:
    """Per token: distance between its outputs in sentence A and B, without vs with positions.

    Log scale: without positions the distance is float rounding (~1e-7), with them it is order 1.
    """
    frame = per_token.copy()
    frame["label"] = [
        f"{t} (A{a}→B{b})"
        for t, a, b in zip(frame.token, frame.position_a, frame.position_b, strict=True)
    ]
    long = _stacked(
        frame,
        ["label", "position_b"],
        {
            "distance_without_positions": "without position embeddings",
            "distance_with_positions": "with position embeddings",
        },
        var_name="input",
        value_name="distance",
    )
    long["distance"] = long.distance.clip(lower=1e-9)
    base = alt.Chart(long).encode(
        x=alt.X(
            "label:N", sort=alt.SortField("position_b"), title="token (position in A → in B)"
        ).axis(labelAngle=0),
        xOffset="input:N",
        color=alt.Color("input:N", title=None, sort=_INPUTS)
        .scale(domain=list(_INPUTS), range=[PALETTE[9], PALETTE[0]])
        .legend(orient="top", labelLimit=0, columns=1),  # two long labels: one column fits a phone
        tooltip=["label:N", "input:N", alt.Tooltip("distance:Q", format=".2e")],
    )
    # a lollipop, not a bar: bars have no baseline on a log scale
    stem = base.mark_rule(strokeWidth=3).encode(
        y=alt.Y("distance:Q", title="‖out_B[k] − out_A[π(k)]‖₂ (log scale)")
        .scale(type="log", domain=[1e-9, 100])
        .axis(format="~e"),
        y2=alt.datum(1e-9),
    )
    head = base.mark_circle(size=70, opacity=1).encode(y="distance:Q")
    return (stem + head).properties(
        title=chart_title("Same token, two orders", "how far apart are its two outputs?"),
        width=_WIDTH * 2,
        height=_HEIGHT + 100,
    )


def similarity_chart(
    similarity: np.ndarray, tokens_b: tuple[str, ...], tokens_a: tuple[str, ...], *, title: str
) -> alt.Chart:
    """Cosine similarity of every output in B (rows) to every output in A (columns)."""
    rows, cols = np.indices(similarity.shape)
    frame = pd.DataFrame(
        {
            "b": [f"B{i}:{tokens_b[i]}" for i in rows.ravel()],
            "a": [f"A{j}:{tokens_a[j]}" for j in cols.ravel()],
            "i": rows.ravel(),
            "j": cols.ravel(),
            "cosine": similarity.ravel(),
        }
    )
    return (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("a:N", sort=alt.SortField("j"), title="output in sentence A"),
            y=alt.Y("b:N", sort=alt.SortField("i"), title="output in sentence B"),
            color=alt.Color("cosine:Q").scale(
                scheme="viridis", domain=[float(similarity.min()), 1.0]
            ),
            tooltip=["a:N", "b:N", alt.Tooltip("cosine:Q", format=".6f")],
        )
        .properties(title=title, width=260, height=max(300, 40 * similarity.shape[0]))
    )


def layer_chart(scores: pd.DataFrame, *, metric: str = "r2") -> alt.LayerChart:
    """Probe score per layer (0 = embedding output), with the chance level as a dashed rule.

    ``scores``: columns ``layer``, ``r2``, ``mae``, ``chance_mae`` and optionally ``model``.
    """
    frame = scores.copy()
    if "model" not in frame:
        frame["model"] = "model"
    models = list(dict.fromkeys(frame["model"]))
    title = (
        "Probe R² per layer (1 = exact)" if metric == "r2" else "Probe error per layer (positions)"
    )
    chance = 0.0 if metric == "r2" else float(frame.chance_mae.iloc[0])
    line = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("layer:O", title="layer (0 = embeddings)"),
            y=alt.Y(f"{metric}:Q", title="R²" if metric == "r2" else "MAE"),
            color=alt.Color("model:N", title=None, sort=models)
            .scale(color_scale(models))
            .legend(orient="top", columns=1, labelLimit=0),
            tooltip=[
                "model:N",
                "layer:O",
                alt.Tooltip("r2:Q", format=".3f"),
                alt.Tooltip("mae:Q", format=".2f"),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"chance": [chance]}))
        .mark_rule(color=GUIDE_COLOR, strokeDash=[4, 4])
        .encode(y="chance:Q")
    )
    return (line + rule).properties(title=title, width=_WIDTH, height=_HEIGHT)


_CHANGED = ("learned (requires_grad=True)", "sinusoid (frozen)")


def training_change_chart(changes: pd.DataFrame) -> alt.Chart:
    """How far each row moved during training: learned table vs frozen sinusoid, per position."""
    long = _stacked(
        changes,
        ["position", "used"],
        {"learned_change": "learned (requires_grad=True)", "sinusoid_change": "sinusoid (frozen)"},
        var_name="table",
        value_name="change",
    )
    long["looked up in training"] = np.where(long.used, "yes", "no")
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("position:O", title="row (position)"),
            xOffset="table:N",
            y=alt.Y("change:Q", title="‖row after − row before‖₂"),
            color=alt.Color("table:N", title=None, sort=_CHANGED)
            .scale(domain=list(_CHANGED), range=[PALETTE[0], PALETTE[1]])
            .legend(orient="top", labelLimit=0, columns=1),
            # faded = never looked up (the caption says so); no second legend, whose black and
            # grey swatches matched no bar
            opacity=alt.Opacity("looked up in training:N", legend=None).scale(
                domain=["yes", "no"], range=[1.0, 0.35]
            ),
            tooltip=[
                "position:O",
                "table:N",
                "looked up in training:N",
                alt.Tooltip("change:Q", format=".4f"),
            ],
        )
        .properties(  # as wide as the page gives (a fixed 960 px was cut on a phone)
            title="Which rows did training change?",
            autosize=FIT_WIDTH,
            width=_WIDTH * 2,
            height=_HEIGHT + 40,
        )
    )


def _two_lines(text: str, limit: int = 40) -> str | list[str]:
    """``text`` as is when short, else two lines split at the space nearest its middle."""
    if len(text) <= limit or " " not in text:
        return text
    middle = len(text) // 2
    cut = min((i for i, c in enumerate(text) if c == " "), key=lambda i: abs(i - middle))
    return [text[:cut], text[cut + 1 :]]


def evidence_chart(
    frame: pd.DataFrame, *, x_title: str, title: str, subtitle: str = "", percent: bool = False
) -> alt.LayerChart:
    """Each measured value beside its control: a dot at the mean, a bar over mean ± std.

    ``frame``: columns ``label`` (one row each, drawn top to bottom in order), ``mean``, ``low``,
    ``high`` (the spread the library reports) and ``entity`` (the name that picks the row's
    colour, so a table and its random control keep their page-wide colours: the control grey).
    """
    order = list(frame["label"])
    entities = list(dict.fromkeys(frame["entity"]))
    fmt = ".1%" if percent else ".3~g"
    y = alt.Y("label:N", title=None, sort=order).axis(labelLimit=0)
    color = (
        alt.Color("entity:N", title=None, sort=entities).scale(color_scale(entities)).legend(None)
    )
    # the x title ends at the plot's right edge: centred under a narrow plot (a phone, long row
    # labels) it ran past the chart's right edge; a long one in two lines, or it runs past the
    # left edge instead
    x_lines = _two_lines(x_title)
    x = alt.X("mean:Q", title=x_lines).axis(
        format=".0%" if percent else alt.Undefined, titleAnchor="end"
    )
    base = alt.Chart(frame).encode(y=y, color=color)
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title=x_lines).axis(titleAnchor="end"), x2="high:Q"
    )
    dots = base.mark_circle(size=140, opacity=1).encode(
        x=x,
        tooltip=[
            alt.Tooltip("label:N", title="what"),
            alt.Tooltip("mean:Q", format=fmt),
            alt.Tooltip("low:Q", format=fmt, title="low"),
            alt.Tooltip("high:Q", format=fmt, title="high"),
        ],
    )
    # each value written beside its dot, on the side with room: right of a dot in the left half
    # of the axis, left of one in the right half (a label right of the largest ran past the
    # chart's edge on a phone)
    lowest = min(0.0, float(frame["low"].min()))
    middle = (lowest + float(frame["high"].max())) / 2
    texts = [
        base.transform_filter(f"datum.mean {side} {middle:.4g}")
        .mark_text(align=align, dx=dx, dy=-10, fontSize=12)
        .encode(x="mean:Q", text=alt.Text("mean:Q", format=fmt))
        for side, align, dx in (("<=", "left", 10), (">", "right", -10))
    ]
    return alt.layer(bars, dots, *texts).properties(
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        width=480,
        height=max(120, 46 * len(frame)),
        title=chart_title(title, subtitle),
    )
