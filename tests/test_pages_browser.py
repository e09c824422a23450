"""Every page of the registry in a real Chromium, as a reader sees it: one load per page, its
three views reached as a reader reaches them (1440×900 light; the browser switched to dark, which
Streamlit follows by redrawing every chart, as a fresh dark load draws it; the window narrowed to
390×844, where the charts reflow), every check of a view run once it is drawn and quiet.

While the page loads (at 1440 light; the server is fresh, so this is each page's first run):

* no section (a heading last on the page) sits empty for more than a second without a spinner
  that says what it waits for; no spinner is drawn over the page's text (/permutation loads
  MiniLM then).

On the drawn page:

* **first screen** (explorer pages, 1440): the verdict sentence above the first widget, the hero
  chart inside the viewport;
* **fit** (explorer pages, both widths; the phone view is drawn in the dark theme, which does
  not change a chart's geometry): no chart wider than its place, no chart text cut with
  "…", circles round, similarity matrices square;
* **whole and honest charts** (explorer pages, every view): no legend, axis title or rule label
  reaches past the chart's box or the window; head axes count in whole numbers; no line on the
  plot's top border; no two flat hero lines on one another (/compare drew five of seven families
  at 0 or 1); every legend swatch has the colour of a mark; the probing diagonal over its points;
* **crafted links** (one page per way a free-text parameter is echoed, and one of each other
  set of parameter kinds; every page in AppTest): the page opened with every query parameter
  its ``PageSpec`` declares set to one
  hostile value holding every form of link (``tests/hostile_support.py``) draws no ``<a>`` or
  ``<img>`` naming the attacker's host. Streamlit's Markdown autolinks bare URLs, ``www.`` hosts
  and e-mail addresses *after* backslash escapes are resolved, so this looks at what Chromium
  drew, not at the escaped text; the hosted profile's extra step (server paths hidden) is
  ``tests/test_hostile_links.py``'s;
* **the sidebar** (every page, 1440): one link per page of the registry (app.py draws them as
  plain page links), the shown page's marked; a card's picture is the one drawn for the theme
  (the home page's were white boxes on the dark page);
* **accessibility** (every page, 1440, light and dark): axe-core (``axe-playwright-python``
  bundles it) finds no serious or critical violation, nothing set aside (the sidebar's page list
  included; every rule in light, the colour rules in dark: the rest read the same DOM); every
  chart is announced by its finding, never as "Vega visualization"; a chart adds at most two
  Tab stops (Fullscreen and the Export menu); chart text reads at ≥ 4.5:1 (WCAG 1.4.3); every
  legend swatch at ≥ 3:1 in both themes (WCAG 1.4.11; ``tests/test_charts.py`` checks every
  palette, family and control colour the same way, without a browser).

The page lists are the registry's (``all_pages()``, ``explorer_pages()``: a new page is checked
without editing this file). One server for the module: the app follows the browser's colour
scheme, so the dark views are Chromium's ``prefers-color-scheme: dark`` on the same server and each
page is computed once. Needs Chromium (see tests/browser_support.py).
"""

from __future__ import annotations

import time
import urllib.parse

import pytest
from browser_support import (
    DESKTOP,
    PHONE,
    WIDGETS,
    charts_fit_uncut,
    new_page,
    resize_and_reflow,
    switch_to_dark,
    top_of,
    wait_for_app,
    wait_for_charts,
)
from hostile_support import HOST, REPRESENTATIVE

