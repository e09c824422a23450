"""The attention-sinks question's training loop: bigram-backcopy sequences, the lab's model with
the arm's attention (:class:`~posviz.lab.attention_variants.VariantModel`), engine-shaped outputs.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781), §3.2 (p. 4–5): α₁ and Sink₁^ε on held-out sequences of
``T = 64``. The question's arms are :class:`~posviz.lab.engine.sweep.Planned` instances whose
variants carry a ``condition`` (:data:`~posviz.lab.studies.sinks_arms.CONDITIONS`): the attention
(softmax, or softmax with a key-bias slot) and whether a sequence starts with the BOS.

Paired design, as the engine's: seed ``s`` of every arm starts from the same generator seed (the
key-bias slot is one more parameter, started at 0) and, for the same BOS setting, reads the same
training sequences at every step (stream ``[s, 0, bos]``) and the same held-out sequences
(``[s, 1, bos]``); no number depends on which arms share a call (the runner may split a unit).
Adam without weight decay at the config's learning rate, the engine's optimiser.

Outputs have the engine's shape (:class:`ArmOutput`): the training-loss curve, held-out
evaluations at step 0 and every checkpoint, and ``heldout`` at the length ``T`` (next-token
accuracy and loss over every target, accuracy per position), plus the readings that are not a
length (:data:`~posviz.lab.studies.sinks_arms.READINGS`, each marked so): α₁ per head (its mean
over heads as ``accuracy``), the copy targets' accuracy and loss, and the share of attention a
query spends on tokens (1 for softmax; the rest is the slot's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from posviz.encodings.families import lab_mechanism
from posviz.lab.attention_variants import VariantModel, first_token_score
from posviz.lab.engine.model import Member
from posviz.lab.engine.train import use_one_thread
from posviz.lab.sink_task import Batch, Chain, backcopy_batch, bigram_chain
from posviz.lab.studies.own_loop import (
    ArmOutput,
    HeldOut,
    Report,
    Trace,
    adam_steps,
    checkpoint_marks,
    member_loss,
    train_groups,
)
from posviz.lab.studies.sinks_arms import (
    ALPHA,
    ATTENTION,
    BOS,
    CONDITIONS,
    COPY,
    NOT_A_LENGTH,
    TOKEN_SHARE,
    check,
)

EVAL_CHUNK = 25  # held-out sequences per forward pass that keeps its attention maps
CHUNK_STEPS = 50  # training steps whose sequences are drawn at once


def train_question_arms(
    members: Sequence[Any],
    *,
    steps: int,
    checkpoints: Sequence[int],
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, ArmOutput]:
    """Train every member (``id``, ``model``, ``config``, ``condition``) for ``steps`` Adam
    steps, evaluated before training and at ``checkpoints``; members with the same attention and
    config form one model (trained in turn).

    Raises:
        ValueError: an unknown condition, a config without the task, or bad checkpoints.
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    use_one_thread()
    marks = checkpoint_marks(checkpoints, steps)
    groups: dict[tuple, list[Any]] = {}
    for member in members:
        if member.condition not in CONDITIONS:
            raise ValueError(
                f"condition={member.condition!r}; choose one of {', '.join(CONDITIONS)}."
            )
        check(member.config)
        groups.setdefault((ATTENTION[member.condition], member.config), []).append(member)
    return train_groups(
        [(len(g) * g[0].config.seeds, g) for g in groups.values()],
        steps,
        lambda group, report: _train_group(group, steps, marks, report, should_stop),
        on_step,
    )


def _ordered(group: list[Any]) -> list[Any]:
    """The group's members, the rotary ones first (the engine's model rotates a leading block)."""
    rotary = [m for m in group if lab_mechanism(m.model.scheme).kind == "rotary"]
    return rotary + [m for m in group if m not in rotary]


class Stream:
    """A member's training sequences: drawn :data:`CHUNK_STEPS` steps at a time from its own
    generator (one vectorised draw instead of one per step), so step ``k``'s batch is the same
    in a run of any length — a ``3S``-step run's step ``S`` is an ``S``-step model."""

    def __init__(self, chain: Chain, rng: np.random.Generator, batch: int, t: int, bos: bool):
        self.chain, self.rng, self.batch, self.t, self.bos = chain, rng, batch, t, bos
        self.drawn: Any = None
        self.step = 0

    def next(self) -> Any:
        """The next step's batch (``inputs``, ``targets``: ``(batch, t)``)."""
        at = self.step % CHUNK_STEPS
        if at == 0:
            n = CHUNK_STEPS * self.batch
            self.drawn = backcopy_batch(self.chain, self.rng, n, self.t, bos=self.bos)
        self.step += 1
        lo, hi = at * self.batch, (at + 1) * self.batch
        return Batch(self.drawn.inputs[lo:hi], self.drawn.targets[lo:hi], self.drawn.copy[lo:hi])


