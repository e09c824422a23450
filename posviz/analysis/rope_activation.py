"""Which rotary frequencies a RoPE model uses, measured on its real queries and keys (not on its
weights), and where its "massive values" sit.

**Usage per pair** (Barbero, Vitvitskyi, Perivolaropoulos, Pascanu & Veličković, "Round and
Round We Go! What makes Rotary Positional Encodings useful?", ICLR 2025,
https://arxiv.org/abs/2410.06205: the norm of each 2-D chunk of the queries and
keys Gemma 7B computes on real text). Per layer ``l``, query head ``h`` and rotary pair ``i``::

    u[l, h, i] = mean_t ‖q_{t,h,i}‖ · mean_s ‖k_{s,g(h),i}‖      share = u / Σ_j u[l, h, j]

``g(h)`` the key-value head that query head ``h`` reads (grouped-query attention); the product
of the two means is the mean of ``‖q_{t,i}‖·‖k_{s,i}‖`` over every query–key token pair, the
largest the pair's term of ``q·R(Δ)k`` can be (Cauchy–Schwarz on the pair's 2-D dot product), so
the share is the activation counterpart of the weight-norm proxy
(:mod:`posviz.analysis.rope_usage`, same formula on ``‖W_q[h,i]‖·‖W_k[g(h),i]‖``).

*Pre- or post-rotation?* The same for every per-pair number here: RoPE turns each pair by an
angle, and a rotation keeps the pair's norm (``‖R(pθ_i) x_i‖ = ‖x_i‖``; tested). They are read
before rotation (forward hooks on ``q_proj``/``k_proj``), where transformers hands them over
without the position ids; only the per-dimension massive values differ (a rotation moves energy
between a pair's two dims), and those are rotated here as the model rotates them.

**Massive values** (Jin, Mei, Xu, Sun, Tang, Du, Liu & Zhang, "Massive Values in Self-Attention
Modules are the Key to Contextual Knowledge Understanding", ICML 2025,
https://arxiv.org/abs/2502.01563): per head ``h`` and dimension ``d`` the L2 norm over the
sequence ``M[h, d] = ‖Q[:, h, d]‖₂``; a dimension holds massive values when ``M[h, d] > λ · mean_d
M[h, d]`` with ``λ = 5`` (:data:`MASSIVE_FACTOR`). Counted per dimension (the paper's unit, after
RoPE as the authors' code takes it: ``query_states.norm(dim=1)`` after ``apply_rotary_pos_emb`` in
``modeling_llama.py`` of https://github.com/MingyuJ666/Rope_with_LLM; :func:`rotated_dim_sq`) and
per rotary pair (``√(M[h,a]² + M[h,b]²)`` against ``λ`` × the head's mean pair norm: one slot per
pair, 32 per SmolLM2 head; the same before and after RoPE). Two controls that can fail: ``v_proj``,
whose outputs are never rotated (Jin et al. find no concentration in V: if V showed the same
slow-half massive values, RoPE would not be what places them), and a random rotation of each head's
query dimensions (``O G Oᵀ`` on the head's Gram matrix, ``O`` Haar-orthogonal: if the count
survived it, the massive values would not sit on the rotary axes at all).
"""

from __future__ import annotations

import hashlib
import json
import logging
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from posviz.analysis.inside_models import N_WINDOWS, TEXT_CHARS, check_window, text_windows
from posviz.analysis.rope_usage import (
    UNUSED_FRACTION_OF_UNIFORM,
    FrequencyUsage,
    frequency_usage,
    pair_index,
    usage_from_norms,
)
from posviz.data.lab_text import SHA256 as TEXT_SHA256
from posviz.data.lab_text import lab_text
from posviz.encodings.rope import Pairing, default_inv_freq
from posviz.governor import heavy_work
from posviz.jobs import cached_flight, job_slot
from posviz.models import (
    SMOLLM2,
    gguf_cache_root,
    load_signed_npz,
    load_smollm2,
    save_signed_npz,
    signed_npz_signature,
    smollm2_dequantised,
)

Progress = Callable[[float, str], None]

#: Jin et al. 2025: a dimension is massive above λ = 5 times its head's mean norm.
MASSIVE_FACTOR = 5.0
#: A head is "concentrated" when one rotary pair carries more than this share of its usage.
CONCENTRATED_SHARE = 0.25
ROTATION_SEED = 0  # the random-rotation control's fixed stream


# ------------------------------------------------------------------------------ per token


