"""The load test as a test: 20 concurrent websocket sessions for 60 s against one server.

About 90 s on 2 cores. ``POSVIZ_LOAD_SECONDS`` / ``POSVIZ_LOAD_SESSIONS`` change the size.
"""

from __future__ import annotations

import asyncio
import os

import pytest

pytestmark = pytest.mark.slow


def test_twenty_sessions_for_a_minute_get_their_own_charts_and_no_errors():
    from loadtest import SCENARIOS, load_target, run_load

    sessions = int(os.environ.get("POSVIZ_LOAD_SESSIONS", "20"))
    seconds = float(os.environ.get("POSVIZ_LOAD_SECONDS", "60"))
    with load_target() as (url, pid):
        report = asyncio.run(run_load(url, pid, sessions, seconds, SCENARIOS))
    print(report)
    assert report["errors"] == {}, report
    assert report["charts_checked"] >= sessions, report
    assert len(report["scenarios"]) >= 2, report
    # memory: bounded caches keep the server's RSS from running away under load
    assert report["rss_after_mb"] < 3 * max(report["rss_before_mb"], 300), report
