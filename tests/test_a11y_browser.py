"""Accessibility in a real Chromium: every page of the navigation, light and dark theme.

* axe-core (``axe-playwright-python`` bundles it) finds no serious or critical violation;
* every chart is announced by what it shows (its finding), never as "Vega visualization";
* a chart adds at most two Tab stops (Fullscreen and the Export menu), not Streamlit's five;
* chart text (axis, legend and header labels, titles) reads at ≥ 4.5:1 on the page (WCAG 1.4.3);
* in the dark theme every legend's colour swatch reads at ≥ 3:1 (WCAG 1.4.11, non-text
  contrast), so no series vanishes on the dark background. (On white, Tableau 10's orange, teal,
  yellow, pink and light grey read at 1.5–2.6:1; the categorical palette is not yet changed.)

The page list is :func:`posviz.navigation.all_pages` (a new page is checked without editing this
file). One server and one browser page per theme visit every page in turn. Needs Chromium (see
tests/browser_support.py).
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

from posviz.navigation import all_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Streamlit's own sidebar navigation puts its section headers (``div``) directly in a ``ul``;
#: that markup is the framework's, not posviz's, and no setting changes it. Only these two rules,
#: and only inside that list, are set aside.
FRAMEWORK_RULES = ("list", "listitem")
MAX_TAB_STOPS_PER_CHART = 2

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


@pytest.fixture(scope="module")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


IN_FRAMEWORK_NAV = """targets => targets.map(t => { const e = document.querySelector(t);
    return !!(e && e.closest('[data-testid="stSidebarNavItems"]')); })"""


def _blocking(page, violations: list[dict]) -> list[str]:
    """Serious and critical axe violations, less the framework's own navigation markup."""
    out = []
    for violation in violations:
        if violation["impact"] not in ("serious", "critical"):
            continue
        nodes = violation["nodes"]
        if violation["id"] in FRAMEWORK_RULES:
            targets = [str(node["target"][-1]) for node in nodes]
            inside = page.evaluate(IN_FRAMEWORK_NAV, targets)
            nodes = [node for node, framework in zip(nodes, inside, strict=True) if not framework]
        for node in nodes[:3]:
            out.append(f"{violation['id']} ({violation['impact']}): {node['html'][:160]}")
    return out


def _chart_problems(charts: list[dict], *, theme: str) -> list[str]:
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
        for paint, ratio, _opacity in chart["swatches"] if theme == "dark" else ():
            if ratio < 3:
                problems.append(f"{label[:50]!r}: legend colour {paint} at {ratio:.2f}:1")
    return problems


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_page_is_accessible(browser, axe, theme):
    env = {"STREAMLIT_THEME_BASE": theme}
    url, process = start_streamlit_server(env=env)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    failures: dict[str, list[str]] = {}
    try:
        for spec in all_pages():
            page.goto(f"{url}/{spec.url_path}")
            print(f"/{spec.url_path}", flush=True)  # which page, should one never finish
            wait_for_app(page, timeout_ms=180_000)
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # lazy charts too
            page.wait_for_function(
                "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
                ".every(c => c.offsetWidth === 0 || c.querySelector('svg, canvas'))",
                timeout=60_000,
            )
            found = _blocking(page, axe.run(page).response["violations"])
            found += _chart_problems(page.evaluate(CHART_CHECKS), theme=theme)
            if found:
                failures[spec.url_path] = found
    finally:
        page.close()
        stop_process(process)
    report = "\n".join(f"/{name}: " + "\n    ".join(items) for name, items in failures.items())
    assert not failures, f"{theme} theme:\n{report}"