def pair_norms(
    x: np.ndarray, n_heads: int, head_dim: int, *, pairing: Pairing = "rotate_half"
) -> np.ndarray:
    """``‖x_{h,i}‖``: the norm of each head's rotary pair, for queries/keys as a projection
    returns them (Barbero et al. 2025: the 2-D chunks).

    Args:
        x: ``(..., n_heads·head_dim)`` (e.g. ``(tokens, n_heads·head_dim)``).
    Returns:
        ``(..., n_heads, head_dim/2)``.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1] != n_heads * head_dim:
        raise ValueError(
            f"{n_heads} heads × {head_dim} dims need a last axis of {n_heads * head_dim}; "
            f"this array's is {x.shape[-1]}."
        )
    per_head = x.reshape(*x.shape[:-1], n_heads, head_dim)
    pairs = pair_index(head_dim, pairing)
    return np.sqrt(per_head[..., pairs[:, 0]] ** 2 + per_head[..., pairs[:, 1]] ** 2)


def head_gram(x: np.ndarray, n_heads: int, head_dim: int) -> np.ndarray:
    """``G[h] = Σ_t x_{t,h} x_{t,h}ᵀ`` per head: ``(tokens, n_heads·head_dim)`` →
    ``(n_heads, head_dim, head_dim)``. Its diagonal is Jin et al.'s ``M[h, d]²``, and it is all a
    rotation ``O`` of the head's dims needs (``O G Oᵀ``)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, n_heads, head_dim)
    return np.einsum("thd,the->hde", x, x)


