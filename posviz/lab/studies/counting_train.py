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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from posviz.encodings.families import lab_mechanism
from posviz.lab.engine.config import ModelConfig
from posviz.lab.engine.model import LabModel, Member
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
    make_batch,
)


@dataclass(frozen=True)
class CountingOutput:
    """Held-out test error and loss per scheme, ``(seeds, checkpoints)``, and the wall time."""

    run: CountingRun
    checkpoint_steps: tuple[int, ...]
    error: dict[str, np.ndarray]
    loss: dict[str, np.ndarray]
    seconds: float

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
    on_step: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CountingOutput:
    """Train every scheme × seed of ``run`` and read the held-out error at the checkpoints.

    Raises:
        ValueError: a bad run (the message names the setting).
        RuntimeError: ``should_stop()`` returned true (nothing is returned).
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
    marks = sorted({round(run.steps * (i + 1) / run.checkpoints) for i in range(run.checkpoints)})
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
            raise RuntimeError(f"Stopped at step {step - 1} of {run.steps}.")
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
            on_step(step, run.steps)
    error, heldout_loss = np.stack(errors, axis=1), np.stack(losses, axis=1)
    return CountingOutput(
        run=run,
        checkpoint_steps=tuple(marks),
        error={s: error[slices[s]] for s in run.schemes},
        loss={s: heldout_loss[slices[s]] for s in run.schemes},
        seconds=time.perf_counter() - start,
    )
