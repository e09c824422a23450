"""The mechanism check of the induction question: a prefix-matching score for every head.

An induction head (Olsson et al. 2022, "In-context Learning and Induction Heads", Transformer
Circuits Thread, §"Definitions"; arXiv 2209.11895) attends from a token to the token right
*after* an earlier occurrence of the same token — on ``… A B … A`` the second ``A`` looks at
``B`` — and copies it. Its **prefix-matching score** is the attention it puts there, averaged
over the queries that have such a target, on sequences of repeated random tokens (Olsson et al.
measure it the same way, on repeated random sequences). For a query at ``t`` the targets are the
keys ``j ≤ t`` with ``x[j − 1] = x[t]`` (``j − 1 < t``): a perfect induction head scores 1; a
head that spreads its attention uniformly over the ``t + 1`` tokens it can see (causal) scores
``#targets / (t + 1)`` — :func:`uniform_baseline`, the score's control.

The attention maps are recomputed from a trained :class:`~posviz.lab.engine.model.LabModel` by
:func:`attention_maps`, from its residual stream at the input of every block and the block's own
weights, the same operations as :meth:`posviz.lab.engine.model.Block.forward` up to the softmax
(``tests/test_lab_induction.py`` rebuilds every block's output from these maps and checks it
against the model's next hidden state).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from posviz.analysis.evidence import spread
from posviz.lab.engine.results import HeadScores

#: held-out sequences per seed the mechanism check reads.
MECHANISM_SEQUENCES = 64


def prefix_targets(tokens: np.ndarray) -> np.ndarray:
    """``(…, T, T)`` bool: key ``j`` is a prefix-matching target of query ``t`` — ``j ≤ t`` and
    the token before it equals the query's token, ``x[j − 1] = x[t]`` (tokens ``(…, T)``)."""
    x = np.asarray(tokens)
    t = x.shape[-1]
    before = np.concatenate([np.full((*x.shape[:-1], 1), -1), x[..., :-1]], axis=-1)
    same = x[..., :, None] == before[..., None, :]  # [t, j]: x[t] == x[j − 1]
    causal = np.tril(np.ones((t, t), dtype=bool))
    return same & causal & (np.arange(t)[None, :] >= 1)


