"""Lab runs in background threads, shared by every session of one server.

A page never trains in its own script run: :func:`start_job` starts (or joins) a worker thread
that calls ``posviz.lab.run_question`` or ``run_paper_check`` (each waits for a
``posviz.jobs.job_slot("lab")`` and reports its queue position as progress). The worker writes
only plain state into its :class:`LabJob` (the progress through :class:`~posviz.lab.present.live.
LiveProgress`); a page reads :meth:`LabJob.snapshot` and draws it. Nothing here imports Streamlit.

A started run finishes even when every tab showing it is closed: it keeps its job slot, its
result is stored (:func:`posviz.lab.engine.run.run_study` saves before it returns), and whoever
opens the
page next (the same visitor returning, or another) finds it stored, or finds the job still
training and follows it. Only an explicit Stop (:meth:`LabJob.stop`, any session's Stop button)
ends a run early; ``should_stop`` is true only then.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posviz import jobs, lab
from posviz.jobs import JobCancelled
from posviz.lab.engine.store import RunStore
from posviz.lab.present.live import (
    LiveProgress,
    LiveView,
    RunPlan,
    card_plan,
    duration_text,
    question_plan,
)
from posviz.lab.studies import cards
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.lab.studies.presets import QUESTIONS
from posviz.lab.studies.questions import QuestionStudy, question_parts
from posviz.lab_cluster import cluster_address, run_locally, run_on_cluster, study_spec

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
    """One run in a worker thread; ``state``, ``message`` and ``result`` are guarded by ``lock``
    (the progress has its own)."""

    run_id: str
    plan: RunPlan
    store_root: str
    #: whether a visitor may stop it (not the server's own warm-up: its answers are everyone's)
    stoppable: bool = True
    #: what it trains (a question's or paper check's title), for other computations' queue lines
    title: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop_event: threading.Event = field(default_factory=threading.Event)
    state: str = STARTING
    message: str = ""
    result: Any = None
    thread: threading.Thread | None = None
    progress: LiveProgress = field(init=False)

    def __post_init__(self) -> None:
        self.progress = LiveProgress(self.plan)

    def stop(self) -> None:
        """Stop the run after its current step (the Stop button); nothing is stored."""
        with self.lock:
            self.message = "Stopped: the Stop button was pressed."
        self.stop_event.set()

    def should_stop(self) -> bool:
        """True once :meth:`stop` was called; polled by the worker. A run nobody watches any
        more goes on: its result is stored for the next visitor."""
        return self.stop_event.is_set() or jobs.shutting_down()

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
    def about(self) -> str:
        """How a computation queued behind this run names it (plain words)."""
        if self.stoppable:
            return f"a visitor's lab run of “{self.title}”" if self.title else "a visitor's lab run"
        return f"the lab's warm-up, training “{self.title}”" if self.title else "the lab's warm-up"

    def seconds_left(self) -> float | None:
        """Seconds it has left: at its measured pace once it trains, else its plan's estimate."""
        live = self.progress.view()
        if live.started and live.eta_s is not None:
            return live.eta_s
        return self.plan.estimate_now()[0]

    @property
    def finished(self) -> bool:
        with self.lock:
            return self.state in (DONE, STOPPED, FAILED)


def _work(compute: Callable[[LabJob], Any]) -> Callable[[LabJob], None]:
    """The worker thread's body: ``compute(job)``, then record how it ended. Never touches st."""

    def work(job: LabJob) -> None:
        try:
            with jobs.described(job.about, job.seconds_left):  # for pages queued behind it
                result = compute(job)
        except (lab.LabStopped, JobCancelled):
            live = job.snapshot().live
            reached = (
                f" It had reached step {live.done:,} of {live.total:,} in all."
                if live.started
                else " It was still waiting to start."
            )
            why = job.snapshot().message or (
                "Stopped: the server is stopping; its next start trains it again."
                if jobs.shutting_down()
                else "Stopped: the Stop button was pressed."
            )
            job.finish(STOPPED, message=why + reached)
        except ValueError as exc:
            job.finish(FAILED, message=str(exc))
        else:
            job.finish(DONE, result=result)
        finally:
            if not job.finished:  # an unexpected error: the thread's excepthook logs it
                job.finish(FAILED, message="The run failed unexpectedly; see the server log.")

    return work


def question_work(
    question_id: str, config: Any, *, part: str = "default"
) -> Callable[[LabJob], None]:
    """Train (or load) a question's run with ``config`` (its ``part``) into the job's store."""
    return _work(
        lambda job: _run(study_spec("question", question_id, config=config, part=part), job)
    )


def card_work(check_id: str) -> Callable[[LabJob], None]:
    """Run (or load) a paper check into the job's store."""
    return _work(lambda job: _run(study_spec("paper_check", check_id), job))