from posviz.navigation import (
    HOME,
    all_pages,
    explorer_pages,
    page_params,
    page_spec,
    shown_at_defaults,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: every explorer page of the registry, by URL (a page or family added there is checked at once)
PAGES = tuple(spec.url_path for spec in explorer_pages())
ALL = tuple(spec.url_path for spec in all_pages())

MAX_TAB_STOPS_PER_CHART = 2
CHARTS_DRAWN = (
    "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
    ".every(c => c.offsetWidth === 0 || c.querySelector('svg, canvas'))"
)


def _path(name: str) -> str:
    """The page's address as the app links it: the home page is the root (``/home`` is no page
    of the app: Streamlit answers it with its "Page not found" dialog over the home page)."""
    return "" if name == page_spec(HOME).url_path else name


@pytest.fixture(scope="module")
def servers(app_server):
    """One server for both themes (the process's shared one): the app follows the browser's
    colour scheme (no theme base in .streamlit/config.toml), so each page is computed once and
    its dark visit is a later one."""
    return {"light": app_server, "dark": app_server}


@pytest.fixture(scope="module")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


@pytest.mark.parametrize("name", ALL)
def test_the_page_reads_whole_and_accessible(servers, browser, axe, name):
    """One load per page, its views reached as a reader reaches them: 1440 light, then the
    browser switched to dark (Streamlit redraws every chart in the new theme, as on a fresh dark
    load), then the window narrowed to 390 (the charts reflow to the phone's width)."""
    explorer = name in PAGES
    page = new_page(browser)
    try:
        page.goto(f"{servers['light']}/{_path(name)}")
        _watch_the_load(page, name)
        wait_for_app(page, timeout_ms=300_000)
        if explorer:
            wait_for_charts(page)
            _first_screen_shows_the_verdict_above_the_widgets_and_the_hero(page)
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # lazy charts too
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        _the_sidebar_lists_every_page_and_marks_this_one(page, name)
        _check_view(page, axe, name, "1440", explorer)

        switch_to_dark(page)
        _check_view(page, axe, name, "dark", explorer)

        if explorer:
            resize_and_reflow(page, PHONE)
            _check_view(page, axe, name, "390", explorer)
    finally:
        page.close()


#: the sidebar's page links: each one's target (the home page's is the root, "") and whether it
#: is drawn as the current page (bold)
SIDEBAR_LINKS = """() => [...document.querySelectorAll(
    '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')].map(a => [
    a.getAttribute('href'), Number(getComputedStyle(a.querySelector('p')).fontWeight) >= 600])"""


def _the_sidebar_lists_every_page_and_marks_this_one(page, name: str) -> None:
    """Every page reachable from the sidebar (plain links: Tab, Enter), the shown one marked."""
    page.wait_for_function(f"() => ({SIDEBAR_LINKS})().length >= {len(ALL)}", timeout=30_000)
    links = page.evaluate(SIDEBAR_LINKS)
    home = page_spec(HOME).url_path
    assert sorted(href or home for href, _ in links) == sorted(ALL), f"/{name}: {links}"
    marked = [href or home for href, bold in links if bold]
    assert marked == [name], f"/{name}: the sidebar marks {marked} as the current page"


#: the script has finished and everything is drawn, still and unfaded: not marked stale (Streamlit
#: fades a rerun's old elements); no skeleton (the placeholder Streamlit draws while an element's
#: code is still loading: under load it outlives the run by seconds); no finite animation or CSS
#: transition running (a fade back in); no element, or what holds it, below full opacity. Axe
#: reads half-drawn or faded text as low-contrast: checked from the run's end without the
#: skeleton and animation conditions, /lab_induction failed axe's contrast rule on its captions
#: in 1 of 2 runs of the lab pages at load 10-17; with them 0 of 4 failed at load 9-19 (the
#: 5-s minimum per page this replaces had hidden it).
QUIET = """() => !!document.querySelector(
        '[data-testid="stApp"][data-test-script-state="notRunning"]')
    && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && document.getAnimations().every(a => a.playState !== 'running'
        || a.effect.getComputedTiming().iterations === Infinity)
    && [...document.querySelectorAll('[data-testid="stElementContainer"]')].every(e => {
        for (let n = e; n && n.nodeType === 1; n = n.parentElement)
            if (Number(getComputedStyle(n).opacity) < 1) return false;
        return true; })"""


#: the axe rules whose outcome depends on the colours (the dark view runs these; 1440 light runs
#: every rule)
THEMED = ["color-contrast", "link-in-text-block"]


#: whether each card picture drawn for the light and for the dark theme is shown
CARD_PICTURES = """() => Object.fromEntries(['light', 'dark'].map(t => [t, [...document
    .querySelectorAll(`[class*="st-key-thumb${t}_"] img`)].map(i => i.offsetWidth > 0)]))"""


def _check_view(page, axe, name: str, view: str, explorer: bool) -> None:
    """Every check of one view on the page as it is now drawn."""
    theme = "dark" if view == "dark" else "light"
    page.wait_for_function(QUIET, timeout=60_000)
    if explorer:
        _charts_fit_uncut_round_and_square(page, f"/{name} at {view}")  # once drawn and laid out
        _charts_are_whole_and_honest(page, f"/{name} at {view}")
    pictures = page.evaluate(CARD_PICTURES)  # a card's picture: the one drawn for this theme
    other = "light" if theme == "dark" else "dark"
    assert all(pictures[theme]) and not any(pictures[other]), f"/{name} {view}: {pictures}"
    assert pictures[theme] or name != page_spec(HOME).url_path, "the home cards have no picture"
    if view != "390":
        # every axe rule at 1440 light; in dark only the rules a theme can change (the DOM is the
        # same page's: a full second run cost about 5x the CPU of these two). Only violations
        # come back whole: with every passing node too, /sinusoidal's answer was 15.8 MB of JSON
        # and took 19.8 s against 2.8 s (the same rules run; axe's ``resultTypes``)
        options = {"resultTypes": ["violations"]}  # every violation's every node, the rest one
        if view != "1440":
            options["runOnly"] = {"type": "rule", "values": THEMED}
        found = _blocking(axe.run(page, options=options).response["violations"])
        found += _chart_problems(page.evaluate(CHART_CHECKS))
        assert not found, f"/{name}, {theme} theme:\n    " + "\n    ".join(found)


#: every ``<a>``/``<img>`` whose target names the host, with the text of the element it sits in
FIND_LIVE = """host => [...document.querySelectorAll('a[href], img[src]')]
  .filter(el => (el.getAttribute('href') || el.getAttribute('src') || '').includes(host))
  .map(el => [el.tagName.toLowerCase(), el.getAttribute('href') || el.getAttribute('src'),
    (el.closest('[data-testid="stAlert"], [data-testid="stMarkdown"], '
      + '[data-testid="stCaptionContainer"], [data-testid="stWidgetLabel"], '
      + '[data-testid="stHeading"], [data-testid="stToast"]') || el.parentElement)
      .innerText.slice(0, 120)])"""


def _crafted_link_pages() -> tuple[str, ...]:
    """The pages whose link values can reach the screen other ways than the shared "Link
    parameter … ignored" message: the first page of each set of free-text parameters (a source
    or model id, echoed in labels and messages of the widget that reads it; named by their last
    part, so the table picker's ``*_id``/``*_rev``/``*_lab``/``*_path`` and the family pages'
    ``*_hub``/``*_rev`` are one set each), and of each other set of parameter kinds (numbers and
    choices only, a study's run id, none). Every page and every value goes through the same
    checks in AppTest (tests/test_hostile_links.py); this is what Chromium's renderer makes of
    each way a value is echoed."""
    chosen, seen = [], set()
    for spec in all_pages():
        params = page_params(spec)
        texts = frozenset(p.name.rsplit("_", 1)[-1] for p in params if p.kind == "text")
        way = ("text", texts) if texts else ("kinds", frozenset(p.kind for p in params))
        if way not in seen:
            chosen.append(spec.url_path)
        seen.add(way)
    return tuple(chosen)


@pytest.mark.parametrize("name", _crafted_link_pages())
def test_a_crafted_link_draws_no_link_or_image(servers, browser, name):
    """Every parameter the page reads at once gets the representative hostile value (each value
    alone goes through ``safe_md`` in tests/test_hostile_links.py)."""
    declared = shown_at_defaults(page_params(page_spec(name)))  # as its PageSpec declares them
    keys = [p.name for p in declared] or ["unknown_param"]  # a page with none still gets one
    query = urllib.parse.urlencode(dict.fromkeys(keys, REPRESENTATIVE))
    page = new_page(browser)
    try:
        page.goto(f"{servers['light']}/{_path(name)}?{query}", wait_until="domcontentloaded")
        wait_for_app(page, timeout_ms=300_000)
        live = page.evaluate(FIND_LIVE, HOST)
        assert not live, f"/{name} ({', '.join(keys)}): {live}"
    finally:
        page.close()


# --------------------------------------------------------------------------- while it loads


EMPTY_SECTION = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const items = [...main.querySelectorAll('[data-testid="stElementContainer"]')]
        .filter(e => e.offsetHeight > 0);
    const last = items[items.length - 1];
    const spinner = document.querySelector('[data-testid="stSpinner"]');
    const waiting = spinner && spinner.innerText.trim().length > 10;
    const heading = last && last.querySelector('[data-testid="stHeading"]');
    return {empty: !!heading && !waiting, heading: heading ? heading.innerText : '',
        drawn: items.length, running: !!document.querySelector(
        '[data-testid="stApp"][data-test-script-state="running"]')};
}"""


OVERPRINT = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const spinners = [...main.querySelectorAll('[data-testid="stSpinner"]')]
        .map(s => s.getBoundingClientRect()).filter(r => r.height > 0);
    const texts = [...main.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .filter(t => !t.closest('[data-testid="stSpinner"]'))
        .map(t => [t.innerText.slice(0, 40), t.getBoundingClientRect()]);
    const hits = [];
    for (const s of spinners) for (const [text, r] of texts) {
        const w = Math.min(s.right, r.right) - Math.max(s.left, r.left);
        const h = Math.min(s.bottom, r.bottom) - Math.max(s.top, r.top);
        if (w > 2 && h > 2) hits.push(text);
    }
    return {hits, done: !!document.querySelector('.st-key-hero [data-testid="stVegaLiteChart"]')};
}"""


