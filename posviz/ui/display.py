"""Showing results: charts (with their exports), user-facing errors, page headers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import altair as alt
import numpy as np
import streamlit as st

from posviz.charts.figure import Figure
from posviz.charts.heatmap import VegaLiteChart


@contextlib.contextmanager
def user_errors(what: str = "") -> Iterator[None]:
    """Turn a ``ValueError`` raised by posviz into a clear message; the rest of the page goes on.

    posviz raises ``ValueError`` (or a subclass) with a message that names the problem and the fix.
    Anything else is a bug and is left to Streamlit (which is configured to hide tracebacks).
    """
    try:
        yield
    except ValueError as exc:
        prefix = f"{what}: " if what else ""
        st.error(f"{prefix}{exc}", icon="⚠️")


def show_chart(
    chart: alt.TopLevelMixin | VegaLiteChart | Figure,
    *,
    key: str,
    data: np.ndarray | None = None,
    name: str = "chart",
    width: str = "stretch",
) -> None:
    """Display an Altair chart with export buttons for it and its underlying data.

    ``data`` is the matrix/array behind the chart (exported as CSV / .npy); ``name`` the file stem;
    ``width`` is ``"stretch"`` (full width) or ``"content"`` (the chart's own width, e.g. to keep a
    unit circle round). A :class:`~posviz.charts.figure.Figure` carries its own data and name.
    """
    if isinstance(chart, Figure):
        chart, data, name = chart.chart, chart.data, chart.name
    st.altair_chart(chart, width=width, key=key)
    from posviz.ui.exports import export_menu  # local: keeps export deps off the import path

    export_menu(chart, key=key, data=data, name=name)
