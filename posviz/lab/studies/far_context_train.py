"""Train the lab's character LM on O'Connor & Andreas's windows (:mod:`posviz.lab.studies.
far_context`): the far-context paper card's trainer for the lab's one runner.

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), §2 eq. 9–10, p. 3. A window is ``far`` characters (intact,
or ablated), a separator, then ``near`` ordered characters whose next-character losses count;
the *no-information* condition sees the separator and the near part alone. The engine's trainer
(:func:`posviz.lab.engine.train.train_arms`) draws its batches from the engine's own tasks, so
this module runs the studies' own loop (:mod:`posviz.lab.studies.own_loop`: Adam as the engine
uses it) around the engine's model, unchanged (:class:`~posviz.lab.engine.model.LabModel`: every
arm × seed a member of one batched model):

* **paired design** — seed ``s`` of every arm starts from the same generator seed and reads the
  same windows at every step (one stream per seed, ``[s, 0, far, near]``); the far contexts an
  ablated arm trains on are shuffled by their own stream (``[s, 2, 0]``), the same for every
  arm of that ablation. The streams do not depend on which arms share a model, so the runner
  may split the arms over threads and no number changes (tested);
* **held-out** windows come from the last 10 % of the text (``[s, 1, far, near]``), fixed for
  the run, with their far contexts shuffled once (``[s, 3, 0]``) for the evaluation-only
  ablation: a model trained on intact windows read with a shuffled far context (their §3.3,
  Fig. 4, which trained that model with random padding instead; here the full model itself).

Losses are in nats per character; *mid-range* is the mean over the first half of the targets,
*long-range* over the second (:func:`~posviz.lab.studies.far_context.range_means`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from posviz.encodings.families import lab_mechanism
from posviz.lab.engine import tasks
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.model import LabModel, Member
from posviz.lab.engine.train import use_one_thread
from posviz.lab.studies import far_context as fc
from posviz.lab.studies.own_loop import Report, adam_steps, checkpoint_marks, train_groups

#: the conditions an arm trains under (``shuffle_all``: the far context ablated, trained so)
CONDITIONS = ("full", "shuffle_all", "noinfo")
#: held-out windows evaluated per forward pass
EVAL_CHUNK = 64


@dataclass(frozen=True)
class HeldOut:
    """One arm's held-out losses ``(seeds, checkpoints)``: its own (``loss`` over every target,
    ``mid``, ``long``) and with the far context shuffled at evaluation only (``mid_shuffled``,
    ``long_shuffled``; a no-information arm sees no far context: its own, again; a shuffle-
    trained arm: its own)."""

    loss: np.ndarray
    mid: np.ndarray
    long: np.ndarray
    mid_shuffled: np.ndarray
    long_shuffled: np.ndarray


@dataclass(frozen=True)
class ArmOutput:
    """What the card's build reads of an arm: ``heldout[far + near]``."""

    heldout: dict[int, HeldOut]


def _n_out() -> tuple[int, int]:
    n_in, n_out, _ = tasks.vocab_sizes(LabConfig(task="lm"))
    return n_in, n_out


def _group_key(config: Any) -> tuple:
    """What arms must share to be members of one model: everything but scheme and condition,
    and whether they see the far context (the window's length)."""
    fields = dataclasses.asdict(config)
    fields.pop("scheme"), fields.pop("condition")
    return (config.condition == "noinfo", tuple(sorted(fields.items())))


def _inputs(windows: fc.Windows, far: np.ndarray | None) -> np.ndarray:
    return windows.inputs(far)


