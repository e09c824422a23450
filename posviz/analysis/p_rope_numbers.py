"""What the p-RoPE page shows, computed: the settings, the one-line answer, the curves, the pairs.

p-RoPE (Barbero et al. 2025, :mod:`posviz.encodings.p_rope`) keeps RoPE's ``r = ⌊p·d/2⌋`` fastest
pairs and never rotates the others. A pair turned by ``mθ_i`` keeps a cosine ``cos(mθ_i)`` with
its unturned self, so how much a query "still looks like itself" ``m`` tokens later is, for a band
``B`` of pairs with equal norms::

    κ_B(m) = mean_{i ∈ B} cos(m·θ_i)        (1 at m = 0; 1 at every m when θ_i = 0)

Every function returns arrays, a frame or a sentence that the page shows as they are.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.encodings.p_rope import PRopeConfig, truncated_score
from posviz.encodings.rope import default_inv_freq, rope_kernel, rope_scores

DEFAULT_CONTEXT = 8192  # when a config names no context length


def manual_p_rope_config(*, head_dim: int, base: float, fraction: float) -> PRopeConfig:
    """A :class:`PRopeConfig` from hand-set values (no scaling factor).

    Raises:
        ValueError: a bad head_dim, base or ``p`` (checked here, naming the value).
    """
    config = PRopeConfig(model_type="manual", head_dim=head_dim, fraction=fraction, base=base)
    config.inv_freq()  # validates
    return config


def rope_inv_freq(config: PRopeConfig) -> np.ndarray:
    """``(d/2,)`` the plain RoPE frequencies of the same head (p = 1), scaled by the same factor."""
    return default_inv_freq(config.head_dim, config.base) / config.factor


def context_length(config: PRopeConfig) -> int:
    """The config's context length, else :data:`DEFAULT_CONTEXT`."""
    return int(config.max_position_embeddings or DEFAULT_CONTEXT)


def band_similarity(config: PRopeConfig, distances: np.ndarray) -> dict[str, np.ndarray]:
    """``κ_B(m)`` of the kept and the truncated band, under RoPE and under p-RoPE.

    The kept pairs turn the same under both; the truncated ones turn under RoPE only.

    Returns:
        name → ``(len(distances),)`` float64 (a band with no pair is left out).
    """
    kept = config.kept_pairs
    rope, p_rope = rope_inv_freq(config), config.inv_freq()
    curves: dict[str, np.ndarray] = {}
    if kept < rope.size:
        curves["RoPE: the pairs p-RoPE never rotates"] = rope_kernel(distances, rope[kept:])
        curves["p-RoPE: those pairs (unrotated)"] = rope_kernel(distances, p_rope[kept:])
    if kept:
        curves["both: the kept fast pairs"] = rope_kernel(distances, p_rope[:kept])
    return curves


def answer(config: PRopeConfig) -> str:
    """The page's answer computed from the settings shown on the page: a plain first sentence,
    then the numbers."""
    pairs, kept = config.head_dim // 2, config.kept_pairs
    p = f"p = {config.fraction:g}"
    if kept == pairs:
        return (
            f"Here p-RoPE is plain RoPE: every pair rotates. With {p} all {pairs} pairs of a "
            f"{config.head_dim}-dim head keep RoPE's rotation: p-RoPE is RoPE."
        )
    if kept == 0:
        return (
            f"Nothing rotates here, so distance changes no score. With {p} none of the {pairs} "
            "pairs rotates: every query–key score is the same at every distance (no positional "
            "encoding)."
        )
    context = context_length(config)
    rope = rope_inv_freq(config)
    drift = float(rope_kernel(np.array([context]), rope[kept:])[0])
    wavelength = 2 * np.pi / rope[kept - 1]
    return (
        "p-RoPE rotates only the fast pairs; the slow ones match at any distance. "
        f"With {p}, p-RoPE keeps the {kept} fastest of a {config.head_dim}-dim head's {pairs} "
        f"RoPE pairs (wavelengths up to {wavelength:,.0f} tokens) and never rotates the other "
        f"{pairs - kept}: a query and a key with the same content there keep cosine 1 at any "
        f"distance, where RoPE's rotation brings it to {drift:.2f} at {context:,} tokens."
    )


def score_curves(
    config: PRopeConfig, distances: np.ndarray, *, q: np.ndarray, k: np.ndarray
) -> dict[str, np.ndarray]:
    """``⟨R_m q, R_0 k⟩`` with RoPE's and with p-RoPE's frequencies, and p-RoPE's constant part.

    The constant is :func:`~posviz.encodings.p_rope.truncated_score`: what the unrotated pairs add
    to p-RoPE's score at every distance.

    Returns:
        name → ``(len(distances),)`` float64.
    """
    constant = truncated_score(q, k, kept=config.kept_pairs)
    return {
        "RoPE (p = 1)": rope_scores(q, k, distances, rope_inv_freq(config)),
        f"p-RoPE (p = {config.fraction:g})": rope_scores(q, k, distances, config.inv_freq()),
        "p-RoPE: the unrotated pairs' part": np.full(np.shape(distances), constant),
    }


def pair_table(config: PRopeConfig) -> pd.DataFrame:
    """One row per pair: RoPE's ``θ_i`` and wavelength, p-RoPE's ``θ_i`` and whether it is kept."""
    rope, p_rope = rope_inv_freq(config), config.inv_freq()
    return pd.DataFrame(
        {
            "pair": np.arange(rope.size),
            "RoPE θ (rad/token)": rope,
            "RoPE wavelength (tokens)": 2 * np.pi / rope,
            "p-RoPE θ (rad/token)": p_rope,
            "p-RoPE": np.where(p_rope > 0, "rotated", "never rotated"),
        }
    )


def describe(config: PRopeConfig) -> str:
    """One line of facts: head dim, kept and unrotated pairs, base, factor, context."""
    parts = [
        f"head_dim {config.head_dim}",
        f"p = {config.fraction:g}",
        f"{config.kept_pairs} of {config.head_dim // 2} pairs rotated",
        f"base {config.base:,.0f}",
    ]
    if config.factor != 1:
        parts.append(f"factor {config.factor:g}")
    if config.max_position_embeddings:
        parts.append(f"context {config.max_position_embeddings:,}")
    return " · ".join(parts)
