"""The T5 page's model: what /t5_buckets shows of one bucket setting, computed once.

:func:`t5_page` takes the bucket settings (``num_buckets``, ``max_distance``; data, since no table
exists without a checkpoint) and the span shown, and returns a :class:`T5Page`: the verdict, the
hero, the prose, and methods for the span table, the offline bucket-index map and a checkpoint's
learned bias (:meth:`T5Page.bias_table`, :meth:`T5Page.bias_figure`, :meth:`T5Page.head_figure`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis import t5_numbers as views
from posviz.analysis.dead_bucket import SPAN, bucket_findings
from posviz.analysis.headlines import Verdict, bucket_index_matrix, t5_verdict
from posviz.charts.families import bucket_figure, heatmap_figure, lines_figure
from posviz.charts.figure import Figure
from posviz.encodings.families import parse_config
from posviz.encodings.t5 import (
    MAX_BUCKETS,
    MAX_DISTANCE,
    MIN_BUCKETS,
    MIN_MAX_DISTANCE,
    t5_relative_bucket,
)
from posviz.page_models.learned import Finding, RealSection
from posviz.references import cite
from posviz.tables import PositionTable

__all__ = [
    "MAX_BUCKETS",
    "MAX_DISTANCE",
    "MAX_SPAN",
    "MIN_BUCKETS",
    "MIN_MAX_DISTANCE",
    "MPNET",
    "T5Page",
    "check_settings",
    "default_span",
    "findings_text",
    "mpnet_section",
    "settings_of",
    "t5_page",
]

MAX_SPAN = views.MAX_SPAN
default_span = views.default_span
INTRO = (
    "T5 has no position vectors. Every attention logit gets a learned scalar per head, looked up "
    "by the **bucket** of the relative position key − query: one bucket per distance for short "
    "distances, logarithmically wider buckets up to `max_distance`, and a single bucket for "
    f"everything further ({cite('raffel_2020')}, §2.1). The function is "
    "`T5Attention._relative_position_bucket` from transformers, reproduced exactly."
)
HERO_NOTE = (
    "The bucket each relative position key − query falls in: one per distance near the query, "
    "ever wider further away, one for everything beyond max_distance."
)
SPANS = (
    "Which distances share a bucket (the model cannot tell them apart). The widest bucket is cut "
    "at the edge of the window: it holds every distance beyond too."
)
LEARNED = (
    "Only block 0 stores `relative_attention_bias` (num_buckets × heads); every layer reuses it. "
    "Pick a hub T5 (e.g. `google-t5/t5-small`, as *Hub model's config.json* above) and posviz "
    "range-reads that one tensor."
)
OFFLINE = (
    "No T5 checkpoint is read yet; below, a real T5-style bias that posviz ships (MPNet's). "
    "First, what a learned bias is indexed by, the bucket of "
    "every (query, key) pair. Each head adds its own learned scalar per bucket to that "
    "logit. To see a T5 checkpoint's own values, choose “Hub model's config.json” above with "
    "a T5 id such as `google-t5/t5-small` (needs access to the Hugging Face hub, or the "
    "model in the local cache)."
)


def settings_of(raw: dict) -> tuple[int, int]:
    """``(num_buckets, max_distance)`` of a model's ``config.json`` (``ValueError``: the fix)."""
    parsed = parse_config("t5", raw)
    return parsed.num_buckets, parsed.max_distance


def check_settings(num_buckets: int, max_distance: int) -> None:
    """Raise ``ValueError`` with the fix for bucket settings T5's function cannot use."""
    views.check_bucket_settings(num_buckets=num_buckets, max_distance=max_distance)


def bias_heatmap(table: np.ndarray, *, name: str) -> Figure:
    """A ``(num_buckets, heads)`` bias table as heads × buckets, red above 0, blue below."""
    return heatmap_figure(
        table.T,
        name=name,
        x_title="bucket",
        y_title="head",
        color_title="bias",
        scheme="redblue",
        domain_mid=0.0,
        height=260,
    )


