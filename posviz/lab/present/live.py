"""Following a lab run while it trains, and how long one takes before it starts.

A question's run trains every instance of its sweep (an arm under one task and, with a learned
table, one initial scale) with all their seeds, in a few batched models on two training threads
(:mod:`posviz.lab.engine.run`). Its :class:`~posviz.lab.engine.results.Progress` reports say how
far the whole
run is (``elapsed / (elapsed + eta)`` is exactly the share of model-steps done) and the latest
training loss of every instance. :class:`LiveProgress` turns them into ONE count across every arm
and sweep cell ("step 4,800 of 14,400 in all"), one ETA, and loss curves under the arms' labels.
:func:`question_plan` and :func:`card_plan` say what a run trains and estimate its seconds: at
the pace measured on this server by its latest runs (:func:`measured_pace`, updated as every run
trains), else at the pace fitted on two idle cores scaled by the current load average.

Two step counts appear: a model's own optimiser steps (every model of a run takes the same
number, ``plan.steps``) and model-steps, the sum of every model's steps (``plan.model_steps``,
the one count the whole run reports, since the models train side by side).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from posviz import jobs
from posviz.charts.lab import live_loss_spec
from posviz.charts.style import PALETTE, series_colors
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import Progress
from posviz.lab.engine.run import TRAIN_THREADS, Unit
from posviz.lab.present.figures import arm_colors
from posviz.lab.studies.cards import CardStudy
from posviz.lab.studies.papers import paper_check
from posviz.lab.studies.presets import question
from posviz.lab.studies.questions import QuestionStudy

#: points kept per arm for the live loss curve (older points are thinned, not dropped).
MAX_CURVE_POINTS = 400
#: seconds to start training in a fresh process (importing torch, building the models).
START_S = 4.0
#: a measured pace is used for this many seconds after it was measured (the load changes).
PACE_FRESH_S = 900.0
#: a run's pace is recorded once this share of it is done after its first report (not counting
#: the time to build its models): its first few percent run slower than the rest (at 2 %, the
#: first start's line at load 4 read 9.8 min 16 s in where 7.3 were left, 0.74×).
PACE_AFTER = 0.3
#: the time constant of the kernel's 1-minute load average (an exponential moving average
#: sampled every 5 s, ``exp(-5/60)`` a step): a thread that started ``t`` seconds ago counts
#: ``1 − exp(−t/60)`` of itself in it.
LOAD_TAU_S = 60.0
#: CPU seconds a unit of work takes when more threads are runnable than there are cores, per CPU
#: second on idle cores (the threads share the cores' caches and parts): at load ≈ 4 on 2 cores
#: (bench/bench_estimates.py --busy 2) the runs took 1.17 wall-s per unit of work on 2026-11-28
#: where a fair share of the cores predicts 0.97, and 1.21 CPU-s per unit on 2026-11-29
#: (docs/benchmarks.md, "Estimates"). Used until this server has measured its own pace.
CONTENTION = 1.2


#: CPU seconds :func:`_probe` takes on a machine where a unit of the work model
#: (:attr:`~posviz.lab.engine.run.Unit.cost`) costs one CPU second of training. Set on the AMD
#: EPYC of 2026-11-29, where the probe took 2.18 ms (2.21 ms beside two spinning processes) and
#: training 0.62 CPU-s per unit (learned 0.67, concat 0.63, sinks 0.59, the Gu card 0.58, at load
#: 2–3), so 2.18 / 0.62 ms (docs/benchmarks.md, "Estimates"): the work model's constants were
#: fitted on a machine about 1.6× slower, which the first estimates here overstated by as much.
PROBE_REF_S = 0.00352
#: tries of :func:`_probe` (the least counts: in fresh processes beside a Docker build, the least
#: of 7 tries read 0.63–1.0 of the reference; of 15, 0.62–0.66 in five processes of six)
PROBE_TRIES = 15


def _probe() -> float:
    """CPU seconds of a fixed slice of small-matrix work like a lab model's step (products of
    width-32 activations, a ReLU, a softmax), the least of :data:`PROBE_TRIES`
    tries (another process sharing the core slows some of them; about 40 ms in all): how fast this
    machine trains, before any run has been measured on it. Numpy only (no torch import)."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((256, 32), dtype=np.float32)
    w = rng.standard_normal((32, 96), dtype=np.float32) * np.float32(0.1)
    best = math.inf
    for _ in range(PROBE_TRIES):
        x, start = x0.copy(), time.process_time()
        for _ in range(60):
            h = np.maximum(x @ w, 0.0)
            scores = h[:64, :32] @ h[:64, 32:64].T
            scores -= scores.max(axis=1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=1, keepdims=True)
            x[:64] = 0.5 * x[:64] + 0.5 * (scores @ h[:64, 64:])
        best = min(best, time.process_time() - start)
    return best


