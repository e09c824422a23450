"""Train the lab's tiny decoders on the counting task (:mod:`posviz.lab.studies.counting`).

The engine's trainer (:func:`posviz.lab.engine.train.train_arms`) draws its batches from the
engine's own tasks, so this module runs its own loop around the engine's model, unchanged
(:class:`~posviz.lab.engine.model.LabModel`: every scheme × seed a member of one batched model,
one ``bmm`` per weight), with the engine's loss (:func:`~posviz.lab.engine.train.masked_loss`)
and Adam as the engine uses it (``foreach=True``, no weight decay, no schedule). As there:

* **paired design** — seed ``s`` of every scheme starts from the same generator seed and sees
  the same batches (one stream per seed and task,
  :func:`~posviz.lab.studies.counting.counting_rng`);
* **held-out** programs come from a disjoint stream, fixed for the run; the test error is the
  share of held-out programs whose answer (the argmax over the values 0 … 10) is wrong — Table
  3's "test error rate".

The model is a causal decoder; only the answer counts (the paper's ``--train-on answer``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from posviz.encodings.families import lab_mechanism
from posviz.lab.engine.config import ModelConfig
from posviz.lab.engine.model import LabModel, Member
from posviz.lab.engine.results import LabStopped
from posviz.lab.engine.tasks import Batch
from posviz.lab.engine.train import masked_loss, use_one_thread
from posviz.lab.studies.counting import (
    EVAL_STREAM,
    N_IN,
    N_OUT,
    PAD,
    TRAIN_STREAM,
    CountingRun,
    counting_rng,
    majority_error,
    make_batch,
    positions_and_answers,
)


@dataclass(frozen=True)
class CountingOutput:
    """Held-out test error and loss per scheme, ``(seeds, checkpoints)``, the commonest-answer
    error of each seed's held-out programs ``(seeds,)``, and the wall time."""

    run: CountingRun
    checkpoint_steps: tuple[int, ...]
    error: dict[str, np.ndarray]
    loss: dict[str, np.ndarray]
    seconds: float
    majority: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def final_error(self, scheme: str) -> np.ndarray:
        """``(seeds,)`` test error at the last checkpoint."""
        return self.error[scheme][:, -1]


def _members(run: CountingRun) -> tuple[list[Member], dict[str, slice]]:
    """Rotary schemes first (the engine's model rotates only a leading block of members)."""
    order = sorted(run.schemes, key=lambda s: lab_mechanism(s).kind != "rotary")
    members, slices = [], {}
    for scheme in order:
        start = len(members)
        for seed in range(run.first_seed, run.first_seed + run.seeds):
            model = ModelConfig(kind="decoder", scheme=scheme)
            members.append(Member(model, seed, rows=run.task.max_tokens, n_in=N_IN))
        slices[scheme] = slice(start, len(members))
    return members, slices


def _tensors(batches: Sequence, per_member: Sequence[int]) -> tuple[torch.Tensor, ...]:
    """``(E, B, T)`` inputs, targets, mask, valid: member ``i`` gets batch ``per_member[i]``."""
    t = max(b.inputs.shape[1] for b in batches)
    out = []
    for name, fill in (("inputs", PAD), ("targets", 0), ("mask", False),
                       ("valid", False)):  # fmt: skip
        stacked = np.stack(
            [
                np.pad(getattr(b, name), ((0, 0), (0, t - b.inputs.shape[1])), constant_values=fill)
                for b in batches
            ]
        )
        out.append(torch.from_numpy(stacked[list(per_member)]))
    return tuple(out)


class _Pool:
    """A fixed training set of one seed: batches drawn from it without replacement."""

    def __init__(self, run: CountingRun, rng: np.random.Generator) -> None:
        self.data = make_batch(run.task, rng, run.train_programs)  # type: ignore[arg-type]
        self.rng, self.batch = rng, run.batch

    def next(self) -> Batch:
        rows = self.rng.choice(self.data.inputs.shape[0], size=self.batch, replace=False)
        t = int(self.data.valid[rows].sum(1).max())
        d = self.data
        return Batch(d.inputs[rows, :t], d.targets[rows, :t], d.mask[rows, :t], d.valid[rows, :t])