#: polls (100 ms apart) a section may sit empty, without a spinner and with nothing new drawn,
#: while the script runs: more means the page computes with nothing saying what it waits for.
STALLED_POLLS = 10


def _watch_the_load(page, name: str) -> None:
    """Poll the page while its script runs: no section (a heading last on the page) stays empty,
    with nothing new drawn, for :data:`STALLED_POLLS` polls in a row without a spinner that says
    what it waits for, and no spinner is drawn over the page's text."""
    stalled, seen, deadline = 0, None, time.monotonic() + 300
    while time.monotonic() < deadline:
        state = page.evaluate(EMPTY_SECTION)
        if state["empty"] and state["running"]:
            progress = (state["heading"], state["drawn"])
            stalled = stalled + 1 if progress == seen else 1
            seen = progress
            assert stalled < STALLED_POLLS, (
                f"{name}: section {state['heading']!r} empty for {stalled} polls without a "
                "spinner while nothing else was drawn"
            )
        else:
            stalled, seen = 0, None
        hits = page.evaluate(OVERPRINT)["hits"]
        assert not hits, f"{name}: a spinner is drawn over {hits}"
        if not state["running"] and state["drawn"]:
            break  # the run has drawn and ended (before the first run: nothing drawn yet)
        page.wait_for_timeout(100)  # a poll's interval: the condition is the run's end