_SPEED: list[float] = []  # the least factor measured so far, when it was last probed
#: seconds between two probes while no run has been measured (each keeps the least: a probe can
#: only be slowed by other work, never sped up)
PROBE_EVERY_S = 30.0


def machine_factor() -> float:
    """CPU seconds of training per unit of work on this machine: its :func:`_probe` against
    :data:`PROBE_REF_S`, the least of every probe so far (one at most every
    :data:`PROBE_EVERY_S`; a whole probe can land on a core another process keeps busy: 1.28
    once in six fresh processes where the rest read 0.62–0.66), kept within 0.25–4. What the
    estimate before any measured run multiplies by; a machine twice as fast as the reference
    reads 0.5."""
    now = time.monotonic()
    if not _SPEED or now - _SPEED[1] >= PROBE_EVERY_S:
        factor = min(4.0, max(0.25, _probe() / PROBE_REF_S))
        _SPEED[:] = [min(factor, _SPEED[0]) if _SPEED else factor, now]
    return _SPEED[0]


class _Pace:
    """The measured pace of training on this server: wall seconds per CPU second of
    :attr:`~posviz.lab.engine.run.Unit.cost` work (``1 / TRAIN_THREADS`` on idle cores), for the
    two training threads together (thread-safe). Pooled over every run measured in the last
    :data:`PACE_FRESH_S` seconds (total training seconds ÷ total work), so one study's error in
    the work model does not become the estimate of every other study; each run counts once, with
    its latest report."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[int, tuple[float, float, float]] = {}  # run → (seconds, work, when)

    def record(self, run: int, seconds: float, work: float) -> None:
        if math.isfinite(seconds) and seconds > 0 and math.isfinite(work) and work > 0:
            with self.lock:
                self.runs[run] = (seconds, work, time.monotonic())

    def get(self) -> float | None:
        with self.lock:
            now = time.monotonic()
            fresh = [(s, w) for s, w, when in self.runs.values() if now - when < PACE_FRESH_S]
            self.runs = {k: v for k, v in self.runs.items() if now - v[2] < PACE_FRESH_S}
        if not fresh:
            return None
        return sum(s for s, _ in fresh) / sum(w for _, w in fresh)


PACE = _Pace()
_RUN_KEYS = itertools.count()
_LOAD: list[float] = [-math.inf, 0.0]  # when read (monotonic), the 1-minute load average


def _load() -> float:
    """The 1-minute load average, read at most once a minute (one estimate for every page)."""
    now = time.monotonic()
    if now - _LOAD[0] >= 60.0:
        try:
            _LOAD[1] = os.getloadavg()[0]
        except OSError:
            _LOAD[1] = 0.0
        _LOAD[0] = now
    return _LOAD[1]


def measured_pace() -> tuple[float, str]:
    """Wall seconds per CPU second of :attr:`~posviz.lab.engine.run.Unit.cost` work now, and
    where that number comes from (in words)."""
    measured = PACE.get()
    if measured is not None:
        return measured, "at the pace measured on this server by its latest runs"
    cores, load = os.cpu_count() or 1, _load()
    # The training threads share the cores with the load already running: on a busy machine
    # each runnable thread gets about cores / (load + threads) of a core. The load counts this
    # server's own heavy jobs too (the warm-up training the answer before this one): they are
    # not extra load on the next run, which waits for their slot and then takes their place.
    # A job that started a moment ago is not in the moving average yet: only the share of its
    # threads the average has taken in is this server's own (the first start's line, one second
    # in, took the spinners' 2.2 for its own job's and said 5.9 min where 7.5 were left).
    own = sum(TRAIN_THREADS * (1.0 - math.exp(-age / LOAD_TAU_S)) for age in jobs.running_ages())
    others = max(0.0, load - own)
    busy = others + TRAIN_THREADS
    usable = min(TRAIN_THREADS if busy <= cores else cores * TRAIN_THREADS / busy, cores)
    pace = machine_factor() * (1.0 if busy <= cores else CONTENTION) / usable
    return pace, f"on this machine's current load (load average {load:.1f} on {cores} cores)"


@dataclass(frozen=True)
class RunPlan:
    """What one run trains.

    Attributes:
        models: small models trained (every trained instance × its seeds).
        instances: arm settings trained (an arm under one task and initial scale).
        model_steps: training steps of the trained models together (the one count a run
            reports).
        work: the run's work in CPU seconds on an idle core, training and held-out evaluation
            (:attr:`posviz.lab.engine.run.Unit.cost` of the study's units, the one work model;
            the measured pace turns it into wall seconds).
        steps: optimiser steps of each model (the longest, where budgets differ).
        labels: ``instance id → label`` of the instances drawn live (one per arm: the preset's
            own task and initial scale), in the arms' order.
        estimate_s: seconds the run is expected to take on two idle cores.
        colors: ``arm label → colour``, as on every chart of the page.
        read_only: arm settings that train nothing: each reads another arm's trained models
            (an evaluation-only arm, ``train_length`` 0); their held-out evaluations are in
            ``work``, their seeds are not in ``models``.
    """

    models: int
    instances: int
    model_steps: int
    labels: dict[str, str]
    estimate_s: float
    colors: dict[str, str]
    work: float = 0.0
    steps: int = 0
    read_only: int = 0

    def estimate_now(self) -> tuple[float, str]:
        """Seconds the run would take if it started now (:func:`measured_pace`), and why."""
        if self.work <= 0:
            return self.estimate_s, "on two idle cores"
        pace, source = measured_pace()
        return START_S + self.work * pace, source

    @property
    def spec(self) -> dict:
        """The live loss chart (Vega-Lite, no data): every arm's colour fixed from the start."""
        return live_loss_spec(self.colors, title="Training loss (live, mean over seeds)")

    def estimate_text(self) -> str:
        """``"~40 s"`` / ``"~3 min"``: the estimate if it started now."""
        return duration_text(self.estimate_now()[0])


