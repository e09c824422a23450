"""A page's heavy computation in a thread of its own (posviz.jobs.detached): a follower that
stops following (a Streamlit rerun) neither stops nor restarts it; its elapsed time runs without
progress reports and leaves out the time queued; nobody following makes it leave the queue; and
a computation waiting for a job slot says what it waits for and about how long."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from posviz import jobs


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")


def _wait_until(predicate, timeout: float = 10.0) -> None:
    pause = threading.Event()
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        pause.wait(0.01)


def test_a_rerun_follows_the_same_computation_instead_of_starting_it_again() -> None:
    calls, release = [], threading.Event()

    def run(*, on_wait, should_stop, progress):
        calls.append(1)
        progress(0.4, "passes 2 of 5")
        release.wait(10)
        progress(1.0, "done")
        return "result"

    first = jobs.detached(("test", "rerun"), "a test computation", run)
    _wait_until(lambda: first.view().fraction == 0.4)
    # the first follower's script run stops here (a rerun); the next one asks again by key
    again = jobs.detached(("test", "rerun"), "a test computation", run)
    assert again is first and again.view().step == "passes 2 of 5"
    release.set()
    assert again.wait(10) and again.result() == "result"
    assert calls == [1]  # computed once: the finished parts were kept
    after = jobs.detached(("test", "rerun"), "a test computation", lambda **_: "fresh")
    assert after is not first and after.wait(10) and after.result() == "fresh"


def test_elapsed_time_runs_between_progress_reports_and_leaves_out_the_queue(one_slot) -> None:
    holding, release, step_started = threading.Event(), threading.Event(), threading.Event()
    finish, acquired, go = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.job_slot("probe"):
            holding.set()
            release.wait(10)

    def run(*, on_wait, should_stop, progress):
        with jobs.job_slot("probe", on_wait=on_wait, should_stop=should_stop):
            acquired.set()
            go.wait(10)  # no report yet: the slot alone says it left the queue
            progress(0.02, "Dequantising the checkpoint (once) …")  # one long step
            step_started.set()
            finish.wait(10)
        return 1

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    job = jobs.detached(("test", "tick"), "a test computation", run)
    _wait_until(lambda: job.view().position == 1)
    queued_since = time.monotonic()
    _wait_until(lambda: time.monotonic() - queued_since > 0.3)
    release.set()
    holder.join(10)
    assert acquired.wait(10)
    assert job.view().position == 0
    go.set()
    assert step_started.wait(10)
    at_start = job.view()
    assert at_start.position == 0 and at_start.elapsed_s < 0.3  # the queue's 0.3 s left out
    _wait_until(lambda: job.view().elapsed_s > at_start.elapsed_s + 0.2)  # no report between
    later = job.view()
    assert later.step == at_start.step and later.step_s >= 0.2
    finish.set()
    assert job.wait(10) and job.result() == 1


def test_nobody_following_makes_it_leave_the_queue(one_slot) -> None:
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.job_slot("probe"):
            holding.set()
            release.wait(10)

    def run(*, on_wait, should_stop, progress):
        with jobs.job_slot("probe", on_wait=on_wait, should_stop=should_stop):
            return "never"

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    try:
        job = jobs.detached(("test", "idle"), "a test computation", run, idle_s=0.05)
        assert job._done.wait(10)  # not a follower's look: nobody follows it
        with pytest.raises(jobs.JobCancelled):
            job.result()
    finally:
        release.set()
        holder.join(10)


def test_the_queue_line_says_what_runs_and_when_this_one_starts(one_slot) -> None:
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.described("the lab's warm-up, training “Q”", lambda: 40.0), jobs.job_slot("lab"):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        text = jobs.queue_wait_text(1, what="Computing SmolLM2")
    finally:
        release.set()
        holder.join(10)
    assert text.startswith("Computing SmolLM2 waits for its turn.")
    assert (
        "one heavy computation at a time: the lab's warm-up, training “Q” (about 40 s left)" in text
    )
    assert text.endswith("It should start in about 40 s.")
    assert "slot" not in text  # plain words, not the server's mechanics


def test_a_start_time_counts_every_job_ahead_on_the_first_slot_to_free_up() -> None:
    ahead = jobs.QueueAhead(running=(("a", 30.0), ("b", 100.0)), ahead=(("c", 50.0),), slots=2)
    assert ahead.start_in() == 80.0  # c takes a's slot at 30 and ends at 80, before b
    assert jobs.QueueAhead((("a", 30.0),), (), slots=2).start_in() == 0.0  # a slot is idle
    unknown = jobs.QueueAhead((("a", None), ("b", 10.0)), (), slots=2)
    assert unknown.start_in() is None
    text = jobs.queue_wait_text(3, what="Computing X", ahead=unknown)
    assert "2 heavy computations at once: a and b (about 10 s left) are running" in text
    assert "not known yet" in text
    many = jobs.QueueAhead((("a", 30.0),), (("c", 200.0), ("d", 5.0)), slots=1)
    assert many.start_in() == 235.0
    assert "2 more wait ahead of it" in jobs.queue_wait_text(3, what="X", ahead=many)
    assert "about 4 min" in jobs.queue_wait_text(3, what="X", ahead=many)


def test_the_time_left_counts_down_between_reports_and_never_grows(monkeypatch) -> None:
    clock, reported, release = [100.0], threading.Event(), threading.Event()
    fake = SimpleNamespace(monotonic=lambda: clock[0], time=time.time, sleep=time.sleep,
                           strftime=time.strftime)  # fmt: skip
    monkeypatch.setattr(jobs, "time", fake)  # this module's clock only

    def run(*, on_wait, should_stop, progress):
        clock[0] = 110.0
        progress(0.5, "half of the passes")  # 10 s for half: about 10 s left
        reported.set()
        release.wait(10)
        return 1

    job = jobs.detached(("test", "countdown"), "a test computation", run)
    assert reported.wait(10)
    assert job.view().left_s == pytest.approx(10.0)
    clock[0] = 113.0
    view = job.view()
    assert view.left_s == pytest.approx(7.0) and view.elapsed_s == pytest.approx(13.0)
    assert "about 7 s left" in jobs.wait_text(view.step, view.fraction, view.elapsed_s,
                                              left_s=view.left_s)  # fmt: skip
    clock[0] = 125.0  # the step outlasts its estimate: no time left is claimed, none grows
    view = job.view()
    assert view.left_s is None and view.step_s == pytest.approx(15.0)
    text = jobs.wait_text(view.step, view.fraction, view.elapsed_s, left_s=view.left_s,
                          step_s=view.step_s)  # fmt: skip
    assert "left" not in text and "this step 15 s so far; 25 s elapsed" in text
    release.set()
    assert job.wait(10)
