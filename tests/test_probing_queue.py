"""The probing pages' wait: a queued probe says what runs ahead of it and when it should start, in
the words every heavy computation uses (:func:`posviz.jobs.queue_wait_text`), and a running
probe names itself in the waits of the computations queued behind it."""

from __future__ import annotations

import threading

import pytest

from posviz import jobs
from posviz.ui import probing


class _Slot:
    """Stands in for ``st.empty()``: keeps what was drawn in it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, text: str) -> None:
        self.lines.append(text)

    def empty(self) -> None:
        self.lines.append("")


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch) -> _Slot:
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")
    slot = _Slot()
    monkeypatch.setattr(probing.st, "empty", lambda: slot)
    return slot


def _holding(about: str, left: float):
    """A thread holding the one job slot as ``about`` (``left`` seconds to go); its events."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.described(about, lambda: left), jobs.job_slot("lab"):
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(10)
    return thread, release


def test_a_queued_probe_says_what_runs_ahead_and_when_it_starts(one_slot) -> None:
    thread, release = _holding("the lab's warm-up, training “Q”", left=70.0)
    try:
        with probing.queued("The large probe of MiniLM-L6", "a probe") as (_slot, on_wait):
            on_wait(1)  # as job_slot reports it: next in the queue
    finally:
        release.set()
        thread.join(10)
    line = one_slot.lines[0]
    assert line.startswith("The large probe of MiniLM-L6 waits for its turn.")
    assert "one heavy computation at a time: the lab's warm-up, training “Q” (about 70 s" in line
    assert line.endswith("It should start in about 70 s.")
    assert "slot" not in line and "place" not in line  # the old "free slot / place N" words
    assert one_slot.lines[-1] == ""  # cleared once the probe is done


def test_a_running_probe_names_itself_to_those_queued_behind_it(one_slot) -> None:
    about = "the probing page's large probe of MiniLM-L6"
    holding, release = threading.Event(), threading.Event()

    def probe() -> None:  # the probe takes its slot inside queued(), as heavy_probes does
        with probing.queued("The large probe of MiniLM-L6", about), jobs.job_slot("probe"):
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=probe)
    thread.start()
    try:
        assert holding.wait(10)
        line = jobs.queue_wait_text(1, what="Computing SmolLM2")
    finally:
        release.set()
        thread.join(10)
    assert f"one heavy computation at a time: {about} is running" in line
    assert line.endswith("not known yet.")  # a probe promises no time left
