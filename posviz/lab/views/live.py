"""Following a lab run while it trains, and how long one takes before it starts.

A question's run trains every instance of its sweep (an arm under one task and, with a learned
table, one initial scale) with all their seeds, in a few batched models on two training threads
(:mod:`posviz.lab.run`). Its :class:`~posviz.lab.results.Progress` reports say how far the whole
run is (``elapsed / (elapsed + eta)`` is exactly the share of model-steps done) and the latest
training loss of every instance. :class:`LiveProgress` turns them into ONE count across every arm
and sweep cell ("step 4,800 of 14,400 in all"), one ETA, and loss curves under the arms' labels.
:func:`question_plan` and :func:`card_plan` say what a run trains and estimate its seconds.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import pandas as pd

from posviz.charts.lab import live_loss_spec
from posviz.charts.style import series_colors
from posviz.lab import sweep
from posviz.lab.config import LabConfig
from posviz.lab.papers import paper_check
from posviz.lab.presets import question
from posviz.lab.results import Progress
from posviz.lab.run import TRAIN_THREADS
from posviz.lab.views.figures import arm_colors

#: points kept per arm for the live loss curve (older points are thinned, not dropped).
MAX_CURVE_POINTS = 400
#: CPU seconds of one model's training step per unit of :func:`_size` (batch × length × layers ×
#: (width + heads × length): its matrix and attention work), evaluation and judging included.
#: Fitted to the CPU time of ten runs of four questions (presets and shorter or smaller ones, from
#: 2 to 197 s of CPU): each took 0.74–1.8× what this constant estimates.
CPU_S_PER_UNIT = 6.3e-8
#: seconds to start training in a fresh process (importing torch, building the models).
START_S = 4.0


@dataclass(frozen=True)
class RunPlan:
    """What one run trains.

    Attributes:
        models: small models trained (every instance × its seeds).
        instances: arm settings trained (an arm under one task and initial scale).
        model_steps: training steps of all models together (the one count a run reports).
        labels: ``instance id → label`` of the instances drawn live (one per arm: the preset's
            own task and initial scale), in the arms' order.
        estimate_s: seconds the run is expected to take on two idle cores.
        colors: ``arm label → colour``, as on every chart of the page.
    """

    models: int
    instances: int
    model_steps: int
    labels: dict[str, str]
    estimate_s: float
    colors: dict[str, str]

    @property
    def spec(self) -> dict:
        """The live loss chart (Vega-Lite, no data): every arm's colour fixed from the start."""
        return live_loss_spec(self.colors, title="Training loss (live, mean over seeds)")

    def estimate_text(self) -> str:
        """``"~40 s"`` / ``"~3 min"``."""
        seconds = self.estimate_s
        return f"~{seconds:.0f} s" if seconds < 120 else f"~{seconds / 60:.0f} min"


def _size(config: LabConfig) -> int:
    """The work of one model's training step, in units of :data:`CPU_S_PER_UNIT`."""
    length = config.max_len
    return config.batch * length * config.layers * (config.width + config.heads * length)


def _estimate(configs: list[LabConfig]) -> float:
    """Wall seconds to train every model of ``configs`` (one per model) on
    :data:`~posviz.lab.run.TRAIN_THREADS` threads of an idle machine."""
    cpu = sum(c.seeds * c.steps * _size(c) for c in configs) * CPU_S_PER_UNIT
    return START_S + cpu / TRAIN_THREADS


def question_plan(question_id: str, config: LabConfig) -> RunPlan:
    """What a question's run with ``config`` trains, and its estimated seconds.

    Raises:
        ValueError: unknown question, or a config the sweep cannot train (names the setting).
    """
    q = question(question_id)
    groups = sweep.plan(q.arm_specs(), q.sweep, config)
    planned = [p for group in groups.values() for p in group]
    labels = {p.id: q.variant(p.arm).label for p in planned if p.id == p.arm}
    return RunPlan(
        models=sum(p.config.seeds for p in planned),
        instances=len(planned),
        model_steps=sum(p.config.seeds * p.config.steps for p in planned),
        labels=labels,
        estimate_s=_estimate([p.config for p in planned]),
        colors=arm_colors(q),
    )


def card_plan(check_id: str) -> RunPlan:
    """What a paper check's run trains, and its estimated seconds.

    Raises:
        ValueError: unknown check id.
    """
    check = paper_check(check_id)
    return RunPlan(
        models=sum(a.config.seeds for a in check.arms),
        instances=len(check.arms),
        model_steps=sum(a.config.seeds * a.config.steps for a in check.arms),
        labels={a.id: a.label for a in check.arms},
        estimate_s=_estimate([a.config for a in check.arms]),
        colors=dict(
            zip(
                [a.label for a in check.arms],
                series_colors([a.label for a in check.arms]),
                strict=True,
            )
        ),
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
        """One line: waiting, starting, or the one count and ETA of the whole run."""
        if self.queue_position:
            return (
                f"Waiting for a free training slot: position {self.queue_position} in the queue "
                "(other runs are training; this server trains a few at a time)."
            )
        if not self.started:
            return f"Starting: loading the trainer for {plan.models} models…"
        eta = f", about {self.eta_s:.0f} s left" if self.eta_s is not None else ""
        return (
            f"Training {plan.models} models ({plan.instances} arm settings × their seeds) at "
            f"once: step {self.done:,} of {self.total:,} in all; {self.elapsed_s:.0f} s so far"
            f"{eta}."
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
