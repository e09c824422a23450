"""posviz.jobs: a bounded, first-come-first-served slot pool, tested with real threads."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

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


# --------------------------------------------------------------------------- single flight


def test_single_flight_computes_once_and_waiters_see_its_queue_place(one_slot: None) -> None:
    """Five callers ask for one key while the pool's only slot is busy: the first queues (place
    1), the other four wait for it, see place 1, then 0 (computing), and all get one result."""
    calls: list[int] = []
    seen: dict[int, list[int]] = {i: [] for i in range(1, 5)}
    results: dict[int, object] = {}
    release, computing = threading.Event(), threading.Event()

    def compute() -> object:
        with jobs.job_slot("probe"):
            calls.append(1)
            computing.set()
            release.wait(10)
            return object()

    def ask(i: int) -> None:
        results[i] = jobs.single_flight("key", compute, on_wait=seen.get(i, []).append)

    with jobs.job_slot("other"):  # the only slot is busy: the leader queues at place 1
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(5)]
        threads[0].start()
        _wait_until(lambda: jobs.queue_length() == 1)
        for thread in threads[1:]:
            thread.start()
        _wait_until(lambda: jobs.flights_waiting("key") == 4 and all(seen.values()))
        assert all(1 in seen[i] for i in seen)  # the leader's place in the queue
    _wait_until(computing.is_set)
    _wait_until(lambda: all(0 in seen[i] for i in seen))  # being computed now
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1
    assert len({id(value) for value in results.values()}) == 1 and len(results) == 5
    assert jobs.flights_waiting("key") == 0


def test_single_flight_runs_different_keys_at_once() -> None:
    started = threading.Barrier(3, timeout=10)  # both computations must run at the same time

    def compute(name: str):
        def run() -> str:
            started.wait()
            return name

        return run

    out: dict[str, str] = {}
    threads = [
        threading.Thread(target=lambda k=k: out.update({k: jobs.single_flight(k, compute(k))}))
        for k in ("a", "b")
    ]
    for thread in threads:
        thread.start()
    started.wait()
    for thread in threads:
        thread.join(10)
    assert out == {"a": "a", "b": "b"}


def _leader_and_followers(compute, release: threading.Event, followers: int = 2) -> dict:
    """Start a leader, then ``followers`` callers of the same key; once they all wait, set
    ``release`` (the leader's computation waits for it); their outcomes (0: the leader's)."""
    outcomes: dict[int, object] = {}

    def ask(i: int) -> None:
        try:
            outcomes[i] = jobs.single_flight("shared", compute)
        except BaseException as error:  # the outcome under test
            outcomes[i] = error

    threads = [threading.Thread(target=ask, args=(0,))]
    threads[0].start()
    _wait_until(lambda: "shared" in jobs._flights)
    for i in range(1, followers + 1):
        threads.append(threading.Thread(target=ask, args=(i,)))
        threads[-1].start()
    _wait_until(lambda: jobs.flights_waiting("shared") == followers)
    release.set()
    for thread in threads:
        thread.join(10)
    return outcomes


def _leader_stops(error: BaseException, release: threading.Event):
    """A computation whose first call (the leader's) waits for ``release`` and then stops with
    ``error``; every later call returns "value". Returns (the list of calls, the computation)."""
    calls: list[int] = []

    def compute():
        calls.append(1)
        if len(calls) == 1:
            release.wait(10)
            raise error
        return "value"

    return calls, compute


def test_single_flight_hands_an_error_to_every_waiter_without_recomputing() -> None:
    calls, release = [], threading.Event()

    def compute():
        calls.append(1)
        release.wait(10)
        raise ValueError("model id 'x' is not on the hub")

    outcomes = _leader_and_followers(compute, release)
    assert len(calls) == 1
    assert all(isinstance(o, ValueError) and "'x'" in str(o) for o in outcomes.values())


def test_single_flight_a_waiter_takes_over_when_the_leader_leaves() -> None:
    """The leader's session left (JobCancelled): one waiter computes, the others get its value."""
    release = threading.Event()
    calls, compute = _leader_stops(jobs.JobCancelled("the leader's tab closed"), release)
    outcomes = _leader_and_followers(compute, release, followers=3)
    assert len(calls) == 2
    assert isinstance(outcomes[0], jobs.JobCancelled)
    assert [outcomes[i] for i in (1, 2, 3)] == ["value"] * 3


def test_single_flight_a_waiter_that_leaves_does_not_stop_the_computation() -> None:
    release, leave = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def compute():
        release.wait(10)
        return 42

    leader = threading.Thread(
        target=lambda: outcome.update(leader=jobs.single_flight("k", compute))
    )
    leader.start()
    _wait_until(lambda: "k" in jobs._flights)

    def wait_then_leave() -> None:
        try:
            jobs.single_flight("k", compute, should_stop=leave.is_set)
        except jobs.JobCancelled as error:
            outcome["follower"] = error

    follower = threading.Thread(target=wait_then_leave)
    follower.start()
    _wait_until(lambda: jobs.flights_waiting("k") == 1)
    leave.set()
    follower.join(10)
    assert isinstance(outcome["follower"], jobs.JobCancelled)
    release.set()
    leader.join(10)
    assert outcome["leader"] == 42 and jobs.flights_waiting("k") == 0


# --------------------------------------------------------------------------- claims


def _log_lines(directory: Path) -> list[str]:
    return (directory / "claims.log").read_text().splitlines()


def test_claim_makes_a_second_holder_wait_and_shows_the_holders_queue_place(
    one_slot: None, tmp_path: Path
) -> None:
    order: list[str] = []
    seen: list[int] = []
    inside, release = threading.Event(), threading.Event()

    def holder() -> None:
        with jobs.claim(tmp_path, "run1"), jobs.job_slot("lab"):
            order.append("first")
            inside.set()
            release.wait(10)

    def waiter() -> None:
        with jobs.claim(tmp_path, "run1", on_wait=seen.append):
            order.append("second")

    with jobs.job_slot("other"):  # the holder queues behind this: place 1
        first = threading.Thread(target=holder)
        first.start()
        _wait_until(lambda: jobs.queue_length() == 1)
        second = threading.Thread(target=waiter)
        second.start()
        _wait_until(lambda: 1 in seen)
    _wait_until(inside.is_set)
    _wait_until(lambda: 0 in seen)  # the holder computes now
    assert order == ["first"]
    release.set()
    first.join(10)
    second.join(10)
    assert order == ["first", "second"]
    assert not (tmp_path / "run1.claim").exists()
    assert [line.split()[1] for line in _log_lines(tmp_path)] == [
        "claimed", "released", "claimed", "released"
    ]  # fmt: skip


def test_a_waiter_that_finds_the_result_done_never_claims(tmp_path: Path) -> None:
    """One claim per result across processes: a process asks ``done()`` when it finds the key
    free; done, its block gets None and nothing is logged for it; not done, it claims."""
    stored: list[str] = []
    got: list[object] = []
    inside, release, polled = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with jobs.claim(tmp_path, "run1"):
            inside.set()
            release.wait(10)
            stored.append("result")  # stored before the claim is released

    def waiter() -> None:
        wait = lambda place: polled.set()  # noqa: E731
        with jobs.claim(tmp_path, "run1", done=lambda: bool(stored), on_wait=wait) as held:
            got.append(held)

    first = threading.Thread(target=holder)
    first.start()
    _wait_until(inside.is_set)
    second = threading.Thread(target=waiter)
    second.start()
    _wait_until(polled.is_set)  # it found the key held and waits
    release.set()
    first.join(10)
    second.join(10)
    assert got == [None]
    assert [line.split()[1] for line in _log_lines(tmp_path)] == ["claimed", "released"]
    # done before anyone held it: no claim at all
    with jobs.claim(tmp_path, "run1", done=lambda: True) as held:
        assert held is None
    assert len(_log_lines(tmp_path)) == 2
    # nothing stored: the waiter claims after all (done() is asked, then the key taken)
    stored.clear()
    polled.clear()
    with jobs.claim(tmp_path, "run1"):
        waiting = threading.Thread(target=waiter)
        waiting.start()
        _wait_until(polled.is_set)
    waiting.join(10)
    assert isinstance(got[-1], jobs.Claim)
    assert [line.split()[1] for line in _log_lines(tmp_path)][-2:] == ["claimed", "released"]


_HOLD = """
import sys, time
from pathlib import Path
from posviz.jobs import claim
with claim(Path(sys.argv[1]), "run1", heartbeat_s=0.2):
    print("held", flush=True)
    time.sleep(120)
"""


def _killed_holder(directory: Path) -> int:
    """A process that holds the claim, SIGKILLed while holding it; returns its pid."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(directory)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
    assert (directory / "run1.claim").exists()  # a kill leaves the claim behind
    return process.pid


def test_a_killed_holders_claim_is_taken_over_on_the_same_host(tmp_path: Path) -> None:
    pid = _killed_holder(tmp_path)
    waited: list[int] = []
    # taken over on the first look: the holder's pid is gone, no waiting for its heartbeat to
    # age (a waiter would poll should_stop, which leaves at once, and report its wait)
    with jobs.claim(
        tmp_path, "run1", stale_after=600, should_stop=lambda: True, on_wait=waited.append
    ):
        pass
    assert waited == []
    assert (
        f"took over from host={socket.gethostname()} pid={pid}: process {pid} is gone"
        in (_log_lines(tmp_path)[-2])
    )


def _foreign_claim(directory: Path, *, age: float) -> None:
    """A claim written by a process on another host, last heartbeat ``age`` seconds ago."""
    holder = jobs.ClaimHolder("t0", "other-host", 4242, time.time() - age, position=3)
    (directory / "run1.claim").write_bytes(holder.to_json())
    stamp = time.time() - age
    os.utime(directory / "run1.claim", (stamp, stamp))


def test_a_live_claim_on_another_host_is_waited_for(tmp_path: Path) -> None:
    _foreign_claim(tmp_path, age=0)
    seen: list[int] = []
    stop = lambda: len(seen) >= 3  # noqa: E731 - three polls, however long they take
    with (
        pytest.raises(jobs.JobCancelled),
        jobs.claim(tmp_path, "run1", on_wait=seen.append, should_stop=stop, stale_after=30),
    ):
        pass
    assert seen and set(seen) == {3}  # the holder's queue place, from its claim file
    assert (tmp_path / "run1.claim").exists()


def test_a_claim_without_heartbeat_is_stale_on_any_host(tmp_path: Path) -> None:
    _foreign_claim(tmp_path, age=31)
    with jobs.claim(tmp_path, "run1", stale_after=30):
        assert b"other-host" not in (tmp_path / "run1.claim").read_bytes()
    assert (
        "took over from host=other-host pid=4242: no heartbeat for 31 s"
        in (_log_lines(tmp_path)[-2])
    )


def test_the_heartbeat_keeps_a_long_claim_from_going_stale(tmp_path: Path) -> None:
    """The holder touches its claim every ``heartbeat_s``: a claim aged an hour (as a long job's
    would be without heartbeats) is fresh again at the next beat, so a waiter waits instead of
    taking it over; once released, the waiter gets it. Conditions, not timings: no load on the
    machine can make the waiter's judgement race the beat (its stale limit is 30 min)."""
    path = tmp_path / "run1.claim"
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.claim(tmp_path, "run1", heartbeat_s=0.05):
            holding.set()
            release.wait(60)

    first = threading.Thread(target=hold)
    first.start()
    try:
        assert holding.wait(10)
        hour_ago = time.time() - 3600
        os.utime(path, (hour_ago, hour_ago))
        _wait_until(lambda: path.stat().st_mtime > hour_ago + 1800)  # a beat renewed it
        seen: list[int] = []
        with (
            pytest.raises(jobs.JobCancelled),
            jobs.claim(
                tmp_path,
                "run1",
                stale_after=1800,
                on_wait=seen.append,
                should_stop=lambda: len(seen) >= 2,
            ),
        ):
            pass
        assert seen == [0, 0]  # waited on the holder (computing), never took over
    finally:
        release.set()
        first.join(10)
    with jobs.claim(tmp_path, "run1", stale_after=1800):
        pass
    assert not any("took over" in line for line in _log_lines(tmp_path))


def test_claim_refuses_a_key_that_is_not_a_file_name(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match=r"'\.\./x'.*letters, digits"),
        jobs.claim(tmp_path, "../x"),
    ):
        pass


