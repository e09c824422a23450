"""posviz.governor: BLAS threads per heavy job (set by the first job in, restored by the last out)
and a lower OS priority for the thread that runs it."""

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
    """Records the limits set and whether they were restored."""

    def __init__(self) -> None:
        self.set: list[int] = []
        self.restored = 0

    def __call__(self, threads: int) -> FakeLimiter:
        self.set.append(threads)
        return self

    def restore_original_limits(self) -> None:
        self.restored += 1


def test_first_job_in_sets_the_limit_and_last_out_restores_it():
    fake = FakeLimiter()
    gov = Governor(limiter=fake, threads=lambda: 3)
    with gov.heavy_work(renice=False):
        assert (fake.set, fake.restored, gov.users) == ([3], 0, 1)
        with gov.heavy_work(renice=False):
            assert (fake.set, gov.users) == ([3], 2)  # one process-wide limit, set once
        assert fake.restored == 0  # the first job still runs
    assert (fake.restored, gov.users) == (1, 0)
    with pytest.raises(RuntimeError), gov.heavy_work(renice=False):
        raise RuntimeError("a failing job")
    assert (fake.set, fake.restored, gov.users) == ([3, 3], 2, 0)  # restored after an error too


def test_jobs_in_many_threads_share_one_limit():
    fake = FakeLimiter()
    gov = Governor(limiter=fake, threads=lambda: 1)
    inside = threading.Barrier(4)

    def job() -> None:
        with gov.heavy_work(renice=False):
            inside.wait(timeout=30)  # all four hold the limit at once

    threads = [threading.Thread(target=job) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert (fake.set, fake.restored, gov.users) == ([1], 1, 0)


def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_the_real_limiter_holds_blas_at_the_per_job_count_and_restores_it():
    import numpy  # noqa: F401  (loads the BLAS that threadpoolctl limits)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before == {2}
        with Governor(threads=lambda: 1).heavy_work(renice=False):
            assert _blas_threads() == {1}
        assert _blas_threads() == before


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
