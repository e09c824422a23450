"""CPU share of heavy work: one BLAS/OpenMP thread count for the whole process, and a lower
priority for a heavy job's thread.

Beside :mod:`posviz.jobs` (which bounds *how many* heavy jobs run), this bounds *how much CPU*
each one takes, so that page rendering keeps a core:

* :func:`pin_threads` holds BLAS and OpenMP at :func:`threads_per_job` threads for the rest of the
  process: the pools loaded now (threadpoolctl) and those loaded later (the environment they read
  when they load, :data:`THREAD_ENVIRONMENT`). ``posviz.ui`` calls it on import, before any page
  computes; ``with heavy_work():`` calls it too (a process without the UI pins at its first job).
  Without a limit every probe starts one BLAS thread per core, and a few at once oversubscribe the
  CPU: on the shared 2-core development machine a 5000 × 384 SVD took 13.7 s with two BLAS
  threads and 0.23 s with one.
* The count is never changed back and forth. It used to be lowered while any heavy job ran and
  restored after, and since it is process-wide (OpenBLAS has one count per process) every page
  computed meanwhile, in any session, ran at the job's count; LAPACK's results depend bitwise on
  it, so one view drew other bytes when another session was busy: a 1024 × 768 table's PCA (the
  learned page's hero path, GPT-2's table size) moved by 4.5e-14 (issue 35). Pinned, a page's
  numbers are the same idle or busy; and on a busy 2-core machine one thread is also the faster
  (that PCA: 0.43 s on one thread, 1.42 s on two, load 3.6).
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


#: the variables BLAS and OpenMP runtimes read when they load (torch reads OMP_NUM_THREADS)
THREAD_ENVIRONMENT = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_limiter(threads: int) -> Any:
    """Hold every BLAS and OpenMP pool loaded now at ``threads`` (threadpoolctl).

    Without threadpoolctl (the core and ``[app]`` installs: it comes with ``[models]``, whose
    heavy jobs are the only ones that run beside pages) the loaded pools keep their count;
    pools loaded later still read the environment."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=threads)


class Governor:
    """Pins the process's thread count (:meth:`pin`) and counts the heavy jobs running now.

    ``limiter(threads)`` sets the pools loaded now (threadpoolctl's by default; tests pass a
    fake); ``threads()`` is the per-job thread count; ``environ`` the environment that pools
    loaded later read (``os.environ``).
    """

    def __init__(
        self,
        *,
        limiter: Callable[[int], Any] = _blas_limiter,
        threads: Callable[[], int] = threads_per_job,
        environ: Any = None,
    ) -> None:
        self._limiter, self._threads = limiter, threads
        self._environ = os.environ if environ is None else environ
        self._lock = threading.Lock()
        self._users = 0
        self.pinned: int | None = None

    @property
    def users(self) -> int:
        """Heavy jobs inside :meth:`heavy_work` now."""
        with self._lock:
            return self._users

    def pin(self) -> int:
        """Hold BLAS and OpenMP at the per-job count from now on; returns it.

        Done once: the pools loaded now are set, those loaded later read the count from the
        environment when they load. A later call changes nothing, so a pool its owner set since
        (the lab holds torch at one thread) is left alone.
        """
        with self._lock:
            if self.pinned is None:
                self.pinned = self._threads()
                for name in THREAD_ENVIRONMENT:
                    self._environ[name] = str(self.pinned)
                self._limiter(self.pinned)
            return self.pinned

    @contextmanager
    def heavy_work(self, *, renice: bool = True) -> Iterator[None]:
        """Run the ``with`` block as heavy work: the count pinned, ``renice``: this thread lower."""
        if renice:
            lower_thread_priority()
        self.pin()
        with self._lock:
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1


#: the process-wide governor (the thread count it pins is process-wide too).
GOVERNOR = Governor()


def pin_threads() -> int:
    """``GOVERNOR.pin()``: hold BLAS and OpenMP at the per-job count for the rest of the process."""
    return GOVERNOR.pin()


def heavy_work(*, renice: bool = True) -> Any:
    """``GOVERNOR.heavy_work(renice=renice)``: the context manager heavy work runs in."""
    return GOVERNOR.heavy_work(renice=renice)
