"""Chart and table hygiene on every explorer page (``posviz.navigation.explorer_pages``: all but
home and the lab's), checked on what the page really shows.

Each page runs once in Streamlit's AppTest with its defaults; every chart it draws is taken with
its data (Arrow datasets inlined) and rendered by vl-convert, Vega's own renderer:

* **exports look like the screen**: a chart rendered under a deliberately odd theme (every palette
  and the default mark colour replaced) draws every mark in the same colours as under no theme,
  so Streamlit's theme on screen and the plain export agree (each chart names its colours);
* **no more series than colours**: a categorical colour scale has at least as many colours as
  the chart has series;
* **subtitles read in both themes**: every subtitle takes its colour from the page background;
* **answer first**: the page's first block after the title is its verdict sentence, before any
  widget, then its hero chart (with at most the hero's one control, the page's Position);
* **tables**: no snake_case column names, no "None" cells, no sentence long enough to be cut.
"""

from __future__ import annotations

import json
import re

import pyarrow.ipc
import pytest
from conftest import assert_no_exception
from page_support import rendered_page

from posviz.charts.style import ADAPTIVE_TEXT
from posviz.navigation import explorer_pages

#: every explorer page of the registry (a page or family added there is checked at once)
PAGES = tuple(spec.key for spec in explorer_pages())

#: every colour the theme could lend a chart, replaced by ones no chart of posviz uses
ODD_THEME = {
    "range": {
        "category": ["#010203", "#040506", "#070809", "#0a0b0c"],
        "ordinal": ["#010203", "#040506"],
        "ramp": ["#0d0e0f", "#101112"],
        "heatmap": ["#0d0e0f", "#101112"],
        "diverging": ["#131415", "#161718", "#191a1b"],
    },
    "mark": {"color": "#1c1d1e"},
}
MAX_CELL_CHARS = 60  # longer text is cut to the column's width in st.dataframe


def _page(path: str):
    at = rendered_page(path).at  # the process's shared first render (page_support)
    assert_no_exception(at)
    return at


def _spec(proto) -> dict:
    spec = json.loads(proto.spec)
    datasets = dict(spec.get("datasets", {}))
    for dataset in proto.datasets:
        table = pyarrow.ipc.open_stream(dataset.data.data).read_all()
        datasets[dataset.name] = json.loads(table.to_pandas().to_json(orient="records"))
    if datasets:
        spec["datasets"] = datasets
    return spec


def _charts(path: str) -> list[dict]:
    return [_spec(chart.proto) for chart in _page(path).get("vega_lite_chart")]


def _mark_colours(spec: dict) -> list[str]:
    import vl_convert

    svg = vl_convert.vegalite_to_svg(spec, vl_version="5.20")
    marks = re.findall(r'<g class="mark-[^"]*role-mark[^"]*".*?</g>', svg, flags=re.S)
    return sorted(c for g in marks for c in re.findall(r'(?:fill|stroke)="(#[0-9a-fA-F]{3,8})"', g))


@pytest.mark.parametrize("path", PAGES)
def test_exports_draw_the_colours_the_screen_draws(path):
    for spec in _charts(path):
        plain = _mark_colours(spec)
        themed = _mark_colours({**spec, "config": {**spec.get("config", {}), **ODD_THEME}})
        title = spec.get("title", {})
        assert plain == themed, f"{path}: chart {title} leaves a colour to the theme"


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


@pytest.mark.parametrize("path", PAGES)
def test_no_chart_has_more_series_than_colours(path):
    for spec in _charts(path):
        for node in _walk(spec):
            color = node.get("color") if isinstance(node.get("color"), dict) else None
            if not color or color.get("type") != "nominal" or "field" not in color:
                continue
            scale = color.get("scale", {})
            values = {
                row.get(color["field"])
                for rows in spec.get("datasets", {}).values()
                for row in rows
                if color["field"] in row
            }
            assert "range" in scale, f"{path}: colour of {color['field']} has no explicit range"
            assert len(values) <= len(scale["range"]), (path, color["field"], values)


