"""The training loop of the studies that draw their own batches (far context, attention sinks).

The engine's trainer (:func:`posviz.lab.engine.train.train_arms`) draws its batches from the
engine's tasks; a study whose task the engine does not draw trains the engine's model (or a
variant of it) in its own loop, and those loops were one loop four times. What they share lives
here, hashed into each such study's run id with the rest of its source (the study's ``source``):

* :class:`ArmOutput` — an arm's output in the engine's shape, for the questions' trainers;
* :func:`checkpoint_marks` — the evaluation steps, checked;
* :func:`train_groups` — members that can share one batched model are trained group by group,
  the progress reported over the whole run;
* :func:`member_loss` — each member's mean cross-entropy, what a step minimises;
* :func:`adam_steps` — Adam as the engine uses it (``foreach=True``, no weight decay, no
  schedule), a member whose loss is no longer finite marked as diverged (its gradient zeroed,
  the others' untouched), the loss curve kept at no more than
  :data:`~posviz.lab.engine.train.MAX_CURVE_POINTS` points.

What a step trains on and what an evaluation reads stay in each study's trainer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from posviz.lab.engine.results import LabStopped
from posviz.lab.engine.train import MAX_CURVE_POINTS

#: ``(step, {arm: mean training loss})``: a group's progress, in its own steps
Report = Callable[[int, dict[str, float]], None]
#: ``(steps done, steps in all, {arm: mean training loss})``: the run's, as the runner takes it
OnStep = Callable[[int, int, dict[str, float]], None]


@dataclass(frozen=True)
class HeldOut:
    """Held-out results of one entry: ``accuracy``/``loss`` ``(E, c)`` at each checkpoint,
    ``per_position`` ``(E, c, k)``; ``undefined`` says an entry is a reading (the sinks
    question's α₁, say), not an evaluation length."""

    accuracy: np.ndarray
    loss: np.ndarray
    per_position: np.ndarray
    undefined: str = ""


@dataclass(frozen=True)
class ArmOutput:
    """One arm, as the engine's :class:`~posviz.lab.engine.train.ArmOutput` (no table
    snapshots): what a question's own trainer returns for the engine's measures to read."""

    curve_steps: np.ndarray
    losses: np.ndarray
    checkpoint_steps: np.ndarray
    heldout: dict[Any, HeldOut]
    diverged_at: np.ndarray
    n_params: int
    snapshots: None = None
    snapshot_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def checkpoint_marks(checkpoints: Sequence[int], steps: int) -> list[int]:
    """The distinct evaluation steps, in order.

    Raises:
        ValueError: none, or one outside ``1 … steps``.
    """
    marks = sorted(set(int(c) for c in checkpoints))
    if not marks or marks[0] < 1 or marks[-1] > steps:
        raise ValueError(f"checkpoints {marks} must lie in 1 … {steps}.")
    return marks


def train_groups(
    groups: Sequence[tuple[int, Any]],
    steps: int,
    train_group: Callable[[Any, Report], dict[str, Any]],
    on_step: OnStep | None,
) -> dict[str, Any]:
    """Train each ``(members, group)`` in turn (``members``: how many models the group trains
    at once) for ``steps`` steps; ``on_step`` hears the whole run's progress, each group's
    steps counted at its size. Returns every group's outputs, merged."""
    total = steps * sum(size for size, _ in groups)
    done, out = 0, {}
    for size, group in groups:

        def report(step: int, losses: dict[str, float], base: int = done, size: int = size):
            if on_step is not None:
                on_step(base + step * size, total, losses)

        out.update(train_group(group, report))
        done += steps * size
    return out


def member_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Each member's mean next-token cross-entropy ``(E,)`` of ``logits`` ``(E, B, T, V)``
    against targets ``y`` ``(E, B, T)``."""
    flat = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    return flat.view(y.shape).mean((1, 2))


@dataclass(frozen=True)
class Trace:
    """What :func:`adam_steps` kept: the loss curve ``(points,)`` steps and ``(members,)``
    losses at each, and the step each member diverged at (−1: it did not)."""

    curve_steps: np.ndarray
    curve: list[np.ndarray]
    diverged: np.ndarray

    def losses(self, own: slice) -> np.ndarray:
        """The members ``own``'s curves ``(members, points)``."""
        return np.stack([v[own] for v in self.curve], axis=1)


def adam_steps(
    optimizer: torch.optim.Optimizer,
    step_loss: Callable[[], torch.Tensor],
    *,
    steps: int,
    marks: Sequence[int],
    evaluate: Callable[[], None],
    arms: Sequence[str],
    seeds: int,
    report: Report,
    should_stop: Callable[[], bool] | None,
) -> Trace:
    """``steps`` steps of ``optimizer`` (Adam); ``step_loss()`` draws the next batch and returns
    each member's mean loss ``(members,)``; ``evaluate()`` runs after each step in ``marks``.
    The members are ``arms`` × ``seeds`` in that order; ``report`` hears each arm's mean loss.

    Raises:
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    every = max(1, math.ceil(steps / MAX_CURVE_POINTS))
    curve_steps: list[int] = []
    curve: list[np.ndarray] = []
    diverged = np.full(len(arms) * seeds, -1, dtype=np.int64)
    for step in range(1, steps + 1):
        if should_stop is not None and should_stop():
            raise LabStopped(f"Stopped at step {step - 1} of {steps}.")
        loss = step_loss()
        values = loss.detach().numpy().astype(np.float64)
        diverged[~np.isfinite(values) & (diverged < 0)] = step
        optimizer.zero_grad(set_to_none=True)
        torch.where(torch.isfinite(loss), loss, torch.zeros_like(loss)).sum().backward()
        optimizer.step()
        if step % every == 0 or step == steps:
            curve_steps.append(step)
            curve.append(values)
        if step in marks:
            evaluate()
        report(step, {a: float(values[i * seeds : (i + 1) * seeds].mean())
                      for i, a in enumerate(arms)})  # fmt: skip
    return Trace(np.array(curve_steps, dtype=np.int64), curve, diverged)
