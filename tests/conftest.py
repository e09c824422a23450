"""Shared test setup: repository paths, AppTest helpers, offline guards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Tests never talk to the real hub: anything that forgets to point HF_ENDPOINT at a loopback server
# fails fast instead of hanging on a closed network.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def app_test(
    page: str | None = None,
    *,
    query: dict[str, str] | None = None,
    timeout: float = 60,
    server_address: str = "127.0.0.1",
):
    """An ``AppTest`` of app.py, switched to ``page`` (e.g. "pages/sinusoidal.py") and run once.

    ``query`` pre-fills ``st.query_params`` the way a shared link would; ``server_address`` is the
    ``server.address`` the app sees ("" or "0.0.0.0": reachable from other machines).
    """
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    # Show real exception messages to the tests (the app itself hides them from users).
    config.set_option("client.showErrorDetails", "full")
    # A local server on loopback, as scripts/run-app.sh starts it (server paths allowed there);
    # tests of an exposed server set another address themselves (see test_tables_page).
    config.set_option("server.address", server_address)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def assert_no_exception(at) -> None:
    """The page ran without an uncaught exception (Streamlit's red box)."""
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def root() -> Path:
    return ROOT
