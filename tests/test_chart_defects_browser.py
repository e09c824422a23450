"""Chart defects a reader saw, checked in a real Chromium at 1440×900, at 390×844 (a phone) and in
the dark theme, on the drawn SVG:

* no chart, legend, axis title or rule label reaches past the chart's own box or the window
  (legends cut at 390 px, RoPE's circle 13 px wider than a phone, the nn.Embedding bars 960 px
  wide, p-RoPE's "context" label);
* an axis that counts heads shows whole numbers ("0.0 … 16.0" before), and a y title is whole
  (ALiBi's "attention weight facto");
* no line lies on the plot's top border (p-RoPE's band that stays at 1);
* every legend swatch has the colour of a mark it names (nn.Embedding's black and grey swatches
  named no bar);
* no two flat lines of a hero lie on one another (/compare's drew five of seven families at 0 or 1);
* the probing chart's ideal diagonal is drawn over its points, not hidden under them;
* while /permutation loads its model, no spinner is drawn over the page's text.

One server per theme and one browser for the module; each page is opened once per size and theme.
Needs Chromium (see tests/browser_support.py).
"""

from __future__ import annotations

import pytest
from browser_support import (
    launch_chromium,
    start_streamlit_server,
    stop_process,
    sync_playwright,
    wait_for_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ("alibi", "p_rope", "rope", "embedding_lookup", "probing", "nope", "compare")
VIEWS = {
    "1440": ("light", (1440, 900)),
    "390": ("light", (390, 844)),
    "dark": ("dark", (1440, 900)),
}

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
      .map(g => [g.getAttribute('class'), g.getBoundingClientRect()])
      // 4 px of slack: a glyph's box overhangs its text a little (rotated titles more)
      .filter(([, r]) => r.width > 0 && (r.right > right + 4 || r.left < box.left - 4
        || r.top < box.top - 4))
      .map(([c, r]) => `${c.split(' ').pop()} ${Math.round(r.left)}..${Math.round(r.right)}`
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


@pytest.fixture(scope="module")
def servers():
    light, light_process = start_streamlit_server()
    dark, dark_process = start_streamlit_server(env={"STREAMLIT_THEME_BASE": "dark"})
    yield {"light": light, "dark": dark}
    stop_process(light_process)
    stop_process(dark_process)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def tabs(browser):
    """One browser tab per view (size and theme), reused by every page."""
    opened = {}
    yield lambda view, size: opened.setdefault(
        view, browser.new_page(viewport={"width": size[0], "height": size[1]})
    )
    for tab in opened.values():
        tab.close()


def _charts(tab, url: str) -> list[dict]:
    tab.goto(url)
    wait_for_app(tab, timeout_ms=300_000)
    tab.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # lazy charts too
    tab.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
        ".every(c => c.offsetWidth === 0 || c.querySelector('svg, canvas'))"
        " && document.querySelector('[data-testid=\"stVegaLiteChart\"] svg.marks')",
        timeout=60_000,
    )
    return tab.evaluate(GEOMETRY)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", PAGES)
def test_charts_are_whole_and_honest(servers, tabs, name, view):
    theme, size = VIEWS[view]
    charts = _charts(tabs(view, size), f"{servers[theme]}/{name}")
    assert charts, f"/{name}: no chart drawn"
    for chart in charts:
        where = f"/{name} at {view}, chart {chart['label']!r}"
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


def test_no_spinner_draws_over_the_text_while_a_model_loads(servers, tabs):
    tab = tabs("1440", VIEWS["1440"][1])
    tab.goto(f"{servers['light']}/permutation")  # the first visit loads MiniLM
    for _ in range(1200):  # polls a condition (the hero drawn) every 100 ms, at most 2 min
        state = tab.evaluate(OVERPRINT)
        assert not state["hits"], f"a spinner is drawn over {state['hits']}"
        if state["done"]:
            break
        tab.wait_for_timeout(100)
    assert state["done"], "the hero never appeared"
