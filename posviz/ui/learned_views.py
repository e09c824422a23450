"""The Learned-tables page's views of a :class:`~posviz.tables.PositionTable`: the shared table
views (heatmap, circle, lines) plus its own similarity, PCA and norm views, picked by id.

``show_view(table, view, options, key_prefix=…)`` draws one; ``view_controls`` draws the widgets
both sides of a comparison share (PCA axes, viewing angle).
"""

from __future__ import annotations

import streamlit as st

from posviz import figures
from posviz.analysis.stats import relative_threshold
from posviz.analysis.table_numbers import Trajectory, pca_trajectory
from posviz.charts.figure import Figure
from posviz.charts.heatmap import MAX_SIDE_1TO1
from posviz.page_models import table_views as words
from posviz.page_models.table_views import FULL_WIDTH_VIEWS, TABLE_VIEWS
from posviz.tables import PositionTable
from posviz.tables.picker import table_cache_key
from posviz.ui.cache import cached_data
from posviz.ui.circle_view import unit_circle_view
from posviz.ui.display import show_chart, user_errors
from posviz.ui.heatmap_view import contrast_heatmap, heatmap_view
from posviz.ui.line_views import dimensions_view, shift_similarity_view, variance_view
from posviz.ui.state import url_field, url_numbers
from posviz.urlparams import NumberField

__all__ = ["FULL_WIDTH_VIEWS", "TABLE_VIEWS", "show_view", "view_controls"]


def view_controls(view: str, *, key: str) -> dict[str, float]:
    """Widgets shared by both sides (PCA axes and viewing angle), URL-synced under ``key_…``.

    The shared table views draw their own widgets per side instead.
    """
    fields = words.pca_fields(view)
    if not fields:
        return {}
    return words.pca_options(view, url_numbers(fields, key_prefix=f"{key}_", slider=True))


def show_view(
    table: PositionTable,
    view: str,
    options: dict[str, float],
    *,
    key_prefix: str,
    position: int | None = None,
) -> None:
    """Draw one of :data:`TABLE_VIEWS` for ``table``; widgets are URL-synced under ``key_prefix``.

    ``options`` come from :func:`view_controls` (shared by both sides); ``key_prefix`` (e.g.
    ``"lrn_a_"``) must differ between two tables on one page. ``position``: the page's one
    position, which the position-indexed views show (clamped to this table); ``None`` gives them
    their own slider.
    """
    matrix, name = table.matrix, table.source
    if view == "heatmap":
        cache_key = table_cache_key(table)
        contrasted = False
        with user_errors("Contrast heatmap"):  # first, when outliers flatten the faithful scale
            contrasted = contrast_heatmap(matrix, cache_key, key_prefix=key_prefix, name=name)
        heatmap_view(
            matrix,
            key_prefix=key_prefix,
            cache_key=cache_key,
            title="On the faithful scale" if contrasted else "Heatmap",
            name=f"{name}_heatmap",
            value_title="PE[p, i]",
            prose=words.TABLE_HEATMAP_PROSE,
        )
    elif view == "pair":
        at = None if position is None else min(position, table.n_positions - 1)
        unit_circle_view(
            matrix, key_prefix=key_prefix, pairs_are_sin_cos=False, name=name, position=at
        )
    elif view == "dims":
        dimensions_view(matrix, key_prefix=key_prefix, name=name)
    elif view == "variance":
        threshold = relative_threshold(matrix)
        variance_view(matrix, key_prefix=key_prefix, default_threshold=threshold, name=name)
        st.caption(words.variance_caption(threshold))
    elif view == "shift":
        shift_similarity_view(matrix, key_prefix=key_prefix, name=name)
    else:
        draw = {
            "similarity": _similarity_view,
            "pca2": _pca_view,
            "pca3": _pca_view,
            "norms": _norms_view,
        }[view]
        with user_errors():
            draw(table, view, options, key_prefix=key_prefix, name=name)


@cached_data()
def _similarity_figure(cache_key: str, start: int, stop: int, name: str, _matrix) -> Figure:
    """:func:`posviz.figures.similarity_window_figure`, cached by the table's identity."""
    return figures.similarity_window_figure(_matrix, start, stop, name=name)


def _similarity_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    n = table.n_positions
    st.subheader("Which positions look alike?")
    st.markdown(words.SIMILARITY_PROSE)
    start = 0
    if n > MAX_SIDE_1TO1:
        st.info(words.similarity_window_note(n), icon="🔎")
        first = NumberField("First position", "sim_p0", 0, n - MAX_SIDE_1TO1, 0, MAX_SIDE_1TO1 // 4)
        start = url_field(first, key_prefix=key_prefix)
        start = min(int(start), n - MAX_SIDE_1TO1)
    stop = min(n, start + MAX_SIDE_1TO1)
    figure = _similarity_figure(table_cache_key(table), start, stop, name, table.matrix)
    show_chart(figure, key=f"{key_prefix}sim_chart")


@cached_data()
def _cached_trajectory(cache_key: str, n_components: int, _matrix) -> Trajectory:
    return pca_trajectory(_matrix, n_components)


def _pca_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    st.subheader(TABLE_VIEWS[view])
    wanted = 3 if view == "pca3" else 1 + max(int(options["x"]), int(options["y"]))
    trajectory = _cached_trajectory(table_cache_key(table), wanted, table.matrix)
    figure, note = figures.pca_view_figure(trajectory, view, options, name=name)
    show_chart(figure, key=f"{key_prefix}{view}_chart")
    st.caption(note)


def _norms_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    st.subheader("Norm per position")
    figure, note = figures.norms_figure(table.matrix, name=name)
    show_chart(figure, key=f"{key_prefix}norms_chart")
    st.caption(note)
