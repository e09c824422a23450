"""The load test as a test: 20 concurrent websocket sessions against one server, each going
through its scenario's values once and then checking the next chart against the reference.

About a minute of load on 2 cores (a condition, not a duration; ``POSVIZ_LOAD_SECONDS`` is the
limit).
``POSVIZ_LOAD_SESSIONS`` changes the number of sessions.
"""

from __future__ import annotations

import asyncio
import os

import pytest

pytestmark = pytest.mark.slow


def test_twenty_sessions_at_once_each_get_their_own_charts_and_no_errors():
    from loadtest import SCENARIOS, load_target, run_load

    sessions = int(os.environ.get("POSVIZ_LOAD_SESSIONS", "20"))
    limit = float(os.environ.get("POSVIZ_LOAD_SECONDS", "240"))
    with load_target() as (url, pid):
        report = asyncio.run(run_load(url, pid, sessions, limit, SCENARIOS, checks=1))
    print(report)
    assert report["errors"] == {}, report
    logs = report["_stats"].sessions.values()
    unfinished = [log.scenario for log in logs if log.checked < 1]
    assert not unfinished, f"sessions that checked no chart within {limit:.0f} s: {unfinished}"
    assert len(report["scenarios"]) >= 2, report
    # memory: bounded caches keep the server's RSS from running away under load
    assert report["rss_after_mb"] < 3 * max(report["rss_before_mb"], 300), report