def _run(spec: dict, job: LabJob) -> Any:
    """The job's study: on the lab cluster when ``POSVIZ_LAB_CLUSTER`` names one (this process
    only submits, follows and loads: :mod:`posviz.lab_cluster`), else in this process."""
    callbacks = {"on_progress": job.on_progress, "should_stop": job.should_stop}
    store = lab.RunStore(job.store_root)
    if cluster_address():
        return run_on_cluster(spec, store=store, **callbacks)
    return run_locally(spec, store, **callbacks)


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
    work: Callable[[LabJob], None],
    stoppable: bool = True,
    title: str = "",
) -> LabJob:
    """Start a worker running ``work(job)`` for ``run_id``, or join the one already running
    (``stoppable``: whether a page shows its Stop button; the warm-up's runs have none;
    ``title``: what it trains, for the queue lines of computations waiting behind it).

    A finished or stopped job of the same id is replaced by a fresh one (the store decides
    whether that means training again or loading the stored result).
    """
    with _JOBS_LOCK:
        finished = [key for key, old in _JOBS.items() if old.finished]
        for key in finished[:-KEEP_FINISHED]:
            del _JOBS[key]  # their results live on in the store
        job = _JOBS.get((store_root, run_id))
        if job is None or job.finished:
            job = LabJob(run_id, plan, store_root, stoppable=stoppable, title=title)
            _JOBS[(store_root, run_id)] = job
            job.thread = threading.Thread(
                target=work, args=(job,), name=f"posviz-lab-{run_id[:12]}", daemon=True
            )
            job.thread.start()
    return job


def wait_for_jobs(timeout: float) -> bool:
    """Join every running worker (for tests and shutdown); True if all finished in time."""
    deadline = time.monotonic() + timeout
    with _JOBS_LOCK:
        threads = [job.thread for job in _JOBS.values() if job.thread is not None]
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


# ---------------------------------------------------------------- answers before anyone asks

#: set to 1 to compute every missing default answer and paper check in the background when the
#: app starts (``scripts/run-app.sh`` sets it; tests and the hosted replicas leave it off).
WARMUP_ENV = "POSVIZ_LAB_WARMUP"
_log = logging.getLogger(__name__)


