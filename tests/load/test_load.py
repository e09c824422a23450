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


@pytest.fixture(scope="module")
def target():
    from loadtest import load_target

    with load_target() as (url, pid):
        yield url, pid


def test_twenty_sessions_at_once_each_get_their_own_charts_and_no_errors(target):
    from loadtest import SCENARIOS, run_load

    url, pid = target
    sessions = int(os.environ.get("POSVIZ_LOAD_SESSIONS", "20"))
    limit = float(os.environ.get("POSVIZ_LOAD_SECONDS", "240"))
    report = asyncio.run(run_load(url, pid, sessions, limit, SCENARIOS, checks=1))
    print(report)
    assert report["errors"] == {}, report
    logs = report["_stats"].sessions.values()
    unfinished = [log.scenario for log in logs if log.checked < 1]
    assert not unfinished, f"sessions that checked no chart within {limit:.0f} s: {unfinished}"
    assert len(report["scenarios"]) >= 2, report
    # memory: bounded caches keep the server's RSS from running away under load
    assert report["rss_after_mb"] < 3 * max(report["rss_before_mb"], 300), report


def test_a_session_lost_in_its_first_cycle_is_judged_by_its_own_path(target):
    """Scale-smoke runs 7 and 10 failed on "another view" after a reconnect: /learned's tiny hub
    model clamps the Position to its 40 rows and the larger tables keep it, so the whole-cycle
    reference shows 39 where a session that has set only gpt2 shows 63; the URL rebuilt that
    session's view exactly. The harness judges a first-cycle loss against its own path replayed
    (``first_cycle``), so this reconnect is the same view."""
    from loadtest import _SCENARIO, SessionLog, Stats, _recover, reference
    from st_client import StreamlitSession

    url, _ = target
    sc = _SCENARIO["learned:lrn_a_hub"]
    first = sc.values[0]

    async def lose_after_first_value():
        refs = await reference(url, sc)
        stats, log = Stats(), SessionLog(scenario=sc.name)
        async with StreamlitSession(url, sc.page) as session:
            await sc.prepare(session)
            await sc.act(session, first)
            await _recover(session, sc, (None, first), refs, stats, log, url=url, path=(first,))
        return log

    log = asyncio.run(lose_after_first_value())
    assert (log.rebuilt_same, log.rebuilt_other) == (1, 0), log.rebuilt_other_how