def prefix_matching_score(attention: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Mean attention on the prefix-matching targets over the queries that have one.

    Args:
        attention: ``(…, B, T, T)`` attention probabilities (rows sum to 1), e.g.
            ``(seeds, layers, heads, B, T, T)``.
        tokens: ``(B, T)`` or with the leading axes of ``attention`` that are per sequence
            batch, broadcastable to ``attention.shape[:-3] + (B, T)`` after inserting axes:
            pass ``(seeds, 1, 1, B, T)`` for per-seed tokens.
    Returns:
        ``attention.shape[:-3]``: 1 for a perfect induction head.
    Raises:
        ValueError: shapes that do not match, or no query with a target.
    """
    a = np.asarray(attention, dtype=np.float64)
    x = np.asarray(tokens)
    if a.ndim < 3 or a.shape[-1] != a.shape[-2] or x.shape[-1] != a.shape[-1]:
        raise ValueError(
            f"attention {a.shape} must be (…, B, T, T) and tokens (…, B, T) of the same T."
        )
    targets = prefix_targets(x)  # (…, B, T, T)
    counted = targets.any(-1)  # (…, B, T): queries with a target
    if not counted.any():
        raise ValueError("no query has a prefix-matching target: the tokens never repeat.")
    on_target = (a * targets).sum(-1)  # (…, B, T)
    counted = np.broadcast_to(counted, on_target.shape)
    return (on_target * counted).sum((-2, -1)) / counted.sum((-2, -1))


def uniform_baseline(tokens: np.ndarray) -> np.ndarray:
    """The score of a causal head that attends uniformly (``1/(t + 1)`` to every key ``≤ t``):
    ``(…)`` for tokens ``(…, B, T)`` — what a head with no preference scores."""
    x = np.asarray(tokens)
    t = x.shape[-1]
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    return prefix_matching_score(np.broadcast_to(uniform, (*x.shape, t)), x)


def attention_maps(model: Any, tokens: Any) -> np.ndarray:
    """``(E, layers, H, B, T, T)`` attention probabilities of every member of a trained
    :class:`~posviz.lab.engine.model.LabModel` on tokens ``(E, B, T)`` (a torch tensor, no padding).

    Recomputed from the residual stream at each block's input (``model(…, hidden=True)``) with
    the block's own weights: LayerNorm folded into the q/k/v projection, rotary angles, causal
    masks and biases exactly as :meth:`posviz.lab.engine.model.Block.forward` applies them.
    """
    # Lazy: torch is heavy; the scores above are plain numpy.
    import torch

    # lazy: lab.model imports torch at its top
    from posviz.lab.engine.model import _norm_linear, _rotate_leading

    with torch.no_grad():
        e, b, t = tokens.shape
        states = model(tokens, hidden=True)
        bias = model.attention_bias(t, None)
        tk = bias.shape[-1]
        bias = bias.expand(e, b, model.heads, t, tk).reshape(e * b * model.heads, t, tk)
        rotary = model._rotary(t, tk)
        maps = []
        for index, block in enumerate(model.blocks):
            x = states[index].reshape(e, b * t, model.width)
            h, hd = model.heads, model.width // model.heads
            qkv = _norm_linear(x, block.ln1, block.qkv)
            heads = qkv.view(e, b, t, 3, h, hd).permute(3, 0, 1, 4, 2, 5)
            heads = torch.nn.functional.pad(heads, (0, 0, 0, tk - t))
            q, k, _ = heads.unbind(0)
            if rotary is not None:
                q, k = _rotate_leading(q, *rotary), _rotate_leading(k, *rotary)
            q = q[:, :, :, :t].reshape(e * b * h, t, hd)
            k = k.reshape(e * b * h, tk, hd)
            scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1 / math.sqrt(hd))
            probs = scores.softmax(-1)[..., :t].reshape(e, b, h, t, t).permute(0, 2, 1, 3, 4)
            maps.append(probs.cpu().numpy())
        return np.stack(maps, axis=1)


@dataclass(frozen=True)
class PrefixMatching:
    """The prefix-matching scores of one trained arm.

    Attributes:
        arm: the arm id; ``label``: its display label.
        scores: ``(seeds, layers, heads)`` prefix-matching score of every head.
        baseline: ``(seeds,)`` the uniform-attention score on the same sequences (the control).
    """

    arm: str
    label: str
    scores: np.ndarray
    baseline: np.ndarray

    @property
    def best(self) -> np.ndarray:
        """``(seeds,)`` each seed's highest-scoring head."""
        return np.asarray(self.scores).reshape(len(self.scores), -1).max(axis=1)

    def head_text(self, layer: int, head: int) -> str:
        """``"layer 2 head 1: 0.83 ± 0.04"`` (mean ± std over seeds; layers counted from 1)."""
        return f"layer {layer + 1} head {head + 1}: {spread(self.scores[:, layer, head]).text(2)}"

    @property
    def text(self) -> str:
        """Every head's score, each seed's best head, and the uniform-attention control."""
        _, layers, heads = np.asarray(self.scores).shape
        each = "; ".join(self.head_text(li, hi) for li in range(layers) for hi in range(heads))
        return (
            f"{self.label}: prefix-matching score (attention from a repeated token to the token "
            f"after its earlier copy; 1 = a perfect induction head) — {each}; best head per "
            f"seed {spread(self.best).text(2)} against {spread(self.baseline).text(2)} for "
            "uniform attention."
        )


def arm_prefix_matching(
    output: Any, label: str, *, length: int, n_sequences: int = MECHANISM_SEQUENCES
) -> PrefixMatching:
    """The prefix-matching scores of a trained arm (a :class:`posviz.lab.engine.train.ArmOutput`) on
    ``n_sequences`` of its own held-out sequences of ``length`` per seed."""
    group = output._attached()
    tokens = group.heldout_tensors(length, n_sequences)[0]
    part = output.members
    maps = attention_maps(group.model, tokens)[part]  # (seeds, L, H, B, T, T)
    x = tokens[part].cpu().numpy()  # (seeds, B, T)
    scores = prefix_matching_score(maps, x[:, None, None])
    return PrefixMatching(output.arm.id, label, scores, uniform_baseline(x))


def head_scores(output: Any, label: str, *, steps: int) -> HeadScores:
    """:func:`arm_prefix_matching` of a trained arm at the end of its training (``steps``), on
    its first evaluation length, as the :class:`~posviz.lab.engine.results.HeadScores` a result
    stores."""
    found = arm_prefix_matching(output, label, length=output.arm.config.eval_lengths[0])
    return HeadScores(
        found.arm,
        label,
        steps,
        np.asarray(found.scores, dtype=np.float64),
        np.asarray(found.baseline, dtype=np.float64),
        f"After {steps:,} steps, {found.text[0].lower()}{found.text[1:]}",
    )