# --------------------------------------------------------------------------- first screen and fit


def _first_screen_shows_the_verdict_above_the_widgets_and_the_hero(page) -> None:
    verdict, widget = top_of(page, ".st-key-verdict"), top_of(page, WIDGETS)
    hero = page.evaluate(
        "() => { const r = document.querySelector('.st-key-hero').getBoundingClientRect();"
        " return [r.top, r.bottom]; }"
    )
    assert verdict is not None and verdict < DESKTOP[1], "no verdict on the first screen"
    assert widget is None or verdict < widget, "a widget comes before the verdict"
    text = page.inner_text(".st-key-verdict")
    assert len(text) > 40, text
    assert hero[0] < DESKTOP[1] - 200, f"the hero starts at {hero[0]} px, below the fold"


def _charts_fit_uncut_round_and_square(page, name: str) -> None:
    for chart in charts_fit_uncut(page, name):
        if not chart["svg"]:
            continue  # canvas charts: their geometry is checked on the spec (test_charts)
        for width, height in chart["rings"]:
            assert width == pytest.approx(height, rel=0.03), f"{name}: an oval circle"
        if "Square cells" in chart["label"] and chart["image"]:
            width, height = chart["image"]
            assert width == pytest.approx(height, rel=0.02), f"{name}: a stretched matrix"


# --------------------------------------------------------------------------- whole and honest


