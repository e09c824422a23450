"""The RoPE page's model: what /rope shows of one model's rotary frequencies, computed once.

:func:`rope_page` takes the frequencies (:class:`~posviz.encodings.rope.RopeFrequencies`, from a
configuration's ``frequencies()``) and returns a :class:`RopePage`: the verdict, the wavelength
hero and the regimes' prose. The sections with their own widgets draw from it:
:meth:`RopePage.circle` (query pairs rotating), :meth:`RopePage.scores` (score vs distance) and
:meth:`RopePage.bound` (RoFormer's decay bound).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis import rope_numbers as numbers
from posviz.analysis.headlines import Verdict, rope_verdict
from posviz.charts.families import lines_figure, rope_circle_figure, rope_wavelength_figure
from posviz.charts.figure import Figure
from posviz.encodings.families import parse_config
from posviz.encodings.model_config import RopeConfig
from posviz.encodings.rope import (
    HEAD_DIM_STEP,
    MANUAL_ROPE_TYPES,
    MAX_HEAD_DIM,
    MIN_HEAD_DIM,
    PAIRINGS,
    RopeFrequencies,
)
from posviz.page_models.markdown import safe_md
from posviz.references import cite

__all__ = [
    "HEAD_DIM_STEP",
    "MANUAL_ROPE_TYPES",
    "MAX_HEAD_DIM",
    "MAX_SCORE_DISTANCE",
    "MIN_HEAD_DIM",
    "PAIRINGS",
    "RopePage",
    "config_of",
    "default_max_distance",
    "default_pairs",
    "manual_config",
    "needs_sequence_length",
    "rope_caption",
    "rope_page",
]

MAX_SCORE_DISTANCE = numbers.MAX_SCORE_DISTANCE
default_max_distance = numbers.default_max_distance
default_pairs = numbers.default_pairs
manual_config = numbers.manual_rope_config
needs_sequence_length = numbers.needs_sequence_length

INTRO = (
    "Llama, Mistral, Qwen, GPT-NeoX and GPT-J store no position table. Each query and key is cut "
    "into 2-D pairs and pair *i* is **rotated** by the angle *p·θᵢ* at position *p*, with "
    f"θᵢ = base^(−2i/d) ({cite('su_2021')}). Because rotations compose, the score between a "
    "query at *m* and a key at *n* depends only on *m − n*. Context-extension scalings change θᵢ; "
    "they are computed here exactly as `transformers/modeling_rope_utils.py` does."
)
HERO_NOTE = (
    "Each dot is one rotary pair: how many tokens it takes to turn once (log scale), coloured by "
    "what the scaling did to it; dashed: before scaling."
)
ROTATING = (
    "Take a query whose pair *i* is the unit vector (1, 0). At position *p* RoPE turns it by "
    "*p·θᵢ*: fast pairs spin like a seconds hand, slow pairs barely move. The sinusoid's "
    '"clock hands" are added to the input; RoPE\'s multiply (rotate) the query and key instead.'
)
SCORES = (
    "⟨R_m q, R_0 k⟩ for a query *m* tokens after the key — identical to ⟨R_{n+m} q, R_n k⟩ for "
    "any *n*. With q = k the score starts at ‖q‖² and, as fast pairs dephase, oscillates at a "
    "lower level; the scaled frequencies stretch the curve so that long distances look like the "
    "short ones seen in training (YaRN's curve includes its attention factor, squared). "
    "Non-rotary dims (partial rotary) are not rotated and add a constant."
)
BOUND = (
    "Su et al. (§3.4.3, Fig. 2) bound the score by Abel summation: "
    "|Σᵢ hᵢ e^{imθᵢ}| ≤ maxᵢ|hᵢ₊₁ − hᵢ| · Σⱼ |Sⱼ| with Sⱼ = Σ_{i<j} e^{imθᵢ}. The curve is the "
    "relative upper bound (1/(d/2)) Σⱼ |Sⱼ|: it starts at (d/2 + 1)/2 and decays with distance — "
    "RoPE's built-in preference for nearby tokens."
)
PAIRINGS_NOTE = (
    "Pairings: rotate_half and rotate_every_two are the same rotation up to a fixed permutation of "
    "the head's dimensions, so scores are identical once weights are permuted accordingly (tested)."
)


def config_of(raw: dict) -> RopeConfig:
    """The RoPE configuration of a model's ``config.json`` (``ValueError`` with the fix)."""
    return parse_config("rope", raw)