@pytest.mark.parametrize("path", PAGES)
def test_every_subtitle_reads_on_the_page_background(path):
    for spec in _charts(path):
        for node in _walk(spec):
            title = node.get("title")
            if isinstance(title, dict) and title.get("subtitle"):
                assert title.get("subtitleColor") == ADAPTIVE_TEXT, (path, title["text"])


@pytest.mark.parametrize("path", PAGES)
def test_the_answer_comes_first(path):
    at = _page(path)
    blocks = list(at.main.children.values())
    # title, then the answer slot: its first element is the verdict, then the hero chart
    answer = blocks[1]
    verdict = _first(answer, "markdown")
    assert verdict is not None, f"{path}: no verdict in the answer"
    assert verdict.value.startswith("**") and len(verdict.value) > 40, verdict.value
    assert verdict.value == at.markdown[0].value  # the first text on the page
    # where its numbers come from, badged beside it (posviz.analysis.provenance)
    assert ":gray-badge[" in verdict.value, f"{path}: the answer names no source: {verdict.value}"
    order = list(_elements(at.main))  # every element in reading order
    first_widget = next((i for i, e in enumerate(order) if _holds_widget(e)), len(order))
    assert order.index(verdict) < first_widget, f"{path}: a widget comes before the answer"
    assert _holds_chart(answer), f"{path}: no hero chart in the answer"
    widgets_in_answer = [e for e in _elements(answer) if _holds_widget(e)]
    assert len(widgets_in_answer) <= 1, f"{path}: more than the hero's one control in the answer"


def _elements(block):
    """The leaf elements under ``block`` in the order the page draws them."""
    children = getattr(block, "children", None)
    if not children:
        yield block
        return
    for child in children.values():
        yield from _elements(child)


def _holds_widget(block) -> bool:
    kinds = {"slider", "selectbox", "radio", "checkbox", "text_input", "number_input",
             "multiselect", "toggle", "text_area", "select_slider"}  # fmt: skip
    if getattr(block, "type", "") in kinds:
        return True
    return any(_holds_widget(child) for child in getattr(block, "children", {}).values())


def _first(block, kind: str):
    if getattr(block, "type", "") == kind:
        return block
    for child in getattr(block, "children", {}).values():
        found = _first(child, kind)
        if found is not None:
            return found
    return None


def _holds_chart(block) -> bool:
    if getattr(block, "type", "") == "vega_lite_chart":
        return True
    return any(_holds_chart(child) for child in getattr(block, "children", {}).values())


def _shown(df):
    """What a table shows: its Styler's display values when it has one (a missing number stays
    NaN in a typed column and reads "—"), else its data."""
    shown = df.proto.arrow_data.styler.display_values
    return pyarrow.ipc.open_stream(shown).read_all().to_pandas() if shown else df.value


@pytest.mark.parametrize("path", PAGES)
def test_tables_have_plain_labels_and_no_cut_or_empty_cells(path):
    for frame in (_shown(df) for df in _page(path).dataframe):
        for column in frame.columns:
            assert "_" not in str(column), f"{path}: snake_case column {column!r}"
        for value in frame.astype(str).to_numpy().ravel():
            assert value not in ("None", "nan", "NaN"), f"{path}: an empty cell shows {value!r}"
            assert len(value) <= MAX_CELL_CHARS, f"{path}: a cell is cut: {value[:80]!r}…"


#: Vega cuts a title or subtitle line wider than the chart (it never wraps); on a 390-pixel phone
#: a chart is about 350 pixels wide: these many characters at the theme's title sizes.
MAX_TITLE_CHARS, MAX_SUBTITLE_CHARS = 40, 48


@pytest.mark.parametrize("path", PAGES)
def test_titles_fit_a_phone_wide_chart(path):
    for spec in _charts(path):
        for node in _walk(spec):
            title = node.get("title")
            if not isinstance(title, dict | str) or (node is not spec and "mark" not in node):
                continue
            text = title if isinstance(title, str) else title.get("text", "")
            assert len(text) <= MAX_TITLE_CHARS, f"{path}: title {text!r} is cut on a phone"
            subtitle = [] if isinstance(title, str) else title.get("subtitle", [])
            for line in [subtitle] if isinstance(subtitle, str) else subtitle:
                assert len(line) <= MAX_SUBTITLE_CHARS, f"{path}: subtitle {line!r} is cut"
