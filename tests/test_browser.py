"""End to end: the real server, the table pages in headless Chromium: a slider moved with the
keyboard, and the linked hero views (pointing at a position in one view
moves it in the other; ▶ play moves both, with no script rerun). Needs Chromium (see
tests/browser_support.py)."""

from __future__ import annotations

import pytest
from browser_support import browser_page, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHARTS = '[data-testid="stVegaLiteChart"]'
CHART_TEXT = """([index, needle]) => {
    // SVG charts carry their text in the DOM; canvas charts (the heatmap) in their aria-label.
    // index -1: any chart of the page.
    const all = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
    const shows = c => (c.textContent.includes(needle)
        || (c.getAttribute('aria-label') ?? '').includes(needle));
    return index < 0 ? all.some(shows) : !!all[index] && shows(all[index]);
}"""


@pytest.fixture(scope="module")
def page():
    with browser_page(width=1400, height=1000) as browser_tab:  # skips when there is no Chromium
        yield browser_tab


@pytest.fixture(scope="module")
def server(app_server):
    return app_server


def _slider(page, label: str):
    return page.locator(
        f'{CHARTS.replace("stVegaLiteChart", "stSlider")} input[type="range"][aria-label="{label}"]'
    )


def _open(page, url: str, charts: int = 5) -> None:
    page.goto(url)
    wait_for_app(page)
    page.wait_for_function(
        f"() => document.querySelectorAll('{CHARTS}').length >= {charts}", timeout=60_000
    )


def _drawing(page, index: int) -> str:
    """What a chart shows: its SVG markup, or its canvas pixels as a data URL."""
    return page.evaluate(
        """i => {
            const chart = document.querySelectorAll('[data-testid="stVegaLiteChart"]')[i];
            const canvas = chart.querySelector('canvas');
            return canvas ? canvas.toDataURL() : chart.querySelector('svg').outerHTML;
        }""",
        index,
    )


def test_keyboard_slider_redraws_the_heatmap_and_updates_the_link(page, server):
    _open(page, f"{server}/sinusoidal")
    assert page.evaluate(CHART_TEXT, [-1, "128×512 table"])
    before = _drawing(page, 0)
    slider = _slider(page, "Positions (sequence length)")
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(CHART_TEXT, arg=[-1, "129×512 table"], timeout=30_000)
    assert _drawing(page, 0) != before
    assert slider.get_attribute("aria-valuetext") == "129"
    page.wait_for_function("() => location.search.includes('sin_n=129')", timeout=10_000)


def test_canvas_heatmap_shows_block_tooltips_on_hover(page, server):
    _open(page, f"{server}/sinusoidal")
    chart = page.locator(f"{CHARTS}:has(canvas)").first  # the whole table, below the hero
    assert chart.locator("canvas").count() == 1  # the heatmap asks Vega for the canvas renderer
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + 300, box["y"] + 120)
    page.mouse.move(box["x"] + 310, box["y"] + 125)
    page.wait_for_function(
        "() => document.getElementById('vg-tooltip-element')"
        "?.textContent.includes('mean of block')",
        timeout=10_000,
    )


HERO = f".st-key-hero {CHARTS}:visible"  # the wide or the tall hero, whichever the page shows
#: The visible hero's state: the position its label shows (the hero has no slider of its own:
#: the page's Position slider is its control), the outlined row's top (pixels from the view's
#: top) and every "position N" label its views draw.
HERO_STATE = """view => {
    const chart = [...document.querySelectorAll('.st-key-hero [data-testid="stVegaLiteChart"]')]
        .find(c => c.offsetParent !== null);
    const row = chart.querySelector(`g.${view}_row_marks path`);
    const labels = [...chart.querySelectorAll('text')].map(t => t.textContent)
        .filter(t => /^position \\d+$/.test(t));
    return {
        value: labels.length ? Number(labels[0].split(' ')[1]) : null,
        row: row ? Number(row.getAttribute('d').match(/^M[-\\d.]+,([-\\d.]+)/)[1]) : null,
        labels,
    };
}"""
COUNT_RUNS = (
    "() => { window.__posvizRuns = 0; new MutationObserver(() => {"
    " const app = document.querySelector('[data-testid=stApp]');"
    " if (app.dataset.testScriptState === 'running') window.__posvizRuns++; })"
    ".observe(document.querySelector('[data-testid=stApp]'), {attributes: true});"
    " return window.__posvizRuns; }"
)


