"""T5 relative position buckets (Raffel et al. 2020, JMLR, §2.1), numpy in, numpy out.

T5 adds to each attention logit a learned scalar per head, looked up by the *bucket* of the relative
position ``key − query``: exact buckets for small distances, logarithmically wider ones up to
``max_distance``, and one shared bucket beyond::

    logit[h, i, j] = q_i·k_j + b[bucket(j − i), h]        b: (num_buckets, n_heads), learned

The bucket function follows ``T5Attention._relative_position_bucket`` in transformers (from Mesh
TensorFlow) exactly.
"""

from __future__ import annotations

import math

import numpy as np

MIN_BUCKETS = 2  # causal attention; bidirectional needs 4 (see _check)
MAX_BUCKETS = 1024
MIN_MAX_DISTANCE = 2
MAX_DISTANCE = 1_000_000


def _check(num_buckets: int, max_distance: int, bidirectional: bool) -> None:
    for name, value, low, high in (
        ("num_buckets", num_buckets, MIN_BUCKETS, MAX_BUCKETS),
        ("max_distance", max_distance, MIN_MAX_DISTANCE, MAX_DISTANCE),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name}={value!r} must be a whole number.")
        if not low <= value <= high:
            raise ValueError(f"{name}={value} is out of range; choose {low} … {high}.")
    half = num_buckets // 2 if bidirectional else num_buckets
    max_exact = half // 2
    if max_exact < 1:
        raise ValueError(
            f"num_buckets={num_buckets} is too small for "
            f"{'bidirectional' if bidirectional else 'causal'}"
            f" attention; use at least {4 if bidirectional else 2} (T5 uses 32)."
        )
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance={max_distance} must exceed the {max_exact} exact buckets; "
            "T5 uses 128 with 32 buckets."
        )


def t5_relative_bucket(
    relative_position: np.ndarray,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """Bucket index of each relative position ``key − query`` (T5, Raffel et al. 2020).

    Bidirectional: half the buckets for ``key > query`` (offset ``num_buckets/2``), half for the
    rest. Causal: only ``key ≤ query`` counts; later keys fall in bucket 0. Within a half of ``B``
    buckets and distance ``r = |key − query|`` (causal: ``max(query − key, 0)``)::

        bucket(r) = r                                                        r < B/2
        bucket(r) = min(B − 1, B/2 + ⌊ln(r/(B/2)) / ln(max_distance/(B/2)) · (B/2)⌋)   otherwise

    Computed in float32 like ``T5Attention._relative_position_bucket`` (transformers
    ``models/t5/modeling_t5.py``; Raffel et al. 2020, §2.1).

    Args:
        relative_position: integer array of any shape, ``key_position − query_position``.
    Returns:
        int64 array of the same shape, values in ``[0, num_buckets)``.
    Raises:
        ValueError: non-integer input, or bucket settings that leave no room for the log buckets.
    """
    _check(num_buckets, max_distance, bidirectional)
    rel = np.asarray(relative_position)
    if not np.issubdtype(rel.dtype, np.integer) and (
        not np.issubdtype(rel.dtype, np.floating) or not np.all(np.mod(rel, 1) == 0)
    ):
        raise ValueError("relative_position must hold whole numbers (key − query positions).")
    rel = rel.astype(np.int64)
    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):  # log(0) only where the exact branch is taken
        scaled = (
            np.log(rel.astype(np.float32) / np.float32(max_exact))
            / np.float32(math.log(max_distance / max_exact))
            * np.float32(num_buckets - max_exact)
        )
    large = max_exact + np.where(rel < max_exact, 0, scaled).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(rel < max_exact, rel, large)


def t5_bias_matrix(
    bias_table: np.ndarray,
    n_positions: int,
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
) -> np.ndarray:
    """Per-head bias added to the logits (Raffel et al. 2020, §2.1)::

        B[h, i, j] = table[bucket(j − i), h]

    As ``T5Attention.compute_bias`` (query ``i``, key ``j``). ``bias_table`` is the learned
    ``relative_attention_bias.weight`` of block 0, ``(num_buckets, n_heads)``.

    Returns:
        ``(n_heads, n_positions, n_positions)`` float64.
    """
    table = np.asarray(bias_table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2:
        raise ValueError(
            f"bias table has shape {table.shape}; expected (num_buckets, n_heads) as T5's "
            "relative_attention_bias.weight."
        )
    if isinstance(n_positions, bool) or not 1 <= int(n_positions) <= 2048:
        raise ValueError(f"n_positions={n_positions} is out of range; choose 1 … 2048.")
    pos = np.arange(int(n_positions))
    buckets = t5_relative_bucket(
        pos[None, :] - pos[:, None],
        bidirectional=bidirectional,
        num_buckets=table.shape[0],
        max_distance=max_distance,
    )
    return np.moveaxis(table[buckets], -1, 0)


def t5_bucket_spans(
    max_position: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> list[tuple[int, int, int]]:
    """Which distances share a bucket: ``(bucket, first, last)`` over ``key − query`` in
    ``[−max_position, max_position]`` (causal: ``[−max_position, 0]``), sorted by ``first``.

    A bucket's width ``last − first + 1`` is how many distances T5 cannot tell apart there.

    Returns:
        ``[(bucket, first, last), …]``, one tuple per bucket used in the window.
    """
    low = -int(max_position)
    high = int(max_position) if bidirectional else 0
    rel = np.arange(low, high + 1)
    buckets = t5_relative_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    spans: dict[int, tuple[int, int]] = {}
    for r, b in zip(rel.tolist(), buckets.tolist(), strict=True):
        first, last = spans.get(b, (r, r))
        spans[b] = (min(first, r), max(last, r))
    return sorted(((b, f, la) for b, (f, la) in spans.items()), key=lambda s: s[1])
