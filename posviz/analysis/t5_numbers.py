"""What the T5 page shows, computed: bucket curves, which distances share a bucket, a head's bias.

T5 (Raffel et al. 2020, §2.1) looks up a learned scalar per head by the bucket of ``key − query``::

    B[h, i, j] = table[bucket(j − i), h]        table: (num_buckets, n_heads)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.encodings.t5 import t5_bias_matrix, t5_bucket_spans, t5_relative_bucket

VARIANTS = {"bidirectional (encoder)": True, "causal (decoder)": False}
MAX_SPAN = 2048
#: where a T5 checkpoint keeps each stack's learned bias (block 0 holds it; later blocks reuse it).
T5_BIAS_KEYS = {
    "encoder": "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
    "decoder": "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
}


def check_bucket_settings(*, num_buckets: int, max_distance: int) -> None:
    """Raise the bucket function's ``ValueError`` unless both variants accept the settings.

    The page draws the bidirectional (encoder) and the causal (decoder) buckets side by side, so a
    setting must suit both (bidirectional needs ``num_buckets ≥ 4``).
    """
    for bidirectional in VARIANTS.values():
        t5_relative_bucket(
            np.arange(1),
            bidirectional=bidirectional,
            num_buckets=num_buckets,
            max_distance=max_distance,
        )


def default_span(max_distance: int) -> int:
    """Window ``±span`` that shows saturation: ``2·max_distance`` (≥ 64), at most 2048."""
    return min(max(2 * max_distance, 64), MAX_SPAN)


def bucket_curves(
    span: int, *, num_buckets: int, max_distance: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Bucket of every relative position in ``[−span, span]``, bidirectional and causal.

    Returns:
        ``(relative (2·span + 1,), variant → buckets (2·span + 1,) int64)``.
    """
    relative = np.arange(-int(span), int(span) + 1)
    curves = {
        name: t5_relative_bucket(
            relative,
            bidirectional=bidirectional,
            num_buckets=num_buckets,
            max_distance=max_distance,
        )
        for name, bidirectional in VARIANTS.items()
    }
    return relative, curves


def span_table(
    span: int, *, bidirectional: bool, num_buckets: int, max_distance: int
) -> pd.DataFrame:
    """Which distances share a bucket (:func:`t5_bucket_spans`), with each bucket's width."""
    spans = t5_bucket_spans(
        span, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    frame = pd.DataFrame(spans, columns=["bucket", "from (key − query)", "to"])
    frame["width"] = frame["to"] - frame["from (key − query)"] + 1
    return frame


def check_bias_table(table: np.ndarray, *, num_buckets: int, source: str) -> np.ndarray:
    """The learned ``relative_attention_bias`` as ``(num_buckets, n_heads)`` float64, or a
    ``ValueError`` naming the shape found and the one expected."""
    array = np.asarray(table, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] != num_buckets:
        raise ValueError(
            f"{source}'s relative_attention_bias has shape {array.shape}; expected "
            f"({num_buckets}, n_heads)."
        )
    return array


def head_bias(
    table: np.ndarray, n_positions: int, head: int, *, bidirectional: bool, max_distance: int
) -> np.ndarray:
    """One head's bias matrix ``B[i, j] = table[bucket(j − i), head]``.

    Returns:
        ``(n_positions, n_positions)`` float64.
    """
    if not 0 <= head < np.asarray(table).shape[1]:
        raise ValueError(f"head {head} out of range; the table has heads 0 … {table.shape[1] - 1}.")
    return t5_bias_matrix(
        table, n_positions, bidirectional=bidirectional, max_distance=max_distance
    )[head]
