"""Every answer-first page in a real Chromium, as a reader sees it: at 1440×900 and at 390×844
(a phone). Text contrast in both themes, subtitles included, is tests/test_a11y_browser.py's.

* the first screen at 1440×900 shows the verdict sentence above the first widget and the hero
  chart inside the viewport;
* no chart is wider than its place (nothing cut at the right edge), no chart text is cut short
  with "…", circles are round and similarity matrices square at both widths;
* while a page loads (watched in the 1440×900 visit), no section sits empty (a heading with
  nothing after it) for more than a second without a spinner that says what it waits for.

Needs Chromium (see tests/browser_support.py); each server is started once per module.
"""

from __future__ import annotations

import time

import pytest
from browser_support import open_page, streamlit_servers, wait_for_app, wait_for_charts

from posviz.navigation import explorer_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: every explorer page of the registry, by URL (a page or family added there is checked at once)
PAGES = tuple(spec.url_path for spec in explorer_pages())


DESKTOP, PHONE = (1440, 900), (390, 844)
WIDGETS = (
    '[data-testid="stSlider"], [data-testid="stSelectbox"], [data-testid="stRadio"], '
    '[data-testid="stCheckbox"], [data-testid="stTextInput"], [data-testid="stNumberInput"], '
    '[data-testid="stMultiSelect"], [data-testid="stToggle"]'
)
CHARTS = '[data-testid="stVegaLiteChart"]'


@pytest.fixture(scope="module")
def servers():
    with streamlit_servers(themes=("light",)) as urls:
        yield urls


def _open(browser, url: str, size: tuple[int, int]):
    return open_page(browser, url, size)


def _top(page, selector: str) -> float | None:
    return page.evaluate(
        "s => { const e = document.querySelector(s);"
        " return e ? e.getBoundingClientRect().top : null; }",
        selector,
    )


def _first_screen_shows_the_verdict_above_the_widgets_and_the_hero(page) -> None:
    """Checked on the desktop page of the chart test below (one load per page and size)."""
    verdict, widget = _top(page, ".st-key-verdict"), _top(page, WIDGETS)
    hero = page.evaluate(
        "() => { const r = document.querySelector('.st-key-hero').getBoundingClientRect();"
        " return [r.top, r.bottom]; }"
    )
    assert verdict is not None and verdict < DESKTOP[1], "no verdict on the first screen"
    assert widget is None or verdict < widget, "a widget comes before the verdict"
    text = page.inner_text(".st-key-verdict")
    assert len(text) > 40, text
    assert hero[0] < DESKTOP[1] - 200, f"the hero starts at {hero[0]} px, below the fold"


CHART_GEOMETRY = r"""() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
.map(c => {
    const svg = c.querySelector('svg.marks');
    const box = c.getBoundingClientRect();
    const out = {label: c.getAttribute('aria-label') || '', width: box.width, svg: !!svg};
    if (!svg) return out;
    out.drawn = svg.getBoundingClientRect().width;
    out.cut = [...svg.querySelectorAll('text')].map(t => t.textContent)
        .filter(t => t.endsWith('…'));
    // a ring: a dashed path that ends where it starts (a line chart's dashes do not)
    const closed = p => { const n = (p.getAttribute('d') || '').match(/-?[\d.]+/g) || [];
        return n.length > 8 && Math.abs(n[0] - n[n.length - 2]) < 1
            && Math.abs(n[1] - n[n.length - 1]) < 1; };
    const ring = [...svg.querySelectorAll('path[stroke-dasharray="3,3"]')].filter(closed)
        .map(p => p.getBBox()).filter(b => b.width > 40);
    out.rings = ring.map(b => [b.width, b.height]);
    const image = svg.querySelector('image');
    out.image = image ? [image.getBBox().width, image.getBBox().height] : null;
    return out;
})"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1440", "390"])
@pytest.mark.parametrize("name", PAGES)
def test_charts_fit_their_place_uncut_round_and_square(servers, browser, name, size):
    """At the desktop size the page's load is watched first (no section waits empty without a
    spinner), then its first screen: the verdict above the widgets and the hero."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(f"{servers['light']}/{name}")
        if size == DESKTOP:
            _no_section_waits_empty_without_a_spinner(page, name)
        wait_for_app(page, timeout_ms=300_000)
        wait_for_charts(page)
        if size == DESKTOP:
            _first_screen_shows_the_verdict_above_the_widgets_and_the_hero(page)
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # draw lazy charts too
        wait_for_charts(page)
        for chart in page.evaluate(CHART_GEOMETRY):
            if not chart["svg"]:
                continue  # canvas charts: their geometry is checked on the spec (test_charts)
            assert chart["drawn"] <= chart["width"] + 2, f"{name}: a chart is cut: {chart}"
            assert not chart["cut"], f"{name}: text cut short: {chart['cut']}"
            for width, height in chart["rings"]:
                assert width == pytest.approx(height, rel=0.03), f"{name}: an oval circle"
            if "Square cells" in chart["label"] and chart["image"]:
                width, height = chart["image"]
                assert width == pytest.approx(height, rel=0.02), f"{name}: a stretched matrix"
    finally:
        page.close()


CONTRAST = """() => {
    const parse = s => (s.match(/\\d+(\\.\\d+)?/g) || []).slice(0, 3).map(Number);
    const lum = rgb => { const c = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
        : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]; };
    const hex = h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16));
    const app = document.querySelector('[data-testid="stApp"]');
    const bg = parse(getComputedStyle(app).backgroundColor);
    return [...document.querySelectorAll('.role-title-subtitle text')].map(t => {
        const fill = t.getAttribute('fill') || '#000000';
        const [a, b] = [lum(hex(fill)), lum(bg)];
        return [t.textContent, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
    });
}"""


EMPTY_SECTION = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const items = [...main.querySelectorAll('[data-testid="stElementContainer"]')]
        .filter(e => e.offsetHeight > 0);
    const last = items[items.length - 1];
    const spinner = document.querySelector('[data-testid="stSpinner"]');
    const waiting = spinner && spinner.innerText.trim().length > 10;
    const heading = last && last.querySelector('[data-testid="stHeading"]');
    return {empty: !!heading && !waiting, heading: heading ? heading.innerText : '',
        running: !!document.querySelector(
        '[data-testid="stApp"][data-test-script-state="running"]')};
}"""


def _no_section_waits_empty_without_a_spinner(page, name: str) -> None:
    """Poll the page while its script runs: no section (a heading last on the page) stays empty
    for over a second without a spinner that says what it waits for."""
    empty_since, deadline = None, time.monotonic() + 300
    while time.monotonic() < deadline:
        state = page.evaluate(EMPTY_SECTION)
        now = time.monotonic()
        if state["empty"]:
            empty_since = empty_since or now
            assert now - empty_since <= 1.0, (
                f"{name}: section {state['heading']!r} empty for over 1 s without a spinner"
            )
        else:
            empty_since = None
        if not state["running"] and now > deadline - 295:
            break
        page.wait_for_timeout(200)
