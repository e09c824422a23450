"""Helpers for real-browser tests and benchmarks: a Streamlit server on a free loopback port and the
system Chromium driven by Playwright.

    from browser_support import browser_page, start_streamlit_server, launch_chromium, stop_process

``POSVIZ_CHROMIUM`` overrides the browser binary (default: /usr/bin/chromium, then chromium on
PATH). Without a browser the tests are skipped with a clear message, unless
``POSVIZ_REQUIRE_BROWSER=1`` (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--mute-audio",
]


def _skip_or_fail(message: str) -> None:
    if os.environ.get("POSVIZ_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{message} (POSVIZ_REQUIRE_BROWSER=1 makes this an error)")
    pytest.skip(message)


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def start_streamlit_server(
    app_path: str | Path = ROOT / "app.py", env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[str, subprocess.Popen]:
    """Start ``streamlit run app_path`` on a free 127.0.0.1 port; wait until /_stcore/health is ok.

    Returns ``(base_url, process)``; stop it with :func:`stop_process`.
    """
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "posviz.ui.launch",  # ``streamlit run`` as every start command of the project runs it
        "run",
        str(app_path),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    return start_server(command, port=port, env=env, timeout=timeout)


def start_server(
    command: list[str],
    *,
    port: int,
    env: dict[str, str] | None = None,
    cwd: str | Path = ROOT,
    timeout: float = 60,
) -> tuple[str, subprocess.Popen]:
    """Start ``command`` (a Streamlit server listening on 127.0.0.1:``port``) and wait until its
    /_stcore/health says ok (the one server helper of the tests: the browser tests, the Export
    menu's download test and the wheel's ``posviz-app``).

    Returns ``(base_url, process)``; stop it with :func:`stop_process`.

    Raises:
        RuntimeError: it exited (with its output) or was not healthy within ``timeout`` s.
    """
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        command, cwd=str(cwd), env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, timeout=timeout)
    except RuntimeError:
        stop_process(process)
        raise
    return url, process


def wait_healthy(url: str, process: subprocess.Popen | None, *, timeout: float = 60) -> None:
    """Wait until ``url``/_stcore/health says ok while ``process`` (if given) runs: a Streamlit
    server, or HAProxy in front of some (the load scripts and the benchmarks wait with this too).

    Raises:
        RuntimeError: the process exited (with its last output, from whichever of stdout and
            stderr is a pipe) or ``timeout`` s passed.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            pipe = process.stdout or process.stderr
            output = pipe.read() if pipe else b""
            if isinstance(output, bytes):
                output = output.decode(errors="replace")
            raise RuntimeError(f"the server exited with {process.returncode}:\n{output[-2000:]}")
        if _healthy(url):
            return
        time.sleep(0.1)  # polling a condition, not waiting for time to pass
    raise RuntimeError(f"the server did not report healthy on {url} within {timeout} s")


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate a process we started (by its handle), killing it if it does not stop in
    ``timeout`` seconds; close its output pipes. Used by the browser tests, the benchmarks and the
    load scripts (servers and the proxy)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    for pipe in (process.stdout, process.stderr):
        if pipe:
            pipe.close()


def find_chromium() -> str | None:
    """Path of the system Chromium: $POSVIZ_CHROMIUM, /usr/bin/chromium, or one on PATH."""
    candidates = [os.environ.get("POSVIZ_CHROMIUM"), "/usr/bin/chromium"]
    candidates += [shutil.which(name) for name in ("chromium", "chromium-browser")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def launch_chromium(playwright, **kwargs):
    """Launch the system Chromium headless via Playwright (no ``playwright install`` needed).

    Skips the test (or fails it, with POSVIZ_REQUIRE_BROWSER=1) when no Chromium is installed.
    """
    path = find_chromium()
    if path is None:
        _skip_or_fail(
            "No Chromium found: install it (Debian/Ubuntu: apt-get install -y chromium) or set "
            "POSVIZ_CHROMIUM=/path/to/chromium"
        )
    return playwright.chromium.launch(
        executable_path=path, headless=True, args=CHROMIUM_ARGS, **kwargs
    )


def sync_playwright():
    """``playwright.sync_api.sync_playwright`` or a skip/fail when Playwright is not installed."""
    try:
        from playwright.sync_api import sync_playwright as factory
    except ImportError:
        _skip_or_fail("Playwright is not installed: pip install playwright")
    return factory()


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 1000, **options) -> Iterator:
    """A Playwright page in a fresh headless Chromium; closed (with the browser) afterwards.
    ``options`` go to ``new_page`` (e.g. ``accept_downloads=True``)."""
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, **options)
            yield page
        finally:
            browser.close()


def wait_for_app(page, timeout_ms: float = 60_000) -> None:
    """Wait until the page's script run has finished and something was drawn."""
    page.wait_for_selector(
        '[data-testid="stApp"][data-test-script-state="notRunning"] [data-testid="stHeading"]',
        timeout=timeout_ms,
    )


#: true once some chart is drawn and no chart's size or number of marks changed for three frames
#: (Vega lays a chart out after the first paint); evaluated every animation frame.
_CHARTS_SETTLED = """() => {
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
    const sig = JSON.stringify(charts.map(c => {
        const s = c.querySelector('svg.marks, canvas');
        if (!s) return null;
        const r = s.getBoundingClientRect();
        return [r.width, r.height, s.querySelectorAll('*').length];
    }));
    const state = window.__posvizSettle || (window.__posvizSettle = {sig: '', same: 0});
    state.same = sig === state.sig ? state.same + 1 : 0;
    state.sig = sig;
    return state.same >= 3 && charts.some(c => c.querySelector('svg.marks, canvas'));
}"""


