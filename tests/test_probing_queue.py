"""The probing pages' wait line: what runs ahead and when the probe should start, in the words
every heavy computation uses (:func:`posviz.jobs.queue_wait_text`), and a probe that runs names
itself in the waits of the computations behind it."""

from __future__ import annotations

import threading

import pytest

from posviz import jobs
from posviz.ui.probing import wait_line


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")


def test_a_queued_probe_says_what_runs_ahead_and_when_it_starts() -> None:
    ahead = jobs.QueueAhead(
        running=(("the lab's warm-up, training “Q”", 70.0),), ahead=(("a", 15.0),), slots=1
    )
    line = wait_line(2, "The large probe of MiniLM-L6", ahead=ahead)
    assert line == jobs.queue_wait_text(2, what="The large probe of MiniLM-L6", ahead=ahead)
    assert line.startswith("The large probe of MiniLM-L6 waits for its turn.")
    assert "the lab's warm-up, training “Q” (about 70 s left) is running" in line
    assert "1 more waits ahead of it" in line
    assert line.endswith("It should start in about 85 s.")  # 70 s, then a's 15 s
    assert "slot" not in line and "place" not in line  # the old "free slot / place N" words


def test_a_probe_computed_for_another_visitor_says_so() -> None:
    line = wait_line(0, "This probe")
    assert line == "This probe is being computed for another visitor; its result shows here."


def test_a_running_probe_names_itself_to_those_queued_behind_it(one_slot) -> None:
    holding, release = threading.Event(), threading.Event()

    def probe() -> None:  # as run_probe_reports holds its slot
        with jobs.described("the probing page's large probe of MiniLM-L6"), jobs.job_slot("probe"):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=probe)
    holder.start()
    try:
        assert holding.wait(10)
        line = wait_line(1, "Computing SmolLM2")
    finally:
        release.set()
        holder.join(10)
    assert "one heavy computation at a time: the probing page's large probe of MiniLM-L6 is" in line
    assert line.endswith("not known yet.")  # a probe reports no time left: none is promised
