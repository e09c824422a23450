"""Rotary position embedding (RoPE) and its context-extension scalings, numpy in, numpy out.

Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", eq. 15 and 34:
each 2-D pair ``i`` of a query/key at position ``p`` is rotated by the angle ``p·θ_i``::

    θ_i = base^(−2i/d),   i = 0 … d/2 − 1      (d = rotary dimension, base = rope_theta)
    (a, b) ↦ (a·cos pθ_i − b·sin pθ_i,  b·cos pθ_i + a·sin pθ_i)
    ⟨R_m q, R_n k⟩ = ⟨R_{m−n} q, k⟩             (the score depends only on m − n)

Shapes: a head is ``(head_dim,)``; ``θ`` is ``(d/2,)``; the ``head_dim − d`` remaining dims pass
through unrotated (partial rotary).

The scalings follow ``transformers/modeling_rope_utils.py`` (the ``_compute_*_parameters``
functions, transformers 5.x) formula by formula; the tests compare them numerically with that
module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
PAIRINGS = ("rotate_half", "rotate_every_two")
Pairing = Literal["rotate_half", "rotate_every_two"]
MIN_HEAD_DIM = 2  # one rotary pair
MAX_HEAD_DIM = 4096
HEAD_DIM_STEP = 2  # RoPE rotates pairs: a head dimension is even (see rotary_dim)
# Scaling types a user can set by hand (longrope needs per-pair factor lists from a config).
MANUAL_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")
# Llama 3.1's config.json values for the two llama3 thresholds; the one place they are written.
LLAMA3_DEFAULTS: Mapping[str, float] = MappingProxyType(
    {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
)


def _positive(value: Any, name: str, *, where: str = "") -> float:
    """``value`` as a finite float > 0, or a ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name}={value!r}{where} must be a positive number.")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name}={value!r}{where} must be a positive, finite number.")
    return number


def rotary_dim(head_dim: int, partial_rotary_factor: float = 1.0) -> int:
    """Number of rotated dimensions: ``int(head_dim · partial_rotary_factor)`` (as transformers).

    The remaining ``head_dim − rotary_dim`` dimensions pass through unrotated (GPT-NeoX
    ``rotary_pct``, Phi ``partial_rotary_factor``, GPT-J ``rotary_dim``).

    Raises:
        ValueError: head_dim not a whole number in ``MIN_HEAD_DIM … MAX_HEAD_DIM``, factor outside
            (0, 1], or odd rotary dim.
    """
    if isinstance(head_dim, bool) or not isinstance(head_dim, int | np.integer):
        raise ValueError(f"head_dim={head_dim!r} must be a whole number (e.g. 64 or 128).")
    if not MIN_HEAD_DIM <= head_dim <= MAX_HEAD_DIM:
        raise ValueError(
            f"head_dim={head_dim} is out of range; choose an even number "
            f"{MIN_HEAD_DIM} … {MAX_HEAD_DIM}."
        )
    factor = _positive(partial_rotary_factor, "partial_rotary_factor")
    if factor > 1:
        raise ValueError(
            f"partial_rotary_factor={partial_rotary_factor} must be in (0, 1] "
            "(the fraction of each head that is rotated)."
        )
    dim = int(head_dim * factor)
    if dim < 2 or dim % 2:
        raise ValueError(
            f"RoPE rotates pairs of dimensions, so the rotary dimension must be even and ≥ 2; "
            f"head_dim={head_dim} × partial_rotary_factor={factor} gives {dim}. "
            "Use an even head dimension (e.g. 64) or a factor that gives an even count."
        )
    return dim


