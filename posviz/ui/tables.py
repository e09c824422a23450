"""Getting a position table in a page: cached loaders and the shared source picker ``pick_table``.

Every page that needs a table calls ``pick_table("Table", key="prb_t")``. The picker's widgets are
URL-synced under ``<key>_…`` so a copied link reproduces the choice; loads are cached (bounded by
``posviz.settings``); a bad choice shows ``st.error`` with the fix and the picker returns ``None``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from posviz.settings import settings
from posviz.tables import PositionTable, load_table, table_from_upload
from posviz.ui.display import user_errors
from posviz.ui.state import url_number, url_select, url_text

_LIMITS = settings()  # cache bounds are fixed at import; the other limits are read per run

#: Hub models with a learned table, one per registry family (all load by range read).
HUB_SUGGESTIONS: tuple[str, ...] = (
    "openai-community/gpt2",
    "google-bert/bert-base-uncased",
    "FacebookAI/roberta-base",
    "distilbert/distilbert-base-uncased",
    "google/electra-small-discriminator",
    "albert/albert-base-v2",
    "FacebookAI/xlm-roberta-base",
    "EleutherAI/gpt-neo-125m",
    "facebook/opt-125m",
    "facebook/bart-base",
    "google/vit-base-patch16-224",
)
_OTHER = "other…"
_MODES = {
    "bundled": "Bundled MiniLM-L6 (offline)",
    "sinusoid": "Sinusoid (computed)",
    "hub": "Hugging Face hub model",
    "upload": "Upload .npy / .safetensors",
    "path": "Local path on the server",
}
_PARTS = {"": "default", "encoder": "encoder", "decoder": "decoder"}


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_table(source: str, revision: str = "", part: str = "", _progress=None) -> PositionTable:
    """``load_table`` cached by (source, revision, part); ``_progress`` is not part of the key."""
    return load_table(source, revision=revision or None, part=part or None, progress=_progress)


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def _cached_upload(digest: str, filename: str, _data: bytes) -> PositionTable:
    return table_from_upload(_data, filename=filename)


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_pca(matrix: np.ndarray, n_components: int):
    """``posviz.analysis.stats.pca``, cached by the matrix content (the 3-D view reruns often)."""
    from posviz.analysis.stats import pca

    return pca(matrix, n_components)


def _modes() -> list[str]:
    return [m for m in _MODES if m != "path" or settings().allow_local_paths]


def _default_mode(default: str) -> str:
    if default in _MODES:
        return default
    if default.startswith("sinusoidal:"):
        return "sinusoid"
    return "hub"


def _sinusoid_source(key: str, default: str) -> str:
    n0, d0 = 512, 384
    if default.startswith("sinusoidal:") and "x" in default:
        n_text, _, d_text = default.split(":")[1].partition("x")
        n0, d0 = (int(n_text), int(d_text)) if (n_text + d_text).isdigit() else (n0, d0)
    left, right = st.columns(2)
    with left:
        n = url_number("Positions", key=f"{key}_n", min_value=1, max_value=8192, default=n0)
    with right:
        d = url_number("Width d", key=f"{key}_d", min_value=2, max_value=2048, default=d0, step=2)
    return f"sinusoidal:{n}x{d}"


def _hub_source(key: str, default: str) -> tuple[str, str, str]:
    is_id = default not in _MODES and not default.startswith("sinusoidal:")
    if default in HUB_SUGGESTIONS:
        start, typed = default, ""
    elif is_id:
        start, typed = _OTHER, default
    else:
        start, typed = HUB_SUGGESTIONS[0], ""
    model = url_select("Model", [*HUB_SUGGESTIONS, _OTHER], key=f"{key}_hub", default=start)
    if model == _OTHER:
        model = url_text("Model id", key=f"{key}_id", default=typed, placeholder="org/name").strip()
    with st.expander("Revision and table", expanded=False):
        revision = url_text(
            "Revision (branch, tag or commit)", key=f"{key}_rev", default="", placeholder="main"
        ).strip()
        part = url_select(
            "Table",
            list(_PARTS),
            key=f"{key}_part",
            default="",
            format_func=_PARTS.get,
            help="Encoder–decoder models (BART) store one table per side.",
        )
    return model, revision, part


def _load_hub(model: str, revision: str, part: str) -> PositionTable:
    bar = st.empty()

    def progress(done: int, total: int | None) -> None:
        if total:
            bar.progress(
                min(done / total, 1.0),
                text=f"Downloading {done / 2**20:,.1f} of "
                f"{total / 2**20:,.1f} MB (no safetensors in this repo)",
            )

    with st.spinner(f"Reading the position table of {model} (header + one tensor)…"):
        table = cached_table(model, revision, part, _progress=progress)
    bar.empty()
    return table


def _upload(key: str) -> PositionTable | None:
    cap = settings().max_upload_bytes
    file = st.file_uploader(
        f"A 2-D table (.npy) or a checkpoint (.safetensors), at most {cap // 2**20} MB",
        type=["npy", "safetensors"],
        key=f"{key}_file",
    )
    if file is None:
        st.info("Upload a file to see it; uploads are not part of the page link.")
        return None
    if file.size > cap:
        raise ValueError(
            f"{file.name} is {file.size / 2**20:,.1f} MB; the limit here is "
            f"{cap // 2**20} MB (POSVIZ_MAX_UPLOAD_MB). Save fewer rows or float16."
        )
    data = file.getvalue()
    return _cached_upload(hashlib.sha256(data).hexdigest(), file.name, data)


def pick_table(label: str, *, key: str, default: str = "bundled") -> PositionTable | None:
    """Let the user choose a table source; return the loaded table, or ``None`` after an error.

    ``default`` is a mode ("bundled", "sinusoid", "hub", "upload", "path") or a source such as
    "sinusoidal:512x384" or "openai-community/gpt2". Widget keys: ``<key>_src``, ``_n``, ``_d``,
    ``_hub``, ``_id``, ``_rev``, ``_part``, ``_path``, ``_file``.
    """
    modes = _modes()
    mode = url_select(
        label, modes, key=f"{key}_src", default=_default_mode(default), format_func=_MODES.get
    )
    table: PositionTable | None = None
    with user_errors():
        if mode == "bundled":
            table = cached_table("bundled")
        elif mode == "sinusoid":
            table = cached_table(_sinusoid_source(key, default))
        elif mode == "hub":
            model, revision, part = _hub_source(key, default)
            if not model:
                st.info("Type a model id, e.g. openai-community/gpt2.")
                return None
            table = _load_hub(model, revision, part)
        elif mode == "upload":
            table = _upload(key)
        else:
            path = url_text(
                "Path on the server",
                key=f"{key}_path",
                default="",
                max_chars=500,
                placeholder="/models/my-bert or table.npy",
            ).strip()
            if not path:
                st.info("Enter a model directory, .safetensors or .npy path.")
                return None
            table = cached_table(path)
    return table


def describe_table(table: PositionTable) -> None:
    """One caption line plus what was set aside and why (for the reader to trust the rows)."""
    parts = [f"**{table.label}**", f"kind `{table.kind}`"]
    if table.tensor_name:
        parts.append(f"tensor `{table.tensor_name}`")
    if table.model_type:
        parts.append(f"model type `{table.model_type}`")
    if table.bytes_read:
        parts.append(f"{table.bytes_read / 1024:,.0f} KiB read")
    if table.grid:
        parts.append(f"patch grid {table.grid[0]}×{table.grid[1]}")
    st.caption(" · ".join(parts))
    for aside in table.set_aside:
        rows = ", ".join(map(str, aside.rows))
        st.caption(f"Set aside stored row(s) {rows}: {aside.reason}.")
    for note in table.notes:
        st.caption(f"Note: {note}.")


# --- the learned page's views: the shared ones from table_views plus its own ---

#: view id -> label. heatmap/pair/dims/variance/shift are the shared views of
#: ``posviz.ui.table_views`` (the sinusoidal page uses them too); the rest are this page's own.
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

    The shared views (:mod:`posviz.ui.table_views`) draw their own widgets per side instead.
    """
    from posviz.ui.state import url_slider

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