@dataclass(frozen=True)
class RopePage:
    """Everything /rope shows for one model's frequencies."""

    freqs: RopeFrequencies
    verdict: Verdict
    hero: Figure  # each pair's wavelength, coloured by what the scaling did
    regimes: str  # how many pairs were kept, smoothed, interpolated

    @property
    def n_pairs(self) -> int:
        """How many rotary pairs."""
        return int(self.freqs.inv_freq.size)

    def circle(self, position: int, pairs: list[int]) -> tuple[Figure, pd.DataFrame]:
        """Query pairs ``pairs`` (unit vectors at 0) rotated to ``position``, and their table."""
        return (
            rope_circle_figure(position, self.freqs.inv_freq, pairs),
            numbers.pair_table(self.freqs, pairs, position),
        )

    def _distances(self, max_distance: int) -> np.ndarray:
        return numbers.score_distances(max_distance)

    def scores(self, max_distance: int, *, random: bool, seed: int, pairing: str) -> Figure:
        """⟨R_m q, R_0 k⟩ against distance up to ``max_distance`` for q = k = all ones, or random
        q, k from ``seed``, with ``pairing``."""
        freqs = self.freqs
        q, k = numbers.probe_vectors(freqs.head_dim, random=random, seed=seed)
        distances = self._distances(max_distance)
        return lines_figure(
            distances,
            numbers.score_curves(freqs, distances, q=q, k=k, pairing=pairing),
            name="rope_scores",
            x_title="distance m = query − key (tokens)",
            y_title="score q·k after rotation",
            rule_x=freqs.original_context,
            rule_label="original context",
            log_x=True,
        )

    def bound(self, max_distance: int, *, scaled: bool) -> Figure:
        """RoFormer's relative decay bound up to ``max_distance`` (also scaled, if ``scaled``)."""
        distances = self._distances(max_distance)
        return lines_figure(
            distances,
            numbers.decay_bound_curves(self.freqs, distances, scaled=scaled),
            name="rope_decay_bound",
            x_title="relative distance m (tokens)",
            y_title="relative upper bound",
            log_x=True,
        )


def rope_page(freqs: RopeFrequencies, *, name: str) -> RopePage:
    """The page's model of ``freqs``, the model named ``name`` in the verdict."""
    counts = numbers.regime_counts(freqs)
    regimes = (
        "Each dot is one rotary pair: its wavelength 2π/θ′ (tokens per full turn) after scaling; "
        "the dashed grey curve is the unscaled wavelength. Pairs that turn many times within the "
        "original context are **kept**; slow pairs, which never completed a turn in training, "
        "are **interpolated** (θ divided by the factor, so long sequences reuse angles seen in "
        "training); llama3 and YaRN blend in between (**smoothed**). "
        f"Here: {counts['kept']} kept, {counts['smoothed']} smoothed, "
        f"{counts['interpolated']} interpolated (the chart at the top of the page)."
    )
    return RopePage(
        freqs=freqs,
        verdict=rope_verdict(freqs, name=name),
        hero=rope_wavelength_figure(freqs),
        regimes=regimes,
    )


def rope_caption(label: str, config: RopeConfig, freqs: RopeFrequencies) -> str:
    """Markdown line naming the config (escaped: it may be a typed hub id) and its RoPE facts."""
    return f"**{safe_md(label, max_len=120)}** · {numbers.describe_frequencies(config, freqs)}"
