"""posviz.jobs: a bounded, first-come-first-served slot pool, tested with real threads."""

from __future__ import annotations

import threading

import pytest

from posviz import jobs


@pytest.fixture
def one_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "1")


def _wait_until(predicate, timeout: float = 10.0) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if predicate():
            return
        done.wait(0.01)
    raise AssertionError("condition not reached")


def test_waiters_get_the_slot_in_arrival_order_and_see_their_position(one_slot: None) -> None:
    order: list[int] = []
    positions: dict[int, list[int]] = {1: [], 2: []}
    release = threading.Event()

    def holder() -> None:
        with jobs.job_slot("test"):
            order.append(0)
            release.wait(10)

    def waiter(i: int) -> None:
        with jobs.job_slot("test", on_wait=positions[i].append):
            order.append(i)

    threads = [threading.Thread(target=holder)]
    threads[0].start()
    _wait_until(lambda: jobs.running() == 1)
    for i in (1, 2):
        threads.append(threading.Thread(target=waiter, args=(i,)))
        threads[-1].start()
        _wait_until(lambda i=i: jobs.queue_length() == i)
    _wait_until(lambda: positions[2] and positions[1])
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == [0, 1, 2]
    assert positions[1][0] == 1 and positions[2][0] == 2  # 1 = next in line
    assert jobs.queue_length() == 0 and jobs.running() == 0


def test_should_stop_leaves_the_queue_with_job_cancelled(one_slot: None) -> None:
    release, stop = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        with jobs.job_slot("test"):
            release.wait(10)

    def waiter() -> None:
        try:
            with jobs.job_slot("test", should_stop=stop.is_set):
                pass
        except jobs.JobCancelled as error:
            errors.append(error)

    first = threading.Thread(target=holder)
    first.start()
    _wait_until(lambda: jobs.running() == 1)
    second = threading.Thread(target=waiter)
    second.start()
    _wait_until(lambda: jobs.queue_length() == 1)
    stop.set()
    second.join(10)
    assert len(errors) == 1 and "position 1" in str(errors[0])
    assert jobs.queue_length() == 0  # the cancelled waiter did not stay in line
    release.set()
    first.join(10)
    with jobs.job_slot("test"):  # the pool still works
        assert jobs.running() == 1


def test_max_jobs_slots_run_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSVIZ_MAX_JOBS", "2")
    release = threading.Event()
    peak: list[int] = []

    def work() -> None:
        with jobs.job_slot("test"):
            peak.append(jobs.running())
            release.wait(10)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    _wait_until(lambda: jobs.running() == 2 and jobs.queue_length() == 1)
    release.set()
    for thread in threads:
        thread.join(10)
    assert max(peak) == 2
