"""Lab runs in background threads, shared by every session of one server.

A page never trains in its own script run: :func:`start_job` starts (or joins) a worker thread
that calls ``posviz.lab.run_question`` or ``run_paper_check`` (each waits for a
``posviz.jobs.job_slot("lab")`` and reports its queue position as progress). The worker writes
only plain state into its :class:`LabJob` (the progress through :class:`~posviz.lab.views.live.
LiveProgress`); a page reads :meth:`LabJob.snapshot` and draws it. Nothing here imports Streamlit.

A run stops when nobody watches it any more: every session showing a job refreshes a heartbeat
(:meth:`LabJob.beat`). ``should_stop`` turns true once Stop was pressed, or when no watcher is left
alive — alive while its heartbeat is younger than :data:`HEARTBEAT_TIMEOUT_S` and while the job's
``session_active(session id)`` says so (the app passes Streamlit's ``Runtime.is_active_session``,
safe from any thread): closing the tab stops the run at once, leaving the page after the timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posviz import lab
from posviz.jobs import JobCancelled
from posviz.lab import cards
from posviz.lab.views.live import LiveProgress, LiveView, RunPlan

#: seconds without a heartbeat after which a watcher counts as gone. The fragment beats every
#: second; the margin covers a browser slowing a hidden tab's timers and a busy server.
HEARTBEAT_TIMEOUT_S = 60.0
#: finished jobs remembered (to say how a run ended); older ones are forgotten.
KEEP_FINISHED = 16

STARTING, QUEUED, RUNNING = "starting", "queued", "running"
DONE, STOPPED, FAILED = "done", "stopped", "failed"


@dataclass(frozen=True)
class JobView:
    """A consistent copy of a job's state for drawing (no locks, no live objects)."""

    state: str
    message: str
    result: Any
    live: LiveView


@dataclass
class LabJob:
    """One run in a worker thread; ``state``, ``message``, ``result`` and ``watchers`` are
    guarded by ``lock`` (the progress has its own)."""

    run_id: str
    plan: RunPlan
    store_root: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop_event: threading.Event = field(default_factory=threading.Event)
    state: str = STARTING
    message: str = ""
    result: Any = None
    watchers: dict[str, float] = field(default_factory=dict)  # session id -> last heartbeat
    thread: threading.Thread | None = None
    session_active: Callable[[str], bool] = lambda _: True
    progress: LiveProgress = field(init=False)

    def __post_init__(self) -> None:
        self.progress = LiveProgress(self.plan)

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
            if now - last < HEARTBEAT_TIMEOUT_S and self.session_active(sid)
        ]
        if not alive:
            self.stop_event.set()
            with self.lock:
                self.message = "Stopped: nobody was watching this run any more."
        return not alive

    def on_progress(self, progress: Any) -> None:
        """One ``posviz.lab.Progress`` report (``queue_position > 0``: waiting for a slot)."""
        self.progress.update(progress)
        with self.lock:
            if self.state in (STARTING, QUEUED, RUNNING):
                self.state = QUEUED if progress.queue_position else RUNNING

    def finish(self, state: str, *, message: str = "", result: Any = None) -> None:
        with self.lock:
            self.state, self.result = state, result
            self.message = message or self.message

    def snapshot(self) -> JobView:
        live = self.progress.view()
        with self.lock:
            return JobView(self.state, self.message, self.result, live)

    @property
    def finished(self) -> bool:
        with self.lock:
            return self.state in (DONE, STOPPED, FAILED)


def _work(compute: Callable[[LabJob], Any]) -> Callable[[LabJob], None]:
    """The worker thread's body: ``compute(job)``, then record how it ended. Never touches st."""

    def work(job: LabJob) -> None:
        try:
            result = compute(job)
        except (lab.LabStopped, JobCancelled):
            live = job.snapshot().live
            reached = (
                f" It had reached step {live.done:,} of {live.total:,} in all."
                if live.started
                else " It was still waiting to start."
            )
            why = job.snapshot().message or "Stopped: the Stop button was pressed."
            job.finish(STOPPED, message=why + reached)
        except ValueError as exc:
            job.finish(FAILED, message=str(exc))
        else:
            job.finish(DONE, result=result)
        finally:
            if not job.finished:  # an unexpected error: the thread's excepthook logs it
                job.finish(FAILED, message="The run failed unexpectedly; see the server log.")

    return work


def question_work(question_id: str, config: Any) -> Callable[[LabJob], None]:
    """Train (or load) a question's run with ``config`` into the job's store."""
    return _work(
        lambda job: lab.run_question(
            question_id,
            config=config,
            store=lab.RunStore(job.store_root),
            on_progress=job.on_progress,
            should_stop=job.should_stop,
        )
    )


def card_work(check_id: str) -> Callable[[LabJob], None]:
    """Run (or load) a paper check into the job's store."""
    return _work(
        lambda job: cards.run_paper_check(
            check_id,
            store=lab.RunStore(job.store_root),
            on_progress=job.on_progress,
            should_stop=job.should_stop,
        )
    )


_JOBS: dict[tuple[str, str], LabJob] = {}  # (store root, run id) -> job
_JOBS_LOCK = threading.Lock()


def get_job(store_root: str, run_id: str) -> LabJob | None:
    """The job training ``run_id`` into ``store_root`` in this process (finished ones included)."""
    with _JOBS_LOCK:
        return _JOBS.get((store_root, run_id))


def start_job(
    run_id: str,
    plan: RunPlan,
    *,
    store_root: str,
    session_id: str,
    work: Callable[[LabJob], None],
    session_active: Callable[[str], bool] = lambda _: True,
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
            job = LabJob(run_id, plan, store_root, session_active=session_active)
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
