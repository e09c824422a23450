"""Notebook conveniences: a position table in, a chart out (statistic computed, then drawn).

``posviz.charts`` only draws arrays it is given and ``posviz.analysis`` only computes; these two
functions sit one layer above both so a notebook can write ``posviz.variance_chart(pe)``.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np

from posviz.analysis.stats import dimension_variance, shift_similarity
from posviz.charts.lines import shift_band_chart, variance_bars_chart


def variance_chart(matrix: np.ndarray, threshold: float = 1e-3, **style: Any) -> alt.LayerChart:
    """Per-dimension variance across positions of ``matrix`` ``(n_positions, d_model)``, as bars.

    ``threshold`` marks a dimension "active"; ``style`` (``title``, ``width``, ``height``,
    ``floor``) and its defaults are :func:`posviz.charts.lines.variance_bars_chart`'s.
    """
    return variance_bars_chart(dimension_variance(matrix), threshold=threshold, **style)


def shift_similarity_chart(
    matrix: np.ndarray,
    max_shift: int,
    *,
    metric: str = "cosine",
    title: str | None = None,
    width: int = 800,
    height: int = 260,
) -> alt.LayerChart:
    """Similarity of ``matrix[p]`` and ``matrix[p + k]``, k = 0 … max_shift: mean and range."""
    r = shift_similarity(matrix, max_shift, metric=metric)
    return shift_band_chart(
        r.shifts,
        r.mean,
        r.min,
        r.max,
        std=r.std,
        count=r.count,
        metric=metric,
        title=title,
        width=width,
        height=height,
    )
