"""What the RoPE page shows, computed: a manual config, the θ table, distance grids, q·k scores.

RoPE (Su et al. 2021, RoFormer, eq. 15–16) rotates pair ``i`` of a query/key at position ``p`` by
``p·θ_i``, so the score of a query ``m`` tokens after a key depends only on ``m``::

    s(m) = ⟨R_m q, R_0 k⟩ = ⟨R_{n+m} q, R_n k⟩   for every n

Every function here returns arrays (or a small frame) that a chart or table draws as they are.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.encodings.model_config import RopeConfig
from posviz.encodings.rope import (
    Pairing,
    RopeFrequencies,
    manual_scaling,
    pair_regimes,
    rope_decay_bound,
    rope_scores,
)

DENSE_DISTANCES = 512  # every distance up to here, then geometric steps
FAR_POINTS = 1500  # geometric steps past DENSE_DISTANCES: light, and alias-free on a log axis
MAX_SCORE_DISTANCE = 262_144
REGIMES = ("kept", "smoothed", "interpolated")


def manual_rope_config(
    *,
    head_dim: int,
    base: float,
    partial_rotary_factor: float,
    rope_type: str,
    factor: float,
    original_context: int,
) -> RopeConfig:
    """A :class:`RopeConfig` from hand-set values (rotate_half pairing, as Llama).

    Dynamic NTK rescales past the trained context, so its context stays ``original_context``; the
    other scalings declare the extended one, ``original_context · factor`` (as Llama 3.1's config).

    Raises:
        ValueError: an unknown ``rope_type`` (see :func:`posviz.encodings.rope.manual_scaling`).
    """
    scaling = manual_scaling(
        rope_type, factor=factor, original_max_position_embeddings=original_context
    )
    extended = scaling is not None and rope_type != "dynamic"
    return RopeConfig(
        model_type="manual",
        head_dim=head_dim,
        partial_rotary_factor=partial_rotary_factor,
        base=base,
        scaling=scaling,
        pairing="rotate_half",
        max_position_embeddings=int(original_context * factor) if extended else original_context,
    )


def needs_sequence_length(config: RopeConfig) -> bool:
    """Whether the frequencies depend on the current sequence length (dynamic NTK, LongRoPE)."""
    return bool(config.scaling) and config.scaling["rope_type"] in ("dynamic", "longrope")


def describe_frequencies(config: RopeConfig, freqs: RopeFrequencies) -> str:
    """One line of facts: head and rotary dims, pairs, base, scaling, attention factor, context."""
    parts = [
        f"head_dim {freqs.head_dim}",
        f"rotated dims {freqs.rotary_dim} ({freqs.rotary_dim // 2} pairs)",
        f"base {freqs.base:,.0f}",
        f"scaling `{freqs.rope_type}`",
    ]
    if freqs.attention_factor != 1:
        parts.append(f"attention factor {freqs.attention_factor:.4f}")
    if config.max_position_embeddings:
        parts.append(f"context {config.max_position_embeddings:,}")
    return " · ".join(parts)


def regime_counts(freqs: RopeFrequencies) -> dict[str, int]:
    """How many pairs the scaling kept, smoothed and interpolated (:func:`pair_regimes`)."""
    regimes = pair_regimes(freqs)
    return {name: int((regimes == name).sum()) for name in REGIMES}


def default_pairs(n_pairs: int) -> list[int]:
    """Pairs worth showing first: the two fastest, one a quarter in, the slowest (no repeats)."""
    return list(dict.fromkeys(p for p in (0, 1, n_pairs // 4, n_pairs - 1) if 0 <= p < n_pairs))


def pair_table(freqs: RopeFrequencies, pairs: list[int], position: int) -> pd.DataFrame:
    """θ table of chosen pairs: ``θ_i`` (rad/token), wavelength ``2π/θ_i``, turns ``pθ_i/2π``.

    Raises:
        ValueError: a pair index outside ``0 … pairs − 1``.
    """
    n_pairs = freqs.inv_freq.size
    bad = [p for p in pairs if not 0 <= p < n_pairs]
    if bad:
        raise ValueError(f"pair(s) {bad} out of range; this head has pairs 0 … {n_pairs - 1}.")
    theta = freqs.inv_freq[np.asarray(pairs, dtype=int)]
    return pd.DataFrame(
        {
            "pair": pairs,
            "θ (rad/token)": theta,
            "wavelength (tokens)": 2 * np.pi / theta,
            f"turns at p={position}": position * theta / (2 * np.pi),
        }
    )


def default_max_distance(freqs: RopeFrequencies) -> int:
    """Twice the original context (4096 when unknown), at most :data:`MAX_SCORE_DISTANCE`."""
    return min(2 * (freqs.original_context or 4096), MAX_SCORE_DISTANCE)


def score_distances(max_distance: int) -> np.ndarray:
    """Distances ``0 … max_distance``: every one up to 512, then 1500 geometric steps (unique).

    Returns:
        ``(n,)`` int64, sorted, starting at 0 and ending at ``max_distance``.
    """
    if isinstance(max_distance, bool) or not 1 <= int(max_distance) <= MAX_SCORE_DISTANCE:
        raise ValueError(
            f"distances up to {max_distance!r} is out of range; choose 1 … {MAX_SCORE_DISTANCE}."
        )
    top = int(max_distance)
    far = np.geomspace(DENSE_DISTANCES, max(top, DENSE_DISTANCES), FAR_POINTS).astype(np.int64)
    grid = np.unique(np.concatenate([np.arange(min(top, DENSE_DISTANCES) + 1), far, [top]]))
    return grid[grid <= top]


def probe_vectors(head_dim: int, *, random: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A query and key: ``q = k = (1, …, 1)``, or two standard-normal vectors from ``seed``.

    Returns:
        ``(q, k)``, each ``(head_dim,)`` float64.
    """
    if not random:
        ones = np.ones(head_dim)
        return ones, ones
    rng = np.random.default_rng(seed)
    return rng.standard_normal(head_dim), rng.standard_normal(head_dim)


def score_curves(
    freqs: RopeFrequencies,
    distances: np.ndarray,
    *,
    q: np.ndarray,
    k: np.ndarray,
    pairing: Pairing = "rotate_half",
) -> dict[str, np.ndarray]:
    """``s(m) = ⟨R_m q, R_0 k⟩`` with the unscaled θ and, when scaled, with θ′ (and its factor).

    Returns:
        name → ``(len(distances),)`` float64.
    """
    curves = {"unscaled θ": rope_scores(q, k, distances, freqs.original_inv_freq, pairing=pairing)}
    if freqs.rope_type != "default":
        curves[f"{freqs.rope_type} θ′"] = rope_scores(
            q,
            k,
            distances,
            freqs.inv_freq,
            pairing=pairing,
            attention_factor=freqs.attention_factor,
        )
    return curves


def decay_bound_curves(
    freqs: RopeFrequencies, distances: np.ndarray, *, scaled: bool
) -> dict[str, np.ndarray]:
    """RoFormer's relative upper bound (:func:`rope_decay_bound`) with θ, and with θ′ if asked.

    Returns:
        name → ``(len(distances),)`` float64.
    """
    curves = {"unscaled θ": rope_decay_bound(distances, freqs.original_inv_freq)}
    if scaled and freqs.rope_type != "default":
        curves[f"{freqs.rope_type} θ′"] = rope_decay_bound(distances, freqs.inv_freq)
    return curves
