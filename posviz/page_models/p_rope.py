"""The p-RoPE page's model: what /p_rope shows of one configuration, computed once.

:func:`p_rope_page` takes the configuration (:class:`~posviz.encodings.p_rope.PRopeConfig`) and
the distances the page reaches, and returns a :class:`PRopePage`: the answer, the bands' hero,
the pair table and the description; :meth:`PRopePage.scores` draws the score of a fixed query and
key against distance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from posviz.analysis import p_rope_numbers as numbers
from posviz.analysis.headlines import Verdict
from posviz.analysis.provenance import formula
from posviz.analysis.rope_numbers import MAX_SCORE_DISTANCE, probe_vectors, score_distances
from posviz.charts.families import lines_figure
from posviz.charts.figure import Figure
from posviz.encodings.families import parse_config
from posviz.encodings.p_rope import MAX_FRACTION, MIN_FRACTION, PRopeConfig
from posviz.encodings.rope import HEAD_DIM_STEP, MAX_HEAD_DIM, MIN_HEAD_DIM
from posviz.references import cite

__all__ = [
    "HEAD_DIM_STEP",
    "MAX_FRACTION",
    "MAX_HEAD_DIM",
    "MAX_SCORE_DISTANCE",
    "MIN_FRACTION",
    "MIN_HEAD_DIM",
    "PRopePage",
    "config_of",
    "context_length",
    "manual_config",
    "p_rope_page",
]

GEMMA4 = "Gemma 4 full-attention layers (p = 0.25, θ = 10⁶; transformers' Gemma4TextConfig)"
INTRO = (
    "RoPE turns pair *i* of every query and key by *m·θᵢ* at position *m*. "
    f"{cite('barbero_2025')} find that Gemma builds its positional attention patterns on the "
    "fastest pairs and uses the slowest ones as semantic channels, which drift once a context is "
    "long enough for them to turn. **p-RoPE** keeps the fastest share *p* of RoPE's pairs, "
    "unchanged, and never rotates the rest (θᵢ = 0). Gemma 4's full-attention layers use it "
    "with p = 0.25 (`rope_type: proportional` in transformers). Unlike a partial rotary factor "
    "(GPT-NeoX, Phi), which spreads all of RoPE's frequencies over fewer dims, p-RoPE keeps the "
    f"fast frequencies exactly as RoPE has them ({cite('su_2021')})."
)
HERO_NOTE = (
    "Mean cos(m·θᵢ) over a band of pairs: how alike a query and a key with the same content in "
    "those pairs still look *m* tokens apart. The pairs p-RoPE leaves unrotated stay at 1."
)
SCORES = (
    "⟨R_m q, R_0 k⟩ for a query *m* tokens after the key (rotate_half pairs, as Gemma and "
    "Llama). p-RoPE's score is RoPE's fast-pair part plus a constant: what the unrotated pairs "
    "add, the same at every distance."
)
manual_config = numbers.manual_p_rope_config
context_length = numbers.context_length


def config_of(raw: dict) -> PRopeConfig:
    """The p-RoPE configuration of a model's ``config.json`` (``ValueError`` with the fix)."""
    return parse_config("p_rope", raw)


@dataclass(frozen=True)
class PRopePage:
    """Everything /p_rope shows for one configuration and distance range."""

    config: PRopeConfig
    description: str
    context: int  # the configuration's context length (the charts' rule)
    distances: np.ndarray  # the distances the charts reach
    verdict: Verdict  # the answer computed as text (p_rope_numbers.answer), folded
    hero: Figure  # each band of pairs' similarity with itself against distance
    pairs: pd.DataFrame  # one row per pair

    def scores(self, *, random: bool, seed: int = 0) -> Figure:
        """⟨R_m q, R_0 k⟩ against distance for q = k = all ones, or random q, k from ``seed``."""
        q, k = probe_vectors(self.config.head_dim, random=random, seed=seed)
        return lines_figure(
            self.distances,
            numbers.score_curves(self.config, self.distances, q=q, k=k),
            name="p_rope_scores",
            x_title="distance m = query − key (tokens)",
            y_title="score q·k after rotation",
            rule_x=self.context,
            rule_label="context",
            log_x=True,
        )


def p_rope_page(config: PRopeConfig, *, max_distance: int) -> PRopePage:
    """The page's model of ``config`` over distances up to ``max_distance``."""
    context = numbers.context_length(config)
    distances = score_distances(max_distance)
    hero = lines_figure(
        distances,
        numbers.band_similarity(config, distances),
        name="p_rope_bands",
        x_title="distance m between query and key (tokens)",
        y_title="cosine of a pair band with itself",
        rule_x=context,
        rule_label="context",
        log_x=True,
    )
    return PRopePage(
        config=config,
        description=numbers.describe(config),
        context=context,
        distances=distances,
        verdict=replace(Verdict.fold(numbers.answer(config)), sources=(formula("barbero_2025"),)),
        hero=hero,
        pairs=numbers.pair_table(config),
    )