def wait_for_charts(page, timeout_ms: float = 60_000) -> None:
    """Wait until the page's charts are drawn and laid out (a condition, not a fixed sleep)."""
    page.evaluate("() => { window.__posvizSettle = null; }")
    page.wait_for_function(_CHARTS_SETTLED, polling="raf", timeout=timeout_ms)


@contextlib.contextmanager
def chromium() -> Iterator:
    """A headless Chromium (Playwright's ``Browser``) for several pages; closed afterwards. The
    ``browser`` fixture of tests/conftest.py is this, once per test module."""
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def streamlit_servers(
    env: dict[str, str] | None = None, themes: tuple[str, ...] = ("light", "dark")
) -> Iterator[dict[str, str]]:
    """The app served once per theme, ``{"light": url, "dark": url}`` (Streamlit's dark theme),
    with ``env``; all stopped afterwards."""
    started: list[subprocess.Popen] = []
    try:
        urls = {}
        for theme in themes:
            extra = {"STREAMLIT_THEME_BASE": "dark"} if theme == "dark" else {}
            urls[theme], process = start_streamlit_server(env={**(env or {}), **extra})
            started.append(process)
        yield urls
    finally:
        for process in started:
            stop_process(process)


#: the two windows a reader reads the pages in, (width, height) in CSS pixels: a laptop, a phone
DESKTOP, PHONE = (1440, 900), (390, 844)


def new_page(browser, size: tuple[int, int] = DESKTOP, **options):
    """A new page of ``browser`` with a ``size`` window (``options``: Playwright's ``new_page``
    options, e.g. ``color_scheme``)."""
    return browser.new_page(viewport={"width": size[0], "height": size[1]}, **options)


def top_of(page, selector: str) -> float | None:
    """The top of the first element that ``selector`` matches, in px from the window's top; None
    when nothing matches."""
    return page.evaluate(
        "s => { const e = document.querySelector(s);"
        " return e ? e.getBoundingClientRect().top : null; }",
        selector,
    )


def open_page(browser, url: str, size: tuple[int, int], timeout_ms: float = 300_000):
    """A new page of ``browser`` at ``size`` on ``url``, its script run and its charts laid out."""
    page = new_page(browser, size)
    page.goto(url)
    wait_for_app(page, timeout_ms=timeout_ms)
    wait_for_charts(page)
    return page


#: the input widgets a page may show (a verdict must come before the first of them)
WIDGETS = (
    '[data-testid="stSlider"], [data-testid="stSelectbox"], [data-testid="stRadio"], '
    '[data-testid="stCheckbox"], [data-testid="stTextInput"], [data-testid="stNumberInput"], '
    '[data-testid="stMultiSelect"], [data-testid="stToggle"]'
)


#: every chart's box, its drawn width, text cut with "…", dashed rings and square images
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


def charts_fit_uncut(page, where: str) -> list[dict]:
    """Wait until the page's charts are drawn and laid out; assert that no SVG chart is drawn wider
    than its place and no chart text is cut short with "…" (``where`` names the view in the
    message). Returns every chart's :data:`CHART_GEOMETRY` (canvas charts too) for more checks."""
    wait_for_charts(page)
    charts = page.evaluate(CHART_GEOMETRY)
    for chart in charts:
        if not chart["svg"]:
            continue  # canvas charts: their geometry is checked on the spec (test_charts)
        assert chart["drawn"] <= chart["width"] + 2, f"{where}: a chart is cut: {chart}"
        assert not chart["cut"], f"{where}: text cut short: {chart['cut']}"
    return charts


#: each chart subtitle's contrast against the app's background
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


#: whether the app is drawn on a dark background (the browser's dark colour scheme took)
DARK_BACKGROUND = """() => { const c = getComputedStyle(document.querySelector(
    '[data-testid="stApp"]')).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number);
    return Math.max(...c) < 60; }"""


#: marks every drawn chart so that :data:`CHARTS_REDRAWN` can tell when a new theme
#: has redrawn it (Streamlit draws a new chart; a new window size only reflows the old one)
MARK_CHARTS = """() => document.querySelectorAll('[data-testid="stVegaLiteChart"]')
    .forEach(c => { const s = c.querySelector('svg.marks, canvas'); if (s) s.__before = true; })"""
CHARTS_REDRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter(c => c.offsetWidth > 0)
    .every(c => { const s = c.querySelector('svg.marks, canvas'); return s && !s.__before; })"""
#: the drawn charts' widths, as one string (it changes once the charts reflow to a new window)
CHART_WIDTHS = """() => JSON.stringify([...document.querySelectorAll(
    '[data-testid="stVegaLiteChart"] svg.marks, [data-testid="stVegaLiteChart"] canvas')]
    .map(s => Math.round(s.getBoundingClientRect().width)))"""


def switch_to_dark(page) -> None:
    """Switch the browser to its dark colour scheme and wait until Streamlit has followed it and
    redrawn every shown chart."""
    page.evaluate(MARK_CHARTS)
    page.emulate_media(color_scheme="dark")
    page.wait_for_function(DARK_BACKGROUND, timeout=30_000)
    page.wait_for_function(CHARTS_REDRAWN, timeout=60_000)


def resize_and_reflow(page, size: tuple[int, int]) -> None:
    """Resize the window to ``size`` and wait until the charts have reflowed to it."""
    widths = page.evaluate(CHART_WIDTHS)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_function(f"() => ({CHART_WIDTHS})() !== {widths!r}", timeout=60_000)
