"""The learned-tables page in a real headless Chromium against a real Streamlit server."""

from __future__ import annotations

import pytest
from browser_support import browser_page, start_streamlit_server, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path_factory.mktemp("hf"))}
    url, process = start_streamlit_server(env=env)
    yield url
    stop_process(process)


@pytest.fixture(scope="module")
def page(server):
    with browser_page(width=1400, height=1600) as tab:
        yield tab


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
