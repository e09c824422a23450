"""Which rotary frequencies a RoPE model uses, read from its query and key weights alone, and
RoPE's "decay" with the model's own queries and keys.

Barbero et al. 2025 ("Round and Round We Go! What makes Rotary Positional Encodings useful?",
arXiv 2410.06205, §4 and Fig. 3) measure, per rotary pair, the norm of the queries and keys
that pair carries in Gemma 7B and find the **lowest** frequencies used most: a slow pair barely
turns over a context, so it can carry meaning ("semantic channels") rather than position. Here the
same question is asked of the weights: the rows of ``W_q`` (``W_k``) that produce a pair's two
components set how large that pair of the query (key) can be, so their Frobenius norm is the
pair's weight norm. Only arrays and the head geometry go in, so any Llama/Qwen/Mistral-style
``q_proj``/``k_proj`` (a checkpoint, a hub range read) can be measured without running the model.

Pairing: in the Hugging Face layout (``rotate_half``; transformers un-permutes llama.cpp's GGUF
q/k rows on load) pair ``i`` of a head is its dims ``(i, i + head_dim/2)`` and turns at
``θ_i = base^(−2i/head_dim)``: pair 0 is the fastest, the last pair the slowest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.encodings.rope import PAIRINGS, Pairing, default_inv_freq, rope_scores

#: A pair whose share of a head's q·k weight is below this fraction of the uniform share
#: ``1/n_pairs`` counts as effectively unused (Barbero et al. 2025 call such pairs unused when
#: their norm is a small fraction of the largest; a fifth of the even share is the line here).
UNUSED_FRACTION_OF_UNIFORM = 0.2


def pair_index(head_dim: int, pairing: Pairing = "rotate_half") -> np.ndarray:
    """``(head_dim/2, 2)``: the two dims of each rotary pair within a head.

    ``rotate_half`` (Llama, Mistral, Qwen in the Hugging Face layout): pair ``i`` = ``(i, i+d/2)``;
    ``rotate_every_two`` (GPT-J; Su et al. 2021 eq. 34): pair ``i`` = ``(2i, 2i+1)``.
    """
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing={pairing!r} is not known; use one of {', '.join(PAIRINGS)}.")
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim={head_dim} must be a positive even number.")
    half = head_dim // 2
    i = np.arange(half)
    if pairing == "rotate_half":
        return np.stack([i, i + half], axis=1)
    return np.stack([2 * i, 2 * i + 1], axis=1)


def pair_weight_norms(
    weight: np.ndarray, n_heads: int, head_dim: int, *, pairing: Pairing = "rotate_half"
) -> np.ndarray:
    """Frobenius norm of the rows of a ``q_proj``/``k_proj`` weight that feed each rotary pair.

    Args:
        weight: ``(n_heads·head_dim, d_model)`` as ``nn.Linear`` stores it (output rows).
    Returns:
        ``(n_heads, head_dim/2)``: ``‖W[h, pair i]‖_F = √(‖W_{h,a}‖² + ‖W_{h,b}‖²)``.
    """
    w = np.asarray(weight, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != n_heads * head_dim:
        raise ValueError(
            f"A projection of {n_heads} heads × {head_dim} dims has {n_heads * head_dim} output "
            f"rows; this weight is {w.shape}."
        )
    rows = (w**2).sum(axis=1).reshape(n_heads, head_dim)  # squared norm of each output row
    pairs = pair_index(head_dim, pairing)
    return np.sqrt(rows[:, pairs[:, 0]] + rows[:, pairs[:, 1]])


@dataclass(frozen=True)
class FrequencyUsage:
    """Per layer, query head and rotary pair: the q and k weight norms and each pair's share.

    ``share[l, h, i] = ‖W_q[h, i]‖·‖W_k[g(h), i]‖ / Σ_j (same)``, with ``g(h)`` the key-value head
    query head ``h`` reads (grouped-query attention): the largest a pair's term of ``q·R k`` can
    be, relative to the head's other pairs (Cauchy–Schwarz on each pair's 2-D dot product).
    """

    q_norms: np.ndarray  # (layers, n_heads, pairs)
    k_norms: np.ndarray  # (layers, n_kv_heads, pairs)
    share: np.ndarray  # (layers, n_heads, pairs), sums to 1 over pairs
    inv_freq: np.ndarray  # (pairs,) θ_i, fastest first
    threshold: float  # share below which a pair is "unused"

    @property
    def unused(self) -> np.ndarray:
        """``(layers, n_heads, pairs)`` bool: the pair's share is below :attr:`threshold`."""
        return self.share < self.threshold

    @property
    def mean_share(self) -> np.ndarray:
        """``(pairs,)``: each pair's share averaged over every layer and head."""
        return self.share.mean(axis=(0, 1))

    @property
    def wavelengths(self) -> np.ndarray:
        """``(pairs,)`` tokens per full turn, ``2π/θ_i``."""
        return 2 * np.pi / self.inv_freq

    def band_share(self, fraction: float = 0.25, *, slow: bool = True) -> float:
        """Mean share of the slowest (``slow``) or fastest ``fraction`` of pairs, summed."""
        n = max(1, round(fraction * self.share.shape[-1]))
        band = self.mean_share[-n:] if slow else self.mean_share[:n]
        return float(band.sum())


