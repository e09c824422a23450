"""The "Export" menu under each chart: the files of :func:`posviz.export.chart_files` and
:func:`posviz.export.data_files` as download buttons.

Every file is produced only when its button is clicked (Streamlit's deferred downloads run the
callable on click, in a separate thread), so the menu costs nothing on a rerun and a slider stays
fast. Rendering a PNG with vl-convert takes ~0.1–1 s; it happens then, not on every rerun.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import streamlit as st

from posviz import export
from posviz.ui.compat import ALTAIR_LOCK


def _button(file: export.ExportFile, *, key: str) -> None:
    st.download_button(
        file.label,
        data=file.make,
        file_name=file.file_name,
        mime=file.mime,
        key=f"{key}__exp_{file.kind}",
        help=file.help,
        on_click="ignore",
        disabled=file.disabled,
        type="tertiary",
        icon=":material/download:",
    )


def export_menu(chart: alt.TopLevelMixin, *, key: str, data: np.ndarray | None, name: str) -> None:
    """Offer the chart and its data for download, in a compact popover under the chart.

    ``key`` is the chart's widget key (the buttons' keys derive from it); ``data`` the matrix or
    vector behind the chart (``None``: chart formats only); ``name`` the file stem.
    """
    stem = export.safe_stem(name)
    with st.popover("Export", icon=":material/ios_share:", type="tertiary"):
        chart_col, data_col = st.columns(2)
        with chart_col:
            st.caption("Chart")
            for file in export.chart_files(chart, stem=stem, lock=ALTAIR_LOCK):
                _button(file, key=key)
        with data_col:
            if data is None:
                st.caption("This chart has no matrix behind it to export.")
                return
            st.caption(f"Data ({'×'.join(str(n) for n in np.shape(data))})")
            for file in export.data_files(data, stem=stem):
                _button(file, key=key)
