"""The ALiBi page's model: what /alibi shows of one head count's slopes, computed once.

:func:`alibi_page` takes the slopes (:func:`posviz.encodings.alibi.alibi_slopes`) and returns an
:class:`AlibiPage`: the verdict, the hero, the slopes' chart, table and prose. The two sections
with their own widgets draw from it: :meth:`AlibiPage.bias` (one head's bias matrix) and
:meth:`AlibiPage.decay` (every head's decay up to a distance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis import alibi_numbers as numbers
from posviz.analysis.headlines import Verdict, alibi_verdict
from posviz.charts.families import alibi_decay_figure, alibi_slopes_figure, heatmap_figure
from posviz.charts.figure import Figure
from posviz.encodings.alibi import MAX_HEADS, MIN_HEADS, alibi_slopes
from posviz.encodings.families import parse_config
from posviz.references import cite

__all__ = ["MAX_HEADS", "MIN_HEADS", "AlibiPage", "alibi_page", "alibi_slopes", "heads_of"]

INTRO = (
    "BLOOM and MPT add no position vectors at all. Each head *h* adds −m_h·(i − j) to the logit "
    "of query *i* and key *j*: a penalty growing linearly with distance, steep for some heads "
    "(local) and gentle for others (long range). The slopes are fixed, not learned, and follow "
    f"from the head count ({cite('press_2022')}, ICLR)."
)
HERO_NOTE = (
    "How much each head still attends to a key k tokens back, relative to one at distance 0 "
    "(equal content): exp(−m·k). Dark: steep heads that look only nearby; light: gentle heads "
    "with a long view."
)
#: the hero's distances: 0 … this many tokens back.
HERO_DISTANCE = 256


def heads_of(raw: dict) -> int:
    """The head count of a model's ``config.json`` (raises ``ValueError`` with the fix)."""
    return parse_config("alibi", raw).n_heads


@dataclass(frozen=True)
class AlibiPage:
    """Everything /alibi shows for one head count."""

    slopes: np.ndarray  # (n_heads,) m_h
    verdict: Verdict
    hero: Figure  # every shown head's decay up to HERO_DISTANCE
    slopes_chart: Figure
    slope_table: pd.DataFrame  # one row per head
    slopes_text: str  # how the slopes follow from the head count

    @property
    def n_heads(self) -> int:
        """How many heads (slopes)."""
        return int(self.slopes.size)

    def bias(self, head: int, n_positions: int, *, causal: bool) -> tuple[Figure, str]:
        """Head ``head``'s bias matrix over ``n_positions`` (masked above the diagonal when
        ``causal``), and the sentence that reads it."""
        slope = self.slopes[head]
        figure = heatmap_figure(
            numbers.head_bias(n_positions, slope, causal=causal),
            name=f"alibi_bias_head{head}",
            x_title="key position j",
            y_title="query position i",
            color_title="bias",
            scheme="blues",
            height=420,
        )
        text = (
            f"Row = query *i*, column = key *j*; colour = bias added to the logit "
            f"(slope {slope:.5g})."
            + (" Blank cells are masked (future keys)." if causal else "")
            + " BLOOM's code adds m_h·j instead of −m_h·(i − j): a constant per row, same softmax."
        )
        return figure, text

    def decay(self, max_distance: int) -> tuple[Figure, str]:
        """exp(−m_h·k) for ``k = 0 … max_distance`` (every head, or an even spread of them), and
        the sentence that reads it."""
        distances, factors = numbers.decay_factors(self.slopes, max_distance)
        shown = numbers.shown_heads(self.n_heads)
        text = (
            "exp(−m_h·k): the factor ALiBi multiplies a key's attention weight by when it sits *k* "
            "tokens back, relative to a key at distance 0 (equal content). Steep heads only see a "
            "few neighbours; the gentlest keep a long view. Nothing here depends on the training "
            "length, which is why ALiBi extrapolates: far keys only get weaker."
            + (
                f" Showing {shown.size} of {self.n_heads} heads."
                if shown.size < self.n_heads
                else ""
            )
        )
        return alibi_decay_figure(distances, factors, self.slopes, shown), text


def alibi_page(slopes: np.ndarray) -> AlibiPage:
    """The page's model of ``slopes`` (one per head)."""
    n_heads = int(np.size(slopes))
    near, weights = numbers.decay_factors(slopes, HERO_DISTANCE)
    closest, extra = numbers.slope_split(n_heads)
    slopes_text = (
        f"{n_heads} heads. For a power of two *n* the slopes are 2^(−8h/n), h = 1…n (8 heads: "
        "1/2, 1/4, …, 1/256). Otherwise the paper takes the 2^⌊log₂n⌋ slopes of the nearest "
        "smaller power of two and fills the rest with every other slope of twice that count"
        + (f" — here {closest} + {extra}." if extra else ".")
    )
    return AlibiPage(
        slopes=slopes,
        verdict=alibi_verdict(slopes),
        hero=alibi_decay_figure(near, weights, slopes, numbers.shown_heads(n_heads)),
        slopes_chart=alibi_slopes_figure(slopes),
        slope_table=numbers.slope_table(n_heads),
        slopes_text=slopes_text,
    )