def frequency_usage(
    q_weights: list[np.ndarray] | np.ndarray,
    k_weights: list[np.ndarray] | np.ndarray,
    *,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    base: float,
    pairing: Pairing = "rotate_half",
    unused_fraction: float = UNUSED_FRACTION_OF_UNIFORM,
) -> FrequencyUsage:
    """:class:`FrequencyUsage` of a model from its per-layer ``q_proj``/``k_proj`` weights.

    Args:
        q_weights: per layer ``(n_heads·head_dim, d_model)``.
        k_weights: per layer ``(n_kv_heads·head_dim, d_model)``.
        base: ``rope_theta``.
    """
    if len(q_weights) != len(k_weights) or len(q_weights) == 0:
        raise ValueError("Give one q and one k weight per layer (at least one layer).")
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads cannot share {n_kv_heads} key-value heads.")
    q = np.stack([pair_weight_norms(w, n_heads, head_dim, pairing=pairing) for w in q_weights])
    k = np.stack([pair_weight_norms(w, n_kv_heads, head_dim, pairing=pairing) for w in k_weights])
    return usage_from_norms(q, k, head_dim=head_dim, base=base, unused_fraction=unused_fraction)


def usage_from_norms(
    q_norms: np.ndarray,
    k_norms: np.ndarray,
    *,
    head_dim: int,
    base: float,
    unused_fraction: float = UNUSED_FRACTION_OF_UNIFORM,
) -> FrequencyUsage:
    """:class:`FrequencyUsage` from per-layer pair norms (:func:`pair_weight_norms` of each
    layer's q and k weights: ``(layers, n_heads, pairs)`` and ``(layers, n_kv_heads, pairs)``),
    so a reader can drop each weight once its norms are taken."""
    q, k = np.asarray(q_norms, dtype=np.float64), np.asarray(k_norms, dtype=np.float64)
    n_heads, n_kv_heads = q.shape[1], k.shape[1]
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads cannot share {n_kv_heads} key-value heads.")
    group = np.arange(n_heads) // (n_heads // n_kv_heads)
    product = q * k[:, group, :]
    total = product.sum(axis=-1, keepdims=True)
    share = np.divide(product, total, out=np.zeros_like(product), where=total > 0)
    pairs = head_dim // 2
    return FrequencyUsage(
        q_norms=q,
        k_norms=k,
        share=share,
        inv_freq=default_inv_freq(head_dim, base),
        threshold=unused_fraction / pairs,
    )


# ----------------------------------------------------------------------- decay with real q, k


@dataclass(frozen=True)
class DecayCurves:
    """Normalised RoPE score ``q·R(Δ)k / (‖q‖‖k‖)`` against distance ``Δ`` for three kinds of q/k.

    ``real``: per layer and head, the model's mean pre-rotation query and key (so the curve is
    the mean score over all query–key token pairs, exactly: the score is bilinear). ``ones``: the
    all-ones q = k (RoFormer §3.4.3: decays). ``gaussian``: independent q, k ~ N(0, I), mean and
    std over draws (Barbero et al. 2025 Prop. 3.2: zero in expectation at every Δ, no decay).
    """

    distances: np.ndarray  # (D,)
    real: np.ndarray  # (layers, heads, D)
    ones: np.ndarray  # (D,)
    gaussian_mean: np.ndarray  # (D,)
    gaussian_std: np.ndarray  # (D,)


def normalised_scores(
    q: np.ndarray, k: np.ndarray, distances: np.ndarray, inv_freq: np.ndarray
) -> np.ndarray:
    """``⟨R_Δ q, k⟩ / (‖q‖‖k‖)`` (:func:`posviz.encodings.rope.rope_scores`); 0 if one is 0."""
    norm = float(np.linalg.norm(q) * np.linalg.norm(k))
    scores = rope_scores(q, k, distances, inv_freq)
    return scores / norm if norm > 0 else np.zeros_like(scores)


def decay_curves(
    mean_q: np.ndarray,
    mean_k: np.ndarray,
    distances: np.ndarray,
    inv_freq: np.ndarray,
    *,
    draws: int = 200,
    seed: int = 0,
) -> DecayCurves:
    """:class:`DecayCurves` for per-layer mean queries ``(L, H, d)`` and keys ``(L, H, d)``
    (keys already expanded to the query heads that read them)."""
    distances = np.asarray(distances, dtype=np.float64)
    head_dim = mean_q.shape[-1]
    real = np.array(
        [
            [normalised_scores(q, k, distances, inv_freq) for q, k in zip(qs, ks, strict=True)]
            for qs, ks in zip(mean_q, mean_k, strict=True)
        ]
    )
    ones = normalised_scores(np.ones(head_dim), np.ones(head_dim), distances, inv_freq)
    rng = np.random.default_rng(seed)
    gauss = np.array(
        [
            normalised_scores(rng.standard_normal(head_dim), rng.standard_normal(head_dim),
                              distances, inv_freq)
            for _ in range(draws)
        ]
    )  # fmt: skip
    return DecayCurves(distances, real, ones, gauss.mean(axis=0), gauss.std(axis=0))
