"""Chart builders for the position lab: loss curves, a metric per variant, extrapolation, probe
score per training step, row movement.

Each takes a long-form ``DataFrame`` and returns an Altair chart; nothing is displayed or
computed here beyond what Vega-Lite draws (means and spreads arrive precomputed).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from posviz.charts.style import FIT_WIDTH

_HEIGHT = 300
_COLORS = (
    alt.Color("variant:N", title=None)
    .scale(scheme="tableau10")
    .legend(orient="top", labelLimit=320, columns=2)
)


def _require(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}.")


def loss_curve_chart(frame: pd.DataFrame, *, title: str = "Training loss") -> alt.Chart:
    """Training loss against optimiser step, one line per variant (log-scaled loss).

    ``frame``: columns ``variant``, ``step``, ``loss`` (one row per recorded step and variant; the
    library averages seeds before this point). Non-positive losses cannot sit on a log axis and
    are left out by Vega-Lite.
    """
    _require(frame, ("variant", "step", "loss"), "The loss chart")
    return (
        alt.Chart(frame)
        .mark_line(interpolate="monotone")
        .encode(
            x=alt.X("step:Q", title="optimiser step"),
            y=alt.Y("loss:Q", title="training loss (cross-entropy)").scale(type="log"),
            color=_COLORS,
            tooltip=["variant:N", "step:Q", alt.Tooltip("loss:Q", format=".4f")],
        )
        .properties(title=title, height=_HEIGHT, autosize=FIT_WIDTH)
    )


def metric_chart(frame: pd.DataFrame, *, metric: str, title: str | None = None) -> alt.LayerChart:
    """The held-out metric per variant: a point at the mean and a bar from ``low`` to ``high``.

    ``frame``: columns ``variant``, ``mean``, ``low``, ``high`` (one row per variant; ``low``/
    ``high`` are the library's spread over seeds, e.g. mean ± one standard deviation), and
    optionally ``role`` ("variant" or "control") which sets the point's shape so the control
    stands apart. ``metric`` names the y axis.
    """
    _require(frame, ("variant", "mean", "low", "high"), "The metric chart")
    frame = frame.assign(role=frame.get("role", "variant"))
    base = alt.Chart(frame).encode(
        x=alt.X("variant:N", title=None, sort=None).axis(labelAngle=0, labelLimit=220),
        color=_COLORS.legend(None),
    )
    bars = base.mark_rule(strokeWidth=2).encode(y=alt.Y("low:Q", title=metric), y2="high:Q")
    points = base.mark_point(size=90, filled=True).encode(
        y="mean:Q",
        shape=alt.Shape("role:N", title=None).legend(orient="top"),
        tooltip=[
            "variant:N",
            "role:N",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("low:Q", format=".4f"),
            alt.Tooltip("high:Q", format=".4f"),
        ],
    )
    return (bars + points).properties(
        title=title or f"{metric}: mean and 95% interval over seeds",
        height=_HEIGHT,
        autosize=FIT_WIDTH,
    )


def band_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    x_title: str,
    metric: str,
    rule_at: int | None = None,
    rule_label: str = "",
    title: str | None = None,
) -> alt.LayerChart:
    """A metric against ``x`` (sequence length, position) per variant, its spread as a band.

    ``frame``: columns ``variant``, ``x``, ``mean``, ``low``, ``high``. ``rule_at`` draws a dashed
    vertical rule (e.g. at the longest training length: points to its right are extrapolation,
    Press et al. 2022's "train short, test long").
    """
    _require(frame, ("variant", x, "mean", "low", "high"), "The band chart")
    base = alt.Chart(frame).encode(x=alt.X(f"{x}:Q", title=x_title), color=_COLORS)
    band = base.mark_area(opacity=0.2).encode(y=alt.Y("low:Q", title=metric), y2="high:Q")
    line = base.mark_line(point=True).encode(
        y="mean:Q",
        tooltip=[
            "variant:N",
            f"{x}:Q",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("low:Q", format=".4f"),
            alt.Tooltip("high:Q", format=".4f"),
        ],
    )
    layers = [band, line]
    if rule_at is not None:
        rule = (
            alt.Chart(pd.DataFrame({x: [rule_at], "label": [rule_label]}))
            .mark_rule(strokeDash=[4, 4], color="gray")
            .encode(x=f"{x}:Q", tooltip=["label:N", f"{x}:Q"])
        )
        layers.append(rule)
    return alt.layer(*layers).properties(
        title=title or f"{metric} by {x_title} (band: spread over seeds)",
        height=_HEIGHT,
        autosize=FIT_WIDTH,
    )


def step_score_chart(
    frame: pd.DataFrame,
    *,
    score: str,
    current: int | None = None,
    best: float | None = None,
    title: str | None = None,
) -> alt.LayerChart:
    """A score of the learned table at each snapshot step, one line per variant.

    ``frame``: columns ``variant``, ``step``, ``score``. ``current`` marks the step the slider
    shows with a vertical rule; ``best`` (e.g. 1 for R²) is kept on the y axis so a score far
    from perfect does not look close to it on a zoomed-in axis.
    """
    _require(frame, ("variant", "step", "score"), "The per-step chart")
    line = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("step:Q", title="optimiser step"),
            y=alt.Y("score:Q", title=score).scale(
                domainMax=best if best is not None else alt.Undefined
            ),
            color=_COLORS,
            tooltip=["variant:N", "step:Q", alt.Tooltip("score:Q", format=".4f")],
        )
    )
    layers = [line]
    if current is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"step": [current]}))
            .mark_rule(color="gray", strokeDash=[4, 4])
            .encode(x="step:Q")
        )
    return alt.layer(*layers).properties(
        title=title or f"{score} of the table at each snapshot",
        height=_HEIGHT,
        autosize=FIT_WIDTH,
    )