GEOMETRY = r"""() => {
  const out = [];
  const nums = d => (d.match(/-?\d+(\.\d+)?(e-?\d+)?/g) || []).map(Number);
  for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
    const svg = chart.querySelector('svg.marks');
    if (!svg || chart.offsetWidth === 0) continue;
    const box = svg.getBoundingClientRect();
    const right = Math.min(box.right, chart.getBoundingClientRect().right, window.innerWidth);
    const label = (chart.getAttribute('aria-label') || '').slice(0, 60);
    const over = [...svg.querySelectorAll(
        '.role-legend, .role-axis-title, .role-title, .mark-text.role-mark text')]
      .map(g => [g.getAttribute('class')?.split(' ').pop()
        || `text "${g.textContent.slice(0, 30)}"`, g.getBoundingClientRect()])
      // 4 px of slack: a glyph's box overhangs its text a little (rotated titles more)
      .filter(([, r]) => r.width > 0 && (r.right > right + 4 || r.left < box.left - 4
        || r.top < box.top - 4))
      .map(([c, r]) => `${c} ${Math.round(r.left)}..${Math.round(r.right)}`
        + ` beyond ${Math.round(right)}`);
    if (box.right > window.innerWidth + 1) over.push(`svg right ${box.right} > window`);
    const ticks = [...svg.querySelectorAll('.role-axis')].map(axis => [
      axis.querySelector('.role-axis-title text')?.textContent || '',
      [...axis.querySelectorAll('.role-axis-label text')].map(t => t.textContent)]);
    // plot areas: each view's background rect; lines whose topmost point sits on its top edge
    const onBorder = [];
    for (const cell of svg.querySelectorAll('.mark-group.role-scope, .role-frame')) {
      const frame = cell.querySelector(':scope > path.background, :scope > g > path.background');
      if (!frame) continue;
      const top = frame.getBoundingClientRect().top;
      for (const line of cell.querySelectorAll('.mark-line.role-mark path')) {
        const r = line.getBoundingClientRect();
        if (r.height > 0 && r.width > 20 && Math.abs(r.top - top) < 1.5) onBorder.push(r.top);
      }
    }
    // flat lines (a family at 0 or 1 all along) drawn at one height lie on one another
    const flat = [...svg.querySelectorAll('.mark-line.role-mark path')]
      .map(p => p.getBoundingClientRect()).filter(r => r.width > 40 && r.height < 2)
      .map(r => Math.round(r.top));
    const hero = !!chart.closest('.st-key-hero');
    const stacked = !hero ? [] : flat.filter(
      (y, i) => flat.some((z, j) => j < i && Math.abs(y - z) < 2));
    const paints = new Set([...svg.querySelectorAll('.role-mark path, .role-mark rect')]
      .flatMap(m => [m.getAttribute('fill'), m.getAttribute('stroke')])
      .filter(c => c && c !== 'transparent' && c !== 'none'));
    const swatches = [...svg.querySelectorAll('.role-legend-symbol path')]
      .map(p => { const c = [p.getAttribute('fill'), p.getAttribute('stroke')]
        .filter(x => x && x !== 'transparent' && x !== 'none'); return c; })
      .filter(c => c.length && !svg.querySelector('.role-legend-gradient'));
    const stray = swatches.filter(c => !c.some(x => paints.has(x))).map(c => c.join('/'));
    // DOM order is paint order: is the dashed diagonal after (over) the points?
    const marks = [...svg.querySelectorAll('.role-mark')];
    const dashed = marks.findIndex(g => g.querySelector('path[stroke-dasharray]')
      && g.classList.contains('mark-line'));
    const points = marks.findIndex(g => g.classList.contains('mark-symbol'));
    out.push({label, over, ticks, onBorder, stray, dashed, points, stacked,
      title: svg.querySelector('.role-title-text text')?.textContent || ''});
  }
  return out;
}"""


def _charts_are_whole_and_honest(page, where_page: str) -> None:
    for chart in page.evaluate(GEOMETRY):
        where = f"{where_page}, chart {chart['label']!r}"
        assert not chart["over"], f"{where}: cut: {chart['over']}"
        assert not chart["onBorder"], f"{where}: a line lies on the plot's top border"
        assert not chart["stacked"], f"{where}: flat lines on one another at y {chart['stacked']}"
        assert not chart["stray"], f"{where}: legend colours {chart['stray']} match no mark"
        for title, labels in chart["ticks"]:
            if title.startswith("head"):
                assert all(label.lstrip("−-").isdigit() for label in labels), (
                    f"{where}: head ticks {labels} are not whole numbers"
                )
        if chart["title"].startswith("Predicted vs actual"):
            assert chart["dashed"] > chart["points"] >= 0, f"{where}: diagonal under the points"