def position_sums(x: np.ndarray, n_heads: int, head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Per position, summed over windows: ``Σ_w x²`` ``(T, heads, head_dim)`` and each rotary
    pair's cross term ``Σ_w x_a·x_b`` ``(T, heads, head_dim/2)`` (``rotate_half`` pairs), from
    ``x`` ``(windows, T, heads·head_dim)``: what :func:`rotated_dim_sq` needs."""
    x = np.asarray(x, dtype=np.float64).reshape(*x.shape[:2], n_heads, head_dim)
    pairs = pair_index(head_dim)
    return (x**2).sum(axis=0), (x[..., pairs[:, 0]] * x[..., pairs[:, 1]]).sum(axis=0)


def rotated_dim_sq(
    squares: np.ndarray, cross: np.ndarray, inv_freq: np.ndarray, positions: np.ndarray
) -> np.ndarray:
    """``Σ_t ((R(t·θ) x_t)_d)²`` per head and dimension, ``(heads, head_dim)``: the post-rotation
    ``M[h, d]²`` of Jin et al. (whose code takes the norm after RoPE) from the pre-rotation
    :func:`position_sums`. For pair ``(a, b)`` turned by ``φ = t·θ_i`` (Su et al. 2021, the
    ``rotate_half`` layout: ``a′ = a cos φ − b sin φ``, ``b′ = b cos φ + a sin φ``)::

        Σ a′² = Σ_t cos²φ·A_t + sin²φ·B_t − 2 sinφ cosφ·C_t
        Σ b′² = Σ_t sin²φ·A_t + cos²φ·B_t + 2 sinφ cosφ·C_t

    with ``A_t = Σ a²``, ``B_t = Σ b²``, ``C_t = Σ ab`` at position ``t``. A pair's sum
    ``Σ a′² + Σ b′² = Σ A_t + B_t`` does not change (the rotation keeps norms)."""
    phi = np.asarray(positions, np.float64)[:, None, None] * np.asarray(inv_freq)[None, None, :]
    cos2, sin2, sc = np.cos(phi) ** 2, np.sin(phi) ** 2, np.sin(phi) * np.cos(phi)
    pairs = pair_index(squares.shape[-1])
    a, b = squares[..., pairs[:, 0]], squares[..., pairs[:, 1]]
    out = np.empty(squares.shape[1:])
    out[..., pairs[:, 0]] = (cos2 * a + sin2 * b - 2 * sc * cross).sum(axis=0)
    out[..., pairs[:, 1]] = (sin2 * a + cos2 * b + 2 * sc * cross).sum(axis=0)
    return out


# --------------------------------------------------------------------------- usage per pair


def activation_usage(
    q_pair_mean: np.ndarray,
    k_pair_mean: np.ndarray,
    *,
    head_dim: int,
    base: float,
    unused_fraction: float = UNUSED_FRACTION_OF_UNIFORM,
) -> FrequencyUsage:
    """Barbero et al.'s usage per pair from the mean pair norms of the real queries
    ``(layers, n_heads, pairs)`` and keys ``(layers, n_kv_heads, pairs)``: ``share[l, h, i] =
    q̄·k̄ / Σ_j q̄·k̄`` (the module docstring), returned as the proxy's
    :class:`~posviz.analysis.rope_usage.FrequencyUsage` so both are read the same way (bands,
    unused pairs below ``unused_fraction/pairs``)."""
    return usage_from_norms(
        q_pair_mean, k_pair_mean, head_dim=head_dim, base=base, unused_fraction=unused_fraction
    )


def top_pair_share(usage: FrequencyUsage) -> np.ndarray:
    """``(layers, heads)``: the share of the head's most used pair (single-pair concentration;
    ``1/pairs`` for a head spread evenly, 1 for a head on one pair). Barbero et al. 2025 find
    Gemma's positional attention patterns built on its highest frequencies; this reads how far
    any head rests on one pair."""
    return usage.share.max(axis=-1)


def concentrated_heads(usage: FrequencyUsage, *, above: float = CONCENTRATED_SHARE) -> int:
    """Heads whose most used pair carries more than ``above`` of the head's usage
    (:func:`top_pair_share`; 25 %: eight times the even share of a 32-pair head)."""
    return int((top_pair_share(usage) > above).sum())


def layer_band(usage: FrequencyUsage) -> np.ndarray:
    """``(layers,)``: each layer's peak pair, the argmax of its heads' mean share (on Barbero
    et al. 2025's usage per pair, as :func:`activation_usage`)."""
    return usage.share.mean(axis=1).argmax(axis=-1)


def share_correlation(a: FrequencyUsage, b: FrequencyUsage) -> float:
    """Pearson correlation of two usages' shares over every (layer, head, pair)
    (``numpy.corrcoef``: cov(x, y) / (σ_x σ_y), Pearson 1895); NaN when one is constant."""
    x, y = a.share.ravel(), b.share.ravel()
    if x.shape != y.shape:
        raise ValueError(f"The usages have {x.size} and {y.size} cells; compare one model's.")
    if x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


# ---------------------------------------------------------------------------- massive values


def dim_norms(gram: np.ndarray) -> np.ndarray:
    """Jin et al.'s ``M[..., h, d] = ‖X[:, h, d]‖₂`` from per-head Gram matrices
    ``(..., heads, d, d)`` (the root of their diagonal)."""
    return np.sqrt(np.clip(np.diagonal(gram, axis1=-2, axis2=-1), 0.0, None))


def pair_slot_norms(m: np.ndarray, *, pairing: Pairing = "rotate_half") -> np.ndarray:
    """Per-dimension norms ``(..., head_dim)`` → per rotary pair ``√(M_a² + M_b²)``,
    ``(..., head_dim/2)`` (the slot a pair occupies; for V, which is never rotated, the same
    dims are grouped so the slots line up with the queries')."""
    pairs = pair_index(m.shape[-1], pairing)
    return np.sqrt(m[..., pairs[:, 0]] ** 2 + m[..., pairs[:, 1]] ** 2)


@dataclass(frozen=True)
class MassiveValues:
    """Where the massive values sit (Jin et al. 2025: ``M > λ · mean over the head``)."""

    mask: np.ndarray  # (layers, heads, slots) bool
    norms: np.ndarray  # (layers, heads, slots) the M (or pair) norms tested
    factor: float  # λ
    unit: str = "pair"  # "pair" or "dimension"

    @property
    def count(self) -> int:
        """Massive slots in all."""
        return int(self.mask.sum())

    @property
    def slots(self) -> int:
        """Slots tested in all (layers × heads × slots per head)."""
        return int(self.mask.size)

    @property
    def per_slot(self) -> np.ndarray:
        """``(slots,)``: how many heads have a massive value at each slot."""
        return self.mask.sum(axis=(0, 1))

    def slow_half(self) -> int:
        """Massive slots in the slower half (the higher half of the slot index: pairs in the
        ``rotate_half`` layout, whose index grows as θ falls; per dimension, both halves of a
        head hold one dim of each pair, so dims are mapped to their pair first)."""
        n = self.mask.shape[-1]
        pair = np.arange(n) % (n // 2) if self.unit == "dimension" else np.arange(n)
        pairs = n // 2 if self.unit == "dimension" else n
        return int(self.mask[..., pair >= pairs // 2].sum())


def massive_values(
    norms: np.ndarray, *, factor: float = MASSIVE_FACTOR, unit: str = "pair"
) -> MassiveValues:
    """Jin et al.'s massive values: ``norms[..., s] > factor · mean_s norms[..., s]`` within each
    head (last axis: the head's dimensions or pairs)."""
    if factor <= 0:
        raise ValueError(f"factor={factor} must be positive (Jin et al. use 5).")
    norms = np.asarray(norms, dtype=np.float64)
    mean = norms.mean(axis=-1, keepdims=True)
    return MassiveValues(norms > factor * mean, norms, float(factor), unit)


def haar_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    """An ``(n, n)`` orthogonal matrix drawn uniformly (Haar): QR of a Gaussian matrix with the
    signs of R's diagonal moved into Q (Mezzadri, "How to generate random matrices from the
    classical compact groups", Notices AMS 54, 2007, https://arxiv.org/abs/math-ph/0609050)."""
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diagonal(r))


def rotated_gram(gram: np.ndarray, *, seed: int = ROTATION_SEED) -> np.ndarray:
    """The random-rotation control: every head's Gram matrix ``(..., d, d)`` as ``O G Oᵀ`` with its
    own Haar-random ``O`` (the same queries seen in randomly rotated axes)."""
    rng = np.random.default_rng(seed)
    flat = np.asarray(gram, dtype=np.float64).reshape(-1, *gram.shape[-2:])
    out = np.empty_like(flat)
    for j, g in enumerate(flat):
        o = haar_orthogonal(g.shape[-1], rng)
        out[j] = o @ g @ o.T
    return out.reshape(gram.shape)


# ------------------------------------------------------------------- the model's activations


@dataclass(frozen=True)
class ActivationStats:
    """What the hooks keep of one run, per layer: enough for every measure here, none of the
    tokens themselves (memory grows with the model, not with the text)."""

    q_pair_mean: np.ndarray  # (layers, n_heads, pairs): mean over tokens of ‖q_{t,h,i}‖
    k_pair_mean: np.ndarray  # (layers, n_kv_heads, pairs)
    q_gram: np.ndarray  # (layers, n_heads, head_dim, head_dim): Σ_t q qᵀ per head
    k_gram: np.ndarray  # (layers, n_kv_heads, head_dim, head_dim)
    v_gram: np.ndarray  # (layers, n_kv_heads, head_dim, head_dim): v_proj, never rotated
    q_dim_sq_rotated: np.ndarray  # (layers, n_heads, head_dim): Σ_t (R q_t)_d², after RoPE
    k_dim_sq_rotated: np.ndarray  # (layers, n_kv_heads, head_dim)
    tokens: int


def model_geometry(config: Any) -> dict[str, Any]:
    """``n_heads``, ``n_kv_heads``, ``head_dim`` and ``base`` of a Llama-style
    ``transformers`` config (``rope_theta``, or ``rope_parameters["rope_theta"]``)."""
    n_heads = int(config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // n_heads)
    params = getattr(config, "rope_parameters", None) or {}
    base = float(getattr(config, "rope_theta", None) or params.get("rope_theta", 10000.0))
    return {
        "n_heads": n_heads,
        "n_kv_heads": int(getattr(config, "num_key_value_heads", None) or n_heads),
        "head_dim": head_dim,
        "base": base,
    }


def capture_activations(model: Any, rows: np.ndarray, *, chunk: int = 8) -> ActivationStats:
    """Run a Llama-style ``transformers`` causal LM on ``rows`` ``(windows, T)`` of token ids and
    keep, per layer, the pre-rotation queries' and keys' mean pair norms, the per-head Gram
    matrices of q, k and v (forward hooks on ``q_proj``, ``k_proj``, ``v_proj``; every token of
    every window counts once) and the per-dimension squares after RoPE at positions ``0 … T−1``
    (:func:`rotated_dim_sq`; unscaled θ_i = base^(−2i/d), as the model's default RoPE).
    ``chunk`` windows run at a time."""
    import torch  # heavy: only here

    geo = model_geometry(model.config)
    n_heads, n_kv, d = geo["n_heads"], geo["n_kv_heads"], geo["head_dim"]
    layers = model.model.layers
    rows = np.asarray(rows, dtype=np.int64)
    t = rows.shape[1]
    sums: dict[str, list[np.ndarray]] = {
        name: [np.zeros(shape) for _ in layers]
        for name, shape in (
            ("q_pair", (n_heads, d // 2)), ("k_pair", (n_kv, d // 2)),
            ("q_gram", (n_heads, d, d)), ("k_gram", (n_kv, d, d)), ("v_gram", (n_kv, d, d)),
            ("q_sq", (t, n_heads, d)), ("k_sq", (t, n_kv, d)),
            ("q_cross", (t, n_heads, d // 2)), ("k_cross", (t, n_kv, d // 2)),
        )
    }  # fmt: skip
    heads = {"q": n_heads, "k": n_kv, "v": n_kv}
    hooks = []
    for li, layer in enumerate(layers):
        for name in ("q", "k", "v"):

            def hook(_m: Any, _i: Any, out: Any, name: str = name, li: int = li) -> None:
                x = out.detach().double().reshape(-1, out.shape[-1]).numpy()  # (tokens, h·d)
                sums[f"{name}_gram"][li] += head_gram(x, heads[name], d)
                if name != "v":
                    sums[f"{name}_pair"][li] += pair_norms(x, heads[name], d).sum(axis=0)
                    sq, cross = position_sums(x.reshape(-1, t, x.shape[-1]), heads[name], d)
                    sums[f"{name}_sq"][li] += sq
                    sums[f"{name}_cross"][li] += cross

            hooks.append(getattr(layer.self_attn, f"{name}_proj").register_forward_hook(hook))
    try:
        for start in range(0, len(rows), chunk):
            ids = torch.as_tensor(rows[start : start + chunk])
            with torch.no_grad():
                model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    tokens = int(rows.size)
    inv_freq, positions = default_inv_freq(d, geo["base"]), np.arange(t)

    def rotated(name: str) -> np.ndarray:
        return np.stack([rotated_dim_sq(sq, cross, inv_freq, positions) for sq, cross in
                         zip(sums[f"{name}_sq"], sums[f"{name}_cross"], strict=True)])  # fmt: skip

    return ActivationStats(
        q_pair_mean=np.stack(sums["q_pair"]) / tokens,
        k_pair_mean=np.stack(sums["k_pair"]) / tokens,
        q_gram=np.stack(sums["q_gram"]),
        k_gram=np.stack(sums["k_gram"]),
        v_gram=np.stack(sums["v_gram"]),
        q_dim_sq_rotated=rotated("q"),
        k_dim_sq_rotated=rotated("k"),
        tokens=tokens,
    )


def weight_proxy(model: Any) -> FrequencyUsage:
    """The weight-norm proxy (:func:`posviz.analysis.rope_usage.frequency_usage`) of the same
    model, for the comparison."""

    geo = model_geometry(model.config)
    attn = [layer.self_attn for layer in model.model.layers]
    q = [a.q_proj.weight.detach().double().numpy() for a in attn]
    k = [a.k_proj.weight.detach().double().numpy() for a in attn]
    return frequency_usage(q, k, **geo)


@dataclass(frozen=True)
class ActivationResult:
    """Usage per pair on real q/k beside the weight proxy, and the massive values with their
    two controls, for one window length."""

    window: int  # tokens per window
    windows: int
    tokens: int  # tokens read in all
    usage: FrequencyUsage  # real queries and keys (Barbero et al.'s measure)
    proxy: FrequencyUsage  # the weights' norms (posviz.analysis.rope_usage)
    massive_q: MassiveValues  # per pair slot
    massive_q_dims: MassiveValues  # per dimension after RoPE (Jin et al.'s unit and code)
    massive_k: MassiveValues  # per pair slot
    control_v: MassiveValues  # v_proj per slot: never rotated
    control_v_dims: MassiveValues  # v_proj per dimension (beside massive_q_dims)
    control_rotated: MassiveValues  # q per slot after a random rotation of each head's dims
    seconds: float  # the cold computation's wall time (model load included)
    peak_mb: float  # the process's peak resident memory after it (ru_maxrss)


def activation_result(arrays: dict[str, np.ndarray]) -> ActivationResult:
    """An :class:`ActivationResult` from its stored arrays (:func:`activation_arrays`)."""
    head_dim, base = int(arrays["head_dim"]), float(arrays["base"])
    usage = activation_usage(arrays["q_pair_mean"], arrays["k_pair_mean"],
                             head_dim=head_dim, base=base)  # fmt: skip
    proxy = usage_from_norms(arrays["proxy_q_norms"], arrays["proxy_k_norms"],
                             head_dim=head_dim, base=base)  # fmt: skip
    q_dims = dim_norms(arrays["q_gram"])
    return ActivationResult(
        window=int(arrays["window"]),
        windows=int(arrays["windows"]),
        tokens=int(arrays["tokens"]),
        usage=usage,
        proxy=proxy,
        massive_q=massive_values(pair_slot_norms(q_dims)),
        massive_q_dims=massive_values(np.sqrt(arrays["q_dim_sq_rotated"]), unit="dimension"),
        massive_k=massive_values(pair_slot_norms(dim_norms(arrays["k_gram"]))),
        control_v=massive_values(pair_slot_norms(dim_norms(arrays["v_gram"]))),
        control_v_dims=massive_values(dim_norms(arrays["v_gram"]), unit="dimension"),
        control_rotated=massive_values(pair_slot_norms(dim_norms(rotated_gram(arrays["q_gram"])))),
        seconds=float(arrays["seconds"]),
        peak_mb=float(arrays["peak_mb"]),
    )


def activation_arrays(
    stats: ActivationStats,
    proxy: FrequencyUsage,
    *,
    geometry: dict[str, Any],
    window: int,
    windows: int,
) -> dict[str, np.ndarray]:
    """The arrays stored for one run (plain numbers only: loaded with ``allow_pickle=False``);
    ``seconds`` and ``peak_mb`` are filled in by the caller once the run is over."""
    return {
        "q_pair_mean": stats.q_pair_mean,
        "k_pair_mean": stats.k_pair_mean,
        "q_gram": stats.q_gram,
        "k_gram": stats.k_gram,
        "v_gram": stats.v_gram,
        "q_dim_sq_rotated": stats.q_dim_sq_rotated,
        "k_dim_sq_rotated": stats.k_dim_sq_rotated,
        "tokens": np.int64(stats.tokens),
        "proxy_q_norms": proxy.q_norms,
        "proxy_k_norms": proxy.k_norms,
        "head_dim": np.int64(geometry["head_dim"]),
        "base": np.float64(geometry["base"]),
        "window": np.int64(window),
        "windows": np.int64(windows),
        "seconds": np.float64(np.nan),
        "peak_mb": np.float64(np.nan),
    }


# ------------------------------------------------------------------------ findings, in words


def band(peaks: np.ndarray, *, width: int = 4) -> tuple[int, int, int]:
    """``(first, last, layers)``: the ``width`` consecutive pairs holding the most layer peaks
    (:func:`layer_band`) and how many layers peak in them (the first such run on a tie)."""
    peaks = np.asarray(peaks)
    top = int(peaks.max()) if peaks.size else 0
    best = max(range(max(1, top - width + 2)),
               key=lambda s: (((peaks >= s) & (peaks < s + width)).sum(), -s))  # fmt: skip
    return best, best + width - 1, int(((peaks >= best) & (peaks < best + width)).sum())


def activation_findings(result: ActivationResult) -> dict[str, object]:
    """One window length's numbers as plain JSON-able values (the definitions in the module
    docstring; quarters and halves by pair index, the slowest pairs last)."""
    u, p = result.usage, result.proxy
    first, last, in_band = band(layer_band(u))
    pairs = u.share.shape[-1]

    def massive(m: MassiveValues) -> dict[str, int]:
        return {"count": m.count, "slots": m.slots, "slow_half": m.slow_half()}

    return {
        "window": result.window,
        "windows": result.windows,
        "tokens": result.tokens,
        "pairs": pairs,
        "heads": int(np.prod(u.share.shape[:2])),
        "activation": {
            "slowest_quarter_share": u.band_share(slow=True),
            "fastest_quarter_share": u.band_share(slow=False),
            "unused_fraction": float(u.unused.mean()),
            "concentrated_heads": concentrated_heads(u),
            "max_top_share": float(top_pair_share(u).max()),
            "layer_peaks": [int(v) for v in layer_band(u)],
            "band": [first, last, in_band],
        },
        "proxy": {
            "slowest_quarter_share": p.band_share(slow=True),
            "fastest_quarter_share": p.band_share(slow=False),
            "unused_fraction": float(p.unused.mean()),
            "concentrated_heads": concentrated_heads(p),
            "max_top_share": float(top_pair_share(p).max()),
        },
        "correlation": share_correlation(u, p),
        "unused_threshold": float(u.threshold),
        "concentrated_above": CONCENTRATED_SHARE,
        "massive_factor": MASSIVE_FACTOR,
        "massive": {
            "q_pairs": massive(result.massive_q),
            "q_dims": massive(result.massive_q_dims),
            "k_pairs": massive(result.massive_k),
            "control_v_pairs": massive(result.control_v),
            "control_v_dims": massive(result.control_v_dims),
            "control_rotated_q_pairs": massive(result.control_rotated),
        },
        "seconds": result.seconds,
        "peak_mb": result.peak_mb,
    }


def finding_sentences(result: ActivationResult) -> dict[str, str]:
    """One sentence per finding, numbers read from :func:`activation_findings`."""
    f = activation_findings(result)
    a, p, m = f["activation"], f["proxy"], f["massive"]
    first, last, in_band = a["band"]
    layers = len(a["layer_peaks"])
    q, v, rot = m["q_pairs"], m["control_v_pairs"], m["control_rotated_q_pairs"]
    return {
        "slow": (
            f"On real queries and keys the slowest quarter of pairs carries "
            f"{a['slowest_quarter_share']:.1%} of the usage (weight proxy "
            f"{p['slowest_quarter_share']:.1%}), the fastest {a['fastest_quarter_share']:.1%} "
            f"({p['fastest_quarter_share']:.1%})."
        ),
        "unused": (
            f"{a['unused_fraction']:.1%} of (head, pair) cells are effectively unused "
            f"(share < {f['unused_threshold']:.4f}); the proxy says {p['unused_fraction']:.1%}."
        ),
        "concentrated": (
            f"In {a['concentrated_heads']} of {f['heads']} heads one pair carries more than "
            f"{CONCENTRATED_SHARE:.0%} of the usage (max {a['max_top_share']:.0%}; proxy max "
            f"{p['max_top_share']:.1%})."
        ),
        "band": (
            f"{in_band} of {layers} layers peak at pairs {first}–{last}; the shares correlate "
            f"with the proxy's at r = {f['correlation']:.2f}."
        ),
        "massive": (
            f"{q['count']} of {q['slots']} query pair slots exceed {MASSIVE_FACTOR:g}× their "
            f"head's mean, {q['slow_half']} of them in the slower half; controls: v_proj "
            f"{v['count']} ({v['slow_half']} slower half), randomly rotated queries {rot['count']}."
        ),
    }


def usage_frame(result: ActivationResult) -> pd.DataFrame:
    """Long form for the usage chart: ``pair``, ``wavelength`` (tokens per turn), ``series``
    (real q/k, weight proxy, even share) and ``share`` (mean over every layer and head)."""
    u, p = result.usage, result.proxy
    pairs = np.arange(u.share.shape[-1])
    series = (
        ("real queries and keys", u.mean_share),
        ("weight-norm proxy", p.mean_share),
        ("even share", np.full(pairs.size, 1 / pairs.size)),
    )
    return pd.concat(
        [pd.DataFrame({"pair": pairs, "wavelength": u.wavelengths, "series": name, "share": v})
         for name, v in series],
        ignore_index=True,
    )  # fmt: skip


def layer_frame(result: ActivationResult) -> pd.DataFrame:
    """Long form for a layers × pairs heatmap: ``layer``, ``pair``, ``share`` (mean over the
    layer's heads) and ``peak`` (the layer's argmax pair, :func:`layer_band`)."""
    mean = result.usage.share.mean(axis=1)  # (layers, pairs)
    layers, pairs = np.indices(mean.shape)
    peaks = layer_band(result.usage)
    return pd.DataFrame({"layer": layers.ravel(), "pair": pairs.ravel(),
                         "share": mean.ravel(), "peak": peaks[layers.ravel()]})  # fmt: skip


def massive_frame(result: ActivationResult) -> pd.DataFrame:
    """Long form for the massive-values chart: ``pair`` slot, ``series`` (queries, keys, and the
    two controls) and ``heads`` (how many heads have a massive value at that slot)."""
    series = (
        ("queries", result.massive_q),
        ("keys", result.massive_k),
        ("control: v_proj (not rotated)", result.control_v),
        ("control: queries randomly rotated", result.control_rotated),
    )
    return pd.concat(
        [pd.DataFrame({"pair": np.arange(m.per_slot.size), "series": name, "heads": m.per_slot})
         for name, m in series],
        ignore_index=True,
    )  # fmt: skip


# --------------------------------------------------------------- SmolLM2, computed and cached

#: Bump when what is computed changes: old cache files are then ignored.
ANALYSIS_VERSION = 2


def cache_key(window: int) -> str:
    """SHA-256 naming SmolLM2's activation results: the GGUF's pinned hash (checked, with the
    float32 cache's signature, by :func:`posviz.models.load_smollm2` in the process that
    computes), the text's hash and length, the windows and :data:`ANALYSIS_VERSION`."""

    record = {
        "weights": SMOLLM2.sha256,
        "text": TEXT_SHA256,
        "chars": TEXT_CHARS,
        "window": check_window(window),
        "windows": N_WINDOWS,
        "version": ANALYSIS_VERSION,
        "what": "rope-activation",
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def results_path(window: int, *, root: Path | None = None) -> Path:
    """Where the results of ``window``-token windows are kept (beside the inside page's)."""

    folder = Path(root) if root is not None else gguf_cache_root().parent / "inside"
    return folder / f"rope-activation-{cache_key(window)[:24]}.npz"


def _rebuild(path: Path) -> str:
    return (
        f"Delete it (`rm '{path}' '{signed_npz_signature(path)}'`), then open the page again or "
        "run `python -m posviz inside smollm2`: it is computed again from verified weights."
    )


def save_results(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` and their signed manifest (:func:`posviz.models.save_signed_npz`)."""
    save_signed_npz(Path(path), arrays, label=f"inside/{Path(path).name}")


def load_results(path: Path) -> dict[str, np.ndarray] | None:
    """The stored arrays, verified on every load (:func:`posviz.models.load_signed_npz`);
    ``None`` when there is no file or no signature.

    Raises:
        posviz.models.CacheTampered: the file or its signature was edited (says how to rebuild).
    """
    return load_signed_npz(Path(path), label=f"inside/{Path(path).name}", rebuild=_rebuild(path))


def peak_memory_mb() -> float:
    """This process's peak resident memory so far, in MB (``ru_maxrss``: KiB on Linux)."""

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def compute_smollm2(window: int, *, progress: Progress | None = None) -> dict[str, np.ndarray]:
    """SmolLM2's activation arrays on the inside page's windows of the King James text (the
    same :data:`~posviz.analysis.inside_models.N_WINDOWS` windows of ``window`` tokens): loads
    the hash-checked float32 model, one forward pass, the weight proxy beside it."""

    step = progress or (lambda _f, _w: None)
    start = time.monotonic()
    step(0.1, "Loading SmolLM2 from its verified float32 cache …")
    loaded = load_smollm2()
    ids = loaded.tokenizer(lab_text()[:TEXT_CHARS])["input_ids"]
    rows = text_windows(ids, window=window, count=N_WINDOWS)
    step(0.4, f"Reading SmolLM2's queries and keys on {N_WINDOWS} windows of {window} tokens …")
    stats = capture_activations(loaded.model, rows)
    proxy = weight_proxy(loaded.model)
    geometry = model_geometry(loaded.model.config)
    del loaded
    arrays = activation_arrays(stats, proxy, geometry=geometry, window=window, windows=N_WINDOWS)
    arrays["seconds"] = np.float64(time.monotonic() - start)
    arrays["peak_mb"] = np.float64(peak_memory_mb())
    return arrays


def cached_rope_activation(
    window: int = 32, *, root: Path | None = None
) -> ActivationResult | None:
    """The results of ``window``-token windows if they are in the disk cache (no model is
    loaded), else ``None``.

    Raises:
        posviz.models.CacheTampered: the cached file was edited (says how to rebuild it).
    """
    arrays = load_results(results_path(window, root=root))
    return None if arrays is None else activation_result(arrays)


def rope_activation(
    window: int = 32,
    *,
    root: Path | None = None,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Progress | None = None,
) -> ActivationResult:
    """SmolLM2's :class:`ActivationResult` at ``window``-token windows: from the signed disk
    cache, else computed once as a heavy job (a ``job_slot("probe")``, governed threads; one
    computation per window in a process) and stored.

    Raises:
        ValueError: a window not in :data:`posviz.analysis.inside_models.WINDOWS`, the package
            or its libraries missing (says how to install them), a checkpoint failing its hash.
        posviz.models.CacheTampered: the float32 cache or the results file was edited.
    """

    check_window(window)

    def compute() -> ActivationResult:
        smollm2_dequantised(on_wait=on_wait, should_stop=should_stop)  # its own slot first
        with job_slot("probe", on_wait=on_wait, should_stop=should_stop), heavy_work():
            arrays = compute_smollm2(window, progress=progress)
        try:
            save_results(results_path(window, root=root), arrays)
        except OSError as exc:  # a folder it cannot write: the answer is still shown
            logging.getLogger(__name__).warning("could not cache the activation usage: %s", exc)
        return activation_result(arrays)

    return cached_flight(
        ("rope-activation", window),
        lambda: cached_rope_activation(window, root=root),
        compute,
        on_wait=on_wait,
        should_stop=should_stop,
    )
