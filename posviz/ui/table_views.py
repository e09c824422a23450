"""Reusable Streamlit views of any position table ``(n_positions, d_model)``.

Used by the sinusoidal page and the learned-tables page. Every widget is URL-synced under
``key_prefix`` (e.g. ``"sin_"`` → ``?sin_hm_zoom=true``), so two views on one page need two
prefixes. Each view draws its own subheader and short prose; the page adds what is specific to it.

Stable signatures (keyword-only after ``matrix``):

    heatmap_view(matrix, *, key_prefix, cache_key=None, title="Heatmap", name="table",
                 x_title="dimension", y_title="position", value_title="value", prose=None)
    dimensions_view(matrix, *, key_prefix, default_dims=(0, 1), dim_label=None, current=None,
                    name="table", prose=None)
    unit_circle_view(matrix, *, key_prefix, pairs_are_sin_cos, sin_cos_columns=None,
                     wavelengths=None, name="table", prose=None)
    variance_view(matrix, *, key_prefix, default_threshold=1e-3, name="table", prose=None)
    shift_similarity_view(matrix, *, key_prefix, default_metric="cosine", name="table",
                          prose=None)
    cached_sinusoidal(n_positions, d_model, base, layout) -> read-only float32 table

``cache_key``: a string that identifies ``matrix`` (e.g. ``"sin:128:512:10000:interleaved"``);
when given, rendered heatmap images are cached by it (arrays themselves are never hashed).
``prose``: replaces the default explanation under the subheader.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from posviz.analysis.stats import (
    cosine_similarity_matrix,
    dimension_variance,
    pca,
    position_norms,
    relative_threshold,
    shift_similarity,
)
from posviz.charts import trajectory as charts
from posviz.charts.circle import MAX_HANDS, unit_circle_figure
from posviz.charts.figure import Figure
from posviz.charts.heatmap import MAX_SIDE_1TO1, color_limit, heatmap_chart, lod_factors
from posviz.charts.lines import MAX_LINES, dimensions_chart, shift_band_chart, variance_bars_chart
from posviz.charts.trajectory import norm_chart
from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables import PositionTable
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart, user_errors
from posviz.ui.loaders import cached_pca
from posviz.ui.state import (
    url_checkbox,
    url_int_list,
    url_number,
    url_select,
    url_slider,
)

_SHIFT_BUDGET = 200_000_000  # multiply-adds allowed for the shift-similarity view


@cached_data()
def _cached_color_limit(cache_key: str, _matrix: np.ndarray) -> float:
    return color_limit(_matrix)


@cached_data()
def _cached_heatmap(
    cache_key: str,
    window: tuple[int, int, int, int],
    reduce: str,
    labels: tuple[str, str, str],
    _matrix: np.ndarray,
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


def _window_controls(n: int, d: int, key_prefix: str) -> tuple[int, int, int, int] | None:
    """Zoom controls: start row/col and window size, each ≤ 1024 so the window draws 1:1."""
    zoom = url_checkbox(
        "Zoom to a window",
        key=f"{key_prefix}hm_zoom",
        default=False,
        toggle=True,
        help=f"Pick a window of at most {MAX_SIDE_1TO1}×{MAX_SIDE_1TO1} cells: it is drawn 1:1. "
        "Windows of at most 16×16 cells show each cell's exact value on hover.",
    )
    if not zoom:
        return None
    cols = st.columns(4)
    with cols[0]:
        r0 = url_number(
            "First position", key=f"{key_prefix}hm_r0", min_value=0, max_value=n - 1, default=0
        )
    with cols[1]:
        rows = url_number(
            "Positions shown",
            key=f"{key_prefix}hm_rows",
            min_value=1,
            max_value=min(n, MAX_SIDE_1TO1),
            default=min(n, 16),
        )
    with cols[2]:
        c0 = url_number(
            "First dimension", key=f"{key_prefix}hm_c0", min_value=0, max_value=d - 1, default=0
        )
    with cols[3]:
        ncols = url_number(
            "Dimensions shown",
            key=f"{key_prefix}hm_cols",
            min_value=1,
            max_value=min(d, MAX_SIDE_1TO1),
            default=min(d, 16),
        )
    r0, c0 = min(int(r0), n - 1), min(int(c0), d - 1)
    return r0, min(n, r0 + int(rows)), c0, min(d, c0 + int(ncols))


def heatmap_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    cache_key: str | None = None,
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
    st.markdown(
        prose
        or "Each row is a position, each column a dimension; colour is the value (blue < 0 < red). "
        "Hover for values (blocks show mean/min/max; zoomed windows of ≤ 16×16 cells show each "
        "cell). The subtitle says whether every cell is its own pixel."
    )
    reduce = "mean"
    if (fy, fx) != (1, 1):
        st.info(
            f"This {n}×{d} table is larger than {MAX_SIDE_1TO1}×{MAX_SIDE_1TO1}: the overview is "
            f"reduced (1 pixel = {fy}×{fx} cells). Zoom to a window to see cells 1:1.",
            icon="🔎",
        )
        reduce = url_select(
            "Overview reduction",
            ["mean", "absmax"],
            key=f"{key_prefix}hm_reduce",
            default="mean",
            horizontal=True,
            radio=True,
            help="mean: average of each block (fast oscillations cancel to ~0); absmax: the value "
            "of largest magnitude in each block (keeps oscillating columns visible).",
        )
    window = _window_controls(n, d, key_prefix) or (0, n, 0, d)
    labels = (x_title, y_title, value_title)
    with user_errors("Heatmap"):
        if cache_key is not None:
            chart = _cached_heatmap(cache_key, window, reduce, labels, matrix)
        else:
            chart = heatmap_chart(
                matrix,
                window=window,
                reduce=reduce,
                x_title=x_title,
                y_title=y_title,
                value_title=value_title,
            )
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
    st.markdown(
        prose
        or "Each line is one column of the table read down the positions: how that single "
        "coordinate changes as the token moves along the sequence."
    )
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
        chart = dimensions_chart(matrix, dims, labels=labels, current=current)
        figure = Figure(chart, np.asarray(matrix)[:, dims], f"{name}-dims")  # the plotted columns
        show_chart(figure, key=f"{key_prefix}dims_chart")


def unit_circle_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    pairs_are_sin_cos: bool,
    sin_cos_columns: tuple[np.ndarray, np.ndarray] | None = None,
    wavelengths: np.ndarray | None = None,
    name: str = "table",
    prose: str | None = None,
) -> None:
    """Two columns against each other, one point per position, the chosen position as a hand.

    ``pairs_are_sin_cos=True``: the pair is a sin/cos pair ``i`` (``sin_cos_columns`` gives the
    columns, ``wavelengths`` the wavelength per pair); several hands can be shown. Otherwise the
    reader picks any two dimensions, or the first two principal components of the positions.
    """
    n, _d = np.shape(matrix)
    st.subheader("Clock hands" if pairs_are_sin_cos else "Two coordinates against each other")
    plot, controls = st.columns([11, 9], gap="large")  # a half-width column keeps circles round
    with controls:
        position = url_slider(
            "Current position",
            key=f"{key_prefix}pos",
            min_value=0,
            max_value=max(n - 1, 1),
            default=min(10, n - 1),
        )
        position = min(int(position), n - 1)
        with user_errors("Circle"):
            if pairs_are_sin_cos:
                _sin_cos_circle(
                    matrix, key_prefix, position, sin_cos_columns, wavelengths, name, prose, plot
                )
            else:
                _free_pair_circle(matrix, key_prefix, position, name, prose, plot)


def _sin_cos_circle(matrix, key_prefix, position, columns, wavelengths, name, prose, plot):
    if columns is None:
        raise ValueError("sin_cos_columns is required when pairs_are_sin_cos=True.")
    sin_cols, cos_cols = columns
    pairs = len(sin_cols)
    st.markdown(
        prose
        or "Each sin/cos pair turns like a clock hand: plotting (sin, cos) puts every position on "
        "the unit circle, starting at 12 o'clock and moving clockwise by ω radians per position. "
        "Fast pairs (small i) wrap around many times; slow pairs barely leave the top."
    )
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
    labels = [f"pair {i}" for i in chosen]
    lines = []
    if wavelengths is not None:
        for i in chosen:
            lines.append(
                f"pair {i} (dims {sin_cols[i]}, {cos_cols[i]}): wavelength 2π·base^(2i/d) = "
                f"{wavelengths[i]:,.4g} positions"
            )
    figure = unit_circle_figure(
        matrix,
        (int(sin_cols[main]), int(cos_cols[main])),
        current=position,
        extra_pairs=[(int(sin_cols[i]), int(cos_cols[i])) for i in chosen[1:]],
        labels=labels,
        subtitle=lines,
        name=f"{name}-pairs",
    )
    with plot:
        show_chart(figure, key=f"{key_prefix}circle_chart")


def _free_pair_circle(matrix, key_prefix, position, name, prose, plot) -> None:
    n, d = np.shape(matrix)
    st.markdown(
        prose
        or "A learned table has no sin/cos pairs, but any two coordinates can be plotted against "
        "each other. The first two principal components show the main 2-D shape of the "
        "positions: a curve or circle means neighbouring positions sit close together."
    )
    mode = url_select(
        "Coordinates",
        ["principal components", "dimensions"],
        key=f"{key_prefix}circ_mode",
        default="principal components",
        radio=True,
        horizontal=True,
    )
    if mode == "dimensions":
        cols = st.columns(2)
        with cols[0]:
            a = url_number(
                "x: dimension", key=f"{key_prefix}circ_x", min_value=0, max_value=d - 1, default=0
            )
        with cols[1]:
            b = url_number(
                "y: dimension",
                key=f"{key_prefix}circ_y",
                min_value=0,
                max_value=d - 1,
                default=min(1, d - 1),
            )
        data, pair, titles, sub = matrix, (int(a), int(b)), (f"dim {a}", f"dim {b}"), ""
    else:
        if min(n, d) < 2:
            raise ValueError("PCA needs at least 2 positions and 2 dimensions.")
        result = pca(matrix, 2)
        ratio = result.explained_variance_ratio
        data, pair, titles = result.scores, (0, 1), ("PC 1", "PC 2")
        sub = f"PC 1 explains {ratio[0]:.1%}, PC 2 {ratio[1]:.1%} of the variance"
    figure = unit_circle_figure(
        data,
        pair,
        current=position,
        circle=False,
        axis_titles=titles,
        labels=[f"{titles[0]} / {titles[1]}"],
        subtitle=sub,
        name=f"{name}-pair",
    )
    with plot:
        show_chart(figure, key=f"{key_prefix}circle_chart")


def variance_view(
    matrix: np.ndarray,
    *,
    key_prefix: str,
    default_threshold: float = 1e-3,
    name: str = "table",
    prose: str | None = None,
) -> int:
    """Variance of every dimension across positions, with a threshold that counts active ones.

    Returns the number of active dimensions (so a page can quote it).
    """
    st.subheader("Which dimensions carry position?")
    st.markdown(
        prose
        or "Bar height is how much a dimension varies as the position changes (log scale). A "
        "dimension below the threshold is nearly constant over these positions: adding it to a "
        "word embedding shifts every token by almost the same amount."
    )
    exponent = url_slider(
        "Threshold (log₁₀ of variance)",
        key=f"{key_prefix}thr",
        min_value=-8.0,
        max_value=0.0,
        default=float(np.log10(default_threshold)),
        step=0.25,
        help="A dimension is 'active' if its variance across positions exceeds 10^this.",
    )
    threshold = float(10.0**exponent)
    with user_errors("Variance"):
        var = dimension_variance(matrix)
        active = int((var > threshold).sum())
        st.metric(
            "Active dimensions", f"{active} of {var.size}", help=f"variance > {threshold:.3g}"
        )
        chart = variance_bars_chart(var, threshold=threshold)
        figure = Figure(chart, var[:, None], f"{name}-variance")
        show_chart(figure, key=f"{key_prefix}var_chart")
        return active
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
    n, _ = np.shape(matrix)
    st.subheader("Does similarity depend only on distance?")
    st.markdown(
        prose
        or "For every offset k, the similarity of position p with position p + k, computed for all "
        "p. The line is the mean; the shaded band is the range over p. A band of zero width "
        "means the similarity depends only on the distance k, not on where you are."
    )
    if n < 2:
        st.info("Needs at least 2 positions.")
        return
    cols = st.columns(2)
    with cols[0]:
        limit = min(n - 1, 1024)
        max_shift = url_slider(
            "Largest offset k",
            key=f"{key_prefix}kmax",
            min_value=1,
            max_value=max(limit, 2),
            default=min(limit, 128),
        )
    with cols[1]:
        metric = url_select(
            "Measure",
            ["cosine", "dot"],
            key=f"{key_prefix}metric",
            default=default_metric,
            radio=True,
            horizontal=True,
        )
    k = min(int(max_shift), n - 1)
    _, d = np.shape(matrix)
    rows = min(n, max(k + 1, _SHIFT_BUDGET // max(1, d * k)))  # bound the work on big tables
    if rows < n:
        st.caption(f"Computed over positions 0 … {rows - 1} of {n} to keep the page fast.")
    with user_errors("Shift similarity"):
        r = shift_similarity(np.asarray(matrix)[:rows], k, metric=metric)
        chart = shift_band_chart(
            r.shifts, r.mean, r.min, r.max, std=r.std, count=r.count, metric=metric
        )
        show_chart(Figure(chart, None, f"{name}-shift"), key=f"{key_prefix}shift_chart")


@cached_data()
def cached_sinusoidal(n_positions: int, d_model: int, base: float, layout: str) -> np.ndarray:
    """``posviz.sinusoidal`` as float32, shared read-only between sessions (byte-budgeted)."""
    table = sinusoidal(n_positions, d_model, base=base, layout=layout, dtype=np.float32)
    table.setflags(write=False)
    return table


# --- the learned page's views: the shared ones above plus its own ---

#: view id -> label. heatmap/pair/dims/variance/shift are the shared views of
#: this module (the sinusoidal page uses them too); the rest are this page's own.
TABLE_VIEWS: dict[str, str] = {
    "heatmap": "Heatmap",
    "pair": "Two coordinates",
    "dims": "Dimensions over positions",
    "variance": "Variance per dimension",
    "similarity": "Cosine similarity",
    "shift": "Similarity vs offset",
    "pca2": "PCA trajectory 2-D",
    "pca3": "PCA trajectory 3-D",
    "norms": "Norm per position",
}

#: views that need the page's full width: images with every cell one pixel, and the circle view
#: (which splits its width between a round plot and its controls).
FULL_WIDTH_VIEWS: frozenset[str] = frozenset({"heatmap", "similarity", "pair"})


def view_controls(view: str, *, key: str) -> dict[str, float]:
    """Widgets shared by both sides (PCA axes and viewing angle), URL-synced under ``key_…``.

    The shared views above draw their own widgets per side instead.
    """

    if view == "pca2":
        left, right = st.columns(2)
        with left:
            x = url_slider(
                "Horizontal axis: PC", key=f"{key}_pcx", min_value=1, max_value=10, default=1
            )
        with right:
            y = url_slider(
                "Vertical axis: PC", key=f"{key}_pcy", min_value=1, max_value=10, default=2
            )
        return {"x": x - 1, "y": y - 1}
    if view == "pca3":
        left, right = st.columns(2)
        with left:
            azimuth = url_slider(
                "Turn (azimuth, °)",
                key=f"{key}_az",
                min_value=-180,
                max_value=180,
                default=30,
                step=5,
            )
        with right:
            elevation = url_slider(
                "Tilt (elevation, °)",
                key=f"{key}_el",
                min_value=-90,
                max_value=90,
                default=20,
                step=5,
            )
        return {"azimuth": azimuth, "elevation": elevation}
    return {}


def table_cache_key(table: PositionTable) -> str:
    """A string that identifies ``table``'s matrix, for caching rendered charts by it.

    Source, revision, tensor, shape and dtype; plus a content digest for tables up to 16 MB (so
    two uploads with the same file name never share a picture; bigger tables are never uploads).
    """
    matrix = np.ascontiguousarray(table.matrix)
    parts = [
        table.source,
        table.revision or "",
        table.tensor_name,
        table.kind,
        "x".join(map(str, matrix.shape)),
        str(matrix.dtype),
    ]
    if matrix.nbytes <= 16 * 2**20:
        parts.append(hashlib.blake2b(matrix.data, digest_size=12).hexdigest())
    return "|".join(parts)


def show_view(
    table: PositionTable, view: str, options: dict[str, float], *, key_prefix: str
) -> None:
    """Draw one of :data:`TABLE_VIEWS` for ``table``; widgets are URL-synced under ``key_prefix``.

    ``options`` come from :func:`view_controls` (shared by both sides); ``key_prefix`` (e.g.
    ``"lrn_a_"``) must differ between two tables on one page.
    """
    matrix, name = table.matrix, _file_stem(table)
    if view == "heatmap":
        cache_key = table_cache_key(table)
        heatmap_view(
            matrix,
            key_prefix=key_prefix,
            cache_key=cache_key,
            name=f"{name}_heatmap",
            value_title="PE[p, i]",
            prose="Row p is the vector the model adds at position p, column i one dimension; "
            "colour is the value (blue < 0 < red, symmetric around 0). A sinusoid shows stripes "
            "that slow down from left to right; a learned table shows which dimensions carry "
            "position at all.",
        )
        with user_errors("Contrast heatmap"):
            _contrast_heatmap(table, cache_key, key_prefix=key_prefix, name=name)
    elif view == "pair":
        unit_circle_view(matrix, key_prefix=key_prefix, pairs_are_sin_cos=False, name=name)
    elif view == "dims":
        dimensions_view(matrix, key_prefix=key_prefix, name=name)
    elif view == "variance":
        threshold = relative_threshold(matrix)
        variance_view(matrix, key_prefix=key_prefix, default_threshold=threshold, name=name)
        st.caption(
            f"The threshold starts at 1% of this table's mean variance (≈ {threshold:.2g}), so "
            "tables on different scales (a sinusoid's ±1, a learned table's ±0.1) compare fairly."
        )
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


#: a colour scale is "dominated by outliers" when max |value| exceeds this many 99th percentiles.
OUTLIER_RATIO = 4.0


@cached_data()
def _cached_spread(cache_key: str, _matrix: np.ndarray) -> tuple[float, float, float]:
    """``(max |value|, 99th percentile of |value|, share of cells above that percentile)``."""
    magnitude = np.abs(np.asarray(_matrix, dtype=np.float32))
    top = float(magnitude.max())
    p99 = float(np.quantile(magnitude, 0.99))
    return top, p99, float((magnitude > p99).mean())


@cached_data()
def _cached_contrast_chart(cache_key: str, vmax: float, _matrix: np.ndarray):
    n, d = _matrix.shape
    return heatmap_chart(
        _matrix,
        vmax=vmax,
        reduce="absmax",
        title=f"{n}×{d} table, colours saturated at ±{vmax:.3g}",
        value_title="PE[p, i]",
    )


def _contrast_heatmap(table: PositionTable, cache_key: str, *, key_prefix: str, name: str) -> None:
    """The whole table again with colours saturating at the 99th percentile of |value|.

    Drawn only when a few outliers dominate the colour scale (MiniLM: max |value| 1.87 at position
    0, 99% of values within ±0.065), where the faithful picture above is nearly white.
    """
    top, p99, beyond = _cached_spread(cache_key, table.matrix)
    if not (p99 > 0 and top > OUTLIER_RATIO * p99):
        return
    show = url_checkbox(
        f"Contrast view: saturate colours at ±{p99:.3g} (99% of |values|)",
        key=f"{key_prefix}hm_contrast",
        default=True,
        toggle=True,
        help=f"max |value| is {top:.3g}, {top / p99:.0f}× the 99th percentile: on the scale above "
        "almost every cell is near white. Here cells beyond the limit take the end colour; "
        "hover still shows the true values.",
    )
    if show:
        st.caption(
            f"Same table, colour limit ±{p99:.3g} instead of ±{top:.3g}: the {beyond:.1%} of "
            "cells beyond it are drawn in full red or blue."
        )
        chart = _cached_contrast_chart(cache_key, p99, table.matrix)
        figure = Figure(chart, None, f"{name}_contrast")  # same data as the heatmap above
        show_chart(figure, key=f"{key_prefix}contrast_chart")


@cached_data()
def _cached_similarity(cache_key: str, start: int, stop: int, _matrix: np.ndarray):
    """Cosine similarity of positions ``start … stop-1`` and its heatmap: ``(chart, (m, m))``."""
    similarity = cosine_similarity_matrix(_matrix[start:stop]).astype(np.float32)  # (m, m)
    m = stop - start
    shown = "" if (start, stop) == (0, len(_matrix)) else f" — positions {start}…{stop - 1}"
    offset = f" (axes count from position {start})" if start else ""
    chart = heatmap_chart(
        similarity,
        vmax=1.0,
        title=f"cos(PE(p), PE(q)), {m}×{m}{shown}{offset}",
        x_title="position q",
        y_title="position p",
        value_title="cosine",
        height=min(720, max(240, m)),
    )
    return chart, similarity


def _similarity_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    n = table.n_positions
    st.subheader("Which positions look alike?")
    st.markdown(
        "Cosine similarity cos(PE(p), PE(q)) of every pair of positions, every pair its own "
        "pixel (red +1 = same direction, white 0 = orthogonal, blue −1 = opposite). A bright "
        "diagonal band that fades with |p − q| means nearby positions look alike: the table "
        "encodes distance."
    )
    start = 0
    if n > MAX_SIDE_1TO1:
        st.info(
            f"This table has {n} positions; {MAX_SIDE_1TO1} of them are compared 1:1 at a time. "
            "Choose where the window starts.",
            icon="🔎",
        )
        start = url_number(
            "First position",
            key=f"{key_prefix}sim_p0",
            min_value=0,
            max_value=n - MAX_SIDE_1TO1,
            default=0,
            step=MAX_SIDE_1TO1 // 4,
        )
        start = min(int(start), n - MAX_SIDE_1TO1)
    stop = min(n, start + MAX_SIDE_1TO1)
    chart, similarity = _cached_similarity(table_cache_key(table), start, stop, table.matrix)
    show_chart(Figure(chart, similarity, f"{name}_cosine"), key=f"{key_prefix}sim_chart")


def _pca_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    st.subheader(TABLE_VIEWS[view])
    wanted = 3 if view == "pca3" else 1 + max(int(options["x"]), int(options["y"]))
    step = charts.stride_for(table.n_positions, _PCA_ROWS)
    result = cached_pca(table.matrix[::step], wanted)
    common = {
        "explained": result.explained_variance_ratio,
        "positions": np.arange(0, table.n_positions, step),
    }
    if view == "pca2":
        chart = charts.pca_trajectory_chart(
            result.scores, x=int(options["x"]), y=int(options["y"]), **common
        )
    else:
        chart = charts.pca_3d_chart(
            result.scores, azimuth=options["azimuth"], elevation=options["elevation"], **common
        )
    figure = Figure(chart, result.scores, f"{name}_{view}")
    show_chart(figure, key=f"{key_prefix}{view}_chart")
    thinned = (
        f" PCA of positions 0, {step}, {2 * step}, … ({_PCA_ROWS} at most)." if step > 1 else ""
    )
    st.caption(_PCA_NOTES[view] + thinned)


def _norms_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    st.subheader("Norm per position")
    norms = position_norms(table.matrix)  # (n_positions,)
    figure = Figure(norm_chart(norms), norms, f"{name}_norms")
    show_chart(figure, key=f"{key_prefix}norms_chart")
    st.caption(
        f"‖PE(p)‖ from {norms.min():.3f} to {norms.max():.3f} (mean {norms.mean():.3f}). "
        "A sinusoid has the same norm √(d/2) at every position; learned tables don't."
    )


_PCA_ROWS = 1024  # PCA is fitted on at most this many evenly spaced positions (bounded SVD cost)
_PCA_NOTES = {
    "pca2": "Each dot is one position projected on two principal components of the table, joined "
    "in order (colour = position). A smooth curve means neighbouring positions are neighbours in "
    "the embedding space; a sinusoid traces Lissajous loops, GPT-2's table a helix-like spiral.",
    "pca3": "The first three principal components, drawn as an orthographic projection seen from "
    "the chosen angle (nearer points larger). It is a flat picture of a 3-D path: turn and tilt "
    "to judge its shape — GPT-2's table winds like a helix.",
}


def _file_stem(table: PositionTable) -> str:
    return "".join(c if c.isalnum() else "_" for c in table.source)[:60] or "table"