def train_card_arms(
    members: Sequence[Any],
    *,
    steps: int,
    checkpoints: Sequence[int],
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, ArmOutput]:
    """Train every member (a card arm: ``config`` with ``scheme``, ``condition``, ``far``,
    ``near``, ``seeds``, ``first_seed``, ``width``, ``heads``, ``layers``, ``batch``, ``lr``,
    ``eval_batch``) for ``steps`` Adam steps, evaluated at ``checkpoints``; members that see the
    far context form one model, the no-information ones another (trained in turn).

    Raises:
        ValueError: an unknown condition or bad checkpoints.
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    use_one_thread()
    marks = checkpoint_marks(checkpoints, steps)
    groups: dict[tuple, list[Any]] = {}
    for member in members:
        if member.config.condition not in CONDITIONS:
            raise ValueError(
                f"condition={member.config.condition!r}; choose one of {', '.join(CONDITIONS)}."
            )
        groups.setdefault(_group_key(member.config), []).append(member)
    return train_groups(
        [(len(g) * g[0].config.seeds, g) for g in groups.values()],
        steps,
        lambda group, report: _train_group(group, steps, marks, report, should_stop),
        on_step,
    )


def _train_group(
    group: list[Any],
    steps: int,
    marks: list[int],
    report: Report,
    should_stop: Callable[[], bool] | None,
) -> dict[str, ArmOutput]:
    c = group[0].config
    seeds = list(range(c.first_seed, c.first_seed + c.seeds))
    # rotary members first (the engine's model rotates a leading block of members)
    arms = sorted(group, key=lambda m: lab_mechanism(m.config.scheme).kind != "rotary")
    keys = [(arm, seed) for arm in arms for seed in seeds]
    noinfo = c.condition == "noinfo"
    rows = c.near if noinfo else c.far + c.near
    n_in, n_out = _n_out()
    model = LabModel(
        [Member(ModelConfig(kind="decoder", scheme=a.config.scheme), s, rows, n_in)
         for a, s in keys],
        n_out=n_out, width=c.width, heads=c.heads, layers=c.layers,
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=float(c.lr), foreach=True)
    shuffled = any(a.config.condition == "shuffle_all" for a in arms)
    train = {s: np.random.default_rng([s, 0, c.far, c.near]) for s in seeds}
    train_ablation = {s: np.random.default_rng([s, 2, 0]) for s in seeds}
    held = {
        s: fc.sample_windows(
            np.random.default_rng([s, 1, c.far, c.near]), c.eval_batch, c.far, c.near,
            held_out=True,
        )
        for s in seeds
    }  # fmt: skip
    held_shuffled = {
        s: fc.ablate(held[s].far, "shuffle_all", np.random.default_rng([s, 3, 0])) for s in seeds
    }
    columns = {name: [] for name in ("loss", "mid", "long", "mid_shuffled", "long_shuffled")}

    def tokens(windows: dict[int, fc.Windows], far: dict[str, dict[int, np.ndarray]], eval_only):
        rows = []
        for arm, seed in keys:
            condition = arm.config.condition
            if noinfo:
                rows.append(_inputs(windows[seed], None))
            elif eval_only or condition == "shuffle_all":
                rows.append(_inputs(windows[seed], far["shuffle_all"][seed]))
            else:
                rows.append(_inputs(windows[seed], far["none"][seed]))
        return torch.from_numpy(np.stack(rows))

    def per_target(x: torch.Tensor, windows: dict[int, fc.Windows]) -> torch.Tensor:
        logits = model(x)[:, :, -c.near :]
        y = torch.from_numpy(np.stack([windows[seed].near for _, seed in keys]))
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
        return ce.view(y.shape)

    @torch.no_grad()
    def evaluate() -> None:
        for eval_only in (False, True):
            chunks = []
            for lo in range(0, c.eval_batch, EVAL_CHUNK):
                part = {s: fc.Windows(w.far[lo : lo + EVAL_CHUNK], w.near[lo : lo + EVAL_CHUNK])
                        for s, w in held.items()}  # fmt: skip
                far = {
                    "none": {s: w.far for s, w in part.items()},
                    "shuffle_all": {s: v[lo : lo + EVAL_CHUNK] for s, v in held_shuffled.items()},
                }
                chunks.append(per_target(tokens(part, far, eval_only), part))
            ce = torch.cat(chunks, dim=1).numpy().astype(np.float64).mean(1)  # (E, near)
            mid, long = fc.range_means(ce)
            if eval_only:
                columns["mid_shuffled"].append(mid)
                columns["long_shuffled"].append(long)
            else:
                columns["loss"].append(ce.mean(-1))
                columns["mid"].append(mid)
                columns["long"].append(long)

    def step_loss() -> torch.Tensor:
        windows = {
            s: fc.sample_windows(train[s], c.batch, c.far, c.near, held_out=False) for s in seeds
        }
        far = {"none": {s: w.far for s, w in windows.items()}}
        if shuffled:
            far["shuffle_all"] = {
                s: fc.ablate(w.far, "shuffle_all", train_ablation[s]) for s, w in windows.items()
            }
        return per_target(tokens(windows, far, False), windows).mean((1, 2))

    adam_steps(optimizer, step_loss, steps=steps, marks=marks, evaluate=evaluate,
               arms=[a.id for a in arms], seeds=c.seeds, report=report,
               should_stop=should_stop)  # fmt: skip
    stacked = {k: np.stack(v, axis=1) for k, v in columns.items()}  # (E, checkpoints)
    out = {}
    for i, arm in enumerate(arms):
        own = slice(i * c.seeds, (i + 1) * c.seeds)
        held_out = HeldOut(**{k: v[own] for k, v in stacked.items()})
        out[arm.id] = ArmOutput({c.far + c.near: held_out})
    return out
