"""Train the far-context *question*'s arms (:mod:`posviz.lab.studies.far_context_question`)
through the lab's one runner, with engine-shaped outputs.

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), §2 eq. 9–10, p. 3: a window is ``far`` characters (intact or
ablated), a separator, then ``near`` ordered characters whose next-character losses count. The
question's arms are :class:`~posviz.lab.engine.sweep.Planned` instances of a
:class:`~posviz.lab.studies.presets.Question` whose variants carry a ``condition``
(:data:`CONDITIONS`); a member's window is its config's ``max_len`` = ``far + near`` with
``near`` = :data:`NEAR` (the *no-information* arm sees the separator and the near part alone).

Same loop, model and streams as the paper card's trainer
(:mod:`posviz.lab.studies.far_context_train`): seed ``s`` of every arm starts from the same
generator seed and reads the same windows at every step (``[s, 0, far, near]``), the shuffled
far contexts come from their own stream (``[s, 2, 0]``), held-out windows from the last 10 % of
the text (``[s, 1, far, near]``, shuffled once by ``[s, 3, 0]``), so no number depends on which
arms share a call (the runner may split a unit). An ``eval_shuffled`` arm trains exactly as the
``full`` arm (the same seed and windows, hence the same weights) and is *evaluated* with the far
context shuffled (their §3.3, Fig. 4): when both are in one call the model is trained once.

Outputs have the engine's shape (:class:`posviz.lab.engine.train.ArmOutput`'s fields): the
training-loss curve, held-out evaluations at step 0 and every checkpoint, and per evaluation
length a :class:`HeldOut`: at ``far + near`` every target (next-character accuracy, loss in nats,
accuracy per target), at ``far + near // 2`` the *mid-range* targets only (the first half: a
causal model's loss on them is its loss on that prefix of the window). The long-range loss is
``2 · loss(far + near) − loss(far + near/2)`` (:func:`long_range`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from posviz.encodings.families import lab_mechanism
from posviz.lab.engine import tasks
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.model import LabModel, Member
from posviz.lab.engine.train import use_one_thread
from posviz.lab.studies import far_context as fc
from posviz.lab.studies.far_context_arms import CONDITIONS, eval_lengths, split
from posviz.lab.studies.own_loop import (
    ArmOutput,
    HeldOut,
    Report,
    adam_steps,
    checkpoint_marks,
    member_loss,
    train_groups,
)

EVAL_CHUNK = 64


def train_question_arms(
    members: Sequence[Any],
    *,
    steps: int,
    checkpoints: Sequence[int],
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, ArmOutput]:
    """Train every member (``id``, ``model``, ``config``, ``condition``) for ``steps`` Adam
    steps, evaluated before training and at ``checkpoints``; members that see the far context
    form one model per config, the no-information ones another (trained in turn).

    Raises:
        ValueError: an unknown condition, a bad window or bad checkpoints.
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
        split(member.config)
        key = (member.condition == "noinfo", member.config)
        groups.setdefault(key, []).append(member)
    return train_groups(
        [(len(_trained_keys(g)) * g[0].config.seeds, g) for g in groups.values()],
        steps,
        lambda group, report: _train_group(group, steps, marks, report, should_stop),
        on_step,
    )


def _training(member: Any) -> str:
    """The condition a member trains under (an evaluation-only arm trains as ``full``)."""
    return "full" if member.condition == "eval_shuffled" else member.condition


def _trained_keys(group: list[Any]) -> list[tuple[str, str]]:
    """The distinct models a group trains: ``(scheme and init, training condition)``, the
    rotary ones first (the engine's model rotates a leading block of members)."""
    keys = dict.fromkeys((repr(m.model), _training(m)) for m in group)
    by_key = {(repr(m.model), _training(m)): m for m in group}
    rotary = [k for k in keys if lab_mechanism(by_key[k].model.scheme).kind == "rotary"]
    return rotary + [k for k in keys if k not in rotary]


