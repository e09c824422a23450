"""The circle view of any position table: two columns against each other, one point per position,
the chosen position drawn as a clock hand.

A sinusoid's sin/cos pairs put every position on the unit circle; for any other table the reader
picks two dimensions, or the first two principal components of the positions.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from posviz import figures
from posviz.charts.circle import MAX_HANDS
from posviz.charts.figure import Figure
from posviz.page_models.table_views import COORDINATES, FREE_PAIR_PROSE, SIN_COS_PROSE, pair_fields
from posviz.ui.display import show_chart, user_errors
from posviz.ui.state import url_field, url_int_list, url_numbers, url_radio, url_slider
from posviz.urlparams import NumberField


def unit_circle_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    pairs_are_sin_cos: bool,
    sin_cos_columns: figures.SinCosColumns | None = None,
    wavelengths: np.ndarray | None = None,
    name: str = "table",
    prose: str | None = None,
    position: int | None = None,
) -> None:
    """Two columns against each other, one point per position, the chosen position as a hand.

    ``pairs_are_sin_cos=True``: the pair is a sin/cos pair ``i`` (``sin_cos_columns`` gives the
    columns, ``wavelengths`` the wavelength per pair); several hands can be shown. Otherwise the
    reader picks any two dimensions, or the first two principal components of the positions.
    ``position``: the page's one position (:func:`position_slider`), shown without a slider of
    its own; ``None`` gives the view its own "Current position" slider.
    """
    n, _d = np.shape(matrix)
    st.subheader("Clock hands" if pairs_are_sin_cos else "Two coordinates against each other")
    plot, controls = st.columns([11, 9], gap="large")  # a half-width column keeps circles round
    with controls:
        if position is None:
            position = position_slider(n, key=f"{key_prefix}pos", label="Current position")
        else:
            st.caption(f"At position {position}: the page's Position slider above moves it.")
        position = min(int(position), n - 1)
        with user_errors("Circle"):
            if pairs_are_sin_cos:
                if sin_cos_columns is None:
                    raise ValueError("sin_cos_columns is required when pairs_are_sin_cos=True.")
                figure = _sin_cos_figure(
                    matrix,
                    key_prefix=key_prefix,
                    position=position,
                    columns=sin_cos_columns,
                    wavelengths=wavelengths,
                    name=name,
                    prose=prose,
                )
            else:
                figure = _free_pair_figure(
                    matrix, key_prefix=key_prefix, position=position, name=name, prose=prose
                )
            with plot:
                show_chart(figure, key=f"{key_prefix}circle_chart")


def position_slider(
    n_positions: int, *, key: str, label: str = "Position", default: int = 10, help: str = ""
) -> int:
    """The one position control of a page (kept in the URL under ``key``), ``0 … n − 1``."""
    field = NumberField(label, key, 0, max(n_positions - 1, 1), min(default, n_positions - 1))
    help = help or "The position the views show; a copied link keeps it."
    value = url_field(field, slider=True, help=help)
    return min(int(value), n_positions - 1)


def _sin_cos_figure(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    position: int,
    columns: figures.SinCosColumns,
    wavelengths: np.ndarray | None,
    name: str,
    prose: str | None,
) -> Figure:
    """Widgets for the hands of sin/cos pairs; returns their Figure."""
    pairs = len(columns[0])
    st.markdown(prose or SIN_COS_PROSE)
    main = url_slider(
        "Pair i", key=f"{key_prefix}pair", min_value=0, max_value=max(pairs - 1, 1), default=0
    )
    main = min(int(main), pairs - 1)
    extra = url_int_list(
        f"More hands (pair indices 0 … {pairs - 1}, up to {MAX_HANDS - 1})",
        key=f"{key_prefix}hands",
        default=[],
        min_value=0,
        max_value=pairs - 1,
        max_items=MAX_HANDS - 1,
    )
    chosen = [main, *[i for i in extra if i != main]]
    return figures.sin_cos_hands_figure(
        matrix, columns, pairs=chosen, current=position, wavelengths=wavelengths, name=name
    )


def _free_pair_figure(
    matrix: np.ndarray, *, key_prefix: str, position: int, name: str, prose: str | None
) -> Figure:
    """Widgets for any two dimensions or the first two principal components; their Figure."""
    _n, d = np.shape(matrix)
    st.markdown(prose or FREE_PAIR_PROSE)
    mode = url_radio(
        "Coordinates", COORDINATES, key=f"{key_prefix}circ_mode", default=COORDINATES[0]
    )
    dims = None
    if mode == "dimensions":
        a, b = url_numbers(pair_fields(d), key_prefix=key_prefix)
        dims = (int(a), int(b))
    return figures.coordinate_pair_figure(matrix, dims, current=position, name=name)
