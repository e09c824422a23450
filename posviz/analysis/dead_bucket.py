"""What a real T5-style bucket table learned: the bucket no distance reaches, the self bucket,
and the heads that look one token back or ahead.

Bidirectional T5 bucketing (Raffel et al. 2020, §2.1; see
:func:`posviz.encodings.t5.t5_relative_bucket`) splits ``B`` buckets into two halves:
``key ≤ query`` uses ``0 … B/2 − 1``, with bucket ``r`` for distance ``r < B/4``; ``key > query``
adds ``B/2``. Distance 0 (a token and itself) always takes the first half, so bucket ``B/2`` —
"key after query, distance 0" — is never produced: ``key > query`` means distance ≥ 1, which is
bucket ``B/2 + 1`` or above. Any bidirectional T5-style encoder therefore trains a bucket that no
pair of tokens ever looks up: the loss never sends it a gradient, so only its initialisation
and weight decay set its weights. MPNet (Song et al. 2020, "MPNet: Masked and Permuted
Pre-training for Language Understanding", https://arxiv.org/abs/2004.09297) uses the same
bucketing (32 buckets, max distance 128) in all-mpnet-base-v2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.encodings.t5 import t5_relative_bucket

#: the relative positions searched for buckets in use (far beyond max_distance)
SPAN = 5000


def unused_buckets(
    *, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True, span: int = SPAN
) -> tuple[int, ...]:
    """Buckets that no relative position in ``−span … span`` maps to."""
    rel = np.arange(-span, span + 1)
    used = np.unique(
        t5_relative_bucket(
            rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
    )
    return tuple(int(b) for b in np.setdiff1d(np.arange(num_buckets), used))


@dataclass(frozen=True)
class BucketFindings:
    dead: tuple[int, ...]  # buckets never looked up
    dead_max_abs: float  # the largest |weight| in the dead buckets
    live_median_abs: float  # median |weight| of every other bucket
    self_bias: np.ndarray  # (heads,) the bias of distance 0 (a token attending to itself)
    previous: np.ndarray  # (heads,) the bias at key − query = −1
    next: np.ndarray  # (heads,) the bias at key − query = +1
    previous_heads: tuple[int, ...]  # heads whose largest bias is at −1
    next_heads: tuple[int, ...]  # heads whose largest bias is at +1


def bucket_findings(
    table: np.ndarray, *, max_distance: int = 128, bidirectional: bool = True
) -> BucketFindings:
    """The dead bucket(s), self bucket and one-step heads of a ``(buckets, heads)`` bias table."""
    bias = np.asarray(table, dtype=np.float64)
    if bias.ndim != 2 or bias.shape[0] < 4:
        raise ValueError(f"expected a (buckets, heads) table, got shape {bias.shape}.")
    num = bias.shape[0]
    opts = {"num_buckets": num, "max_distance": max_distance, "bidirectional": bidirectional}
    dead = unused_buckets(**opts)
    live = np.setdiff1d(np.arange(num), dead)
    own, back, ahead = (int(b) for b in t5_relative_bucket(np.array([0, -1, 1]), **opts))
    top = np.argmax(bias, axis=0)
    return BucketFindings(
        dead=dead,
        dead_max_abs=float(np.abs(bias[list(dead)]).max()) if dead else 0.0,
        live_median_abs=float(np.median(np.abs(bias[live]))),
        self_bias=bias[own],
        previous=bias[back],
        next=bias[ahead],
        previous_heads=tuple(int(h) for h in np.flatnonzero(top == back)),
        next_heads=tuple(int(h) for h in np.flatnonzero(top == ahead)),
    )
