"""Showing results: charts with their Export menu, bullet lists, and user-facing errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import altair as alt
import numpy as np
import streamlit as st

from posviz.charts.figure import Accessible, Figure
from posviz.charts.heatmap import VegaLiteChart
from posviz.ui.exports import export_menu
from posviz.ui.text import safe_md

#: an error message is posviz's own sentence around user values (ids, file names, link values):
#: escaped whole, so a crafted value cannot turn it into a link; long ones are cut, with a note.
MAX_ERROR_CHARS = 1200

#: Drawn once per page by app.py. Streamlit greys captions and block quotes at 60 % of the text
#: colour (3.9:1 on white; WCAG AA asks 4.5:1): the body colour at 80 % opacity reads ≥ 6:1 in
#: both themes (the theme still decides the colour). Links in captions keep
#: the text colour and an underline; a slider's value too (the primary colour read 2.8:1 on dark).
#: A wide table's sideways scrollbar shows (Streamlit's was transparent); a card shows its
#: picture for the browser's theme; a page link's label wraps (Streamlit cut it with "…").
#: A chart's toolbar drops the buttons that the Export menu
#: already offers (data, PNG, spec): each was one more Tab stop per chart; Fullscreen stays.
PAGE_STYLE = """<style>
[data-testid="stCaptionContainer"], [data-testid="stMarkdownContainer"] blockquote {
  color: inherit !important; opacity: 0.8; }
[data-testid="stCaptionContainer"] a { color: inherit !important; text-decoration: underline; }
[data-testid="stSliderThumbValue"] { color: inherit !important; }
[data-testid="stDataFrame"] .dvn-scroller {
  scrollbar-color: rgba(128, 128, 128, 0.8) transparent !important; }
@media (prefers-color-scheme: dark) { [class*="st-key-thumblight_"] { display: none; } }
@media not (prefers-color-scheme: dark) { [class*="st-key-thumbdark_"] { display: none; } }
[data-testid="stPageLink-NavLink"] :is(span, p, .stMarkdownEllipsis) {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  line-height: 1.4; }
.stElementContainer:has([data-testid="stVegaLiteChart"]) [data-testid="stElementToolbar"]
  button:is([aria-label="Show data"], [aria-label="Download as PNG"],
  [aria-label="Copy Vega-Lite spec"]) { display: none !important; }
</style>"""


@contextlib.contextmanager
def user_errors(what: str = "") -> Iterator[None]:
    """Turn a ``ValueError`` raised by posviz into a clear message; the rest of the page goes on.

    posviz raises ``ValueError`` (or a subclass) with a message that names the problem and the fix.
    The message is shown through :func:`posviz.ui.text.safe_md` (it may quote what the user typed).
    Anything else is a bug and is left to Streamlit (which is configured to hide tracebacks).
    """
    try:
        yield
    except ValueError as exc:
        prefix = f"{what}: " if what else ""
        st.error(safe_md(f"{prefix}{exc}", max_len=MAX_ERROR_CHARS), icon="⚠️")


def bullets(lines: tuple[str, ...] | list[str], *, max_len: int = 900) -> None:
    """A bullet list of ``lines``, each escaped (they may quote a table's or a run's name)."""
    if lines:
        st.markdown("\n".join(f"- {safe_md(line, max_len=max_len)}" for line in lines))


def show_chart(
    chart: alt.TopLevelMixin | VegaLiteChart | Figure,
    *,
    key: str,
    data: np.ndarray | None = None,
    name: str = "chart",
    width: str = "stretch",
    description: str = "",
) -> None:
    """Display a chart with its Export menu (the chart's formats and the data behind it).

    Pass a :class:`~posviz.charts.figure.Figure` (it carries its own data and name), or a chart
    with ``data`` (the matrix/array behind it, exported as CSV / .npy) and ``name`` (the file
    stem). ``width`` is ``"stretch"`` (full width) or ``"content"`` (the chart's own width, e.g.
    to keep a unit circle round). ``description`` is what a screen reader announces (the finding,
    e.g. the page's verdict); by default the chart's title and subtitle
    (:func:`posviz.charts.figure.accessible_spec`).
    """
    if isinstance(chart, Figure):
        chart, data, name = chart.chart, chart.data, chart.name
    st.altair_chart(Accessible(chart, description), width=width, key=key)
    export_menu(chart, key=key, data=data, name=name)


def show_charts_side_by_side(
    *charts: tuple[alt.TopLevelMixin | VegaLiteChart | Figure, str],
    spec: list[float] | None = None,
    gap: str = "small",
    width: str = "stretch",
) -> None:
    """Charts (each ``(chart, key)``) in a row of columns: equal, or as wide as ``spec`` says;
    ``gap`` as for ``st.columns``, ``width`` as for :func:`show_chart`."""
    for column, (chart, key) in zip(st.columns(spec or len(charts), gap=gap), charts, strict=True):
        with column:
            show_chart(chart, key=key, width=width)