def _open_hero(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    page.locator(f"{HERO} svg.marks").wait_for(timeout=60_000)
    page.locator(HERO).scroll_into_view_if_needed()


@pytest.mark.parametrize("size", [(1400, 1000), (390, 844)], ids=["side-by-side", "stacked"])
def test_pointing_at_a_table_row_moves_the_clock_hands(page, server, size):
    """The sinusoid's hero: the row under the pointer becomes the position of every view."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    try:
        _open_hero(page, f"{server}/sinusoidal")  # 128 positions, starting at 10
        before = page.evaluate(HERO_STATE, "table")
        assert before["value"] == 10 and before["labels"] == ["position 10"]
        runs = page.evaluate(COUNT_RUNS)
        box = page.locator(f"{HERO} g.mark-image image").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.8)
        page.mouse.move(box["x"] + box["width"] / 2 + 2, box["y"] + box["height"] * 0.8 + 0.5)
        page.wait_for_function(f"() => ({HERO_STATE})('table').value !== 10", timeout=10_000)
        after = page.evaluate(HERO_STATE, "table")
        assert after["value"] == pytest.approx(0.8 * 128, abs=1.5)  # the row under the pointer
        assert after["labels"] == [f"position {after['value']}"]  # the clock shows it
        row_height = box["height"] / 128
        assert after["row"] == pytest.approx(after["value"] * row_height, abs=0.5)
        assert page.evaluate("() => window.__posvizRuns") == runs  # no server round trip
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


POINT_ON_TOP = """([low, high]) => {
    // a dot of the path (its aria-label says its position) that nothing else covers
    const chart = [...document.querySelectorAll('.st-key-hero [data-testid="stVegaLiteChart"]')]
        .find(c => c.offsetParent !== null);
    for (const dot of chart.querySelectorAll('g.mark-symbol path[aria-label*="position: "]')) {
        const p = Number(dot.getAttribute('aria-label').match(/position: (\\d+)/)[1]);
        const r = dot.getBoundingClientRect();
        const x = r.x + r.width / 2, y = r.y + r.height / 2;
        if (p >= low && p <= high && document.elementFromPoint(x, y) === dot) return [p, x, y];
    }
    return null;
}"""


def test_pointing_at_a_dot_on_the_path_crosses_its_row_in_the_matrix(page, server):
    """The learned page's hero: the dot under the pointer is crossed in the similarity matrix."""
    _open_hero(page, f"{server}/learned")  # MiniLM: 512 positions, starting at the seam (128)
    before = page.evaluate(HERO_STATE, "matrix")
    found = page.evaluate(POINT_ON_TOP, [300, 500])
    assert found is not None, "no uncovered dot of positions 300…500 on the path"
    position, x, y = found
    runs = page.evaluate(COUNT_RUNS)
    page.mouse.move(x, y)
    page.wait_for_function(
        f"p => ({HERO_STATE})('matrix').value === p", arg=position, timeout=10_000
    )
    after = page.evaluate(HERO_STATE, "matrix")
    side = page.locator(f"{HERO} g.mark-image image").bounding_box()["height"]
    assert after["row"] == pytest.approx(position * side / 512, abs=0.5) != before["row"]
    assert set(after["labels"]) == {f"position {position}"}  # the ring's label (and its halo)
    assert page.evaluate("() => window.__posvizRuns") == runs


def test_play_moves_every_linked_view_in_the_browser_without_a_rerun(page, server):
    """▶ play advances the shared position by a Vega timer: the table's outlined row and the
    clock's label move together, and the server runs no script for it; stopped, the views
    return to the linked position (the page's slider) and stay there."""
    _open_hero(page, f"{server}/sinusoidal")
    bindings = page.locator(f"{HERO} .vega-bindings")
    start = page.evaluate(HERO_STATE, "table")
    runs = page.evaluate(COUNT_RUNS)
    bindings.locator('input[type="checkbox"]').check()
    page.wait_for_function(
        f"start => ({HERO_STATE})('table').value >= start + 3", arg=start["value"], timeout=10_000
    )
    moved = page.evaluate(HERO_STATE, "table")
    assert moved["row"] > start["row"]  # the outline moved down the table
    assert moved["labels"] == [f"position {moved['value']}"]  # and the hands with it
    bindings.locator('input[type="checkbox"]').uncheck()
    page.wait_for_function(
        f"start => ({HERO_STATE})('table').value === start", arg=start["value"], timeout=10_000
    )
    # stopped: nothing moves again while the timer would have ticked several times (a wait for
    # the failure, which ends the moment it happens, not a sleep before a look)
    from playwright.sync_api import TimeoutError as NoMove

    with pytest.raises(NoMove):
        page.wait_for_function(
            f"start => ({HERO_STATE})('table').value !== start", arg=start["value"], timeout=1_000
        )
    assert page.evaluate(HERO_STATE, "table") == start  # everything back where the link says
    assert page.evaluate("() => window.__posvizRuns") == runs  # no script rerun for any frame