def duration_text(seconds: float) -> str:
    """``"~40 s"`` / ``"~3 min"`` / ``"~2 h"``."""
    if seconds < 120:
        return f"~{seconds:.0f} s"
    return f"~{seconds / 60:.0f} min" if seconds < 7200 else f"~{seconds / 3600:.1f} h"


def _work(units: list[Unit]) -> float:
    """CPU seconds of a study's ``units`` on an idle core: training and held-out evaluation
    (:attr:`~posviz.lab.engine.run.Unit.cost`, what the runner balances its threads by)."""
    return float(sum(u.cost for u in units))


def _estimate(work: float) -> float:
    """Wall seconds of ``work`` CPU seconds on :data:`~posviz.lab.engine.run.TRAIN_THREADS`
    threads of an idle machine, the models' build included."""
    return START_S + work / TRAIN_THREADS


def question_plan(question_id: str, config: LabConfig, *, part: str = "default") -> RunPlan:
    """What a question's run with ``config`` trains (its ``panel`` part's, with ``part``), and its
    estimated seconds.

    Raises:
        ValueError: unknown question or part, or a config the sweep cannot train (names the
            setting).
    """
    study = QuestionStudy(question(question_id), config, part)
    q = study.swept
    units = study.units()  # the runner's own: one work model for its threads and this estimate
    planned = [p for unit in units for p in unit.members]
    labels = {p.id: q.variant(p.arm).label for p in planned if p.id == p.arm}
    trained = [p for p in planned if _trains(p)]  # an evaluation-only arm reads another's models
    return RunPlan(
        models=sum(p.config.seeds for p in trained),
        instances=len(trained),
        model_steps=sum(p.config.seeds * p.config.steps for p in trained),
        labels=labels,
        estimate_s=_estimate(_work(units)),
        colors=arm_colors(q),
        work=_work(units),
        steps=max(p.config.steps for p in planned),
        read_only=len(planned) - len(trained),
    )


def _trains(member: object) -> bool:
    """Whether a unit's member trains models of its own (``train_length`` 0: it trains nothing,
    its call's model is read for it; :class:`~posviz.lab.engine.run.Unit`)."""
    return getattr(member, "train_length", None) != 0


def card_plan(check_id: str) -> RunPlan:
    """What a paper check's run trains, and its estimated seconds.

    Raises:
        ValueError: unknown check id.
    """
    check = paper_check(check_id)
    work = _work(CardStudy(check).units())
    arms = check.all_arms  # the size ladder's arms train in the same run (drawn: the check's)
    labels = [a.label for a in check.arms]
    if len(labels) > len(PALETTE):  # more arms than colours (a scheme at several tasks):
        schemes = list(dict.fromkeys(a.model.scheme for a in check.arms))  # one per scheme
        by_scheme = dict(zip(schemes, series_colors(schemes), strict=True))
        colors = {a.label: by_scheme[a.model.scheme] for a in check.arms}
    else:
        colors = dict(zip(labels, series_colors(labels), strict=True))
    return RunPlan(
        models=sum(a.config.seeds for a in arms),
        instances=len(arms),
        model_steps=sum(a.config.seeds * a.config.steps for a in arms),
        labels={a.id: a.label for a in check.arms},
        estimate_s=_estimate(work),
        work=work,
        steps=max(a.config.steps for a in arms),
        colors=colors,
    )


