"""Getting a position table in a page: cached loaders and the shared source picker ``pick_table``.

Every page that needs a table calls ``pick_table("Table", key="prb_t")``. The picker's widgets are
URL-synced under ``<key>_…`` so a copied link reproduces the choice; loads are cached (bounded by
``posviz.settings``); a bad choice shows ``st.error`` with the fix and the picker returns ``None``.
"""

from __future__ import annotations

import hashlib

import altair as alt
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


# --- the learned page's own views (the heatmap, circle and variance views are shared) ---

#: view id -> label (the learned page's own views).
TABLE_VIEWS: dict[str, str] = {
    "heatmap": "Heatmap",
    "pair": "Two dimensions",
    "variance": "Variance per dimension",
    "similarity": "Cosine similarity",
    "pca2": "PCA trajectory 2-D",
    "pca3": "PCA trajectory 3-D",
    "norms": "Norm per position",
}


def view_controls(view: str, *, key: str) -> dict[str, float]:
    """Widgets for a view (shared by both sides of a comparison), URL-synced under ``key_…``."""
    from posviz.ui.state import url_slider

    if view == "heatmap":
        side = url_slider(
            "Cells per axis (evenly spaced)",
            key=f"{key}_cells",
            min_value=32,
            max_value=256,
            default=128,
            step=16,
        )
        return {"side": side}
    if view == "pair":
        left, right = st.columns(2)
        with left:
            i = url_number(
                "Dimension on x", key=f"{key}_di", min_value=0, max_value=8191, default=0
            )
        with right:
            j = url_number(
                "Dimension on y", key=f"{key}_dj", min_value=0, max_value=8191, default=1
            )
        return {"i": i, "j": j}
    if view == "similarity":
        side = url_slider(
            "Positions per axis (evenly spaced)",
            key=f"{key}_side",
            min_value=16,
            max_value=256,
            default=128,
            step=16,
        )
        return {"side": side}
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


def show_view(table: PositionTable, view: str, options: dict[str, float], *, key: str) -> None:
    """Draw one of :data:`TABLE_VIEWS` for ``table`` with the options from :func:`view_controls`."""
    draw = {
        "heatmap": _heatmap_view,
        "pair": _pair_view,
        "variance": _variance_view,
        "similarity": _similarity_view,
        "pca2": _pca_view,
        "pca3": _pca_view,
        "norms": _norms_view,
    }[view]
    with user_errors():
        draw(table, view, options, key=f"{key}_chart", name=_file_stem(table))


def _heatmap_view(table: PositionTable, view: str, options: dict, *, key: str, name: str) -> None:
    from posviz.charts import families
    from posviz.charts.trajectory import stride_for
    from posviz.ui.display import show_chart

    row_step = stride_for(table.n_positions, int(options["side"]))
    col_step = stride_for(table.d_model, int(options["side"]))
    shown = table.matrix[::row_step, ::col_step]
    # colour range = 99th percentile of |value|: one outlier dimension would wash out the rest
    limit = float(np.quantile(np.abs(shown), 0.99)) or 1.0
    chart = families.heatmap(
        shown,
        x_title="dimension i",
        y_title="position p",
        color_title="PE[p, i]",
        x_values=np.arange(0, table.d_model, col_step),
        y_values=np.arange(0, table.n_positions, row_step),
        height=420,
    ).encode(
        alt.Color("v:Q")
        .scale(scheme="redblue", domain=[-limit, limit], reverse=True, clamp=True)
        .title("PE[p, i]")
    )
    show_chart(chart, key=key, data=shown, name=f"{name}_heatmap")
    every = (
        ""
        if row_step == col_step == 1
        else f" (positions 0, {row_step}, {2 * row_step}, …; dimensions 0, {col_step}, …)"
    )
    st.caption(
        f"Row p is the vector added at position p{every}; colours saturate at ±{limit:.3g} "
        "(99% of values lie inside). A sinusoid shows stripes that slow down from left to "
        "right; a learned table shows which dimensions carry position at all."
    )


def _pair_view(table: PositionTable, view: str, options: dict, *, key: str, name: str) -> None:
    from posviz.charts.trajectory import pca_trajectory_chart
    from posviz.ui.display import show_chart

    i, j = int(options["i"]), int(options["j"])
    if max(i, j) >= table.d_model:
        st.warning(f"This table has dimensions 0 … {table.d_model - 1}; pick smaller numbers.")
        return
    pair = table.matrix[:, [i, j]]  # (n_positions, 2)
    titles = (f"dimension {i}", f"dimension {j}")
    chart = pca_trajectory_chart(pair, x=0, y=1, titles=titles, height=340)
    show_chart(chart, key=key, data=pair, name=f"{name}_dims_{i}_{j}")
    st.caption(
        f"(PE[p, {i}], PE[p, {j}]) for every position p, joined in order. For a sinusoid, a "
        "sin/cos pair (dimensions 2k and 2k+1) walks round the unit circle at its own speed; a "
        "learned table has no reason to."
    )


def _variance_view(table: PositionTable, view: str, options: dict, *, key: str, name: str) -> None:
    from posviz.analysis.stats import dimension_variance
    from posviz.charts.families import lines_chart
    from posviz.ui.display import show_chart

    variance = dimension_variance(table.matrix)  # (d_model,)
    chart = lines_chart(
        np.arange(table.d_model),
        {"variance over positions": variance},
        x_title="dimension i",
        y_title="Var_p PE[p, i]",
    )
    show_chart(chart, key=key, data=variance, name=f"{name}_variance")
    st.caption(
        f"How much each dimension changes across positions (total {variance.sum():.3g}). "
        "Dimensions near 0 carry little position information in this table."
    )


def _similarity_view(
    table: PositionTable, view: str, options: dict, *, key: str, name: str
) -> None:
    from posviz.analysis.stats import cosine_similarity_matrix
    from posviz.charts.trajectory import similarity_heatmap_chart, stride_for
    from posviz.ui.display import show_chart

    step = stride_for(table.n_positions, int(options["side"]))
    similarity = cosine_similarity_matrix(table.matrix[::step])  # (m, m)
    chart = similarity_heatmap_chart(similarity, step=step)
    show_chart(chart, key=key, data=similarity, name=f"{name}_cosine")
    shown = "every position" if step == 1 else f"positions 0, {step}, {2 * step}, …"
    st.caption(
        f"cos(PE(p), PE(q)) for {shown}. A bright diagonal band that fades with |p − q| "
        "means nearby positions look alike: the table encodes distance."
    )


def _pca_view(table: PositionTable, view: str, options: dict, *, key: str, name: str) -> None:
    from posviz.charts import trajectory as charts
    from posviz.ui.display import show_chart

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
    show_chart(chart, key=key, data=result.scores, name=f"{name}_{view}")
    thinned = (
        f" PCA of positions 0, {step}, {2 * step}, … ({_PCA_ROWS} at most)." if step > 1 else ""
    )
    st.caption(_PCA_NOTES[view] + thinned)


def _norms_view(table: PositionTable, view: str, options: dict, *, key: str, name: str) -> None:
    from posviz.analysis.stats import position_norms
    from posviz.charts.trajectory import norm_chart
    from posviz.ui.display import show_chart

    norms = position_norms(table.matrix)  # (n_positions,)
    show_chart(norm_chart(norms), key=key, data=norms, name=f"{name}_norms")
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
