"""One lab page in a real browser: press Run, watch progress, see the answer, reload the link and
see the stored answer at once (no training on the second visit)."""

from __future__ import annotations

import pytest
from browser_support import browser_page, start_streamlit_server, stop_process, wait_for_app

pytestmark = pytest.mark.browser

#: a tiny run: the progress bar appears at once ("Starting…", then steps), the answer follows.
QUERY = (
    "lab_learned_seeds=2&lab_learned_steps=40&lab_learned_width=8&lab_learned_heads=2"
    "&lab_learned_layers=1&lab_learned_batch=8&lab_learned_eval_batch=16"
)
TRAIN_TIMEOUT_MS = 400_000  # generous: CI machines share their cores


@pytest.fixture
def server(tmp_path):
    url, process = start_streamlit_server(env={"POSVIZ_LAB_DIR": str(tmp_path / "lab")})
    try:
        yield url
    finally:
        stop_process(process)


def test_run_progress_result_and_reload(server):
    with browser_page() as page:
        page.goto(f"{server}/lab_learned?{QUERY}")
        wait_for_app(page)
        page.get_by_role("button", name="Run").click()
        # live progress: the polling fragment's bar says what the worker is doing
        progress = page.locator('[data-testid="stProgress"]')
        progress.wait_for(timeout=60_000)
        assert any(word in progress.inner_text() for word in ("Starting", "Waiting", "step"))
        answer = page.get_by_role("heading", name="Answer")
        failed = page.get_by_text("The run failed").or_(page.get_by_text("Stopped"))
        answer.or_(failed).first.wait_for(timeout=TRAIN_TIMEOUT_MS)
        assert answer.count() == 1, page.locator('[data-testid="stAlert"]').all_inner_texts()
        link = page.url
        assert "lab_learned_run=" in link

        # the run's URL, opened again, shows the stored answer without a Run button or progress
        page.goto(link)
        wait_for_app(page)
        page.get_by_role("heading", name="Answer").wait_for(timeout=15_000)
        assert page.locator('[data-testid="stProgress"]').count() == 0
        assert page.get_by_role("button", name="Run").count() == 0
        assert page.get_by_text("read from the run store (no training)").count() == 1