def relative_threshold(matrix: np.ndarray, share: float = 0.01) -> float:
    """``share`` × the mean per-dimension variance, rounded to a power of 10 in quarter steps.

    The variance view's slider moves in steps of 0.25 in log₁₀; this lands on that grid. Returns
    ``1e-3`` for a constant table (no variance to be relative to).
    """
    from posviz.analysis.stats import dimension_variance

    mean = float(dimension_variance(matrix).mean())
    if not mean > 0:
        return 1e-3
    exponent = min(0.0, max(-8.0, round(4 * np.log10(share * mean)) / 4))
    return float(10.0**exponent)


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
    from posviz.ui import table_views

    matrix, name = table.matrix, _file_stem(table)
    if view == "heatmap":
        cache_key = table_cache_key(table)
        table_views.heatmap_view(
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
        table_views.unit_circle_view(
            matrix, key_prefix=key_prefix, pairs_are_sin_cos=False, name=name
        )
    elif view == "dims":
        table_views.dimensions_view(matrix, key_prefix=key_prefix, name=name)
    elif view == "variance":
        threshold = relative_threshold(matrix)
        table_views.variance_view(
            matrix, key_prefix=key_prefix, default_threshold=threshold, name=name
        )
        st.caption(
            f"The threshold starts at 1% of this table's mean variance (≈ {threshold:.2g}), so "
            "tables on different scales (a sinusoid's ±1, a learned table's ±0.1) compare fairly."
        )
    elif view == "shift":
        table_views.shift_similarity_view(matrix, key_prefix=key_prefix, name=name)
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


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def _cached_spread(cache_key: str, _matrix: np.ndarray) -> tuple[float, float, float]:
    """``(max |value|, 99th percentile of |value|, share of cells above that percentile)``."""
    magnitude = np.abs(np.asarray(_matrix, dtype=np.float32))
    top = float(magnitude.max())
    p99 = float(np.quantile(magnitude, 0.99))
    return top, p99, float((magnitude > p99).mean())


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def _cached_contrast_chart(cache_key: str, vmax: float, _matrix: np.ndarray):
    from posviz.charts.heatmap import heatmap_chart

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
    from posviz.ui.display import show_chart
    from posviz.ui.state import url_checkbox

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
        show_chart(chart, key=f"{key_prefix}contrast_chart", data=None, name=f"{name}_contrast")


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def _cached_similarity(cache_key: str, start: int, stop: int, _matrix: np.ndarray):
    """Cosine similarity of positions ``start … stop-1`` and its heatmap: ``(chart, (m, m))``."""
    from posviz.analysis.stats import cosine_similarity_matrix
    from posviz.charts.heatmap import heatmap_chart

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
    from posviz.charts.heatmap import MAX_SIDE_1TO1
    from posviz.ui.display import show_chart

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
    show_chart(chart, key=f"{key_prefix}sim_chart", data=similarity, name=f"{name}_cosine")


def _pca_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    from posviz.charts import trajectory as charts
    from posviz.ui.display import show_chart

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
    show_chart(chart, key=f"{key_prefix}{view}_chart", data=result.scores, name=f"{name}_{view}")
    thinned = (
        f" PCA of positions 0, {step}, {2 * step}, … ({_PCA_ROWS} at most)." if step > 1 else ""
    )
    st.caption(_PCA_NOTES[view] + thinned)


def _norms_view(
    table: PositionTable, view: str, options: dict, *, key_prefix: str, name: str
) -> None:
    from posviz.analysis.stats import position_norms
    from posviz.charts.trajectory import norm_chart
    from posviz.ui.display import show_chart

    st.subheader("Norm per position")
    norms = position_norms(table.matrix)  # (n_positions,)
    show_chart(norm_chart(norms), key=f"{key_prefix}norms_chart", data=norms, name=f"{name}_norms")
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
