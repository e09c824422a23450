"""Encoding families on the same axes: similarity vs distance, distinguishability, extrapolation.

Each family gives the model a *signal* for a position (absolute tables: the row ``PE[p]``) or for a
relative distance ``k`` (RoPE: the rotation angles ``kθ_i``; ALiBi: the bias ``−m_h k``; T5: a
bucket). The functions here reduce those signals to comparable curves over ``k``:

- similarity: how alike the signal at distance ``k`` is to the one at 0 (1 at ``k = 0``);
- margin: how far each item is from its most similar other item (0 = indistinguishable);
- unseen fraction: how much of the signal at ``k`` lies outside what training up to length ``L``
  produced (the usual explanation of why an encoding does or does not extrapolate).

Also the NoPE demonstration: causal averaging alone reveals position (Haviv et al. 2022).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.analysis.stats import cosine_similarity_matrix, shift_similarity
from posviz.encodings.t5 import t5_relative_bucket

MAX_ITEMS = 4096


def check_distance_count(n: int) -> int:
    """``n`` as an int if it is a whole number in ``2 … MAX_ITEMS``, else a ``ValueError``."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 2 <= n <= MAX_ITEMS:
        raise ValueError(f"number of distances {n!r} is out of range; choose 2 … {MAX_ITEMS}.")
    return int(n)


def _distances(n: int) -> np.ndarray:
    return np.arange(check_distance_count(n))


def table_similarity(matrix: np.ndarray, n_distances: int) -> np.ndarray:
    """Mean cosine of ``PE[p]`` and ``PE[p + k]`` over ``p``, ``k = 0 … n − 1`` (NaN past the end).

    Uses :func:`posviz.analysis.stats.shift_similarity`. For the sinusoid this is
    ``(2/d) Σ_i cos(k ω_i)`` (Vaswani et al. 2017 §3.5); for a learned table it is measured.

    Returns:
        ``(n_distances,)`` float64.
    """
    k = _distances(n_distances)
    out = np.full(k.size, np.nan)
    max_shift = min(k.size - 1, np.asarray(matrix).shape[0] - 1)
    out[: max_shift + 1] = shift_similarity(matrix, max_shift).mean
    return out


def alibi_similarity(n_distances: int, slopes: np.ndarray) -> np.ndarray:
    """Mean over heads of ``exp(−m_h k)``: the factor ALiBi multiplies a key's attention weight by,
    ``k`` tokens back, relative to the key at distance 0 (Press et al. 2022).

    Returns:
        ``(n_distances,)`` float64, 1 at ``k = 0``.
    """
    k = _distances(n_distances)
    return np.exp(-np.outer(k, np.asarray(slopes, dtype=np.float64))).mean(axis=1)


def t5_similarity(
    n_distances: int, bias_table: np.ndarray, *, bidirectional: bool = True, max_distance: int = 128
) -> np.ndarray:
    """Mean over heads of ``exp(b_h(bucket(−k)) − b_h(bucket(0)))`` for a key ``k`` tokens back.

    The attention-weight factor of T5's learned bias, relative to distance 0 (as
    :func:`alibi_similarity` for ALiBi). ``bias_table`` is ``(num_buckets, n_heads)``.

    Returns:
        ``(n_distances,)`` float64.
    """
    k = _distances(n_distances)
    table = np.asarray(bias_table, dtype=np.float64)
    buckets = t5_relative_bucket(
        -k, bidirectional=bidirectional, num_buckets=table.shape[0], max_distance=max_distance
    )
    return np.exp(table[buckets] - table[buckets[0]]).mean(axis=1)


def angle_signal(n_items: int, inv_freq: np.ndarray) -> np.ndarray:
    """``[cos kθ_i, sin kθ_i]`` for ``k = 0 … n − 1``: the sinusoid's row, RoPE's rotation at ``k``.

    Returns:
        ``(n_items, 2·len(inv_freq))`` float64, rows of norm ``sqrt(len(inv_freq))``.
    """
    angles = np.outer(_distances(n_items), np.asarray(inv_freq, dtype=np.float64))
    return np.concatenate([np.cos(angles), np.sin(angles)], axis=1)


