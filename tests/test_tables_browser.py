"""The learned-tables page in a real headless Chromium against a real Streamlit server."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path_factory.mktemp("hf"))}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "app.py"),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not _healthy(url):  # poll the health endpoint, pausing on the process between tries
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.25)
            pytest.fail(f"streamlit exited with {proc.returncode}")
        assert time.monotonic() < deadline, "server did not become healthy in 60 s"
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def page(server):
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1400, "height": 1600})
        yield tab
        browser.close()


_CHARTS = '[data-testid="stVegaLiteChart"]'


def _drawn(page, count: int) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('{_CHARTS} svg, {_CHARTS} canvas').length >= {count}",
        timeout=60_000,
    )


def test_offline_default_draws_minilm_and_a_sinusoid(server, page):
    page.goto(f"{server}/learned")
    _drawn(page, 2)
    text = page.inner_text("body")
    assert "bundled (512×384)" in text and "sinusoidal:512x384" in text
    assert "780 KiB read" in text


def test_choosing_a_view_redraws_and_updates_the_link(server, page):
    page.goto(f"{server}/learned")
    _drawn(page, 2)
    page.get_by_text("Norm per position", exact=True).click()
    page.wait_for_function("location.search.includes('lrn_view=norms')", timeout=30_000)
    page.wait_for_function(
        "document.body.innerText.includes('A sinusoid has the same norm')", timeout=30_000
    )
    _drawn(page, 2)
    # the copied link reproduces the view in a fresh page
    link = page.url
    page.goto(link)
    page.wait_for_function(
        "document.body.innerText.includes('A sinusoid has the same norm')", timeout=60_000
    )