def _train_group(
    group: list[Any],
    steps: int,
    marks: list[int],
    report: Report,
    should_stop: Callable[[], bool] | None,
) -> dict[str, ArmOutput]:
    c = group[0].config
    far, near = split(c)
    seeds = list(range(c.first_seed, c.first_seed + c.seeds))
    keys = _trained_keys(group)
    model_of = {(repr(m.model), _training(m)): m.model for m in group}
    rows_keys = [(k, s) for k in keys for s in seeds]  # one model member per (key, seed)
    noinfo = group[0].condition == "noinfo"
    rows = near if noinfo else far + near
    n_in, n_out, _ = tasks.vocab_sizes(LabConfig(task="lm"))
    model = LabModel(
        [Member(model_of[k], s, rows, n_in) for k, s in rows_keys],
        n_out=n_out, width=c.width, heads=c.heads, layers=c.layers,
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=float(c.lr), foreach=True)
    shuffled = any(k[1] == "shuffle_all" for k in keys)
    train = {s: np.random.default_rng([s, 0, far, near]) for s in seeds}
    train_ablation = {s: np.random.default_rng([s, 2, 0]) for s in seeds}
    held = {
        s: fc.sample_windows(
            np.random.default_rng([s, 1, far, near]), c.eval_batch, far, near, held_out=True
        )
        for s in seeds
    }
    held_shuffled = {
        s: fc.ablate(held[s].far, "shuffle_all", np.random.default_rng([s, 3, 0])) for s in seeds
    }

    def tokens(windows: dict[int, fc.Windows], far_ctx: dict[str, dict], eval_only: bool):
        out = []
        for (_, condition), seed in rows_keys:
            if noinfo:
                out.append(windows[seed].inputs(None))
            elif eval_only or condition == "shuffle_all":
                out.append(windows[seed].inputs(far_ctx["shuffle_all"][seed]))
            else:
                out.append(windows[seed].inputs(far_ctx["none"][seed]))
        return torch.from_numpy(np.stack(out))

    def targets(windows: dict[int, fc.Windows]) -> torch.Tensor:
        return torch.from_numpy(np.stack([windows[seed].near for _, seed in rows_keys]))

    def logits_of(x: torch.Tensor) -> torch.Tensor:
        return model(x)[:, :, -near:]

    passes = ("own", "eval_shuffled") if any(m.condition == "eval_shuffled" for m in group) else ()
    passes = passes or ("own",)
    evals: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {p: [] for p in passes}

    @torch.no_grad()
    def evaluate() -> None:
        for name in passes:
            ces, hits = [], []
            for lo in range(0, c.eval_batch, EVAL_CHUNK):
                part = {s: fc.Windows(w.far[lo : lo + EVAL_CHUNK], w.near[lo : lo + EVAL_CHUNK])
                        for s, w in held.items()}  # fmt: skip
                far_ctx = {
                    "none": {s: w.far for s, w in part.items()},
                    "shuffle_all": {s: v[lo : lo + EVAL_CHUNK] for s, v in held_shuffled.items()},
                }
                logits = logits_of(tokens(part, far_ctx, name == "eval_shuffled"))
                y = targets(part)
                ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                                     reduction="none").view(y.shape)  # fmt: skip
                ces.append(ce)
                hits.append((logits.argmax(-1) == y).to(torch.float64))
            ce = torch.cat(ces, dim=1).numpy().astype(np.float64).mean(1)  # (M, near)
            hit = torch.cat(hits, dim=1).numpy().mean(1)  # (M, near)
            evals[name].append((ce, hit))

    def step_loss() -> torch.Tensor:
        windows = {
            s: fc.sample_windows(train[s], c.batch, far, near, held_out=False) for s in seeds
        }
        far_ctx = {"none": {s: w.far for s, w in windows.items()}}
        if shuffled:
            far_ctx["shuffle_all"] = {
                s: fc.ablate(w.far, "shuffle_all", train_ablation[s]) for s, w in windows.items()
            }
        return member_loss(logits_of(tokens(windows, far_ctx, False)), targets(windows))

    evaluate()
    trace = adam_steps(optimizer, step_loss, steps=steps, marks=marks, evaluate=evaluate,
                       arms=[f"{k[0]}/{k[1]}" for k in keys], seeds=c.seeds, report=report,
                       should_stop=should_stop)  # fmt: skip
    checkpoint_steps = np.array([0, *marks], dtype=np.int64)
    whole, mid = eval_lengths(far)
    half = near // 2
    out = {}
    for m in group:
        i = keys.index((repr(m.model), _training(m)))
        own = slice(i * c.seeds, (i + 1) * c.seeds)
        ce = np.stack([e[0][own] for e in evals[_pass(m)]], axis=1)  # (E, c, near)
        hit = np.stack([e[1][own] for e in evals[_pass(m)]], axis=1)
        out[m.id] = ArmOutput(
            curve_steps=trace.curve_steps,
            losses=trace.losses(own),
            checkpoint_steps=checkpoint_steps,
            heldout={
                whole: HeldOut(hit.mean(-1), ce.mean(-1), hit),
                mid: HeldOut(hit[..., :half].mean(-1), ce[..., :half].mean(-1), hit[..., :half]),
            },
            diverged_at=trace.diverged[own].copy(),
            n_params=int(model.n_params(i * c.seeds)),
        )
    return out


def _pass(member: Any) -> str:
    return "eval_shuffled" if member.condition == "eval_shuffled" else "own"
