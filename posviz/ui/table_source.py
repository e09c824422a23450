"""The table-source picker ``pick_table``: where a page's position table comes from.

Every page that needs a table calls ``pick_table("Table", key="prb_t")``. The picker's widgets are
URL-synced under ``<key>_…`` so a copied link reproduces the choice; loads go through the cached
loaders of :mod:`posviz.ui.loaders`; a bad choice shows ``st.error`` with the fix and the picker
returns ``None``. Every route into one computation has the same limits: a sinusoid typed in the
hub box is bounded like the Sinusoid source, and a revision only counts for hub models.
"""

from __future__ import annotations

import streamlit as st

from posviz.settings import settings
from posviz.tables import (
    SYNTHETIC_MAX_POSITIONS,
    SYNTHETIC_MAX_WIDTH,
    PositionTable,
    SyntheticShape,
    list_lab_sources,
    parse_synthetic,
    source_kind,
)
from posviz.ui.cache import cached_data
from posviz.ui.display import user_errors
from posviz.ui.exposure import local_paths_off_reason
from posviz.ui.loaders import cached_table, cached_upload
from posviz.ui.state import url_number, url_select, url_text
from posviz.ui.text import safe_md

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
    "lab": "Lab run (a table trained here)",
    "path": "Local path on the server",
}
_PARTS = {"": "default", "encoder": "encoder", "decoder": "decoder"}

#: The sinusoid source's limits: the loader's own (``load_table("sinusoidal:NxD")``), so the hub
#: box, the picker and the command line accept exactly the same tables.
SINUSOID_MAX_POSITIONS = SYNTHETIC_MAX_POSITIONS
SINUSOID_MAX_WIDTH = SYNTHETIC_MAX_WIDTH - SYNTHETIC_MAX_WIDTH % 2


def _modes() -> list[str]:
    """The sources offered here: "path" only where the server may read its own disk."""
    return [m for m in _MODES if m != "path" or local_paths_off_reason() is None]


def _default_mode(default: str) -> str:
    if default in _MODES:
        return default
    return {"synthetic": "sinusoid", "lab": "lab"}.get(source_kind(default), "hub")


def sinusoid_shape(default: str) -> tuple[int, int, str | None]:
    """``(n, d, note)`` for a ``"sinusoidal:NxD"`` default, clamped to the sinusoid source's limits.

    ``note`` says what was changed and why (``None`` when nothing was): an odd width becomes the
    next even one below; more than :data:`SINUSOID_MAX_POSITIONS` rows or
    :data:`SINUSOID_MAX_WIDTH` columns are cut to the limit.
    """
    n, d = 512, 384
    if source_kind(default) == "synthetic":
        try:
            shape = parse_synthetic(default)
            n, d = shape.n_positions, shape.width
        except ValueError:  # a malformed default keeps MiniLM's shape
            pass
    wanted = (n, d)
    n = min(max(n, 1), SINUSOID_MAX_POSITIONS)
    d = min(max(d - d % 2, 2), SINUSOID_MAX_WIDTH)
    if (n, d) == wanted:
        return n, d, None
    return (
        n,
        d,
        (
            f"A matching sinusoid would be {wanted[0]}×{wanted[1]}; this one is {n}×{d} (sinusoids "
            f"here have 1 … {SINUSOID_MAX_POSITIONS} positions and an even width 2 … "
            f"{SINUSOID_MAX_WIDTH})."
        ),
    )


def comparison_default(table: PositionTable | None) -> str:
    """The sinusoid to compare ``table`` with: same positions and width (the picker clamps an
    odd or too-large shape and says so); MiniLM's 512×384 when there is no table."""
    if table is None:
        return SyntheticShape(512, 384).source
    return SyntheticShape(table.n_positions, table.d_model).source


def _sinusoid_source(key: str, default: str) -> str:
    n0, d0, note = sinusoid_shape(default)
    if note:
        st.info(note, icon=":material/straighten:")
    left, right = st.columns(2)
    with left:
        n = url_number(
            "Positions", key=f"{key}_n", min_value=1, max_value=SINUSOID_MAX_POSITIONS, default=n0
        )
    with right:
        d = url_number(
            "Width d",
            key=f"{key}_d",
            min_value=2,
            max_value=SINUSOID_MAX_WIDTH,
            default=d0,
            step=2,
        )
    return SyntheticShape(int(n), int(d) - int(d) % 2).source


