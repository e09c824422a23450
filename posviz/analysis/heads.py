"""Attention by relative distance and head classes, from attention maps (numpy only).

An attention map ``A[i, j]`` is how much query token ``i`` attends to key token ``j`` (rows sum
to 1). Its mass at relative distance ``Δ = i − j`` averaged over the queries that have a key at
that distance is the head's **attention by distance**; a head is classed by where its mass sits:

* **previous-token**: mean ``A[i, i−1]`` over queries ``i ≥ 1`` above :data:`THRESHOLDS`
  (the "previous-token heads" of induction circuits, Olsson et al. 2022);
* **first-token (sink)**: mean ``A[i, 0]`` over queries ``i ≥ 1`` above its threshold (the
  "attention sink", Xiao et al. 2024, "Efficient Streaming Language Models with Attention Sinks");
* **self**: mean ``A[i, i]`` over ``i ≥ 1``;
* **next-token** (bidirectional models only): mean ``A[i, i+1]`` over ``i ≤ T−2``;
* **last-token** (bidirectional models only): mean ``A[i, T−1]`` over ``i ≤ T−2`` (BERT's
  ``[SEP]``, where Clark et al. 2019, "What Does BERT Look At?", found much of its attention);
* **broad**: none of these.

Query 0 is left out of every score: in a causal model it can only attend to itself (its row is
the one-hot ``A[0, 0] = 1``), which says nothing about the head. A head that passes several
thresholds gets the class whose score is largest relative to its threshold.
"""

from __future__ import annotations

import numpy as np

#: The score above which a head is put in each class (the mean attention on that key).
THRESHOLDS: dict[str, float] = {
    "previous-token": 0.4,
    "first-token (sink)": 0.5,
    "self": 0.4,
    "next-token": 0.4,
    "last-token": 0.5,
}
#: Classes a causal model cannot have (its queries never see a later token).
BIDIRECTIONAL_ONLY = ("next-token", "last-token")
CLASSES = (*THRESHOLDS, "broad")


def _check_maps(maps: np.ndarray) -> np.ndarray:
    a = np.asarray(maps, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2:
        raise ValueError(f"Attention maps must be (..., T, T) with T ≥ 2; got {a.shape}.")
    return a


def attention_by_distance(maps: np.ndarray, *, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Mean attention at each relative distance ``Δ = query − key``.

    Args:
        maps: ``(..., T, T)`` attention maps (rows = queries).
        causal: only ``Δ ≥ 0`` exists (the rest is masked to 0).
    Returns:
        ``(distances, mass)``: ``distances`` ``(D,)`` (``0 … T−1`` causal, ``−(T−1) … T−1``
        otherwise); ``mass`` ``(..., D)``, the mean of ``A[i, i−Δ]`` over the valid queries.
    """
    a = _check_maps(maps)
    t = a.shape[-1]
    distances = np.arange(0 if causal else -(t - 1), t)
    mass = np.stack([np.diagonal(a, offset=-int(d), axis1=-2, axis2=-1).mean(axis=-1)
                     for d in distances], axis=-1)  # fmt: skip
    return distances, mass


def head_scores(maps: np.ndarray) -> dict[str, np.ndarray]:
    """Each class's score per head: ``{class: (...,)}`` (see the module docstring)."""
    a = _check_maps(maps)
    rows = a[..., 1:, :]  # queries i ≥ 1
    t = a.shape[-1]
    i = np.arange(1, t)
    return {
        "previous-token": rows[..., np.arange(t - 1), i - 1].mean(axis=-1),
        "first-token (sink)": rows[..., 0].mean(axis=-1),
        "self": rows[..., np.arange(t - 1), i].mean(axis=-1),
        "next-token": np.diagonal(a, offset=1, axis1=-2, axis2=-1).mean(axis=-1),
        "last-token": a[..., : t - 1, t - 1].mean(axis=-1),
    }


def classify_heads(
    maps: np.ndarray, *, causal: bool, thresholds: dict[str, float] | None = None
) -> np.ndarray:
    """The class of each head (strings from :data:`CLASSES`), shape ``maps.shape[:-2]``.

    ``causal``: the next- and last-token classes are left out (a causal head cannot look ahead).
    """
    return classify_scores(head_scores(maps), causal=causal, thresholds=thresholds)


def classify_scores(
    scores: dict[str, np.ndarray], *, causal: bool, thresholds: dict[str, float] | None = None
) -> np.ndarray:
    """:func:`classify_heads` from :func:`head_scores`' output (any array shape)."""
    thresholds = dict(THRESHOLDS if thresholds is None else thresholds)
    for name in BIDIRECTIONAL_ONLY if causal else ():
        thresholds.pop(name, None)
    names = list(thresholds)
    ratio = np.stack([np.asarray(scores[n]) / thresholds[n] for n in names], axis=-1)
    labels = np.asarray(names, dtype=object)[ratio.argmax(axis=-1)]
    return np.where(ratio.max(axis=-1) > 1.0, labels, "broad").astype(str)


def class_counts(labels: np.ndarray) -> dict[str, int]:
    """How many heads fall in each class (every class listed, zeros included)."""
    flat = np.asarray(labels).ravel().tolist()
    return {name: flat.count(name) for name in CLASSES}


def threshold_counts(maps: np.ndarray, *, causal: bool) -> dict[str, int]:
    """Heads whose score passes each threshold (not exclusive: a head may count twice), as the
    issue's "7 heads put > 0.4 on the previous token, 168 put > 0.5 on the first token"."""
    scores = head_scores(maps)
    return {
        name: int((scores[name] > limit).sum())
        for name, limit in THRESHOLDS.items()
        if not (causal and name in BIDIRECTIONAL_ONLY)
    }