@dataclass(frozen=True)
class T5Page:
    """Everything /t5_buckets shows for one bucket setting and span."""

    num_buckets: int
    max_distance: int
    span: int
    verdict: Verdict
    hero: Figure  # bucket against relative position, both directions
    buckets_text: str

    @property
    def _kw(self) -> dict[str, int]:
        return {"num_buckets": self.num_buckets, "max_distance": self.max_distance}

    def span_table(self, *, bidirectional: bool) -> pd.DataFrame:
        """Which distances share a bucket, within ± the span."""
        return views.span_table(self.span, bidirectional=bidirectional, **self._kw)

    def index_figure(self) -> Figure:
        """The bucket of every (query, key) pair of 32 positions (what a learned bias indexes)."""
        return heatmap_figure(
            bucket_index_matrix(32, bidirectional=True, **self._kw),
            name="t5_bucket_index",
            x_title="key position",
            y_title="query position",
            color_title="bucket",
            scheme="viridis",
            height=360,
        )

    def bias_table(self, raw: np.ndarray | None) -> np.ndarray | None:
        """A checkpoint's ``(num_buckets, heads)`` bias, checked against these settings."""
        return views.check_bias_table(raw, num_buckets=self.num_buckets, source="the model")

    @staticmethod
    def bias_figure(table: np.ndarray) -> Figure:
        """Every head's learned bias per bucket."""
        return bias_heatmap(table, name="t5_relative_attention_bias")

    def head_figure(
        self, table: np.ndarray, head: int, n_positions: int, *, bidirectional: bool
    ) -> tuple[Figure, str]:
        """Head ``head``'s bias on every (query, key) logit of ``n_positions``, and its sentence."""
        figure = heatmap_figure(
            views.head_bias(
                table,
                n_positions,
                head,
                bidirectional=bidirectional,
                max_distance=self.max_distance,
            ),
            name=f"t5_bias_head{head}",
            x_title="key position",
            y_title="query position",
            color_title="bias",
            scheme="redblue",
            domain_mid=0.0,
            height=420,
        )
        text = (
            f"Head {head}: the bias added to each (query, key) logit — constant along diagonals, "
            "flat beyond the buckets' reach."
        )
        return figure, text


def t5_page(num_buckets: int, *, max_distance: int, span: int) -> T5Page:
    """The page's model of ``num_buckets`` and ``max_distance`` over relative positions ± span."""
    relative, curves = views.bucket_curves(span, num_buckets=num_buckets, max_distance=max_distance)
    text = (
        f"{num_buckets} buckets, max_distance {max_distance}. Bidirectional attention spends half "
        "the buckets on keys after the query (upper half) and half on keys before; causal "
        "attention spends all of them looking back, and every later key lands in bucket 0. "
        "Distance 0 is bucket 0; from max_distance on the bucket no longer changes."
    )
    return T5Page(
        num_buckets=num_buckets,
        max_distance=max_distance,
        span=span,
        verdict=t5_verdict(relative, curves["causal (decoder)"], max_distance=max_distance),
        hero=bucket_figure(relative, curves),
        buckets_text=text,
    )


# ------------------------------------------- a real bucket table offline: MPNet (all-mpnet-base-v2)

#: MPNet's relative-attention bias, shipped as data (posviz/data/mpnet_relative_bias.json)
MPNET = "bundled:mpnet-relative-bias"
MPNET_MAX_DISTANCE = 128  # MPNet's relative_position_bucket(…, max_distance=128)
_PROFILE_SPAN = 24  # relative positions drawn in the per-head profiles


def findings_text(table: np.ndarray, *, max_distance: int, bidirectional: bool) -> str:
    """The dead bucket(s), self bucket and one-step heads of any ``(buckets, heads)`` bias, in
    words (for MPNet's table and for any hub T5 checkpoint's)."""
    found = bucket_findings(table, max_distance=max_distance, bidirectional=bidirectional)
    parts = []
    if found.dead:
        dead = ", ".join(map(str, found.dead))
        parts.append(
            f"Bucket {dead} is never looked up (no relative position maps to it); its weights "
            f"stay within ±{found.dead_max_abs:.3g}, against a median |bias| of "
            f"{found.live_median_abs:.2f} elsewhere."
        )
    else:
        parts.append("Every bucket is used by some relative position (no dead bucket).")
    below = int(np.sum(found.self_bias < 0))
    parts.append(
        f"The self bucket (distance 0) is negative in {below} of {len(found.self_bias)} heads "
        f"({found.self_bias.min():.2f} … {found.self_bias.max():.2f}): a token is pushed away "
        "from itself."
        if below
        else "No head gives distance 0 a negative bias."
    )
    if found.previous_heads:
        strongest = max(found.previous_heads, key=lambda h: found.previous[h])
        parts.append(
            f"Heads whose largest bias is one token back (key − query = −1): "
            f"{', '.join(map(str, found.previous_heads))}; head {strongest} most "
            f"({found.previous[strongest]:+.2f})."
        )
    if found.next_heads:
        parts.append(f"One token ahead (+1): heads {', '.join(map(str, found.next_heads))}.")
    return " ".join(parts)