def _train_group(
    group: list[Any],
    steps: int,
    marks: list[int],
    report: Report,
    should_stop: Callable[[], bool] | None,
) -> dict[str, ArmOutput]:
    c = group[0].config
    t = check(c)
    chain = bigram_chain()
    attention = ATTENTION[group[0].condition]
    seeds = list(range(c.first_seed, c.first_seed + c.seeds))
    group = _ordered(group)
    rows = [(m, s) for m in group for s in seeds]  # one model member per (arm, seed)
    data = [(s, BOS[m.condition]) for m, s in rows]
    model = VariantModel(
        [Member(m.model, s, t, chain.n_tokens + 1) for m, s in rows],
        n_out=chain.n_tokens, width=c.width, heads=c.heads, layers=c.layers, attention=attention,
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=float(c.lr), foreach=True)
    keys = sorted(set(data))
    train = {k: Stream(chain, np.random.default_rng([k[0], 0, int(k[1])]), c.batch, t, k[1])
             for k in keys}  # fmt: skip
    held = {
        k: backcopy_batch(chain, np.random.default_rng([k[0], 1, int(k[1])]), c.eval_batch, t,
                          bos=k[1])
        for k in keys
    }  # fmt: skip

    def stack(batches: dict, name: str, lo: int = 0, hi: int | None = None) -> torch.Tensor:
        return torch.from_numpy(np.stack([getattr(batches[k], name)[lo:hi] for k in data]))

    evals: list[dict[str, np.ndarray]] = []

    def evaluate() -> None:
        evals.append(evaluate_heldout(model, stack(held, "inputs"), stack(held, "targets"),
                                      stack(held, "copy").numpy(), c))  # fmt: skip

    def step_loss() -> torch.Tensor:
        batches = {k: stream.next() for k, stream in train.items()}
        x, y = stack(batches, "inputs"), stack(batches, "targets")
        return member_loss(model(x), y)

    evaluate()
    trace = adam_steps(optimizer, step_loss, steps=steps, marks=marks, evaluate=evaluate,
                       arms=[m.id for m in group], seeds=c.seeds, report=report,
                       should_stop=should_stop)  # fmt: skip
    slot = c.layers * c.width if attention == "key_bias" else 0  # one key of width d/H per head
    return {
        m.id: arm_output(evals, slice(i * c.seeds, (i + 1) * c.seeds), c, t, trace=trace,
                         marks=marks, n_params=int(model.n_params(i * c.seeds)) + slot)
        for i, m in enumerate(group)
    }  # fmt: skip


@torch.no_grad()
def evaluate_heldout(model: Any, x: torch.Tensor, y: torch.Tensor, copy: np.ndarray, c) -> dict:
    """One held-out pass (logits and maps) over inputs ``x`` ``(E, B, T)``: loss, accuracy,
    α₁ per layer × head (Gu et al. §3.2, :func:`~posviz.lab.attention_variants.
    first_token_score`), the attention spent on tokens, and the copies' accuracy and loss."""
    alpha = np.zeros((x.shape[0], c.layers, c.heads))
    share = np.zeros(x.shape[0])
    parts = []
    for block in model.blocks:
        block.keep = True
    try:
        for lo in range(0, c.eval_batch, EVAL_CHUNK):
            parts.append(model(x[:, lo : lo + EVAL_CHUNK]))  # one pass: logits and maps
            maps = np.stack([b.maps.permute(0, 2, 1, 3, 4).numpy() for b in model.blocks], 1)
            alpha += first_token_score(maps).sum(-1)  # (E, L, H, b, T, T) → summed over b
            share += maps.astype(np.float64).sum(-1).mean((1, 2, 4)).sum(-1)
    finally:
        for block in model.blocks:
            block.keep, block.maps = False, None
    logits = torch.cat(parts, dim=1)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                         reduction="none").view(y.shape).numpy().astype(np.float64)  # fmt: skip
    hit = (logits.argmax(-1) == y).numpy().astype(np.float64)  # (E, B, T)
    n_copy = copy.sum((1, 2))
    return {
        "loss": ce.mean((1, 2)), "accuracy": hit.mean((1, 2)), "per_position": hit.mean(1),
        "alpha": alpha / c.eval_batch, "share": share / c.eval_batch,
        "copy_acc": (hit * copy).sum((1, 2)) / np.maximum(n_copy, 1),
        "copy_loss": (ce * copy).sum((1, 2)) / np.maximum(n_copy, 1),
    }  # fmt: skip


def arm_output(
    evals: list[dict], own: slice, c, t: int, *, trace: Trace, marks: list[int], n_params: int
) -> ArmOutput:
    """One arm's engine-shaped output from the evaluations (before training, then at each of
    ``marks``) of its members ``own``: the length ``t`` and the readings that are not a length
    (:data:`~posviz.lab.studies.sinks_arms.READINGS`)."""

    def read(name: str) -> np.ndarray:
        return np.stack([e[name][own] for e in evals], axis=1)  # (E, c, …)

    alpha = read("alpha").reshape(c.seeds, len(evals), -1)  # (E, c, layers · heads)
    nan = np.full(alpha.shape[:2], np.nan)
    return ArmOutput(
        curve_steps=trace.curve_steps,
        losses=trace.losses(own),
        checkpoint_steps=np.array([0, *marks], dtype=np.int64),
        heldout={
            t: HeldOut(read("accuracy"), read("loss"), read("per_position")),
            ALPHA: HeldOut(alpha.mean(-1), nan, alpha, NOT_A_LENGTH),
            COPY: HeldOut(
                read("copy_acc"), read("copy_loss"), read("copy_acc")[..., None], NOT_A_LENGTH
            ),
            TOKEN_SHARE: HeldOut(read("share"), nan, read("share")[..., None], NOT_A_LENGTH),
        },
        diverged_at=trace.diverged[own].copy(),
        n_params=n_params,
    )
