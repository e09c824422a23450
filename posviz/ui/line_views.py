"""Line and bar views of any position table: chosen dimensions over positions, the variance of
every dimension, and similarity against offset.

Widgets are URL-synced under ``key_prefix``; each view draws its subheader and a short
explanation (``prose`` replaces it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from posviz.analysis.table_numbers import (
    active_dimensions,
    leading_shift_similarity,
    shift_rows,
    threshold_exponent,
)
from posviz.charts.figure import Figure
from posviz.charts.lines import (
    MAX_LINES,
    dimensions_figure,
    shift_band_chart,
    variance_bars_chart,
)
from posviz.page_models.table_views import (
    DIMENSIONS_PROSE,
    MAX_SHIFT_SHOWN,
    SHIFT_PROSE,
    VARIANCE_PROSE,
)
from posviz.ui.display import show_chart, user_errors
from posviz.ui.state import url_field, url_int_list, url_radio, url_slider
from posviz.urlparams import NumberField


def dimensions_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    default_dims: Sequence[int] = (0, 1),
    dim_label: Callable[[int], str] | None = None,
    current: int | None = None,
    name: str = "table",
    prose: str | None = None,
) -> None:
    """Chosen dimensions (columns) as lines over positions."""
    _n, d = np.shape(matrix)
    st.subheader("Dimensions over positions")
    st.markdown(prose or DIMENSIONS_PROSE)
    default = [j for j in default_dims if 0 <= j < d] or [0]
    dims = url_int_list(
        f"Dimensions to plot (0 … {d - 1}, comma-separated, up to {MAX_LINES})",
        key=f"{key_prefix}dims",
        default=default,
        min_value=0,
        max_value=d - 1,
        max_items=MAX_LINES,
    )
    if not dims:
        st.info("Enter at least one dimension to plot.")
        return
    labels = [dim_label(j) if dim_label else f"dim {j}" for j in dims]
    with user_errors("Dimensions"):
        # the export's columns are named by their real index: dim 0, dim 64, …
        figure = dimensions_figure(
            matrix, dims, labels=labels, current=current, name=f"{name}-dims"
        )
        show_chart(figure, key=f"{key_prefix}dims_chart")


def variance_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    default_threshold: float = 1e-3,
    name: str = "table",
    prose: str | None = None,
) -> int:
    """Variance of every dimension across positions, with a threshold that counts active ones.

    Returns the number of active dimensions (so a page can quote it); 0 after an error.
    """
    st.subheader("Which dimensions carry position?")
    st.markdown(prose or VARIANCE_PROSE)
    exponent = url_slider(
        "Threshold (log₁₀ of variance)",
        key=f"{key_prefix}thr",
        min_value=-8.0,
        max_value=0.0,
        default=threshold_exponent(default_threshold),
        step=0.25,
        help="A dimension is 'active' if its variance across positions exceeds 10^this.",
    )
    with user_errors("Variance"):
        result = active_dimensions(matrix, log10_threshold=exponent)
        st.metric(
            "Active dimensions",
            f"{result.active} of {result.variance.size}",
            help=f"variance > {result.threshold:.3g}",
        )
        chart = variance_bars_chart(result.variance, threshold=result.threshold)
        show_chart(Figure(chart, result.column, f"{name}-variance"), key=f"{key_prefix}var_chart")
        return result.active
    return 0


def shift_similarity_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    default_metric: str = "cosine",
    name: str = "table",
    prose: str | None = None,
) -> None:
    """Similarity of ``M[p]`` and ``M[p+k]`` against ``k``, with its spread over all ``p``."""
    n, d = np.shape(matrix)
    st.subheader("Does similarity depend only on distance?")
    st.markdown(prose or SHIFT_PROSE)
    if n < 2:
        st.info("Needs at least 2 positions.")
        return
    left, right = st.columns(2)
    with left:
        limit = min(n - 1, MAX_SHIFT_SHOWN)
        largest = NumberField("Largest offset k", "kmax", 1, max(limit, 2), min(limit, 128))
        max_shift = url_field(largest, key_prefix=key_prefix, slider=True)
    with right:
        metric = url_radio(
            "Measure", ["cosine", "dot"], key=f"{key_prefix}metric", default=default_metric
        )
    k = min(int(max_shift), n - 1)
    rows = shift_rows((n, d), k)  # bounds the work on big tables
    if rows < n:
        st.caption(f"Computed over positions 0 … {rows - 1} of {n} to keep the page fast.")
    with user_errors("Shift similarity"):
        r = leading_shift_similarity(matrix, k, rows=rows, metric=metric)
        chart = shift_band_chart(
            r.shifts, r.mean, r.min, r.max, std=r.std, count=r.count, metric=metric
        )
        show_chart(Figure(chart, None, f"{name}-shift"), key=f"{key_prefix}shift_chart")