@dataclass(frozen=True)
class LiveView:
    """A consistent copy of a run's progress for drawing.

    ``fraction`` in [0, 1]; ``done``/``total`` model-steps of the whole run; ``curves``: the
    live training loss, ``variant, step, loss`` (variant = the arm's label).
    """

    queue_position: int
    fraction: float
    done: int
    total: int
    elapsed_s: float
    eta_s: float | None
    curves: pd.DataFrame
    started: bool

    def text(self, plan: RunPlan) -> str:
        """One line: waiting, starting, or the one count and the measured ETA of the whole run."""
        if self.queue_position:
            return (
                f"Waiting for a free training slot: position {self.queue_position} in the queue "
                "(other runs are training; this server trains a few at a time)."
            )
        if not self.started:
            return f"Starting: loading the trainer for {plan.models} models…"
        eta = (
            f", about {duration_text(self.eta_s)[1:]} left at the pace measured so far"
            if self.eta_s is not None
            else ""
        )
        each = f"each model takes {plan.steps:,} optimiser steps; " if plan.steps else ""
        read = f"; {plan.read_only} more are evaluated on them" if plan.read_only else ""
        return (
            f"Training {plan.models} models ({plan.instances} arm settings × their seeds{read}) "
            f"side by side: {self.done:,} of {self.total:,} in all, counted in model-steps ({each}"
            f"model-steps add up every model's steps); {self.elapsed_s:.0f} s so far{eta}. The "
            "run finishes and is stored even if this tab is closed."
        )


@dataclass
class LiveProgress:
    """Progress reports of one run, kept for drawing (thread-safe: the trainer writes, pages
    read). The share done never goes back: a paper check's two threads report their own."""

    plan: RunPlan
    lock: threading.Lock = field(default_factory=threading.Lock)
    fraction: float = 0.0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    queue_position: int = 0
    started: bool = False
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    first: tuple[float, float] | None = None  # (elapsed, fraction) of the first training report
    key: int = field(default_factory=lambda: next(_RUN_KEYS))  # this run in PACE

    def update(self, progress: Progress) -> None:
        """Take one report (``queue_position > 0``: still waiting for a job slot)."""
        with self.lock:
            self.queue_position = int(progress.queue_position)
            if self.queue_position:
                return
            self.started = True
            elapsed, eta = float(progress.elapsed_s), float(progress.eta_s)
            self.elapsed_s = elapsed
            self.eta_s = eta if math.isfinite(eta) else None
            if self.eta_s is not None and elapsed + self.eta_s > 0:
                self.fraction = max(self.fraction, min(elapsed / (elapsed + self.eta_s), 1.0))
                if self.first is None:  # the pace counts from here: building the models is not
                    self.first = (elapsed, self.fraction)  # training (START_S stands for it)
                done = self.fraction - self.first[1]
                if done >= PACE_AFTER and self.plan.work > 0:
                    PACE.record(self.key, elapsed - self.first[0], done * self.plan.work)
            for instance, loss in progress.loss.items():
                if instance in self.plan.labels and math.isfinite(float(loss)):
                    self._add(instance, int(progress.step), float(loss))

    def _add(self, instance: str, step: int, loss: float) -> None:
        curve = self.curves.setdefault(instance, [])
        if curve and curve[-1][0] == step:
            curve[-1] = (step, loss)
            return
        curve.append((step, loss))
        if len(curve) > MAX_CURVE_POINTS:
            del curve[1::2]  # keep the shape of the whole run in a bounded list

    def view(self) -> LiveView:
        with self.lock:
            rows = [
                {"variant": self.plan.labels[instance], "step": step, "loss": loss}
                for instance, curve in self.curves.items()
                for step, loss in curve
            ]
            total = self.plan.model_steps
            return LiveView(
                queue_position=self.queue_position,
                fraction=self.fraction,
                done=round(self.fraction * total),
                total=total,
                elapsed_s=self.elapsed_s,
                eta_s=self.eta_s,
                curves=pd.DataFrame(rows, columns=["variant", "step", "loss"]),
                started=self.started,
            )