def mpnet_section(table: PositionTable) -> RealSection:
    """MPNet's real bucket table: every head's bias, their profiles by relative position, and
    which buckets any relative position reaches."""
    bias = table.matrix
    num, heads = bias.shape
    found = bucket_findings(bias, max_distance=MPNET_MAX_DISTANCE)
    heat = bias_heatmap(bias, name="mpnet_relative_attention_bias")
    dead = ", ".join(map(str, found.dead)) or "none"
    heat_text = (
        f"all-mpnet-base-v2's bias, {heads} heads × {num} buckets. Column 0 (distance 0) runs "
        f"from {found.self_bias.min():.2f} to {found.self_bias.max():.2f}; column {dead} — "
        f"'key after query, distance 0' — is at most {found.dead_max_abs:.3g} in absolute value."
    )
    rel = np.arange(-_PROFILE_SPAN, _PROFILE_SPAN + 1)
    buckets = t5_relative_bucket(rel, num_buckets=num, max_distance=MPNET_MAX_DISTANCE)
    strongest = max(found.previous_heads, key=lambda h: found.previous[h], default=None)
    shown = ([strongest] if strongest is not None else []) + list(found.next_heads)
    series = {f"head {h}": bias[buckets, h] for h in shown}
    series["median over all heads"] = np.median(bias[buckets], axis=1)
    profiles = lines_figure(
        rel,
        series,
        name="mpnet_bias_by_relative_position",
        x_title="key − query",
        y_title="bias",
        whole_x=True,
        height=300,
    )
    profile_text = (
        f"Bias by relative position key − query (±{_PROFILE_SPAN}) for the one-step heads and "
        f"the median head. At 0 every "
        f"head's bias lies in {found.self_bias.min():.2f} … {found.self_bias.max():.2f}"
        + (
            f"; head {strongest} peaks one token back ({found.previous[strongest]:+.2f} at −1)"
            if strongest is not None
            else ""
        )
        + (
            f"; heads {', '.join(map(str, found.next_heads))} peak one token ahead"
            if found.next_heads
            else ""
        )
        + "."
    )
    span = np.arange(-SPAN, SPAN + 1)
    reached = np.bincount(
        t5_relative_bucket(span, num_buckets=num, max_distance=MPNET_MAX_DISTANCE), minlength=num
    )
    usage = lines_figure(
        np.arange(num),
        {
            "largest |bias| over heads": np.abs(bias).max(axis=1),
            "relative positions reaching it (log₁₀ of count + 1)": np.log10(reached + 1.0),
        },
        name="mpnet_bucket_usage",
        x_title="bucket",
        y_title="|bias| or log₁₀(count + 1)",
        whole_x=True,
        height=260,
    )
    largest = np.abs(bias).max(axis=1)
    live_floor = float(np.delete(largest, list(found.dead)).min())
    usage_text = (
        f"Per bucket: how many relative positions in −{SPAN:,} … {SPAN:,} reach it, and the "
        f"largest |bias| any head gives it. Unreached: bucket {dead} (largest |bias| "
        f"{found.dead_max_abs:.3g}); every reached bucket has a head at {live_floor:.2f} or more."
    )
    lead = (
        (
            "**A real T5-style table has a bucket it never uses.**"
            if found.dead
            else "**Every bucket of this table is used.**"
        )
        + f" MPNet ({cite('song_2020')}) buckets relative positions like T5 ({num} buckets, "
        f"max distance {MPNET_MAX_DISTANCE}, both directions). Why any bidirectional T5-style "
        "encoder has a dead bucket: keys after the query get the upper half of the buckets, "
        f"starting at bucket {num // 2} for distance 0 — but a key after the query is at least "
        "1 away, and distance 0 (a token and itself) always takes the lower half. In "
        "all-mpnet-base-v2: "
        + findings_text(bias, max_distance=MPNET_MAX_DISTANCE, bidirectional=True)
    )
    return RealSection(
        title="A real bucket table, offline: MPNet (all-mpnet-base-v2)",
        lead=lead,
        findings=(
            Finding(heat, heat_text),
            Finding(profiles, profile_text),
            Finding(usage, usage_text),
        ),
        caveat=table.notes[0] if table.notes else "",
    )