def default_inv_freq(dim: int, base: float = 10000.0) -> np.ndarray:
    """Unscaled RoPE inverse frequencies, Su et al. 2021 (RoFormer) eq. 15::

        θ_i = base^(−2i/dim),   i = 0 … dim/2 − 1

    As ``compute_default_rope_parameters`` in transformers' Llama.

    Returns:
        ``(dim // 2,)`` float64, decreasing from 1.
    """
    base = _positive(base, "base (rope_theta)")
    if base <= 1:
        raise ValueError(f"base (rope_theta)={base} must be > 1 (usual: 10000, 500000, 1e6).")
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def normalize_scaling(scaling: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Copy of a ``rope_scaling`` dict with ``rope_type`` set (old configs say ``type``).

    ``None``, ``{}`` and ``rope_type="default"`` all mean "no scaling" and give ``None``.

    Raises:
        ValueError: not a mapping, or an unknown ``rope_type``.
    """
    if scaling is None:
        return None
    if not isinstance(scaling, Mapping):
        raise ValueError(
            f"rope_scaling must be a dict like {{'rope_type': 'linear', 'factor': 2.0}}, "
            f"got {type(scaling).__name__}."
        )
    if not scaling:
        return None
    params = dict(scaling)
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        raise ValueError(
            f"rope_scaling type {rope_type!r} is not supported; posviz implements "
            f"{', '.join(ROPE_TYPES)} (as transformers' modeling_rope_utils)."
        )
    params["rope_type"] = rope_type
    params.pop("type", None)
    return None if rope_type == "default" else params


def manual_scaling(
    rope_type: str, *, factor: float, original_max_position_embeddings: int
) -> dict[str, Any] | None:
    """A ``rope_scaling`` dict from hand-set values (``None`` for ``"default"``).

    llama3 gets Llama 3.1's thresholds (:data:`LLAMA3_DEFAULTS`), so every caller builds the same
    dict, e.g.::

        {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
         "low_freq_factor": 1.0, "high_freq_factor": 4.0}

    Raises:
        ValueError: ``rope_type`` not one of :data:`MANUAL_ROPE_TYPES`.
    """
    if rope_type not in MANUAL_ROPE_TYPES:
        raise ValueError(
            f"rope_type={rope_type!r} cannot be set by hand; choose one of "
            f"{', '.join(MANUAL_ROPE_TYPES)} (longrope needs a config.json with per-pair factors)."
        )
    if rope_type == "default":
        return None
    params: dict[str, Any] = {
        "rope_type": rope_type,
        "factor": factor,
        "original_max_position_embeddings": original_max_position_embeddings,
    }
    if rope_type == "llama3":
        params |= dict(LLAMA3_DEFAULTS)
    return params


def _require(params: Mapping[str, Any], key: str) -> Any:
    if params.get(key) is None:
        raise ValueError(
            f"rope_scaling of type {params['rope_type']!r} needs {key!r}, which is missing. "
            f"Add it to the dict (see the model's config.json)."
        )
    return params[key]


def _original_length(params: Mapping[str, Any], max_position_embeddings: int | None) -> int:
    """``original_max_position_embeddings``, else ``max_position_embeddings`` (as transformers)."""
    value = params.get("original_max_position_embeddings", max_position_embeddings)
    if value is None:
        raise ValueError(
            f"rope_scaling of type {params['rope_type']!r} needs "
            "'original_max_position_embeddings' (the pre-training context length, e.g. 8192 for "
            "Llama 3.1); add it to the dict or pass "
            "max_position_embeddings=."
        )
    return int(_positive(value, "original_max_position_embeddings"))


def _factor(params: Mapping[str, Any], max_position_embeddings: int | None) -> float:
    """The scaling factor; YaRN/LongRoPE fall back to ``max_pos / original_max_pos`` if None."""
    if params.get("factor") is None and params["rope_type"] in ("yarn", "longrope"):
        original = _original_length(params, max_position_embeddings)
        if max_position_embeddings is None:
            _require(params, "factor")
        return float(max_position_embeddings) / original
    return _positive(_require(params, "factor"), "rope_scaling factor")


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's attention temperature (Peng et al. 2023, eq. 22)::

    mscale(s) = 0.1·mscale·ln(s) + 1   (s > 1),   1   (s ≤ 1)
    """
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def rope_attention_factor(
    scaling: Mapping[str, Any] | None, *, max_position_embeddings: int | None = None
) -> float:
    """Factor transformers multiplies RoPE's cos and sin by (so scores scale by its square).

    ::

        yarn:     attention_factor, else 0.1·ln(factor) + 1            (Peng et al. 2023, eq. 22)
                  or mscale(factor, mscale) / mscale(factor, mscale_all_dim) when both are set
                  (DeepSeek-V2)
        longrope: attention_factor, else sqrt(1 + ln(factor) / ln(original_max_pos))
        others:   1

    Source: ``_compute_yarn_parameters`` / ``_compute_longrope_parameters`` in transformers.
    """
    params = normalize_scaling(scaling)
    if params is None or params["rope_type"] not in ("yarn", "longrope"):
        return 1.0
    if params.get("attention_factor") is not None:
        return _positive(params["attention_factor"], "attention_factor")
    factor = _factor(params, max_position_embeddings)
    if params["rope_type"] == "longrope":
        original = _original_length(params, max_position_embeddings)
        return 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
    mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
    if mscale and mscale_all_dim:
        return _yarn_mscale(factor, float(mscale)) / _yarn_mscale(factor, float(mscale_all_dim))
    return _yarn_mscale(factor)


def _linear(inv: np.ndarray, params: Mapping[str, Any], **_: Any) -> np.ndarray:
    """Position interpolation (Chen et al. 2023; kaiokendev): every ``θ_i`` divided by factor."""
    return inv / _positive(_require(params, "factor"), "rope_scaling factor")


def _dynamic(
    inv: np.ndarray,
    params: Mapping[str, Any],
    *,
    dim: int,
    base: float,
    max_position_embeddings: int | None,
    seq_len: int | None,
) -> np.ndarray:
    """Dynamic NTK (transformers ``_compute_dynamic_ntk_parameters``)::

    base' = base · (f·L/L_max − (f − 1))^(d/(d−2)),   L = max(seq_len, L_max)
    """
    factor = _positive(_require(params, "factor"), "rope_scaling factor")
    if max_position_embeddings is None:
        raise ValueError(
            "dynamic NTK scaling needs max_position_embeddings (the model's context length); "
            "it only changes the base once the sequence is longer than that."
        )
    if dim <= 2:
        raise ValueError("dynamic NTK scaling needs a rotary dimension > 2 (exponent d/(d−2)).")
    length = max(int(seq_len or 0), int(max_position_embeddings))
    scaled_base = base * (factor * length / max_position_embeddings - (factor - 1)) ** (
        dim / (dim - 2)
    )
    return default_inv_freq(dim, scaled_base)


def yarn_ramp(
    params: Mapping[str, Any], *, dim: int, base: float, max_position_embeddings: int | None = None
) -> np.ndarray:
    """YaRN's per-pair ramp ``γ_i ∈ [0, 1]``: 0 keeps ``θ_i`` (extrapolate), 1 divides it by factor.

    Pairs that turn more than ``beta_fast`` (default 32) times over the original context are kept,
    fewer than ``beta_slow`` (default 1) times are interpolated, linear in between (Peng et al.
    2023, §3.2 "NTK-by-parts")::

        dim(β) = d·ln(L / (2π·β)) / (2·ln base)          (floored/ceiled unless truncate=False)
        γ_i    = clip((i − dim(β_fast)) / (dim(β_slow) − dim(β_fast)), 0, 1)

    Returns:
        ``(dim // 2,)`` float64.
    """
    original = _original_length(params, max_position_embeddings)
    beta_fast = float(params.get("beta_fast") or 32)
    beta_slow = float(params.get("beta_slow") or 1)

    def correction_dim(rotations: float) -> float:
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # as transformers: avoid a division by zero
    return np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _yarn(
    inv: np.ndarray,
    params: Mapping[str, Any],
    *,
    dim: int,
    base: float,
    max_position_embeddings: int | None,
    **_: Any,
) -> np.ndarray:
    """YaRN (Peng et al. 2023), with :func:`yarn_ramp` ``γ``::

    θ'_i = (1 − γ_i)·θ_i + γ_i·θ_i / factor
    """
    factor = _factor(params, max_position_embeddings)
    ramp = yarn_ramp(params, dim=dim, base=base, max_position_embeddings=max_position_embeddings)
    return inv / factor * ramp + inv * (1 - ramp)


def _longrope(
    inv: np.ndarray,
    params: Mapping[str, Any],
    *,
    dim: int,
    max_position_embeddings: int | None,
    seq_len: int | None,
    **_: Any,
) -> np.ndarray:
    """LongRoPE (Phi-3)::

    θ'_i = θ_i / ext_i,   ext = long_factor if seq_len > original context else short_factor
    """
    original = _original_length(params, max_position_embeddings)
    key = "long_factor" if seq_len and seq_len > original else "short_factor"
    ext = np.asarray(_require(params, key), dtype=np.float64)
    if ext.shape != (dim // 2,) or not np.all(np.isfinite(ext)) or np.any(ext <= 0):
        raise ValueError(
            f"rope_scaling {key!r} must list {dim // 2} positive numbers (one per rotary pair), "
            f"got shape {ext.shape}."
        )
    return inv / ext


def _llama3(
    inv: np.ndarray, params: Mapping[str, Any], *, max_position_embeddings: int | None, **_: Any
) -> np.ndarray:
    """Llama 3.1 scaling (transformers ``_compute_llama3_parameters``), ``λ_i = 2π/θ_i``::

    θ'_i = θ_i                            λ_i < L / high_freq_factor
    θ'_i = θ_i / factor                   λ_i > L / low_freq_factor
    θ'_i = (1 − s)·θ_i/factor + s·θ_i     otherwise, s = (L/λ_i − low) / (high − low)
    """
    factor = _positive(_require(params, "factor"), "rope_scaling factor")
    low = _positive(_require(params, "low_freq_factor"), "low_freq_factor")
    high = _positive(_require(params, "high_freq_factor"), "high_freq_factor")
    if high <= low:
        raise ValueError(
            f"llama3 scaling needs high_freq_factor ({high}) > low_freq_factor ({low})."
        )
    original = _original_length(params, max_position_embeddings)
    wavelength = 2 * math.pi / inv
    scaled = np.where(wavelength > original / low, inv / factor, inv)
    smooth = (original / wavelength - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelength >= original / high) & (wavelength <= original / low)
    return np.where(medium, blended, scaled)


_SCALERS = {
    "linear": _linear,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "longrope": _longrope,
    "llama3": _llama3,
}


@dataclass(frozen=True)
class RopeFrequencies:
    """RoPE frequencies before and after a context-extension scaling.

    Attributes:
        head_dim: dimensions per attention head.
        rotary_dim: rotated dimensions (``≤ head_dim``, even); pairs = ``rotary_dim // 2``.
        base: ``rope_theta``.
        original_inv_freq: ``(rotary_dim // 2,)`` unscaled ``θ_i``.
        inv_freq: ``(rotary_dim // 2,)`` after scaling (equal to the original when unscaled).
        attention_factor: multiplies cos/sin (YaRN, LongRoPE), else 1.
        rope_type: "default", "linear", "dynamic", "yarn", "longrope" or "llama3".
        original_context: pre-training context length the scaling refers to, when known.
    """

    head_dim: int
    rotary_dim: int
    base: float
    original_inv_freq: np.ndarray
    inv_freq: np.ndarray
    attention_factor: float
    rope_type: str
    original_context: int | None

    @property
    def wavelength(self) -> np.ndarray:
        """``(pairs,)`` tokens per full turn after scaling, ``2π / θ'_i``."""
        return 2 * np.pi / self.inv_freq

    @property
    def original_wavelength(self) -> np.ndarray:
        """``(pairs,)`` tokens per full turn before scaling, ``2π / θ_i``."""
        return 2 * np.pi / self.original_inv_freq

    @property
    def ratio(self) -> np.ndarray:
        """``(pairs,)`` ``θ'_i / θ_i``: 1 = kept, ``1/factor`` = fully interpolated."""
        return self.inv_freq / self.original_inv_freq


def rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    partial_rotary_factor: float = 1.0,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> RopeFrequencies:
    """RoPE inverse frequencies for a head, with an optional ``rope_scaling`` dict applied.

    Args:
        head_dim: dimensions per head (even after ``partial_rotary_factor``).
        base: ``rope_theta``.
        scaling: a config.json ``rope_scaling`` / ``rope_parameters`` dict (``rope_type`` or
            ``type``).
        partial_rotary_factor: fraction of the head that is rotated.
        max_position_embeddings: the config's context length (dynamic NTK; fallbacks of
            YaRN/llama3).
        seq_len: current sequence length (dynamic NTK, LongRoPE's long/short switch).
    Raises:
        ValueError: bad dimensions, unknown scaling types, missing or invalid fields.
    """
    dim = rotary_dim(head_dim, partial_rotary_factor)
    base = _positive(base, "base (rope_theta)")
    original = default_inv_freq(dim, base)
    params = normalize_scaling(scaling)
    if params is None:
        return RopeFrequencies(
            int(head_dim),
            dim,
            base,
            original,
            original.copy(),
            1.0,
            "default",
            max_position_embeddings,
        )
    if max_position_embeddings is not None:
        max_position_embeddings = int(_positive(max_position_embeddings, "max_position_embeddings"))
    scaled = _SCALERS[params["rope_type"]](
        original,
        params,
        dim=dim,
        base=base,
        max_position_embeddings=max_position_embeddings,
        seq_len=seq_len,
    )
    context = params.get("original_max_position_embeddings", max_position_embeddings)
    return RopeFrequencies(
        head_dim=int(head_dim),
        rotary_dim=dim,
        base=base,
        original_inv_freq=original,
        inv_freq=np.asarray(scaled, dtype=np.float64),
        rope_type=params["rope_type"],
        attention_factor=rope_attention_factor(
            params, max_position_embeddings=max_position_embeddings
        ),
        original_context=None if context is None else int(context),
    )


def rope_inv_freq(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    partial_rotary_factor: float = 1.0,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> np.ndarray:
    """RoPE inverse frequencies ``θ_i = base^(−2i/d)``, scaled as transformers does.

    ``d = int(head_dim · partial_rotary_factor)``. ``scaling`` is a config.json ``rope_scaling``
    dict, e.g. Llama-3.1's::

        {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}

    See :func:`rope_frequencies`.

    Returns:
        ``(d // 2,)`` float64.
    """
    return rope_frequencies(
        head_dim,
        base=base,
        scaling=scaling,
        partial_rotary_factor=partial_rotary_factor,
        max_position_embeddings=max_position_embeddings,
        seq_len=seq_len,
    ).inv_freq


def pair_regimes(freqs: RopeFrequencies, *, tol: float = 1e-6) -> np.ndarray:
    """Label each rotary pair by what the scaling did to it.

    ``"kept"`` (``θ'/θ = 1``), ``"interpolated"`` (divided by the full factor — the smallest ratio
    over the pairs when it is below 1), else ``"smoothed"`` (partly scaled: llama3's blend, YaRN's
    ramp, dynamic NTK's graded base).

    Returns:
        ``(pairs,)`` array of str.
    """
    ratio = freqs.ratio
    smallest = float(ratio.min())
    labels = np.full(ratio.shape, "smoothed", dtype=object)
    labels[np.abs(ratio - 1) <= tol] = "kept"
    if smallest < 1 - tol:
        labels[np.abs(ratio - smallest) <= tol * smallest] = "interpolated"
    if freqs.rope_type == "linear":
        labels[:] = "interpolated"
    return labels.astype(str)


def _check_pairing(pairing: str) -> None:
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing={pairing!r} is not known; use one of {', '.join(PAIRINGS)}.")


def rope_rotate(
    x: np.ndarray,
    positions: np.ndarray,
    inv_freq: np.ndarray,
    *,
    pairing: Pairing = "rotate_half",
    attention_factor: float = 1.0,
) -> np.ndarray:
    """Rotate vectors by RoPE at the given positions (first ``2·len(inv_freq)`` dims; rest pass).

    ``rotate_half`` (GPT-NeoX, Llama, Mistral, Qwen) pairs dim ``i`` with ``i + r/2``;
    ``rotate_every_two`` (GPT-J, Su et al. 2021 eq. 34) pairs ``2i`` with ``2i+1``. For a pair
    ``(a, b)`` at position ``p`` (times ``attention_factor``: transformers scales cos and sin)::

        (a, b) ↦ (a·cos pθ_i − b·sin pθ_i,  b·cos pθ_i + a·sin pθ_i)

    Args:
        x: ``(head_dim,)`` or ``(n, head_dim)``.
        positions: ``(n,)`` (or scalar) positions; broadcast against ``x``'s rows.
        inv_freq: ``(r/2,)`` with ``r ≤ head_dim``.
    Returns:
        ``(n, head_dim)`` float64.
    """
    _check_pairing(pairing)
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    positions = np.atleast_1d(np.asarray(positions, dtype=np.float64))
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    r = 2 * inv_freq.size
    if r > x.shape[-1]:
        raise ValueError(f"{inv_freq.size} frequency pairs need ≥ {r} dims; x has {x.shape[-1]}.")
    angles = positions[:, None] * inv_freq[None, :]  # (n, r/2)
    cos, sin = np.cos(angles) * attention_factor, np.sin(angles) * attention_factor
    out = np.broadcast_to(x, (max(len(positions), x.shape[0]), x.shape[-1])).copy()
    if pairing == "rotate_half":
        a, b = out[:, : r // 2].copy(), out[:, r // 2 : r].copy()
        out[:, : r // 2], out[:, r // 2 : r] = a * cos - b * sin, b * cos + a * sin
    else:
        a, b = out[:, 0:r:2].copy(), out[:, 1:r:2].copy()
        out[:, 0:r:2], out[:, 1:r:2] = a * cos - b * sin, b * cos + a * sin
    return out


def rope_scores(
    q: np.ndarray,
    k: np.ndarray,
    distances: np.ndarray,
    inv_freq: np.ndarray,
    *,
    pairing: Pairing = "rotate_half",
    attention_factor: float = 1.0,
) -> np.ndarray:
    """Score ``⟨R_m q, R_0 k⟩`` of a fixed query and key, query ``m`` tokens after the key.

    By Su et al. 2021 (RoFormer) eq. 16 it is the same for every key position ``n``::

        ⟨R_{n+m} q, R_n k⟩ = ⟨R_m q, R_0 k⟩

    Args:
        q, k: ``(head_dim,)``.
        distances: ``(n,)`` relative distances ``m`` (query position − key position).
    Returns:
        ``(n,)`` float64.
    """
    rotated_q = rope_rotate(
        q, distances, inv_freq, pairing=pairing, attention_factor=attention_factor
    )
    rotated_k = rope_rotate(k, 0, inv_freq, pairing=pairing, attention_factor=attention_factor)[0]
    return rotated_q @ rotated_k


def rope_decay_bound(distances: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """RoFormer's long-term-decay curve: mean over j of ``|S_j|``, ``S_j = Σ_{i<j} e^{imθ_i}``.

    Su et al. 2021, §3.4.3 and Fig. 2: by Abel summation (with ``h_{d/2} = 0``)::

        |Σ_i h_i e^{imθ_i}| ≤ max_i |h_{i+1} − h_i| · Σ_j |S_j|,   S_j = Σ_{i<j} e^{imθ_i}

    so the "relative upper bound" ``(1/(d/2)) Σ_j |S_j|`` plotted here falls as ``m`` grows.

    Args:
        distances: ``(n,)``.
        inv_freq: ``(d/2,)``.
    Returns:
        ``(n,)`` float64; equals ``(d/2 + 1)/2`` at ``m = 0``.
    """
    distances = np.atleast_1d(np.asarray(distances, dtype=np.float64))
    phases = np.exp(1j * distances[:, None] * np.asarray(inv_freq)[None, :])  # (n, d/2)
    partial = np.cumsum(phases, axis=1)  # S_1 … S_{d/2}
    return np.abs(partial).mean(axis=1)


def rope_kernel(distances: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Cosine between ``R_p u`` and ``R_{p+m} u`` for ``u`` with equal pair norms::

        κ(m) = (1/(d/2)) Σ_i cos(m·θ_i)

    The same kernel as the sinusoid's ``PE(p)·PE(p+m) / ‖PE‖²`` when ``θ = ω`` (Vaswani et al.
    2017 §3.5; Su et al. 2021).

    Args:
        distances: ``(n,)``.
        inv_freq: ``(d/2,)``.

    Returns:
        ``(n,)`` float64, 1 at ``m = 0``.
    """
    distances = np.atleast_1d(np.asarray(distances, dtype=np.float64))
    return np.cos(distances[:, None] * np.asarray(inv_freq)[None, :]).mean(axis=1)
