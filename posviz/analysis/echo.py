"""An *echo* in a learned position table: similarity that falls with distance, then rises again.

A learned absolute table usually looks like a smooth curve: rows ``p`` and ``p + k`` grow less
alike as ``k`` grows. Whisper's text decoder (Radford et al. 2022, "Robust Speech Recognition via
Large-Scale Weak Supervision", https://arxiv.org/abs/2212.04356) is different: its mean cosine by
distance dips near ``k ≈ 114`` and comes back near ``k ≈ 225``. This module measures that with
two statistics that a table without an echo fails:

1. *prominence* — over distances ``k ≤ n/2 + 8`` (each averages at least ``n/2 − 8`` pairs, so
   the curve is not a handful of pairs at the far end; the 8 let a peak just past half show),
   the largest rise of the curve above its lowest value at any shorter distance,
   ``max_k (c[k] − min_{j<k} c[j])``. A curve that only falls scores 0; a row-shuffled table,
   whose curve is flat noise, scores near 0. MiniLM's tables rise too (their curves undulate),
   so a rise alone is no echo.
2. *alignment* — for each row ``p``, the shift ``s`` within ±60 of the peak's distance that
   makes row ``p + s`` most like row ``p``; the share of rows whose ``s`` lies within ±2 of the
   commonest shift. An echo is a shifted copy: nearly every row finds its match at one shift.
   An undulating table's matches spread out; a shuffled table's are scattered.

A table has an echo when both hold: prominence ≥ :data:`ECHO_MIN_PROMINENCE` and alignment ≥
:data:`ECHO_MIN_ALIGNMENT`. The window matters: MiniLM-L6's last rows (positions past ~250, rare
in its training) anti-correlate with its first ones, so over ``k`` up to ``9n/16`` its curve
dips to −0.38 and recovers with rows aligned at one shift; within the first half it does not.

The decoding hypothesis it is compared with (Whisper's ``decoding.py``: a previous-text prompt is
cut to its last ``n_text_ctx // 2 − 1 = 223`` tokens after a ``<|startofprev|>`` marker, so a
full prompt puts ``<|startoftranscript|>`` at position 224, where an empty one puts it at 0) is a
hypothesis: the weights can only show whether positions ``p`` and ``p + 224`` were trained alike,
and whether row 224 is special the way row 0 is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.analysis.stats import cosine_similarity_matrix

#: a rise of at least this much (in mean cosine) after a dip counts as an echo
ECHO_MIN_PROMINENCE = 0.2
#: at least this share of rows must find their best match at one shift (±2)
ECHO_MIN_ALIGNMENT = 0.5
ALIGN_WINDOW = 60
ALIGN_TOLERANCE = 2
#: Whisper's decoding: prompt tokens kept = n_text_ctx // 2 − 1 = 223, then one marker
WHISPER_PROMPT_SHIFT = 224


def cosine_by_distance(matrix: np.ndarray) -> np.ndarray:
    """Mean cosine similarity of rows ``p`` and ``p + k`` over all ``p``, for ``k = 1 … n − 1``.

    Returns:
        ``(n − 1,)`` float64; entry ``k − 1`` is the mean over the ``n − k`` pairs at distance k.
    """
    sim = cosine_similarity_matrix(np.asarray(matrix, dtype=np.float64))
    n = len(sim)
    if n < 4:
        raise ValueError(f"an echo needs at least 4 positions; this table has {n}.")
    return np.array([np.mean(np.diagonal(sim, k)) for k in range(1, n)])


@dataclass(frozen=True)
class Echo:
    """Where the curve dips and where it comes back (distances ``k``, 1-based)."""

    curve: np.ndarray  # cosine_by_distance, (n − 1,)
    limit: int  # the largest distance looked at (n // 2 + 8)
    dip_at: int
    dip: float
    peak_at: int
    peak: float
    shift: int  # the commonest best-match shift near the peak
    alignment: float  # share of rows whose best match lies within ±2 of ``shift``

    @property
    def prominence(self) -> float:
        return self.peak - self.dip

    @property
    def is_echo(self) -> bool:
        return self.prominence >= ECHO_MIN_PROMINENCE and self.alignment >= ECHO_MIN_ALIGNMENT


def find_echo(matrix: np.ndarray) -> Echo:
    """The largest rise of the by-distance curve above an earlier minimum (``k ≤ n/2 + 8``)."""
    curve = cosine_by_distance(matrix)
    limit = max((len(curve) + 1) // 2 + 8, 1)
    part = curve[:limit]
    running_min = np.minimum.accumulate(part)
    rise = part - running_min
    peak_index = int(np.argmax(rise))
    dip_index = int(np.argmin(part[: peak_index + 1]))
    n = len(curve) + 1
    low = max(1, peak_index + 1 - ALIGN_WINDOW)
    high = min(peak_index + 1 + ALIGN_WINDOW, n - 2)
    match = best_shifts(matrix, low=low, high=high) if low <= high else None
    shift = match.mode if match is not None else peak_index + 1
    return Echo(
        curve=curve,
        limit=limit,
        dip_at=dip_index + 1,
        dip=float(part[dip_index]),
        peak_at=peak_index + 1,
        peak=float(part[peak_index]),
        shift=shift,
        alignment=match.share_within(shift, ALIGN_TOLERANCE) if match is not None else 0.0,
    )


def shuffled_rows(matrix: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """The same rows in a random order: every row's content kept, their order destroyed."""
    rng = np.random.default_rng(seed)
    return np.asarray(matrix)[rng.permutation(len(matrix))]