def warmup_enabled() -> bool:
    """Whether :data:`WARMUP_ENV` asks for the background warm-up."""
    return os.environ.get(WARMUP_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class WarmStudy:
    """One stored answer the warm-up makes sure of: a study's part, its run id, plan and work."""

    title: str
    part: str
    run_id: str
    plan: RunPlan
    work: Callable[[LabJob], None] = field(repr=False, compare=False)


def default_studies() -> list[WarmStudy]:
    """Every question's default answer, cheapest first; then every paper check, cheapest first;
    then the questions' panels (their extra settings), cheapest first. Questions first: all seven
    are stored in 292 s on 2 quiet cores (docs/benchmarks.md), inside the 5-minute goal, which a
    paper check trained between them would push past."""
    defaults, checks, panels = [], [], []
    for q in QUESTIONS.values():
        for part in question_parts(q):
            study = WarmStudy(
                q.title, part, _question_run_id(q, part),
                question_plan(q.id, q.default, part=part),
                question_work(q.id, q.default, part=part),
            )  # fmt: skip
            (defaults if part == "default" else panels).append(study)
    for check in PAPER_CHECKS.values():
        checks.append(
            WarmStudy(
                f"paper check {check.id}",
                "default",
                cards.card_run_id(check),
                card_plan(check.id),
                card_work(check.id),
            )
        )
    return [
        study
        for group in (defaults, checks, panels)
        for study in sorted(group, key=lambda w: w.plan.estimate_s)
    ]


def _question_run_id(q: Any, part: str) -> str:
    return QuestionStudy(q, q.default, part).run_id


@dataclass(frozen=True)
class WarmupView:
    """Where the warm-up stands, for a page's progress line.

    ``stored``/``total``: default answers and paper checks stored of all (panels are counted
    apart: ``panels_stored``/``panels``); ``eta_s``: seconds until every default is stored;
    ``pending``: run ids not stored yet; ``failed``: title → why.
    """

    stored: int
    total: int
    panels_stored: int
    panels: int
    eta_s: float
    current: str
    pending: frozenset[str]
    failed: dict[str, str]
    running: bool

    @property
    def defaults_done(self) -> bool:
        return self.stored >= self.total

    def text(self) -> str:
        """``"Computing the stored answers: 4 of 9, about 2 min left (now: …)."``"""
        if not self.defaults_done:
            now = f" (now: {self.current})" if self.current else ""
            return (
                f"Computing the stored answers: {self.stored} of {self.total}, about "
                f"{duration_text(self.eta_s)[1:]} left{now}. Pages show each answer as soon as "
                "it is stored."
            )
        if self.panels and self.panels_stored < self.panels:
            return (
                f"Every default answer is stored; the held-out panels are being computed: "
                f"{self.panels_stored} of {self.panels} (pending until then)."
            )
        return ""


class Warmup:
    """The background thread that stores every study of :func:`default_studies` in turn, each as
    a :class:`LabJob` (so a page of a study being computed follows it live, and its Run joins it).

    One training per run id across replicas: each job claims its run id in the shared store
    (:func:`posviz.lab.engine.run.run_study`), so a second replica's warm-up waits and then reads
    it.
    """

    def __init__(self, store_root: str, studies: list[WarmStudy]) -> None:
        self.store_root = store_root
        self.studies = studies
        self.lock = threading.Lock()
        self.current: WarmStudy | None = None
        self.failed: dict[str, str] = {}
        self.thread = threading.Thread(target=self._run, name="posviz-lab-warmup", daemon=True)

    def _stored(self, study: WarmStudy) -> bool:
        return RunStore(self.store_root).exists(study.run_id)

    def _run(self) -> None:
        for study in self.studies:
            if jobs.shutting_down():  # the server is stopping: the next start goes on from here
                break
            if self._stored(study):
                continue
            with self.lock:
                self.current = study
            job = start_job(
                study.run_id, study.plan, store_root=self.store_root, work=study.work,
                stoppable=False, title=study.title,
            )  # fmt: skip
            if job.thread is not None:
                job.thread.join()
            view = job.snapshot()
            if view.state == FAILED:
                with self.lock:
                    self.failed[study.title] = view.message
                _log.warning("lab warm-up: %s failed: %s", study.title, view.message)
        with self.lock:
            self.current = None

    def view(self) -> WarmupView:
        with self.lock:
            current, failed = self.current, dict(self.failed)
        stored = {s.run_id for s in self.studies if self._stored(s)}
        defaults = [s for s in self.studies if s.part == "default"]
        pending = [s for s in defaults if s.run_id not in stored and s.title not in failed]
        eta = sum(s.plan.estimate_now()[0] for s in pending if s is not current)
        if current is not None and current.run_id not in stored:
            job = get_job(self.store_root, current.run_id)
            live = job.snapshot().live if job is not None else None
            if live is not None and live.eta_s is not None:
                eta += live.eta_s
            else:
                eta += current.plan.estimate_now()[0]
        panels = [s for s in self.studies if s.part != "default"]
        return WarmupView(
            stored=sum(s.run_id in stored for s in defaults),
            total=len(defaults),
            panels_stored=sum(s.run_id in stored for s in panels),
            panels=len(panels),
            eta_s=eta,
            current=current.title if current is not None else "",
            pending=frozenset(s.run_id for s in self.studies if s.run_id not in stored),
            failed=failed,
            running=self.thread.is_alive(),
        )


_WARMUPS: dict[str, Warmup] = {}


def start_warmup(store_root: str, studies: list[WarmStudy] | None = None) -> Warmup:
    """Start the background warm-up of ``store_root`` once per process (later calls return it)."""
    with _JOBS_LOCK:
        warmup = _WARMUPS.get(store_root)
        if warmup is None:
            warmup = Warmup(store_root, default_studies() if studies is None else studies)
            _WARMUPS[store_root] = warmup
            warmup.thread.start()
    return warmup


def get_warmup(store_root: str) -> Warmup | None:
    """The warm-up of ``store_root`` in this process, or None when none was started."""
    with _JOBS_LOCK:
        return _WARMUPS.get(store_root)


def warmup_computing(store_root: str, run_id: str | None = None) -> bool:
    """Whether the first start's warm-up of ``store_root`` is computing answers now: any default
    answer (``run_id`` None: /lab, the paper checks), or the one of ``run_id``."""
    warmup = get_warmup(store_root)
    if warmup is None:
        return False
    view = warmup.view()
    if not view.running:
        return False
    return not view.defaults_done if run_id is None else run_id in view.pending


# ---------------------------------------------------------------- the server's start and stop

#: seconds a stopping server waits for its lab runs to reach their next step and release.
STOP_GRACE_S = 2.5


def start_server_warmup() -> None:
    """The warm-up when the server starts (``POSVIZ_LAB_WARMUP``), not at its first visitor."""
    if warmup_enabled():
        start_warmup(str(RunStore().root))


def stop_for_shutdown(grace_s: float = STOP_GRACE_S) -> bool:
    """The server is stopping: every lab run stops at its next training step (storing nothing;
    the next start trains it again); wait until ``grace_s`` after the stop was asked for (the
    signal: Streamlit's own stop runs first, and at load 10 the two in turn took 5.7 s). A run
    still busy then (importing torch, building its models) has its claim released here. Whether
    every run stopped in time."""
    jobs.request_shutdown()
    asked = jobs.shutdown_requested_at() or time.monotonic()
    if wait_for_jobs(max(0.0, asked + grace_s - time.monotonic())):
        return True
    released = jobs.release_held_claims()
    _log.warning("lab runs busy after %.1f s: %d claim(s) released", grace_s, released)
    return False
