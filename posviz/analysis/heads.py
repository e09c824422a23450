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

Separately from these classes, a head is **positional** (:func:`positional_heads`) when its
attention-by-distance pattern does not depend on the words: on every text window *and* on every
shuffled copy of them it puts at least :data:`POSITIONAL_PEAK` of its attention at one and the
same distance ``Δ*`` (the sink's key 0 left out, :func:`attention_by_distance`'s ``skip_keys``).
This is the "positional head" label users ask for (attention pattern independent of content
across prompts); an untrained model's near-uniform heads fail it (their largest share at one
distance is about ``1/T``), and so does a head whose pattern moves with the text.

Query 0 is left out of every score: in a causal model it can only attend to itself (its row is
the one-hot ``A[0, 0] = 1``), which says nothing about the head. A head that passes several
thresholds gets the class whose score is largest relative to its threshold.
"""

from __future__ import annotations

import warnings

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
#: A positional head puts at least this much of its attention at one distance on every prompt.
POSITIONAL_PEAK = 0.3


def _check_maps(maps: np.ndarray) -> np.ndarray:
    a = np.asarray(maps, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2:
        raise ValueError(f"Attention maps must be (..., T, T) with T ≥ 2; got {a.shape}.")
    return a


def attention_by_distance(
    maps: np.ndarray, *, causal: bool, skip_keys: tuple[int, ...] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Mean attention at each relative distance ``Δ = query − key``.

    Args:
        maps: ``(..., T, T)`` attention maps (rows = queries).
        causal: only ``Δ ≥ 0`` exists (the rest is masked to 0).
        skip_keys: key positions left out (``0``: the sink; ``T−1``: BERT's ``[SEP]``): the mean
            at ``Δ`` is then over the queries whose key ``i − Δ`` is not one of them, and a
            distance with no such query is NaN (causal ``Δ = T−1`` is ``A[T−1, 0]`` alone).
    Returns:
        ``(distances, mass)``: ``distances`` ``(D,)`` (``0 … T−1`` causal, ``−(T−1) … T−1``
        otherwise); ``mass`` ``(..., D)``, the mean of ``A[i, i−Δ]`` over the valid queries.
    """
    a = _check_maps(maps)
    t = a.shape[-1]
    if skip_keys:
        a = a.copy()
        a[..., [k % t for k in skip_keys]] = np.nan
    distances = np.arange(0 if causal else -(t - 1), t)
    mean = np.nanmean if skip_keys else np.mean
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN diagonal's mean is NaN
        mass = np.stack([mean(np.diagonal(a, offset=-int(d), axis1=-2, axis2=-1), axis=-1)
                         for d in distances], axis=-1)  # fmt: skip
    return distances, mass


def positional_heads(
    text: np.ndarray, other: np.ndarray, *, peak: float = POSITIONAL_PEAK
) -> tuple[np.ndarray, np.ndarray]:
    """Which heads are positional (module docstring): the same distance pattern on every prompt.

    Args:
        text: ``(..., prompts, D)`` attention by distance on each text window (sink left out).
        other: ``(..., prompts', D)`` the same heads on other prompts (the shuffled windows).
        peak: the least share at the head's distance ``Δ*`` on every prompt.
    Returns:
        ``(positional, peak_index)``: booleans ``(...)``, and ``Δ*``'s index into the distances
        (the argmax of the mean text profile), ``(...)``.
    """
    t = np.nan_to_num(np.asarray(text, dtype=np.float64), nan=0.0)
    o = np.nan_to_num(np.asarray(other, dtype=np.float64), nan=0.0)
    if t.shape[-1] != o.shape[-1] or t.shape[:-2] != o.shape[:-2]:
        raise ValueError(f"Profiles must match in heads and distances; got {t.shape}, {o.shape}.")
    index = t.mean(axis=-2).argmax(axis=-1)
    both = np.concatenate([t, o], axis=-2)
    at_peak = np.take_along_axis(both, index[..., None, None], axis=-1)[..., 0]
    return at_peak.min(axis=-1) >= peak, index


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
