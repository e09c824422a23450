"""p-RoPE: RoPE with only its fastest fraction ``p`` of frequencies; the other pairs never rotate.

Barbero, Vitvitskyi, Perivolaropoulos, Pascanu & Veličković, "Round and Round We Go! What makes
Rotary Positional Encodings useful?", ICLR 2025 (https://arxiv.org/abs/2410.06205). Gemma puts
positional attention patterns on RoPE's fastest pairs and semantic ("what, not where") channels on
its slowest ones, which drift once a context is long enough for them to turn; p-RoPE keeps RoPE's
``r`` fastest pairs as they are and removes the rotation of the rest (the paper's ``apply_p_rope``;
transformers' ``rope_type="proportional"``, ``_compute_proportional_rope_parameters``, which Gemma
4's full-attention layers use with p = 0.25, θ = 10⁶)::

    r   = ⌊p·d/2⌋                       kept pairs        (d = head_dim, 0 ≤ p ≤ 1)
    θ_i = base^(−2i/d) / factor         i < r             RoPE's own frequencies, unchanged
    θ_i = 0                             r ≤ i < d/2       never rotated

Pair ``i`` is dims ``(i, i + d/2)`` (rotate_half), as in RoPE, so ``p = 1`` is RoPE and ``p = 0``
leaves every pair alone (NoPE). The kept frequencies keep their exponent over the whole head ``d``:
unlike a partial rotary factor (GPT-NeoX ``rotary_pct``, Phi), which re-spaces
``base^(−2i/(p·d))`` over the rotated dims so that its slowest pair still turns at ``≈ 1/base``.
A zero frequency leaves its pair unrotated, so the score of a query at ``m`` and a key at ``n``
splits into a part that depends on ``m − n`` and one that does not::

    ⟨R_m q, R_n k⟩ = Σ_{i<r} ⟨R((m−n)θ_i) q_i, k_i⟩ + Σ_{i≥r} ⟨q_i, k_i⟩

Shapes: frequencies ``(d/2,)`` (zeros last), a head ``(d,)``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from posviz.encodings.model_config import (
    as_config,
    first_field,
    head_dim_of,
    model_type_of,
    text_part,
    whole_number,
)
from posviz.encodings.rope import default_inv_freq, rotary_dim

MIN_FRACTION = 0.0  # p = 0: no pair rotates (NoPE)
MAX_FRACTION = 1.0  # p = 1: RoPE
ROPE_TYPE = "proportional"  # transformers' name for p-RoPE in rope_parameters
GEMMA4_FRACTION = 0.25  # Gemma 4's full-attention layers (transformers' Gemma4TextConfig)


def _fraction(fraction: Any) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, int | float | np.number):
        raise ValueError(f"p={fraction!r} must be a number from 0 to 1 (the share of pairs kept).")
    p = float(fraction)
    if not (math.isfinite(p) and MIN_FRACTION <= p <= MAX_FRACTION):
        raise ValueError(
            f"p={fraction!r} is out of range; choose {MIN_FRACTION:g} … {MAX_FRACTION:g} "
            "(0 rotates no pair, 1 is RoPE)."
        )
    return p


def kept_pairs(head_dim: int, fraction: float) -> int:
    """Number of rotated pairs, ``r = ⌊p·d/2⌋``, computed as transformers and the paper do.

    Raises:
        ValueError: a head dimension RoPE refuses (:func:`posviz.encodings.rope.rotary_dim`), or
            ``p`` outside ``[0, 1]``.
    """
    rotary_dim(head_dim)  # validates an even head_dim in MIN_HEAD_DIM … MAX_HEAD_DIM
    return int(_fraction(fraction) * head_dim // 2)


def p_rope_inv_freq(
    head_dim: int, *, fraction: float, base: float = 10000.0, factor: float = 1.0
) -> np.ndarray:
    """p-RoPE's angle per token of every pair (Barbero et al. 2025)::

        θ_i = base^(−2i/d) / factor  for i < ⌊p·d/2⌋,   0 for the other pairs

    Returns:
        ``(head_dim // 2,)`` float64: the kept pairs first (fastest first), zeros last.
    Raises:
        ValueError: bad head_dim or ``p`` (:func:`kept_pairs`), base ≤ 1, factor ≤ 0.
    """
    kept = kept_pairs(head_dim, fraction)
    if isinstance(factor, bool) or not (isinstance(factor, int | float) and factor > 0):
        raise ValueError(f"factor={factor!r} must be a positive number (1 = no scaling).")
    theta = default_inv_freq(head_dim, base) / float(factor)  # (d/2,) RoPE's θ_i, validates base
    theta[kept:] = 0.0
    return theta


def truncated_score(q: np.ndarray, k: np.ndarray, *, kept: int) -> float:
    """The part of ``⟨R_m q, R_n k⟩`` no distance changes: ``Σ_{i ≥ r} ⟨q_i, k_i⟩``.

    Pair ``i`` is dims ``(i, i + d/2)`` (rotate_half). Args: ``q``, ``k`` ``(d,)``; ``kept`` = r.
    """
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    half = q.shape[-1] // 2
    if not 0 <= kept <= half:
        raise ValueError(f"kept={kept} pairs is out of range 0 … {half} for a {2 * half}-dim head.")
    return float(q[kept:half] @ k[kept:half] + q[half + kept :] @ k[half + kept :])


@dataclass(frozen=True)
class PRopeConfig:
    """p-RoPE settings of one model (or of hand-set values).

    Attributes:
        model_type: config's ``model_type`` ("manual" when set by hand).
        head_dim: dimensions per head of the layers that use p-RoPE.
        fraction: ``p``, the share of pairs kept (``partial_rotary_factor``).
        base: ``rope_theta``.
        factor: divides every kept frequency (transformers' ``factor``; 1 = none).
        max_position_embeddings: the config's context length, when given.
        notes: what was inferred or defaulted, shown to the user.
    """

    model_type: str
    head_dim: int
    fraction: float
    base: float
    factor: float = 1.0
    max_position_embeddings: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def kept_pairs(self) -> int:
        return kept_pairs(self.head_dim, self.fraction)

    def inv_freq(self) -> np.ndarray:
        """``(head_dim // 2,)`` :func:`p_rope_inv_freq` of these settings."""
        return p_rope_inv_freq(
            self.head_dim, fraction=self.fraction, base=self.base, factor=self.factor
        )


def _is_p_rope(params: Any) -> bool:
    return isinstance(params, Mapping) and ROPE_TYPE in (
        params.get("rope_type"),
        params.get("type"),
    )


def _rope_parameters(config: Mapping[str, Any]) -> Mapping[str, Any]:
    params = config.get("rope_parameters") or config.get("rope_scaling") or {}
    return params if isinstance(params, Mapping) else {}


def uses_p_rope(config: Mapping[str, Any]) -> bool:
    """The config's RoPE parameters (flat, or one layer type's) say ``rope_type="proportional"``."""
    params = _rope_parameters(config)
    return _is_p_rope(params) or any(_is_p_rope(value) for value in params.values())


def _p_rope_parameters(
    config: Mapping[str, Any], notes: list[str]
) -> tuple[Mapping[str, Any], str | None]:
    """(the p-RoPE parameters, the layer type they belong to, or None when not per layer type)."""
    params = _rope_parameters(config)
    if _is_p_rope(params):
        return params, None
    for layer_type, value in params.items():
        if _is_p_rope(value):
            others = [
                f"{name!r} ({other.get('rope_type', 'default')}, θ = "
                f"{float(other.get('rope_theta') or 10000.0):,.0f})"
                for name, other in params.items()
                if name != layer_type and isinstance(other, Mapping)
            ]
            notes.append(
                f"p-RoPE is used by the {layer_type!r} layers"
                + (f"; the other layer types use {', '.join(others)}" if others else "")
            )
            return value, str(layer_type)
    raise ValueError(
        f"config (model_type={model_type_of(config)!r}) has no rope_type {ROPE_TYPE!r} in its "
        "rope_parameters: it does not use p-RoPE (see the RoPE page for plain RoPE)."
    )


def _layer_head_dim(config: Mapping[str, Any], layer_type: str | None, notes: list[str]) -> int:
    """Gemma 4's full-attention layers have their own head size (``global_head_dim``)."""
    if layer_type == "full_attention" and config.get("global_head_dim") is not None:
        notes.append("full-attention layers: head_dim = global_head_dim")
        return whole_number(config["global_head_dim"], "global_head_dim")
    per_layer, kinds = config.get("per_layer_config"), config.get("layer_types")
    if layer_type and isinstance(per_layer, Mapping) and isinstance(kinds, list):
        dims = {
            whole_number(value["head_dim"], "per_layer_config head_dim")
            for key, value in per_layer.items()
            if str(key).isdigit()
            and int(key) < len(kinds)
            and kinds[int(key)] == layer_type
            and isinstance(value, Mapping)
            and value.get("head_dim") is not None
        }
        if len(dims) == 1:
            notes.append(f"{layer_type!r} layers: head_dim from per_layer_config")
            return dims.pop()
    return head_dim_of(config)


def p_rope_config_from_dict(
    config: Mapping[str, Any], *, model_types: Collection[str] = ()
) -> PRopeConfig:
    """p-RoPE settings from a hub ``config.json`` dict (``rope_type: "proportional"``).

    ``model_types`` (passed by the registry) name the model types that use p-RoPE; their configs
    must still say which layers use it, since transformers' defaults differ per model.

    Raises:
        ValueError: no ``proportional`` RoPE parameters, or missing/invalid fields.
    """
    notes: list[str] = []
    config = text_part(as_config(config), notes)
    model_type = model_type_of(config)
    params, layer_type = _p_rope_parameters(config, notes)
    head_dim = _layer_head_dim(config, layer_type, notes)
    fraction = params.get("partial_rotary_factor")
    if fraction is None:
        fraction = 1.0
        notes.append("no partial_rotary_factor: transformers' default 1.0 (every pair) is used")
    base = first_field(params, "rope_theta") or first_field(config, "rope_theta")
    if base is None:
        base = 10000.0
        notes.append("no rope_theta in the config: transformers' default 10000 is used")
    max_pos = first_field(config, "max_position_embeddings")
    parsed = PRopeConfig(
        model_type=model_type,
        head_dim=head_dim,
        fraction=_fraction(fraction),
        base=float(base),
        factor=1.0 if params.get("factor") is None else params["factor"],
        max_position_embeddings=None
        if max_pos is None
        else whole_number(max_pos, "max_position_embeddings"),
        notes=tuple(notes),
    )
    parsed.inv_freq()  # refuses a bad head_dim, base or factor here, with the field's name
    return parsed


# Configs written out by hand (the p-RoPE fields only), for offline use.
PRESETS: dict[str, dict[str, Any]] = {
    "Gemma 4 full-attention layers (p = 0.25, θ = 10⁶; transformers' Gemma4TextConfig)": {
        "model_type": "gemma4_text",
        "hidden_size": 2304,
        "num_attention_heads": 8,
        "head_dim": 256,
        "global_head_dim": 512,
        "max_position_embeddings": 131072,
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {
                "rope_type": ROPE_TYPE,
                "partial_rotary_factor": GEMMA4_FRACTION,
                "rope_theta": 1000000.0,
            },
        },
    },
    **{
        f"{p}-RoPE on a Gemma 2B head (the paper's θ = 10⁴; illustrative)": {
            "model_type": "gemma",
            "hidden_size": 2048,
            "num_attention_heads": 8,
            "head_dim": 256,
            "max_position_embeddings": 8192,
            "rope_parameters": {
                "rope_type": ROPE_TYPE,
                "partial_rotary_factor": p,
                "rope_theta": 10000.0,
            },
        }
        for p in (0.25, 0.75)
    },
}
