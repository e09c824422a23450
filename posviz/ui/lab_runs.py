"""Lab training runs in background threads, shared by every session of one server.

A page never trains in its own script run: :func:`start_job` starts (or joins) a worker thread
that calls ``posviz.lab.run_question`` (which waits for a ``posviz.jobs.job_slot("lab")`` and
reports its queue position as progress). The worker only writes plain Python state into its
:class:`LabJob` under a lock; the page's fragment reads :meth:`LabJob.snapshot` and draws it.
The worker never calls Streamlit.

A run stops when nobody watches it any more: every session that shows a job refreshes a
heartbeat from its polling fragment (:meth:`LabJob.beat`). The worker's ``should_stop`` is true
once the Stop button was pressed, or when no watcher is left alive — a watcher is alive while
its heartbeat is younger than :data:`HEARTBEAT_TIMEOUT_S` and, on a real server, while
Streamlit's runtime still counts its session as active (``Runtime.is_active_session``, documented
as safe from any thread), so closing the tab stops the run at once and leaving the page stops it
after the timeout.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posviz.ui import compat

#: seconds without a heartbeat after which a watcher counts as gone. The fragment beats every
#: second; the margin covers a browser slowing a hidden tab's timers and a server so busy that a
#: fragment rerun waits its turn. A closed tab is noticed at once through the runtime instead.
HEARTBEAT_TIMEOUT_S = 60.0
#: points kept per variant for the live loss curve (older points are thinned, not dropped).
MAX_CURVE_POINTS = 400

#: finished jobs remembered (to say how a run ended); older ones are forgotten.
KEEP_FINISHED = 16

STARTING, QUEUED, RUNNING = "starting", "queued", "running"
DONE, STOPPED, FAILED = "done", "stopped", "failed"


current_session_id = compat.current_session_id


@dataclass
class JobView:
    """A consistent copy of a job's state for drawing (no locks, no live objects)."""

    run_id: str
    question_id: str
    state: str
    queue_position: int | None
    step: int
    total_steps: int
    elapsed_s: float
    eta_s: float | None
    variant: str
    curves: dict[str, list[tuple[int, float]]]
    message: str
    result: Any


@dataclass
class LabJob:
    """One training run in a worker thread; every field is guarded by ``lock``."""

    run_id: str
    question_id: str
    config: Any
    store_root: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop_event: threading.Event = field(default_factory=threading.Event)
    state: str = STARTING
    queue_position: int | None = None
    step: int = 0
    total_steps: int = 0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    variant: str = ""
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    message: str = ""
    result: Any = None
    watchers: dict[str, float] = field(default_factory=dict)  # session id -> last heartbeat
    thread: threading.Thread | None = None

    def beat(self, session_id: str) -> None:
        """Record that ``session_id`` still shows this job (called by the page's fragment)."""
        with self.lock:
            self.watchers[session_id] = time.monotonic()

    def should_stop(self) -> bool:
        """True once Stop was pressed or no watcher is alive; polled by the worker."""
        if self.stop_event.is_set():
            return True
        now = time.monotonic()
        with self.lock:
            watchers = dict(self.watchers)
        alive = [
            sid
            for sid, last in watchers.items()
            if now - last < HEARTBEAT_TIMEOUT_S and compat.session_active(sid)
        ]
        if not alive:
            self.stop_event.set()
            with self.lock:
                self.message = "Stopped: nobody was watching this run any more."
        return not alive

    def on_wait(self, position: int) -> None:
        """Queue position while waiting for a job slot (1 = next)."""
        with self.lock:
            self.state, self.queue_position = QUEUED, int(position)

    def on_progress(self, progress: Any) -> None:
        """Copy one ``posviz.lab.Progress`` into plain fields and the loss curves.

        A report with ``queue_position > 0`` means the run still waits for a job slot.
        """
        if progress.queue_position:
            self.on_wait(progress.queue_position)
            return
        losses = _losses(progress)
        with self.lock:
            self.state, self.queue_position = RUNNING, None
            self.step = int(progress.step)
            self.total_steps = int(progress.total_steps)
            self.elapsed_s = float(progress.elapsed_s)
            eta = float(progress.eta_s)
            self.eta_s = eta if math.isfinite(eta) else None
            self.variant = str(progress.variant)
            for variant, loss in losses.items():
                curve = self.curves.setdefault(variant, [])
                curve.append((self.step, loss))
                if len(curve) > MAX_CURVE_POINTS:
                    del curve[1::2]  # keep the shape of the whole run in a bounded list

    def finish(self, state: str, *, message: str = "", result: Any = None) -> None:
        with self.lock:
            self.state, self.message, self.result = state, message, result
            self.queue_position = None

    def snapshot(self) -> JobView:
        with self.lock:
            return JobView(
                run_id=self.run_id,
                question_id=self.question_id,
                state=self.state,
                queue_position=self.queue_position,
                step=self.step,
                total_steps=self.total_steps,
                elapsed_s=self.elapsed_s,
                eta_s=self.eta_s,
                variant=self.variant,
                curves={k: list(v) for k, v in self.curves.items()},
                message=self.message,
                result=self.result,
            )

    @property
    def finished(self) -> bool:
        with self.lock:
            return self.state in (DONE, STOPPED, FAILED)


def _losses(progress: Any) -> dict[str, float]:
    """``{variant: loss}`` from a progress report, finite values only (a diverging loss is
    reported with the result, not drawn)."""
    return {
        str(variant): float(loss)
        for variant, loss in progress.loss.items()
        if math.isfinite(float(loss))
    }


_JOBS: dict[tuple[str, str], LabJob] = {}  # (store root, run id) -> job
_JOBS_LOCK = threading.Lock()


def get_job(store_root: str, run_id: str) -> LabJob | None:
    """The job training ``run_id`` into ``store_root`` in this process (finished ones included)."""
    with _JOBS_LOCK:
        return _JOBS.get((store_root, run_id))


def start_job(
    run_id: str,
    question_id: str,
    config: Any,
    *,
    store_root: str,
    session_id: str,
    work: Callable[[LabJob], None],
) -> LabJob:
    """Start a worker running ``work(job)`` for ``run_id``, or join the one already running.

    A finished or stopped job of the same id is replaced by a fresh one (the store decides
    whether that means training again or loading the stored result).
    """
    with _JOBS_LOCK:
        finished = [key for key, old in _JOBS.items() if old.finished]
        for key in finished[:-KEEP_FINISHED]:
            del _JOBS[key]  # their results live on in the store
        job = _JOBS.get((store_root, run_id))
        if job is None or job.finished:
            job = LabJob(
                run_id=run_id, question_id=question_id, config=config, store_root=store_root
            )
            _JOBS[(store_root, run_id)] = job
            job.beat(session_id)
            job.thread = threading.Thread(
                target=work, args=(job,), name=f"posviz-lab-{run_id[:12]}", daemon=True
            )
            job.thread.start()
        else:
            job.beat(session_id)
    return job


def wait_for_jobs(timeout: float) -> bool:
    """Join every running worker (for tests and shutdown); True if all finished in time."""
    deadline = time.monotonic() + timeout
    with _JOBS_LOCK:
        threads = [job.thread for job in _JOBS.values() if job.thread is not None]
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)