@dataclass(frozen=True)
class RowNorms:
    norms: np.ndarray
    median: float
    top_rows: tuple[int, ...]  # largest norms first

    def ratio(self, row: int) -> float:
        return float(self.norms[row] / self.median)


def row_norms(matrix: np.ndarray, *, top: int = 3) -> RowNorms:
    """Row norms, their median, and the rows with the largest norms."""
    norms = np.linalg.norm(np.asarray(matrix, dtype=np.float64), axis=1)
    order = np.argsort(-norms, kind="stable")[:top]
    return RowNorms(norms, float(np.median(norms)), tuple(int(i) for i in order))


@dataclass(frozen=True)
class ShiftMatch:
    """For each row ``p`` of the first part, the shift ``q − p`` of its most similar later row."""

    shifts: np.ndarray  # (rows,)
    window: tuple[int, int]  # the shifts searched, inclusive

    def share_within(self, shift: int, tolerance: int) -> float:
        """Share of rows whose best shift lies within ``tolerance`` of ``shift``."""
        return float(np.mean(np.abs(self.shifts - shift) <= tolerance))

    @property
    def mode(self) -> int:
        values, counts = np.unique(self.shifts, return_counts=True)
        return int(values[np.argmax(counts)])


def best_shifts(matrix: np.ndarray, *, low: int, high: int) -> ShiftMatch:
    """For every ``p`` with ``p + high < n``: the ``s`` in ``[low, high]`` maximising
    ``cos(row p, row p + s)`` — where a later copy of row ``p``'s direction lies, if anywhere."""
    sim = cosine_similarity_matrix(np.asarray(matrix, dtype=np.float64))
    n = len(sim)
    if not 1 <= low <= high < n - 1:
        raise ValueError(f"shift window {low} … {high} does not fit a table of {n} rows.")
    rows = np.arange(n - high)
    window = np.arange(low, high + 1)
    scores = sim[rows[:, None], rows[:, None] + window[None, :]]
    return ShiftMatch(window[np.argmax(scores, axis=1)], (low, high))


def most_similar_beyond(matrix: np.ndarray, row: int, *, min_distance: int) -> int:
    """The row at least ``min_distance`` after ``row`` whose direction is closest to ``row``'s."""
    sim = cosine_similarity_matrix(np.asarray(matrix, dtype=np.float64))
    start = row + min_distance
    if row >= 0 and start < len(sim):
        return int(start + np.argmax(sim[row, start:]))
    raise ValueError(f"no rows lie {min_distance} or more after row {row}.")
