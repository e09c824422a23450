"""The sinks card's trainer (card ``gu_2025``, :mod:`posviz.lab.studies.sinks_card`): the sinks
question's loop with a third attention, a value bias.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781), Table 4 (p. 9), "V biases": each head's output is
``Softmax(QKᵀ/√d_h + M) V + v^s``, a learnable vector ``v^s`` per head added after the
attention (:class:`ValueBiasBlock`, started at 0). The other two conditions are the sinks
question's attentions (:class:`~posviz.lab.attention_variants.VariantModel`: ``softmax`` and
``key_bias``, their "K biases" with value 0); every arm's sequences start with the BOS.

The loop is the question's (:func:`posviz.lab.studies.sinks_question_train.train_question_arms`,
whose stream, held-out batch and output types it reuses) with the model built per condition, so
the card's softmax and key-bias arms are the question's, number for number (tested on a tiny
run). Paired design, as there: seed ``s`` of every arm starts from the same generator seed (a
bias is one more parameter, started at 0), reads the same training sequences (stream
``[s, 0, 1]``) and the same held-out sequences (``[s, 1, 1]``); no number depends on which arms
share a call, so the runner may split the card's unit between threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from posviz.lab.attention_variants import VariantBlock, VariantModel, attend
from posviz.lab.engine.model import Member, _norm_linear, _rotate_leading
from posviz.lab.engine.train import use_one_thread
from posviz.lab.sink_task import backcopy_batch, bigram_chain
from posviz.lab.studies.own_loop import (
    Report,
    adam_steps,
    checkpoint_marks,
    member_loss,
    train_groups,
)
from posviz.lab.studies.sinks_arms import check
from posviz.lab.studies.sinks_card_arms import condition_of
from posviz.lab.studies.sinks_question_train import (
    ArmOutput,
    Stream,
    _ordered,
    arm_output,
    evaluate_heldout,
)


class ValueBiasBlock(VariantBlock):
    """A softmax :class:`~posviz.lab.attention_variants.VariantBlock` whose heads each add a
    learnable vector to their output: ``Softmax(QKᵀ/√d_h + M) V + v^s`` (Gu et al. Table 4,
    "V biases", p. 9). ``value_bias`` ``(E, H, hd)``, started at 0 (then the block *is* the
    softmax block)."""

    def __init__(self, e: int, d: int, heads: int) -> None:
        super().__init__(e, d, heads, "softmax")
        self.value_bias = nn.Parameter(torch.zeros(e, heads, d // heads))

    def forward(
        self,
        x: torch.Tensor,
        shape: tuple[int, int],
        bias: torch.Tensor,
        rotary: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> torch.Tensor:
        """:meth:`VariantBlock.forward` (same operations and order) with ``v^s`` added to each
        head's output before the heads are joined."""
        e, n, d = x.shape
        b, t = shape
        h, hd = self.heads, d // self.heads
        tk = bias.shape[-1]
        qkv = _norm_linear(x, self.ln1, self.qkv)
        heads = qkv.view(e, b, t, 3, h, hd).permute(3, 0, 1, 4, 2, 5)
        heads = F.pad(heads, (0, 0, 0, tk - t)) if tk > t else heads.contiguous()
        q, k, v = heads.unbind(0)
        if rotary is not None:
            q, k = _rotate_leading(q, *rotary), _rotate_leading(k, *rotary)
        q = q[:, :, :, :t].reshape(e * b * h, t, hd)
        k, v = k.reshape(e * b * h, tk, hd), v.reshape(e * b * h, tk, hd)
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1 / math.sqrt(hd))
        weights = attend(scores, "softmax")
        if self.keep:
            self.maps = weights.detach()[..., :t].reshape(e, b, h, t, t)
        mixed = torch.bmm(weights, v).view(e, b, h, t, hd)
        mixed = mixed + self.value_bias[:, None, :, None, :]  # (E, 1, H, 1, hd): v^s per head
        mixed = mixed.transpose(2, 3).reshape(e, n, d)
        x = torch.baddbmm(x, mixed, self.out)
        hidden = _norm_linear(x, self.ln2, self.up, self.up_bias).relu_()
        return torch.baddbmm(x, hidden, self.down) + self.down_bias