def train_counting(
    run: CountingRun,
    *,
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    marks: Sequence[int] | None = None,
) -> CountingOutput:
    """Train every scheme × seed of ``run`` and read the held-out error at the checkpoints
    (``marks``: these steps; default ``run.checkpoints`` evenly spaced, the last at the end).
    ``on_step(step, steps, losses)`` after every step, ``losses`` each scheme's training loss
    (mean over its seeds).

    Raises:
        ValueError: a bad run (the message names the setting).
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    use_one_thread()  # as every lab run: on a shared 2-core box a second thread is ruinous
    members, slices = _members(run)
    model = LabModel(members, n_out=N_OUT, width=run.width, heads=run.heads, layers=run.layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(run.lr), foreach=True)
    seeds = list(range(run.first_seed, run.first_seed + run.seeds))
    member_seed = [seeds.index(m.seed) for m in members]
    streams = [counting_rng(s, TRAIN_STREAM, run.task.variables) for s in seeds]
    pools = [_Pool(run, rng) for rng in streams] if run.train_programs else None
    held = [make_batch(run.task, counting_rng(s, EVAL_STREAM, run.task.variables), run.eval_size)
            for s in seeds]  # fmt: skip
    held_tensors = _tensors(held, member_seed)
    if marks is None:
        marks = [round(run.steps * (i + 1) / run.checkpoints) for i in range(run.checkpoints)]
    marks = sorted(set(marks))
    if not marks or marks[0] < 1 or marks[-1] > run.steps:
        raise ValueError(f"checkpoints {marks} must lie in 1 … {run.steps}.")
    errors, losses = [], []
    start = time.perf_counter()

    @torch.no_grad()
    def evaluate() -> None:
        tokens, targets, mask, valid = held_tensors
        logits = model(tokens, valid)
        wrong = (logits.argmax(-1) != targets) & mask
        errors.append((wrong.sum((1, 2)) / mask.sum((1, 2))).numpy().astype(np.float64))
        losses.append(masked_loss(logits, targets, mask).numpy().astype(np.float64))

    for step in range(1, run.steps + 1):
        if should_stop is not None and should_stop():
            raise LabStopped(f"Stopped at step {step - 1} of {run.steps}.")
        if pools is None:
            batches = [make_batch(run.task, rng, run.batch) for rng in streams]
        else:
            batches = [pool.next() for pool in pools]
        tokens, targets, mask, valid = _tensors(batches, member_seed)
        loss = masked_loss(model(tokens, valid), targets, mask)
        optimizer.zero_grad(set_to_none=True)
        loss.sum().backward()
        optimizer.step()
        if step in marks:
            evaluate()
        if on_step is not None:
            per_member = loss.detach().numpy()
            on_step(step, run.steps, {k: float(per_member[v].mean()) for k, v in slices.items()})
    error, heldout_loss = np.stack(errors, axis=1), np.stack(losses, axis=1)
    return CountingOutput(
        run=run,
        checkpoint_steps=tuple(marks),
        error={s: error[slices[s]] for s in run.schemes},
        loss={s: heldout_loss[slices[s]] for s in run.schemes},
        seconds=time.perf_counter() - start,
        majority=np.array([majority_error(positions_and_answers(b)[1]) for b in held]),
    )


@dataclass(frozen=True)
class CardHeldOut:
    """One card arm's held-out numbers at its programs' length: ``error``, ``loss`` and
    ``accuracy`` (1 − error) ``(seeds, checkpoints)``, ``majority`` ``(seeds,)``."""

    error: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    majority: np.ndarray


@dataclass(frozen=True)
class CardArmOutput:
    """What the one runner's card build reads of an arm: ``heldout[length]``."""

    heldout: dict[int, CardHeldOut]


def train_card_arms(
    members: Sequence[Any],
    *,
    steps: int,
    checkpoints: Sequence[int],
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, CardArmOutput]:
    """The counting card's trainer for the lab's one runner (:attr:`posviz.lab.engine.run.Unit.
    train`): the members (card arms whose ``config.run`` is a one-scheme :class:`CountingRun`)
    grouped by task, each group one :func:`train_counting` call, in order. A member's numbers do
    not depend on the group it shares (each scheme × seed is its own member: own weights, its
    seed's batches), so the runner may split the members between threads.

    Raises:
        ValueError: members of one task whose runs differ in anything but the scheme.
        LabStopped: ``should_stop()`` returned true.
    """
    groups: dict[CountingRun, list[Any]] = {}
    for member in members:
        run = member.config.run
        key = dataclasses.replace(run, schemes=("learned",))  # the group: all but the scheme
        groups.setdefault(key, []).append(member)
    total = sum(len(g) * key.seeds for key, g in groups.items()) * steps
    done, out = 0, {}
    for key, group in groups.items():
        run = dataclasses.replace(
            key, schemes=tuple(m.config.run.schemes[0] for m in group), steps=steps
        )
        size = len(group) * run.seeds
        ids = {m.config.run.schemes[0]: m.id for m in group}

        def step_done(
            step: int,
            _total: int,
            losses: dict[str, float],
            base: int = done,
            size: int = size,
            ids: dict[str, str] = ids,
        ) -> None:
            if on_step is not None:
                on_step(base + step * size, total, {ids[k]: v for k, v in losses.items()})

        trained = train_counting(run, on_step=step_done, should_stop=should_stop, marks=checkpoints)
        done += steps * size
        length = run.task.max_tokens
        for member in group:
            scheme = member.config.run.schemes[0]
            error = trained.error[scheme]
            held = CardHeldOut(error, trained.loss[scheme], 1.0 - error, trained.majority)
            out[member.id] = CardArmOutput({length: held})
    return out
