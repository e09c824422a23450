"""The numbers behind the table views (heatmap contrast, variance, offsets, similarity, PCA, norms).

``posviz.ui`` draws these views of any position table ``(n_positions, d_model)``; everything they
compute is here, as small typed results, so the UI only lays them out.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from posviz.analysis.stats import (
    PCAResult,
    ShiftSimilarity,
    cosine_similarity_matrix,
    dimension_variance,
    pca,
    position_norms,
    shift_similarity,
)

#: a colour scale is "dominated by outliers" when max |value| exceeds this many 99th percentiles.
OUTLIER_RATIO = 4.0
#: multiply-adds one shift-similarity view may cost: bigger tables use their first rows only.
SHIFT_BUDGET = 200_000_000
#: PCA trajectories are fitted on at most this many evenly spaced positions (bounded SVD cost).
PCA_ROWS = 1024


class ValueSpread(NamedTuple):
    """How a table's magnitudes are spread: the scale a heatmap's colours need."""

    top: float  # max |value|
    p99: float  # 99th percentile of |value|
    beyond: float  # share of cells with |value| > p99

    @property
    def ratio(self) -> float:
        """``top / p99``: how many 99th percentiles the largest magnitude is."""
        return self.top / self.p99 if self.p99 > 0 else float("inf")

    @property
    def dominated_by_outliers(self) -> bool:
        """Whether a few cells set the colour scale (max |value| > OUTLIER_RATIO × p99)."""
        return self.p99 > 0 and self.top > OUTLIER_RATIO * self.p99


def value_spread(matrix: np.ndarray) -> ValueSpread:
    """Max, 99th percentile and the share beyond it of ``|matrix|`` (MiniLM: 1.87, 0.065)."""
    magnitude = np.abs(np.asarray(matrix, dtype=np.float32))
    p99 = float(np.quantile(magnitude, 0.99))
    return ValueSpread(float(magnitude.max()), p99, float((magnitude > p99).mean()))


def columns(matrix: np.ndarray, dims: list[int]) -> np.ndarray:
    """The chosen columns of ``matrix``, ``(n_positions, len(dims))`` (what a line chart draws)."""
    return np.asarray(matrix)[:, dims]


class ActiveDimensions(NamedTuple):
    """Variance of every dimension across positions and how many exceed ``threshold``."""

    variance: np.ndarray  # (d_model,)
    threshold: float
    active: int

    @property
    def column(self) -> np.ndarray:
        """``variance`` as one column ``(d_model, 1)``, the way it is exported."""
        return self.variance[:, None]


def threshold_exponent(value: float) -> float:
    """``log₁₀ value``: a threshold's position on the variance view's log slider."""
    return float(np.log10(value))


def active_dimensions(matrix: np.ndarray, *, log10_threshold: float) -> ActiveDimensions:
    """Dimensions whose variance across positions exceeds ``10 ** log10_threshold``."""
    threshold = float(10.0**log10_threshold)
    variance = dimension_variance(matrix)
    return ActiveDimensions(variance, threshold, int((variance > threshold).sum()))


def shift_rows(shape: tuple[int, int], max_shift: int, *, budget: int = SHIFT_BUDGET) -> int:
    """Rows of an ``(n, d)`` table that the shift view can compare up to ``max_shift`` within
    ``budget`` multiply-adds (all ``n`` when affordable, never fewer than ``max_shift + 1``)."""
    n, d = shape
    return min(n, max(max_shift + 1, budget // max(1, d * max_shift)))


def leading_shift_similarity(
    matrix: np.ndarray, max_shift: int, *, rows: int, metric: str
) -> ShiftSimilarity:
    """:func:`posviz.analysis.stats.shift_similarity` of the first ``rows`` positions."""
    return shift_similarity(np.asarray(matrix)[:rows], max_shift, metric=metric)


def similarity_window(matrix: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Cosine similarity of positions ``start … stop − 1`` with each other, float32 ``(m, m)``."""
    return cosine_similarity_matrix(np.asarray(matrix)[start:stop]).astype(np.float32)


def principal_pair(matrix: np.ndarray) -> PCAResult:
    """The first two principal components of the positions (a 2-D picture of the table).

    Raises:
        ValueError: fewer than 2 positions or 2 dimensions.
    """
    if min(np.shape(matrix)) < 2:
        raise ValueError("PCA needs at least 2 positions and 2 dimensions.")
    return pca(matrix, 2)


class Trajectory(NamedTuple):
    """PCA of evenly spaced positions ``0, step, 2·step, …`` (``positions``)."""

    pca: PCAResult
    positions: np.ndarray
    step: int


def pca_trajectory(
    matrix: np.ndarray, n_components: int, *, max_rows: int = PCA_ROWS
) -> Trajectory:
    """PCA of at most ``max_rows`` evenly spaced positions (the smallest step that fits)."""
    n = len(matrix)
    step = max(1, -(-n // max(1, max_rows)))  # ceil(n / max_rows)
    result = pca(np.asarray(matrix)[::step], n_components)
    return Trajectory(result, np.arange(0, n, step), step)


class NormSummary(NamedTuple):
    """``‖PE(p)‖`` for every position, with its range and mean."""

    norms: np.ndarray  # (n_positions,)
    low: float
    high: float
    mean: float


def norm_summary(matrix: np.ndarray) -> NormSummary:
    """Norm of every row of ``matrix`` (a sinusoid's is √(d/2) everywhere)."""
    norms = position_norms(matrix)
    return NormSummary(norms, float(norms.min()), float(norms.max()), float(norms.mean()))