def bucket_signal(
    n_items: int, *, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
) -> np.ndarray:
    """One-hot T5 bucket of a key ``k`` tokens back, ``k = 0 … n − 1``: ``(n_items, buckets)``."""
    k = _distances(n_items)
    buckets = t5_relative_bucket(
        -k, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    return np.eye(num_buckets)[buckets]


def nearest_margin(signal: np.ndarray) -> np.ndarray:
    """``1 − max_{j≠k} cos(s_k, s_j)`` for each row: 0 means some other item looks identical.

    A distinguishability measure that works for absolute rows and relative signals alike.

    Args:
        signal: ``(n_items, n_features)``, ``n_items ≤ 4096``.
    Returns:
        ``(n_items,)`` float64 in ``[0, 2]``.
    """
    rows = np.asarray(signal)
    if rows.ndim != 2 or not 2 <= rows.shape[0] <= MAX_ITEMS:
        raise ValueError(
            f"signal has shape {rows.shape}; need (n_items, n_features), 2 … 4096 items."
        )
    cos = cosine_similarity_matrix(rows)
    np.fill_diagonal(cos, -np.inf)
    return 1.0 - cos.max(axis=1)


def unseen_angle_fraction(
    n_items: int,
    inv_freq: np.ndarray,
    *,
    trained_length: int,
    trained_inv_freq: np.ndarray | None = None,
) -> np.ndarray:
    """Fraction of frequency pairs whose angle ``kθ'_i mod 2π`` was never produced in training.

    Training up to length ``L`` produced angles ``jθ_i``, ``j < L``: the whole circle for pairs with
    ``(L − 1)θ_i ≥ 2π``, only the arc ``[0, (L − 1)θ_i]`` for slower pairs. After a
    context-extension scaling the model uses ``θ'`` but was trained with ``θ``
    (``trained_inv_freq``); position interpolation keeps ``kθ'`` inside the arc (Chen et al.
    2023). Applies to the sinusoid (absolute ``p``) and RoPE (relative ``k``) alike.

    Returns:
        ``(n_items,)`` float64 in ``[0, 1]``.
    """
    k = _distances(n_items).astype(np.float64)
    theta = np.asarray(inv_freq, dtype=np.float64)
    trained = theta if trained_inv_freq is None else np.asarray(trained_inv_freq, dtype=np.float64)
    if trained.shape != theta.shape:
        raise ValueError("trained_inv_freq must have one frequency per pair, like inv_freq.")
    if trained_length < 1:
        raise ValueError(f"trained_length={trained_length} must be ≥ 1.")
    arc = (trained_length - 1) * trained  # (pairs,)
    angle = np.mod(np.outer(k, theta), 2 * np.pi)  # (n, pairs)
    unseen = (arc[None, :] < 2 * np.pi) & (angle > arc[None, :] * (1 + 1e-9) + 1e-12)
    return unseen.mean(axis=1)


def unseen_bucket_fraction(
    n_items: int,
    *,
    trained_length: int,
    num_buckets: int = 32,
    max_distance: int = 128,
    bidirectional: bool = True,
) -> np.ndarray:
    """1 where a key ``k`` tokens back falls in a bucket no distance ``< L`` used, else 0.

    T5's buckets saturate at ``max_distance``, so once ``L > max_distance`` nothing is ever unseen.

    Returns:
        ``(n_items,)`` float64.
    """
    kwargs = {
        "num_buckets": num_buckets,
        "max_distance": max_distance,
        "bidirectional": bidirectional,
    }
    k = _distances(n_items)
    seen = set(t5_relative_bucket(-np.arange(max(trained_length, 1)), **kwargs).tolist())
    buckets = t5_relative_bucket(-k, **kwargs)
    return np.array([0.0 if b in seen else 1.0 for b in buckets.tolist()])


def beyond_length(n_items: int, *, trained_length: int) -> np.ndarray:
    """1 for items ``≥ trained_length`` (a learned table has no row there; ALiBi's bias exceeds
    every value seen in training, though it only makes far keys weaker), else 0."""
    return (_distances(n_items) >= trained_length).astype(np.float64)


def causal_average_norms(
    n_positions: int, d_model: int, *, n_samples: int = 64, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """NoPE: norm of ``h_i = mean_{j ≤ i} x_j`` for random unit-variance tokens ``x_j``.

    With a causal mask and no position encoding, uniform attention averages the ``i + 1`` visible
    tokens, so ``E‖h_i‖² = d/(i + 1)``: the output's size alone reveals the position (Haviv et al.
    2022, "Transformer Language Models without Positional Encodings Still Learn Positional
    Information"; Kazemnejad et al. 2023). Without the mask every ``h_i`` is the same vector.

    Returns:
        ``(measured, theory)``: ``(n_positions,)`` mean norms over samples and ``sqrt(d/(i + 1))``.
    """
    n = _distances(n_positions).size
    if not 1 <= d_model <= 4096 or not 1 <= n_samples <= 1024:
        raise ValueError("d_model must be 1 … 4096 and n_samples 1 … 1024.")
    if n * d_model * n_samples > 1 << 26:
        raise ValueError("positions × width × samples is above 67 million; use fewer samples.")
    rng = np.random.default_rng(seed)
    counts = np.arange(1, n + 1)[:, None]
    total = np.zeros(n)
    for _ in range(n_samples):  # one sequence at a time: memory stays (n, d)
        h = np.cumsum(rng.standard_normal((n, d_model)), axis=0) / counts
        total += np.linalg.norm(h, axis=1)
    return total / n_samples, np.sqrt(d_model / np.arange(1, n + 1))


def position_from_norm(norms: np.ndarray, d_model: int) -> np.ndarray:
    """Invert ``‖h_i‖² ≈ d/(i + 1)``: the position a NoPE causal model could read off a norm::

        p̂_i = d / ‖h_i‖² − 1

    Returns:
        ``(n,)`` float64, same shape as ``norms``.
    """
    return d_model / np.maximum(np.asarray(norms, dtype=np.float64) ** 2, 1e-12) - 1


@dataclass(frozen=True)
class NopeDemo:
    """The NoPE page's curves: output norms and the position read back from them.

    Attributes:
        positions: ``(n,)`` ``0 … n − 1``.
        norms: name → ``(n,)``: measured mean ``‖h_i‖`` (causal), theory ``sqrt(d/(i + 1))``,
            and the no-mask norm (every ``h_i`` is the mean of all ``n`` tokens: constant).
        readout: name → ``(n,)``: ``p̂`` from one sequence, from the mean norm, and the truth.
    """

    positions: np.ndarray
    norms: dict[str, np.ndarray]
    readout: dict[str, np.ndarray]


def nope_demo(n_positions: int, d_model: int, *, n_samples: int, seed: int = 0) -> NopeDemo:
    """Uniform causal attention over random tokens, and position read back from the norm.

    ``E‖h_i‖² = d/(i + 1)`` (:func:`causal_average_norms`), inverted by
    :func:`position_from_norm` (Haviv et al. 2022). Without a mask every position gets the mean of
    all ``n`` tokens, the causal output at the last position.
    """
    measured, theory = causal_average_norms(n_positions, d_model, n_samples=n_samples, seed=seed)
    single, _ = causal_average_norms(n_positions, d_model, n_samples=1, seed=seed)
    positions = np.arange(measured.size)
    return NopeDemo(
        positions=positions,
        norms={
            "causal: measured mean ‖hᵢ‖": measured,
            "causal: theory √(d/(i+1))": theory,
            "no mask: ‖h‖ (same for every i)": np.full(measured.size, measured[-1]),
        },
        readout={
            "p̂ from one sequence": position_from_norm(single, d_model),
            "p̂ from the mean norm": position_from_norm(measured, d_model),
            "true position": positions.astype(np.float64),
        },
    )
