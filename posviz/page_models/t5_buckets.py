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
from posviz.analysis.headlines import Verdict, bucket_index_matrix, t5_verdict
from posviz.charts.families import bucket_figure, heatmap_figure
from posviz.charts.figure import Figure
from posviz.encodings.families import parse_config
from posviz.encodings.t5 import MAX_BUCKETS, MAX_DISTANCE, MIN_BUCKETS, MIN_MAX_DISTANCE
from posviz.references import cite

__all__ = [
    "MAX_BUCKETS",
    "MAX_DISTANCE",
    "MAX_SPAN",
    "MIN_BUCKETS",
    "MIN_MAX_DISTANCE",
    "T5Page",
    "check_settings",
    "default_span",
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
    "No learned bias to show offline: posviz ships no T5 weights. Below is what the learned "
    "bias is indexed by instead, the bucket of "
    "every (query, key) pair. Each head adds its own learned scalar per bucket to that "
    "logit. To see a real checkpoint's values, choose “Hub model's config.json” above with "
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
        return heatmap_figure(
            table.T,
            name="t5_relative_attention_bias",
            x_title="bucket",
            y_title="head",
            color_title="bias",
            scheme="redblue",
            domain_mid=0.0,
            height=260,
        )

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
