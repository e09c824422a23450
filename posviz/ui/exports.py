"""The "Export" menu under each chart: PNG, SVG, Vega-Lite JSON of the chart; CSV, .npy and
Embedding Projector TSV of the matrix behind it.

Every file is produced only when its button is clicked (Streamlit's deferred downloads run the
callable on click, in a separate thread), so the menu costs nothing on a rerun and a slider stays
fast. Rendering a PNG with vl-convert takes ~0.1–1 s; it happens then, not on every rerun.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable

import altair as alt
import numpy as np
import streamlit as st

from posviz import export
from posviz.ui.compat import ALTAIR_LOCK as _ALTAIR_LOCK

#: A session lives on for ``server.disconnectedSessionTTL`` (120 s) after its tab is closed, with
#: the export buttons of its last run. Buttons hold arrays bigger than this only weakly: while the
#: byte-budgeted cache (:mod:`posviz.ui.cache`) keeps a table it can be exported, and twenty links
#: opened and closed cannot pin twenty tables the cache has already let go (issue #13.1).
PIN_LIMIT_BYTES = 8 * 2**20


class HeldData:
    """An export's array: kept as is when small, by weak reference when big.

    :meth:`get` returns the array, or raises ``ValueError`` (with what to do) when a big one has
    been freed since the page was drawn.
    """

    def __init__(self, data: np.ndarray) -> None:
        self.shape: tuple[int, ...] = data.shape
        self.nbytes = int(data.nbytes)
        self._strong: np.ndarray | None = None
        self._weak: weakref.ref[np.ndarray] | None = None
        if self.nbytes > PIN_LIMIT_BYTES:
            self._weak = weakref.ref(data)
        else:
            self._strong = data

    def get(self) -> np.ndarray:
        data = self._strong if self._weak is None else self._weak()
        if data is None:
            raise ValueError(
                f"This {'×'.join(map(str, self.shape))} array is no longer held by the server "
                "(other views have been opened since; big tables are not kept for closed tabs). "
                "Reload the page and export again."
            )
        return data


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
            _data_buttons(np.asarray(data), key=key, stem=stem, names=export.column_names(data))


def _data_buttons(array: np.ndarray, *, key: str, stem: str, names: list[str]) -> None:
    shape = "×".join(str(n) for n in array.shape)
    st.caption(f"Data ({shape})")
    problem = export.text_export_problem(array)
    too_big_for_npy = array.nbytes > export.MAX_NPY_BYTES
    rows = array.shape[0] if array.ndim else 1  # a vector is exported as one column
    data = HeldData(array)  # the buttons below run later, in another thread: never pin big arrays
    _button(
        "CSV",
        lambda: export.matrix_csv(data.get(), columns=names if array.ndim == 2 else None),
        file_name=f"{stem}.csv",
        key=f"{key}__exp_csv",
        disabled=problem is not None,
        help=problem or "One row per position: `position,dim_0,dim_1,…`.",
    )
    _button(
        ".npy",
        lambda: export.matrix_npy(data.get()),
        file_name=f"{stem}.npy",
        key=f"{key}__exp_npy",
        disabled=too_big_for_npy,
        help="`np.load(path)` reads it back exactly (no pickle inside).",
    )
    tsv_help = problem or (
        "For projector.tensorflow.org → Load: the vectors (one row per position) …"
    )
    _button(
        "Projector vectors",
        lambda: export.projector_vectors(data.get()),
        file_name=f"{stem}.vectors.tsv",
        key=f"{key}__exp_tsv",
        disabled=problem is not None,
        help=tsv_help,
    )
    _button(
        "Projector metadata",
        lambda: export.projector_metadata(rows),
        file_name=f"{stem}.metadata.tsv",
        key=f"{key}__exp_meta",
        disabled=problem is not None,
        help=problem or "… and their labels (position, segment) to colour points by.",
    )