class ValueBiasModel(VariantModel):
    """A softmax :class:`~posviz.lab.attention_variants.VariantModel` of
    :class:`ValueBiasBlock` blocks: the same drawn weights as the softmax model of the same
    members (paired seed by seed), and a value bias of 0 in every head."""

    def __init__(
        self, members: Sequence[Member], *, n_out: int, width: int, heads: int, layers: int
    ) -> None:
        super().__init__(
            members, n_out=n_out, width=width, heads=heads, layers=layers, attention="softmax"
        )
        swapped = []
        for block in self.blocks:
            new = ValueBiasBlock(len(self.members), width, heads)
            new.load_state_dict(block.state_dict(), strict=False)
            swapped.append(new)
        self.blocks = nn.ModuleList(swapped)


def card_model(condition: str, members: Sequence[Member], **sizes: int) -> VariantModel:
    """The model of one condition: softmax, the key-bias slot, or :class:`ValueBiasModel`.

    Raises:
        ValueError: an unknown condition.
    """
    if condition == "value_bias":
        return ValueBiasModel(members, **sizes)
    if condition in ("softmax", "key_bias"):
        return VariantModel(members, attention=condition, **sizes)
    raise ValueError(f"condition={condition!r}; choose softmax, key_bias or value_bias.")


def _extra_params(condition: str, width: int, layers: int) -> int:
    """Parameters a condition adds to a member: one key or one value of width d/H per head."""
    return layers * width if condition in ("key_bias", "value_bias") else 0


def train_card_arms(
    members: Sequence[Any],
    *,
    steps: int,
    checkpoints: Sequence[int],
    on_step: Callable[[int, int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, ArmOutput]:
    """Train every member (a card arm: ``id``, ``model``, ``config`` whose ``extra`` names its
    condition) for ``steps`` Adam steps, evaluated before training and at ``checkpoints``;
    members of one condition form one model (trained in turn).

    Raises:
        ValueError: a config without the task or a condition, or bad checkpoints.
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    use_one_thread()
    marks = checkpoint_marks(checkpoints, steps)
    groups: dict[Any, list[Any]] = {}
    for member in members:
        check(member.config)
        condition_of(member.config)
        groups.setdefault(member.config, []).append(member)
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
    t, condition, chain = check(c), condition_of(c), bigram_chain()
    seeds = list(range(c.first_seed, c.first_seed + c.seeds))
    group = _ordered(group)
    rows = [(m, s) for m in group for s in seeds]  # one model member per (arm, seed)
    model = card_model(
        condition, [Member(m.model, s, t, chain.n_tokens + 1) for m, s in rows],
        n_out=chain.n_tokens, width=c.width, heads=c.heads, layers=c.layers,
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=float(c.lr), foreach=True)
    # the question's streams with the BOS ([s, 0, 1] and [s, 1, 1]): the same sequences
    train = {s: Stream(chain, np.random.default_rng([s, 0, 1]), c.batch, t, True) for s in seeds}
    held = {
        s: backcopy_batch(chain, np.random.default_rng([s, 1, 1]), c.eval_batch, t, bos=True)
        for s in seeds
    }
    order = [s for _, s in rows]
    evals: list[dict[str, np.ndarray]] = []

    def stack(batches: dict, name: str) -> torch.Tensor:
        return torch.from_numpy(np.stack([getattr(batches[s], name) for s in order]))

    def evaluate() -> None:
        evals.append(evaluate_heldout(model, stack(held, "inputs"), stack(held, "targets"),
                                      stack(held, "copy").numpy(), c))  # fmt: skip

    def step_loss() -> torch.Tensor:
        batches = {s: stream.next() for s, stream in train.items()}
        x, y = stack(batches, "inputs"), stack(batches, "targets")
        return member_loss(model(x), y)

    evaluate()
    trace = adam_steps(optimizer, step_loss, steps=steps, marks=marks, evaluate=evaluate,
                       arms=[m.id for m in group], seeds=c.seeds, report=report,
                       should_stop=should_stop)  # fmt: skip
    extra = _extra_params(condition, c.width, c.layers)
    return {
        m.id: arm_output(evals, slice(i * c.seeds, (i + 1) * c.seeds), c, t, trace=trace,
                         marks=marks, n_params=int(model.n_params(i * c.seeds)) + extra)
        for i, m in enumerate(group)
    }  # fmt: skip