_COMPUTE_ONCE = """
import sys, time
from pathlib import Path
from posviz.jobs import claim
directory = Path(sys.argv[1])
result = directory / "result.txt"
with claim(directory, "run1") as held:
    if not result.exists():
        held.note("computing")
        with open(directory / "computed.txt", "a") as log:
            log.write("x")
        time.sleep(1.0)
        result.write_text(sys.argv[2])
print(result.read_text(), flush=True)
"""


@pytest.mark.slow
def test_processes_asking_for_one_key_compute_it_once(tmp_path: Path) -> None:
    """Four processes (replicas) ask at once: one computes, all four print its answer."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _COMPUTE_ONCE, str(tmp_path), f"answer-{i}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    answers = [process.communicate(timeout=60)[0].strip() for process in processes]
    assert (tmp_path / "computed.txt").read_text() == "x"
    assert len(set(answers)) == 1 and answers[0].startswith("answer-")
    events = [line.split()[1] for line in _log_lines(tmp_path)]
    assert events.count("claimed") == 4 and events.count("computing") == 1  # what operators see


class _Rerun(BaseException):
    """Like Streamlit's RerunException: stops the leader's script thread, is not a failure."""


def test_single_flight_a_stopped_leader_thread_is_not_a_failure_for_the_waiters() -> None:
    release = threading.Event()
    calls, compute = _leader_stops(_Rerun(), release)
    outcomes = _leader_and_followers(compute, release, followers=2)
    assert isinstance(outcomes[0], _Rerun) and [outcomes[1], outcomes[2]] == ["value"] * 2
    assert len(calls) == 2


def test_cached_flight_reads_the_cache_again_before_computing() -> None:
    """A value stored by a flight that ended between this caller's first look and its turn to
    lead is used, not computed again; an empty cache computes once; a full one never computes."""
    computed: list[int] = []
    looks = iter([None, "stored meanwhile"])
    value = jobs.cached_flight("cf-refill", lambda: next(looks), lambda: computed.append(1) or "x")
    assert value == "stored meanwhile" and computed == []
    assert jobs.cached_flight("cf-empty", lambda: None, lambda: computed.append(1) or "x") == "x"
    assert computed == [1]
    assert jobs.cached_flight("cf-full", lambda: "hit", lambda: computed.append(1) or "x") == "hit"
    assert computed == [1]


def test_cached_data_computes_a_value_once_for_sessions_asking_at_once() -> None:
    """The UI's cache: two sessions miss the same key at once, one computes, both get it; the
    waiting one is told through its own ``_on_wait`` that the value is being computed."""
    from posviz.bytecache import CacheStore
    from posviz.ui.cache import cached_data

    calls, release = [], threading.Event()

    @cached_data(store=CacheStore(budget_bytes=2**20))
    def heavy(n: int, _on_wait=None, _should_stop=None) -> list[int]:
        calls.append(n)
        release.wait(10)
        return list(range(n))

    seen: list[int] = []
    out: dict[str, list[int]] = {}
    first = threading.Thread(target=lambda: out.update(a=heavy(3)))
    first.start()
    _wait_until(lambda: calls == [3])
    second = threading.Thread(target=lambda: out.update(b=heavy(3, _on_wait=seen.append)))
    second.start()
    _wait_until(lambda: 0 in seen)
    release.set()
    first.join(10)
    second.join(10)
    assert calls == [3] and out == {"a": [0, 1, 2], "b": [0, 1, 2]}
    assert heavy(3) == [0, 1, 2] and calls == [3]  # and it is cached


_LAB_RUN = """
import sys
from dataclasses import replace
from pathlib import Path
from posviz.lab import QUESTIONS, RunStore, run_question
base = QUESTIONS["learned"].default
config = replace(base, steps=4, width=16, batch=8, eval_batch=16, seeds=2)
result = run_question("learned", config=config, store=RunStore(Path(sys.argv[1])))
print(result.run_id, result.answer.replace(chr(10), " ")[:300], flush=True)
"""


@pytest.mark.slow
def test_replicas_asking_for_one_lab_run_train_it_once(tmp_path: Path) -> None:
    """Three processes sharing a store run one uncached lab config at once: the claims log shows
    one claim and one training (the others wait, then read the store), the store one entry, and
    all three return the same run and answer."""
    command = [sys.executable, "-c", _LAB_RUN, str(tmp_path)]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    answers = [process.communicate(timeout=600)[0].strip() for process in processes]
    assert all(process.returncode == 0 for process in processes), answers
    assert len(set(answers)) == 1 and answers[0]
    events = [line.split()[1] for line in _log_lines(tmp_path / ".claims")]
    assert events.count("training") == 1 and events.count("claimed") == 1, events
    entries = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert [p.name for p in entries] == [answers[0].split()[0]]


def test_a_running_jobs_wait_text_says_time_left_what_shares_the_cores_and_a_busy_machine(
    monkeypatch,
):
    monkeypatch.setattr(jobs.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    early = jobs.wait_text("Dequantising", 0.01, 30.0, beside=0)
    assert early == "Dequantising (30 s elapsed)"  # too little done to extrapolate a pace
    quarter = jobs.wait_text("Window 64", 0.25, 40.0, beside=0)
    assert "about 120 s left" not in quarter and "about 2 min left" in quarter  # 40 × 3
    assert "about 30 s left" in jobs.wait_text("Window 64", 0.5, 30.0, beside=0)
    shared = jobs.wait_text("Window 64", 0.5, 30.0, beside=2)
    assert "2 other heavy jobs (the lab's warm-up or another page) share the cores" in shared
    assert "busy" not in shared
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (4.5, 4.0, 3.0))
    busy = jobs.wait_text("Window 64", 0.5, 30.0, beside=0)
    assert busy.endswith("slower than usual: the machine is busy (load 4.5 on 2 cores))")
