"""End to end: the real server, the sinusoidal page in headless Chromium, a slider moved with the
keyboard, and a shared link opened cold. Needs Chromium (see tests/browser_support.py)."""

from __future__ import annotations

import pytest
from browser_support import browser_page, start_streamlit_server, stop_process, wait_for_app

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
def server():
    url, process = start_streamlit_server()
    yield url
    stop_process(process)


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


def test_shared_link_opens_the_same_view(page, server):
    _open(page, f"{server}/sinusoidal?sin_n=64&sin_d=32&sin_layout=split&sin_pos=5&sin_pair=2")
    assert _slider(page, "Positions (sequence length)").get_attribute("aria-valuetext") == "64"
    assert _slider(page, "Width d_model (even)").get_attribute("aria-valuetext") == "32"
    assert page.evaluate(CHART_TEXT, [-1, "64×32 table"])
    assert page.evaluate(CHART_TEXT, [-1, "Position 5 on the circle"])
    assert page.evaluate(CHART_TEXT, [-1, "pair 2 (dims 2, 18)"])  # split: sin i, cos d/2+i
    assert page.get_by_role("radio", name="split").is_checked()


def test_hostile_link_shows_a_message_not_a_traceback(page, server):
    _open(page, f"{server}/sinusoidal?sin_n=-5&sin_base=1e400", charts=4)  # 1 position: no k
    alerts = page.locator('[data-testid="stAlert"]').all_inner_texts()
    assert any("outside 1…8192" in text for text in alerts), alerts
    assert any("not a finite number" in text for text in alerts), alerts
    assert page.locator('[data-testid="stException"]').count() == 0


def test_canvas_heatmap_shows_block_tooltips_on_hover(page, server):
    _open(page, f"{server}/sinusoidal")
    chart = page.locator(CHARTS).first
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


def test_play_turns_the_clock_hands_in_the_browser_without_a_rerun(page, server):
    """▶ play advances the hero clock's position by a Vega timer: the chart's own slider moves,
    the label follows, and the server runs no script for it."""
    _open(page, f"{server}/sinusoidal")
    bindings = page.locator(f"{CHARTS} .vega-bindings:has(input[type=range])").first
    position = bindings.locator('input[type="range"]')
    start = int(position.input_value())
    runs = page.evaluate(
        "() => { window.__posvizRuns = 0; new MutationObserver(() => {"
        " const app = document.querySelector('[data-testid=stApp]');"
        " if (app.dataset.testScriptState === 'running') window.__posvizRuns++; })"
        ".observe(document.querySelector('[data-testid=stApp]'), {attributes: true});"
        " return window.__posvizRuns; }"
    )
    bindings.locator('input[type="checkbox"]').check()
    page.wait_for_function(
        "([el, start]) => Number(el.value) >= start + 3",
        arg=[position.element_handle(), start],
        timeout=10_000,
    )
    bindings.locator('input[type="checkbox"]').uncheck()
    stopped = int(position.input_value())
    page.wait_for_timeout(600)
    assert int(position.input_value()) == stopped  # paused: the hands stay put
    assert page.evaluate("() => window.__posvizRuns") == runs  # no script rerun for any frame
