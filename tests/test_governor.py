"""posviz.governor: one BLAS/OpenMP thread count per process (pinned before pages compute, never
changed back and forth by heavy jobs) and a lower OS priority for the thread that runs a job."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from posviz import governor
from posviz.governor import NICE_INCREMENT, Governor, lower_thread_priority, threads_per_job


@pytest.mark.parametrize(
    "cpus, max_jobs, threads",
    [(2, 1, 1), (16, 2, 7), (16, 1, 15), (1, 4, 1), (9, 0, 8), (4, 8, 1)],
)
def test_one_core_stays_free_and_every_job_gets_a_thread(cpus, max_jobs, threads):
    assert threads_per_job(cpus=cpus, max_jobs=max_jobs) == threads


class FakeLimiter:
    """Records the counts set (a pin never restores, so there is nothing else to record)."""

    def __init__(self) -> None:
        self.set: list[int] = []

    def __call__(self, threads: int) -> FakeLimiter:
        self.set.append(threads)
        return self


def test_the_count_is_decided_once_and_never_changed_back():
    fake, environ, asked = FakeLimiter(), {}, []
    gov = Governor(limiter=fake, threads=lambda: asked.append(1) or 3, environ=environ)
    assert gov.pin() == 3 and gov.pinned == 3
    assert environ == {name: "3" for name in governor.THREAD_ENVIRONMENT}
    with gov.heavy_work(renice=False):
        assert (fake.set, gov.users) == ([3], 1)  # set once: pools loaded later read environ
        with gov.heavy_work(renice=False):
            assert gov.users == 2
    assert (fake.set, gov.users, asked) == ([3], 0, [1])  # nothing restored, asked once
    with pytest.raises(RuntimeError), gov.heavy_work(renice=False):
        raise RuntimeError("a failing job")
    assert (fake.set, gov.users) == ([3], 0)


def test_jobs_in_many_threads_share_one_count():
    fake = FakeLimiter()
    gov = Governor(limiter=fake, threads=lambda: 1, environ={})
    inside = threading.Barrier(4)

    def job() -> None:
        with gov.heavy_work(renice=False):
            inside.wait(timeout=30)  # all four run at once

    threads = [threading.Thread(target=job) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert (fake.set, gov.users) == ([1], 0)


def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_the_real_limiter_pins_blas_through_and_after_heavy_work():
    import numpy  # noqa: F401  (loads the BLAS that threadpoolctl limits)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # restores this test's change after it
        assert _blas_threads() == {2}
        gov = Governor(threads=lambda: 1, environ={})
        with gov.heavy_work(renice=False):
            assert _blas_threads() == {1}
        assert _blas_threads() == {1}


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priorities are Linux tasks")
def test_renice_lowers_only_the_calling_thread():
    main_tid = threading.get_native_id()
    main_before = os.getpriority(os.PRIO_PROCESS, main_tid)
    seen: dict[str, int | bool] = {}

    def worker() -> None:
        tid = threading.get_native_id()
        seen["before"] = os.getpriority(os.PRIO_PROCESS, tid)
        seen["lowered"] = lower_thread_priority()
        seen["after"] = os.getpriority(os.PRIO_PROCESS, tid)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    assert seen["lowered"]
    assert seen["after"] == min(19, int(seen["before"]) + NICE_INCREMENT)  # 19: the lowest
    assert os.getpriority(os.PRIO_PROCESS, main_tid) == main_before


def test_the_process_wide_governor_is_idle_between_jobs():
    assert governor.GOVERNOR.users == 0
    with governor.heavy_work(renice=False):
        assert governor.GOVERNOR.users == 1
    assert governor.GOVERNOR.users == 0


def test_a_page_computed_while_another_session_runs_heavy_work_gets_the_idle_bits():
    """A page's numbers must not depend on what other sessions of the process do. LAPACK's
    results depend bitwise on the BLAS thread count: a GPT-2-sized (1024 × 768) table's PCA (the
    learned page's hero path) moved by 4.5e-14 when the governor held BLAS at one thread during
    another session's job (issue 35), so one view drew different bytes idle and busy."""
    import posviz.ui  # noqa: F401  (every page imports it before it computes)
    from posviz.analysis.stats import pca
    from posviz.encodings.sinusoidal import sinusoidal

    table = sinusoidal(1024, 768)
    idle, pools = pca(table, 3), _blas_threads()
    with governor.heavy_work(renice=False):  # another session's probe or training
        busy, busy_pools = pca(table, 3), _blas_threads()
    assert busy_pools == pools == _blas_threads()
    for a, b in zip(idle, busy, strict=True):
        assert a.tobytes() == b.tobytes()


def test_the_ui_pins_the_blas_pools_at_the_per_job_count_for_good():
    """Pools loaded later (scipy's BLAS, an OpenMP runtime, torch) start at it too: they read
    the environment when they load. (OpenMP pools are left out here: torch's is torch's to set,
    and the lab sets it.)"""
    import posviz.ui  # noqa: F401

    want = threads_per_job()
    assert _blas_threads() == {want}
    assert all(os.environ[name] == str(want) for name in governor.THREAD_ENVIRONMENT)