def _hub_source(key: str, default: str) -> tuple[str, str, str]:
    is_id = default not in _MODES and source_kind(default) not in ("synthetic", "lab")
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

    with st.spinner(f"Reading the position table of {safe_md(model, max_len=100)}…"):
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
    check_upload_size(file.name, file.size, cap=cap)
    return cached_upload(file.getvalue(), filename=file.name)


def check_upload_size(name: str, size: int, *, cap: int) -> None:
    """Raise ``ValueError`` (naming the file once) when an upload is over ``cap`` bytes."""
    if size > cap:
        raise ValueError(
            f"{name} is {size / 2**20:,.1f} MB; the limit here is {cap // 2**20} MB "
            "(POSVIZ_MAX_UPLOAD_MB). Save fewer rows or float16."
        )


@cached_data(ttl=30)
def _lab_choices() -> list[str]:
    """Finished lab runs' table specs (re-listed at most every 30 s)."""
    return list_lab_sources()


def _lab_source(key: str, default: str) -> str:
    choices = _lab_choices()
    typed = default if source_kind(default) == "lab" else ""
    if choices:
        st.caption("Finished runs: " + ", ".join(safe_md(c, max_len=60) for c in choices[:8]))
    spec = url_text(
        "Lab table (lab:<run-id>[/<table>[/<seed>[/<step>]]])",
        key=f"{key}_lab",
        default=typed or (choices[0] if choices else ""),
        placeholder="lab:<run-id>/<table>",
    ).strip()
    return spec


def _path_source(key: str) -> str:
    return url_text(
        "Path on the server",
        key=f"{key}_path",
        default="",
        max_chars=500,
        placeholder="/models/my-bert or table.npy",
    ).strip()


def pick_table(label: str, *, key: str, default: str = "bundled") -> PositionTable | None:
    """Let the user choose a table source; return the loaded table, or ``None`` after an error.

    ``default`` is a mode ("bundled", "sinusoid", "hub", "upload", "lab", "path") or a source such
    as "sinusoidal:512x384", "lab:<run-id>" or "openai-community/gpt2". Widget keys:
    ``<key>_src``, ``_n``, ``_d``, ``_hub``, ``_id``, ``_rev``, ``_part``, ``_lab``, ``_path``,
    ``_file``.
    """
    modes = _modes()
    if "path" not in modes and st.query_params.get(f"{key}_src") == "path":  # a link asked for it
        st.info(local_paths_off_reason() or "", icon=":material/lock:")
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
        elif mode == "lab":
            spec = _lab_source(key, default)
            if not spec:
                st.info("No finished lab runs yet: train one on a Lab page, then pick it here.")
                return None
            table = cached_table(spec)
        else:
            path = _path_source(key)
            if not path:
                st.info("Enter a model directory, .safetensors or .npy path.")
                return None
            table = cached_table(path)
    return table


def describe_table(table: PositionTable) -> None:
    """One caption line plus what was set aside and why (for the reader to trust the rows).

    Labels, tensor names and model types come from files and typed ids: shown escaped.
    """
    parts = [f"**{safe_md(table.label, max_len=120)}**", f"kind {safe_md(table.kind)}"]
    if table.tensor_name:
        parts.append(f"tensor {safe_md(table.tensor_name, max_len=120)}")
    if table.model_type:
        parts.append(f"model type {safe_md(table.model_type)}")
    if table.bytes_read:
        parts.append(f"{table.bytes_read / 1024:,.0f} KiB read")
    if table.grid:
        parts.append(f"patch grid {table.grid[0]}×{table.grid[1]}")
    st.caption(" · ".join(parts))
    for aside in table.set_aside:
        rows = ", ".join(map(str, aside.rows))
        st.caption(f"Set aside stored row(s) {rows}: {safe_md(aside.reason, max_len=300)}.")
    for note in table.notes:
        st.caption(f"Note: {safe_md(note, max_len=300)}.")
