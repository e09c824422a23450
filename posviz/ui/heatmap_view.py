"""The heatmap view of any position table: the whole table 1:1 up to 1024×1024, bigger ones as a
reduced overview with zoom, a cell inspector, and a contrast copy when outliers set the colours.

Widgets are URL-synced under ``key_prefix`` (``"sin_"`` → ``?sin_hm_zoom=true``). ``cache_key``
(a string naming the matrix, e.g. ``"sin:128:512:10000:interleaved"``) caches rendered images by
it; arrays themselves are never hashed.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from posviz import figures
from posviz.analysis.headlines import outliers
from posviz.analysis.table_numbers import ValueSpread, value_spread
from posviz.charts.figure import Figure
from posviz.charts.heatmap import color_limit, heatmap_chart, lod_factors
from posviz.page_models import table_views as words
from posviz.page_models.table_views import HEATMAP_PROSE
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart, user_errors
from posviz.ui.state import url_checkbox, url_numbers, url_radio

Window = tuple[int, int, int, int]  # first row, stop row, first column, stop column


@cached_data()
def _cached_color_limit(cache_key: str, _matrix: np.ndarray) -> float:
    return color_limit(_matrix)


@cached_data()
def _cached_heatmap(
    cache_key: str, window: Window, reduce: str, labels: tuple[str, str, str], _matrix: np.ndarray
):
    x_title, y_title, value_title = labels
    return heatmap_chart(
        _matrix,
        window=window,
        reduce=reduce,
        vmax=_cached_color_limit(cache_key, _matrix),
        x_title=x_title,
        y_title=y_title,
        value_title=value_title,
    )


def _window_controls(n: int, d: int, key_prefix: str) -> Window | None:
    """Zoom controls: start row/col and window size, each ≤ 1024 so the window draws 1:1."""
    zoom = url_checkbox(
        "Zoom to a window",
        key=f"{key_prefix}hm_zoom",
        default=False,
        toggle=True,
        help=words.ZOOM_HELP,
    )
    if not zoom:
        return None
    fields = words.zoom_fields(n, d)
    r0, rows, c0, cols = (int(value) for value in url_numbers(fields, key_prefix=key_prefix))
    r0, c0 = min(r0, n - 1), min(c0, d - 1)
    return r0, min(n, r0 + rows), c0, min(d, c0 + cols)


def heatmap_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    cache_key: str,
    title: str = "Heatmap",
    name: str = "table",
    x_title: str = "dimension",
    y_title: str = "position",
    value_title: str = "value",
    prose: str | None = None,
) -> None:
    """The whole table as an image, 1:1 up to 1024×1024; bigger tables as an overview + zoom."""
    n, d = np.shape(matrix)
    st.subheader(title)
    fy, fx = lod_factors((n, d))
    st.markdown(prose or HEATMAP_PROSE)
    reduce = "mean"
    if (fy, fx) != (1, 1):
        st.info(words.overview_note(n, d, fy, fx), icon="🔎")
        reduce = url_radio(
            "Overview reduction",
            ["mean", "absmax"],
            key=f"{key_prefix}hm_reduce",
            default="mean",
            help=words.REDUCTION_HELP,
        )
    window = _window_controls(n, d, key_prefix) or (0, n, 0, d)
    labels = (x_title, y_title, value_title)
    with user_errors("Heatmap"):
        chart = _cached_heatmap(cache_key, window, reduce, labels, matrix)
        show_chart(Figure(chart, np.asarray(matrix), name), key=f"{key_prefix}heatmap_chart")
    _cell_inspector(matrix, key_prefix=key_prefix, x_title=x_title, y_title=y_title)


def _cell_inspector(matrix: np.ndarray, *, key_prefix: str, x_title: str, y_title: str) -> None:
    n, d = np.shape(matrix)
    with st.expander("Cell inspector: exact value of one cell"):
        cols = st.columns(3)
        with cols[0]:
            p = st.number_input(y_title.capitalize(), 0, n - 1, 0, key=f"{key_prefix}cell_p")
        with cols[1]:
            j = st.number_input(x_title.capitalize(), 0, d - 1, 0, key=f"{key_prefix}cell_j")
        with cols[2]:
            st.metric(f"value at ({p}, {j})", f"{float(np.asarray(matrix)[p, j]):.8g}")


@cached_data()
def _cached_spread(cache_key: str, _matrix: np.ndarray) -> ValueSpread:
    return value_spread(_matrix)


@cached_data()
def _cached_contrast(cache_key: str, name: str, _matrix: np.ndarray) -> tuple[Figure, str]:
    """The contrast heatmap and its caption (:func:`posviz.figures.contrast_figure`)."""
    spread = _cached_spread(cache_key, _matrix)
    return (
        figures.contrast_figure(_matrix, spread, name=name),
        figures.contrast_note(spread, outliers(_matrix)),
    )


def contrast_heatmap(matrix: np.ndarray, cache_key: str, *, key_prefix: str, name: str) -> bool:
    """The table with colours saturating at the 99th percentile of |value|, drawn first when a
    few outliers flatten the faithful scale; returns whether it was drawn.

    MiniLM: two cells of ±1.87 at position 0 against 99% of values within ±0.065, so on the
    faithful scale almost every cell is white. The caption says so, with the numbers.
    """
    spread = _cached_spread(cache_key, matrix)
    if not spread.dominated_by_outliers:
        return False
    top, p99 = spread.top, spread.p99
    st.subheader("Heatmap")
    show = url_checkbox(
        f"Contrast view: saturate colours at ±{p99:.3g} (99% of |values|)",
        key=f"{key_prefix}hm_contrast",
        default=True,
        toggle=True,
        help=f"max |value| is {top:.3g}, {spread.ratio:.0f}× the 99th percentile. Cells beyond "
        "the limit take the end colour; hover still shows the true values.",
    )
    if show:
        figure, note = _cached_contrast(cache_key, name, matrix)
        st.caption(note)
        show_chart(figure, key=f"{key_prefix}contrast_chart")
    return True
