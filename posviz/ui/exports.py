"""The "Export" menu under each chart: PNG, SVG, Vega-Lite JSON of the chart; CSV, .npy and
Embedding Projector TSV of the matrix behind it.

Every file is produced only when its button is clicked (Streamlit's deferred downloads run the
callable on click, in a separate thread), so the menu costs nothing on a rerun and a slider stays
fast. Rendering a PNG with vl-convert takes ~0.1–1 s; it happens then, not on every rerun.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import altair as alt
import numpy as np
import streamlit as st

from posviz import export
from posviz.ui.compat import ALTAIR_LOCK as _ALTAIR_LOCK


def safe_stem(name: str) -> str:
    """A file-name stem made of ``[A-Za-z0-9._-]`` only (at most 80 characters)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return stem[:80] or "chart"


def _button(
    label: str,
    make: Callable[[], bytes],
    *,
    file_name: str,
    key: str,
    help: str,
    disabled: bool = False,
) -> None:
    ext = file_name.rsplit(".", 1)[-1]
    st.download_button(
        label,
        data=make,
        file_name=file_name,
        mime=export.MIME.get(ext),
        key=key,
        help=help,
        on_click="ignore",
        disabled=disabled,
        type="tertiary",
        icon=":material/download:",
    )


def export_menu(chart: alt.TopLevelMixin, *, key: str, data: np.ndarray | None, name: str) -> None:
    """Offer the chart and its data for download, in a compact popover under the chart.

    ``key`` is the chart's widget key (the buttons' keys derive from it); ``data`` the matrix or
    vector behind the chart (``None``: chart formats only); ``name`` the file stem.
    """
    stem = safe_stem(name)
    with st.popover("Export", icon=":material/ios_share:", type="tertiary"):
        chart_col, data_col = st.columns(2)
        with chart_col:
            st.caption("Chart")
            _button(
                "PNG",
                lambda: export.chart_png(chart, lock=_ALTAIR_LOCK),
                file_name=f"{stem}.png",
                key=f"{key}__exp_png",
                help="Image at 2× screen resolution, drawn by vl-convert.",
            )
            _button(
                "SVG",
                lambda: export.chart_svg(chart, lock=_ALTAIR_LOCK),
                file_name=f"{stem}.svg",
                key=f"{key}__exp_svg",
                help="Vector image; heatmaps stay embedded images.",
            )
            _button(
                "Vega-Lite JSON",
                lambda: export.chart_json(chart, lock=_ALTAIR_LOCK),
                file_name=f"{stem}.vl.json",
                key=f"{key}__exp_json",
                help="The chart's spec with its data: open it in the Vega editor or "
                "`alt.Chart.from_json`.",
            )
        with data_col:
            if data is None:
                st.caption("This chart has no matrix behind it to export.")
                return
            _data_buttons(np.asarray(data), key=key, stem=stem)


def _data_buttons(data: np.ndarray, *, key: str, stem: str) -> None:
    shape = "×".join(str(n) for n in data.shape)
    st.caption(f"Data ({shape})")
    problem = export.text_export_problem(data)
    _button(
        "CSV",
        lambda: export.matrix_csv(data),
        file_name=f"{stem}.csv",
        key=f"{key}__exp_csv",
        disabled=problem is not None,
        help=problem or "One row per position: `position,dim_0,dim_1,…`.",
    )
    _button(
        ".npy",
        lambda: export.matrix_npy(data),
        file_name=f"{stem}.npy",
        key=f"{key}__exp_npy",
        disabled=data.nbytes > export.MAX_NPY_BYTES,
        help="`np.load(path)` reads it back exactly (no pickle inside).",
    )
    tsv_help = problem or (
        "For projector.tensorflow.org → Load: the vectors (one row per position) …"
    )
    _button(
        "Projector vectors",
        lambda: export.projector_vectors(data),
        file_name=f"{stem}.vectors.tsv",
        key=f"{key}__exp_tsv",
        disabled=problem is not None,
        help=tsv_help,
    )
    _button(
        "Projector metadata",
        lambda: export.projector_metadata(export.as_matrix(data).shape[0]),
        file_name=f"{stem}.metadata.tsv",
        key=f"{key}__exp_meta",
        disabled=problem is not None,
        help=problem or "… and their labels (position, segment) to colour points by.",
    )
