"""The table-source picker ``pick_table``: where a page's position table comes from.

Every page that needs a table calls ``pick_table("Table", key="prb_t")``. The picker's widgets are
URL-synced under ``<key>_…`` so a copied link reproduces the choice; its choices, defaults and
limits are :mod:`posviz.tables.picker`'s; loads go through the cached loaders of
:mod:`posviz.ui.loaders`; a bad choice shows ``st.error`` with the fix and the picker returns
``None``. Every route into one computation has the same limits: a sinusoid typed in the hub box is
bounded like the Sinusoid source, and a revision only counts for hub models.
"""

from __future__ import annotations

import streamlit as st

from posviz.page_models.learned import RealSection
from posviz.settings import settings
from posviz.tables import PositionTable, SyntheticShape, list_lab_sources, source_kind
from posviz.tables import picker as choices
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart, user_errors
from posviz.ui.loaders import cached_table, cached_upload
from posviz.ui.state import url_numbers, url_select, url_text
from posviz.ui.text import safe_md
from posviz.urlparams import NumberField


def local_paths_off_reason() -> str | None:
    """Why this server does not read tables from its own disk (``None``: it does).

    Streamlit's ``server.address`` ("" when unset: every interface) decides, see
    :func:`posviz.tables.picker.local_paths_off_reason`.
    """
    return choices.local_paths_off_reason(str(st.get_option("server.address") or "").strip())


def _sinusoid_source(key: str, default: str) -> str:
    n0, d0, note = choices.sinusoid_shape(default)
    if note:
        st.info(note, icon=":material/straighten:")
    fields = (
        NumberField("Positions", "_n", 1, choices.SINUSOID_MAX_POSITIONS, n0),
        NumberField("Width d", "_d", 2, choices.SINUSOID_MAX_WIDTH, d0, 2),
    )
    n, d = url_numbers(fields, key_prefix=key)
    return SyntheticShape(int(n), int(d) - int(d) % 2).source


def _hub_source(key: str, default: str) -> tuple[str, str, str]:
    start, typed = choices.hub_defaults(default)
    offered = [*choices.HUB_SUGGESTIONS, choices.OTHER]
    model = url_select("Model", offered, key=f"{key}_hub", default=start)
    if model == choices.OTHER:
        model = url_text("Model id", key=f"{key}_id", default=typed, placeholder="org/name").strip()
    with st.expander("Revision and table", expanded=False):
        revision = url_text(
            "Revision (branch, tag or commit)", key=f"{key}_rev", default="", placeholder="main"
        ).strip()
        part = url_select(
            "Table",
            list(choices.PARTS),
            key=f"{key}_part",
            default="",
            format_func=choices.PARTS.get,
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
    choices.check_upload_size(file.name, file.size, cap=cap)
    return cached_upload(file.getvalue(), filename=file.name)


@cached_data(ttl=30)
def _lab_choices() -> list[str]:
    """Finished lab runs' table specs (re-listed at most every 30 s)."""
    return list_lab_sources()


def _lab_source(key: str, default: str) -> str:
    runs = _lab_choices()
    typed = default if source_kind(default) == "lab" else ""
    if runs:
        st.caption("Finished runs: " + ", ".join(safe_md(c, max_len=60) for c in runs[:8]))
    return url_text(
        "Lab table (lab:<run-id>[/<table>[/<seed>[/<step>]]])",
        key=f"{key}_lab",
        default=typed or (runs[0] if runs else ""),
        placeholder="lab:<run-id>/<table>",
    ).strip()


def _path_source(key: str) -> str:
    return url_text(
        "Path on the server",
        key=f"{key}_path",
        default="",
        max_chars=500,
        placeholder="/models/my-bert or table.npy",
    ).strip()


def _typed_source(mode: str, key: str, default: str) -> str | None:
    """The source a hub, lab or path choice names (``None``, with a hint, when none is typed)."""
    if mode == "lab":
        spec = _lab_source(key, default)
        if not spec:
            st.info("No finished lab runs yet: train one on a Lab page, then pick it here.")
        return spec or None
    path = _path_source(key)
    if not path:
        st.info("Enter a model directory, .safetensors or .npy path.")
    return path or None


def pick_table(label: str, *, key: str, default: str = "bundled") -> PositionTable | None:
    """Let the user choose a table source; return the loaded table, or ``None`` after an error.

    ``default`` is a mode ("bundled", "sinusoid", "hub", "upload", "lab", "path") or a source such
    as "sinusoidal:512x384", "lab:<run-id>" or "openai-community/gpt2". Widget keys:
    ``<key>_src``, ``_n``, ``_d``, ``_hub``, ``_id``, ``_rev``, ``_part``, ``_lab``, ``_path``,
    ``_file``.
    """
    paths_off = local_paths_off_reason()
    modes = [m for m in choices.MODES if m != "path" or paths_off is None]
    if paths_off and st.query_params.get(f"{key}_src") == "path":  # a link asked for it
        st.info(paths_off, icon=":material/lock:")
    mode = url_select(
        label,
        modes,
        key=f"{key}_src",
        default=choices.default_mode(default),
        format_func=choices.MODES.get,
    )
    with user_errors():
        if mode in choices.FIXED_SOURCES:
            return cached_table(choices.FIXED_SOURCES[mode])
        if mode == "sinusoid":
            return cached_table(_sinusoid_source(key, default))
        if mode == "upload":
            return _upload(key)
        if mode == "hub":
            model, revision, part = _hub_source(key, default)
            if not model:
                st.info("Type a model id, e.g. openai-community/gpt2.")
                return None
            return _load_hub(model, revision, part)
        source = _typed_source(mode, key, default)
        return None if source is None else cached_table(source)
    return None


def describe_table(table: PositionTable) -> None:
    """One caption line plus what was set aside and why (for the reader to trust the rows)."""
    for line in choices.describe_lines(table, show=safe_md):
        st.caption(line)


def show_real_section(section: RealSection, *, key: str) -> None:
    """A real checkpoint's section: its title, its answer in plain words, then each chart with
    the sentence stating what it shows (also what a screen reader announces for the chart)."""
    st.header(section.title)
    st.markdown(section.lead)
    for i, finding in enumerate(section.findings):
        show_chart(finding.figure, key=f"{key}_{i}", description=finding.description)
        st.markdown(safe_md(finding.description, max_len=900))
    if section.caveat:
        st.caption(safe_md(section.caveat, max_len=600))
