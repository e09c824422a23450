"""CPU share of heavy work: BLAS/OpenMP threads per job, and a lower priority for the job's thread.

Beside :mod:`posviz.jobs` (which bounds *how many* heavy jobs run), this bounds *how much CPU*
each one takes, so that page rendering keeps a core:

* ``with heavy_work():`` limits BLAS and OpenMP to :func:`threads_per_job` threads while any heavy
  work runs. The limit is process-wide (OpenBLAS has one thread count per process), so the first
  job in sets it and the last one out restores the original. Without it every probe starts one
  BLAS thread per core, and a few at once oversubscribe the CPU: on the shared 2-core development
  machine a 5000 × 384 SVD took 13.7 s with two BLAS threads and 0.23 s with one.
* ``renice=True`` (the default) also lowers the calling thread's OS priority by
  :data:`NICE_INCREMENT` (Linux only; see :func:`lower_thread_priority`).

No streamlit; threadpoolctl (a scikit-learn dependency) is imported on first use.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from posviz.settings import settings

#: heavy work runs this much "nicer" than page rendering (Linux, per thread).
NICE_INCREMENT = 10


def threads_per_job(*, cpus: int | None = None, max_jobs: int | None = None) -> int:
    """``(cpus − 1) // max_jobs``, at least 1: one core stays free for the pages.

    ``cpus`` defaults to ``os.cpu_count()``, ``max_jobs`` to ``settings().max_jobs``.
    """
    cpus = (os.cpu_count() or 1) if cpus is None else cpus
    jobs = settings().max_jobs if max_jobs is None else max_jobs
    return max(1, (cpus - 1) // max(1, jobs))


def lower_thread_priority(increment: int = NICE_INCREMENT) -> bool:
    """Lower the OS scheduling priority of the calling thread only; whether it was lowered.

    On Linux each thread is its own task, so ``setpriority(PRIO_PROCESS, native thread id)``
    renices just this thread: the CPU goes to page rendering first and the heavy job takes the
    rest. Streamlit gives a session a new script thread once a run has finished, so other pages
    never inherit it (only a rerun of the same tab asked for during the job may run in this thread
    too); an unprivileged process cannot raise a priority again, so it is not restored. Elsewhere,
    or in a sandbox that forbids it, nothing changes and the job runs at normal priority.
    """
    if not hasattr(os, "setpriority") or sys.platform != "linux":
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + increment)
    except OSError:
        return False
    return True


def _blas_limiter(threads: int) -> Any:
    """A threadpoolctl limiter holding BLAS and OpenMP at ``threads`` (restore it to undo)."""
    # Lazy (heavy, only needed by heavy work): threadpoolctl limits only the libraries loaded when
    # it is called, so scikit-learn's OpenMP runtime (its logistic loss runs one thread per core)
    # is loaded first.
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


class Governor:
    """Counts the heavy jobs running now; the limit is set while the count is above zero.

    ``limiter(threads)`` returns an object with ``restore_original_limits()`` (threadpoolctl's
    by default; tests pass a fake); ``threads()`` is the per-job thread count.
    """

    def __init__(
        self,
        *,
        limiter: Callable[[int], Any] = _blas_limiter,
        threads: Callable[[], int] = threads_per_job,
    ) -> None:
        self._limiter, self._threads = limiter, threads
        self._lock = threading.Lock()
        self._users = 0
        self._active: Any = None

    @property
    def users(self) -> int:
        """Heavy jobs inside :meth:`heavy_work` now."""
        with self._lock:
            return self._users

    @contextmanager
    def heavy_work(self, *, renice: bool = True) -> Iterator[None]:
        """Hold the thread limit for the ``with`` block; ``renice``: lower this thread too."""
        if renice:
            lower_thread_priority()
        with self._lock:
            if self._users == 0:
                self._active = self._limiter(self._threads())
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._active is not None:
                    self._active.restore_original_limits()
                    self._active = None


#: the process-wide governor (the thread limit it sets is process-wide too).
GOVERNOR = Governor()


def heavy_work(*, renice: bool = True) -> Any:
    """``GOVERNOR.heavy_work(renice=renice)``: the context manager heavy work runs in."""
    return GOVERNOR.heavy_work(renice=renice)