# --------------------------------------------------------------------------- accessibility


CHART_CHECKS = r"""() => {
    const parse = s => (s.match(/\d+(\.\d+)?/g) || []).slice(0, 3).map(Number);
    const hex = h => h.length === 4 ? [1, 2, 3].map(i => 17 * parseInt(h[i], 16))
        : [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16));
    const rgb = c => c.startsWith('#') ? hex(c) : parse(c);
    const lum = v => { const c = v.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92
        : Math.pow((x + 0.055) / 1.055, 2.4); }); return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]; };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)];
        return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
    const bg = parse(getComputedStyle(document.querySelector('[data-testid="stApp"]'))
        .backgroundColor);
    const tabbable = 'a[href], button, input, select, textarea, summary, '
        + '[tabindex]:not([tabindex="-1"])';
    const shown = e => e.offsetWidth > 0 && getComputedStyle(e).visibility !== 'hidden';
    return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
      .filter(shown).map(chart => {
        const box = chart.closest('[data-testid="stElementContainer"]');
        // the toolbar's stops; a linked chart's own controls (Vega-bound position, ▶ play) are
        // the chart's inputs, not its toolbar
        let stops = [...box.querySelectorAll(tabbable)]
            .filter(e => shown(e) && !e.closest('.vega-bindings')).length;
        const next = box.nextElementSibling;  // the Export menu under the chart
        if (next && next.querySelector('[data-testid="stPopover"]')) stops += 1;
        const texts = [...chart.querySelectorAll(
            '.role-axis-label text, .role-axis-title text, .role-legend-label text, '
            + '.role-legend-title text, .role-title-text text, .role-title-subtitle text')]
            .filter(t => t.getAttribute('fill') && t.getAttribute('fill') !== 'transparent'
                && t.textContent.trim())
            .map(t => [t.textContent, ratio(rgb(t.getAttribute('fill')), bg)]);
        const swatches = [...chart.querySelectorAll('.role-legend-symbol path')].map(p => {
            const style = getComputedStyle(p);
            const paint = [p.getAttribute('fill'), p.getAttribute('stroke')]
                .filter(c => c && c !== 'transparent' && c !== 'none' && !c.startsWith('url'));
            const best = Math.max(0, ...paint.map(c => ratio(rgb(c), bg)));
            const label = p.closest('.role-legend-entry, g')?.parentNode
                ?.querySelector('.role-legend-label text')?.textContent || '';
            return [paint.join('/'), best, style.opacity];
        });
        return {label: chart.getAttribute('aria-label') || '', stops, texts, swatches};
    });
}"""


def _blocking(violations: list[dict]) -> list[str]:
    """Serious and critical axe violations, unfiltered: the sidebar's page list included (app.py
    draws it as plain links; Streamlit's own list broke the ``list`` / ``listitem`` rules)."""
    out = []
    for violation in violations:
        if violation["impact"] not in ("serious", "critical"):
            continue
        for node in violation["nodes"][:3]:
            out.append(f"{violation['id']} ({violation['impact']}): {node['html'][:160]}")
    return out


def _chart_problems(charts: list[dict]) -> list[str]:
    problems = []
    for chart in charts:
        label = chart["label"]
        if not label.strip() or label.strip() == "Vega visualization":
            problems.append(f"a chart has no description (announced as {label!r})")
        if chart["stops"] > MAX_TAB_STOPS_PER_CHART:
            problems.append(f"{label[:50]!r}: {chart['stops']} Tab stops")
        for text, ratio in chart["texts"]:
            if ratio < 4.5:
                problems.append(f"{label[:50]!r}: text {text!r} at {ratio:.2f}:1")
        for paint, ratio, _opacity in chart["swatches"]:
            if ratio < 3:
                problems.append(f"{label[:50]!r}: legend colour {paint} at {ratio:.2f}:1")
    return problems
