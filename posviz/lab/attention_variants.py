"""Attention without softmax's sum-to-one, and the attention-sink metric Sink₁^ε.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781) find that a language model's heads pile attention onto the first
token (an *attention sink*) because softmax makes every query spend a total of 1: a head with
nothing to read parks it somewhere harmless. Two changes to the attention operation remove the
sink in their 60M LLaMA-style model, and this module holds both, beside plain softmax
(``scores = q·kᵀ/√d_h + M``, ``M`` the causal mask and any additive position bias, −inf where a
key may not be seen; :data:`ATTENTIONS`):

* ``softmax`` — ``A = softmax(scores)`` (Vaswani et al. 2017, eq. 1); rows sum to 1.
* ``sigmoid`` — ``A = sigmoid(scores)``, ``Z_i = 1`` (Gu et al. §7.4, Table 6 row 2, p. 10):
  every key is weighed on its own, rows are not normalised (a masked key gets sigmoid(−inf) = 0).
* ``sigmoid_bias`` — ``A = sigmoid(scores − log T)`` for a sequence of ``T`` tokens, rows not
  normalised: sigmoid attention with Ramapuram et al.'s bias ``b = −log n`` ("Theory, Analysis,
  and Best Practices for Sigmoid Self-Attention", ICLR 2025, https://arxiv.org/abs/2409.04431,
  §3 and §5), which keeps a row's total near 1 at the start (plain ``sigmoid`` starts near T/2).
* ``key_bias`` — softmax over one extra key per head and layer, a learnable ``k^s`` whose value is
  ``0`` (Gu et al. §7.3, Table 4 row 4, "K biases", p. 9):
  ``A' = softmax([q·k^sᵀ/√d_h, scores])``, ``A`` = ``A'`` without the slot's column; the slot
  takes attention and adds nothing, so rows of ``A`` sum to ``1 − A'_slot ≤ 1``. With
  ``k^s``'s logit at −inf it is plain softmax (``tests/test_lab_sinks.py``).

**Sink₁^ε** (Gu et al. §3.2, p. 4–5): a head's importance score for the first token is
``α₁ = (1/T) Σ_{t=1}^{T} A_{t,1}`` (every query sees it under a causal mask; ``A_{1,1} = 1`` under
softmax, so ``1/T ≤ α₁ ≤ 1``), a head *has a sink* when ``α₁ > ε``, and Sink₁^ε is the fraction of
heads (over layers × heads) that have one, averaged as they do over held-out sequences of a fixed
length (``T = 64``, no BOS token) at ``ε = 0.3``. For attention whose rows do not sum to one
(``sigmoid``) the paper scores *proxy* weights ``A_{t,j} / Σ_{j'} A_{t,j'}`` and marks the
result Sink₁* (Table 6); :func:`proxy_weights`. The ``key_bias`` slot is not a token, so α₁ reads
the first token's column of ``A`` (the slot's share is ``sink_slot``'s, Table 4's Sink₁*).

:class:`VariantModel` is the lab's :class:`~posviz.lab.engine.model.LabModel` with one of these
attentions in every block and the attention maps kept on request; it reuses the engine's weights,
masks and positions unchanged, so the engine's source (and every stored run's id) is untouched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from posviz.lab.engine.model import Block, LabModel, Member, _norm_linear, _rotate_leading

ATTENTIONS: tuple[str, ...] = ("softmax", "sigmoid", "sigmoid_bias", "key_bias")
#: the attentions whose rows are not normalised (scored on Gu et al.'s proxy weights)
UNNORMALISED: tuple[str, ...] = ("sigmoid", "sigmoid_bias")
#: Gu et al.'s threshold (§3.2, p. 5: strict, and least sensitive to the sequence length).
SINK_EPSILON = 0.3
#: Gu et al.'s sequence length for the metric (§3.2, p. 5; §4, p. 6: 100 sequences of T = 64).
SINK_LENGTH = 64


def _check_attention(attention: str) -> str:
    if attention not in ATTENTIONS:
        known = ", ".join(ATTENTIONS)
        raise ValueError(f"attention={attention!r} is unknown; choose one of {known}.")
    return attention


def attend(
    scores: torch.Tensor,
    attention: str,
    slot: torch.Tensor | None = None,
    length: int | None = None,
) -> torch.Tensor:
    """Attention weights ``(…, T, Tk)`` from logits ``scores`` ``(…, T, Tk)`` (−inf: unseen keys).

    ``slot`` ``(…, T, 1)``: the logit ``q·k^sᵀ/√d_h`` of the key-bias slot (``key_bias`` only);
    its column is dropped from the result (its value is 0). ``length``: the sequence's ``T``
    (``sigmoid_bias`` only; keys padded past it do not count).

    Raises:
        ValueError: an unknown ``attention``, ``key_bias`` without ``slot``, or ``sigmoid_bias``
            without a positive ``length``.
    """
    _check_attention(attention)
    if attention == "softmax":
        return scores.softmax(-1)
    if attention == "sigmoid":
        return torch.sigmoid(scores)
    if attention == "sigmoid_bias":
        if length is None or length < 1:
            raise ValueError(f"attention='sigmoid_bias' needs the sequence length, not {length!r}.")
        return torch.sigmoid(scores - math.log(length))
    if slot is None:
        raise ValueError("attention='key_bias' needs the slot's logits (…, T, 1).")
    return torch.cat([slot, scores], dim=-1).softmax(-1)[..., 1:]


def proxy_weights(weights: np.ndarray) -> np.ndarray:
    """``A_{t,j} / Σ_{j'} A_{t,j'}`` over the last axis: Gu et al.'s proxy attention scores for
    attention whose rows do not sum to one (Table 6's Sink₁*); rows of softmax are unchanged."""
    a = np.asarray(weights, dtype=np.float64)
    total = a.sum(-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


def first_token_score(weights: np.ndarray) -> np.ndarray:
    """``α₁ = (1/T) Σ_{t=1}^{T} A_{t,1}``: mean attention on the first key over all ``T`` queries
    (Gu et al. §3.2, p. 4), ``(…)`` for causal maps ``(…, T, T)``."""
    a = np.asarray(weights, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention maps {a.shape} must be (…, T, T): query × key.")
    return a[..., :, 0].mean(-1)


def sink_rate(alpha: np.ndarray, *, epsilon: float = SINK_EPSILON) -> np.ndarray:
    """Sink₁^ε: the fraction of heads with ``α₁ > ε`` (Gu et al. §3.2, p. 5), over the last two
    axes ``(…, layers, heads)`` of per-head scores averaged over sequences beforehand."""
    a = np.asarray(alpha, dtype=np.float64)
    if a.ndim < 2:
        raise ValueError(f"scores {a.shape} must end in (layers, heads).")
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon={epsilon!r} must be in (0, 1); Gu et al. use 0.3.")
    return (a > epsilon).mean((-2, -1))


def sink_metrics(maps: np.ndarray, attention: str) -> dict[str, np.ndarray]:
    """The sink readings of maps ``(…, layers, heads, B, T, T)`` of one attention kind.

    Returns ``alpha`` ``(…, layers, heads)`` (α₁ averaged over the ``B`` sequences, on proxy
    weights for the sigmoids), ``sink`` ``(…)`` (Sink₁^0.3 of those) and ``row_sum`` ``(…)``
    (the mean total attention a query spends on tokens: 1 for softmax, < 1 with a key-bias slot,
    anything for sigmoid).
    """
    _check_attention(attention)
    a = np.asarray(maps, dtype=np.float64)
    scored = proxy_weights(a) if attention in UNNORMALISED else a
    alpha = first_token_score(scored).mean(-1)
    return {
        "alpha": alpha,
        "sink": sink_rate(alpha),
        "row_sum": a.sum(-1).mean((-4, -3, -2, -1)),
    }


class VariantBlock(Block):
    """:class:`~posviz.lab.engine.model.Block` with another attention (:func:`attend`).

    Every member of the model uses ``attention``; ``key_bias`` adds ``slot`` ``(E, H, hd)``, one
    learnable key per head, started at 0 (its logit 0: at the start the slot weighs like a key
    with score 0). ``keep`` set: the weights of the last forward pass are kept in ``maps``.
    """

    def __init__(self, e: int, d: int, heads: int, attention: str) -> None:
        super().__init__(e, d, heads)
        self.attention = _check_attention(attention)
        slot = torch.zeros(e, heads, d // heads)
        self.slot = nn.Parameter(slot) if attention == "key_bias" else None
        self.keep = False
        self.maps: torch.Tensor | None = None

    def forward(
        self,
        x: torch.Tensor,
        shape: tuple[int, int],
        bias: torch.Tensor,
        rotary: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> torch.Tensor:
        """The engine's block (same operations and order) with :func:`attend` for softmax."""
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
        q = q[:, :, :, :t]
        slot = None
        if self.slot is not None:  # (E, B, H, T, hd) · (E, 1, H, hd, 1) → (E·B·H, T, 1)
            logits = torch.matmul(q, self.slot[:, None, :, :, None]) / math.sqrt(hd)
            slot = logits.reshape(e * b * h, t, 1)
        q = q.reshape(e * b * h, t, hd)
        k, v = k.reshape(e * b * h, tk, hd), v.reshape(e * b * h, tk, hd)
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1 / math.sqrt(hd))
        weights = attend(scores, self.attention, slot, length=t)
        if self.keep:
            self.maps = weights.detach()[..., :t].reshape(e, b, h, t, t)
        mixed = torch.bmm(weights, v)
        mixed = mixed.view(e, b, h, t, hd).transpose(2, 3).reshape(e, n, d)
        x = torch.baddbmm(x, mixed, self.out)
        hidden = _norm_linear(x, self.ln2, self.up, self.up_bias).relu_()
        return torch.baddbmm(x, hidden, self.down) + self.down_bias


class VariantModel(LabModel):
    """:class:`~posviz.lab.engine.model.LabModel` whose blocks attend with ``attention``.

    The members start from exactly the weights a ``LabModel`` of the same members draws (the
    blocks are swapped after drawing and take the drawn weights), so a ``softmax`` variant *is*
    the engine's model, and arms that differ only in attention are paired seed by seed.
    """

    def __init__(
        self,
        members: Sequence[Member],
        *,
        n_out: int,
        width: int,
        heads: int,
        layers: int,
        attention: str,
    ) -> None:
        super().__init__(members, n_out=n_out, width=width, heads=heads, layers=layers)
        self.attention = _check_attention(attention)
        swapped = []
        for block in self.blocks:
            new = VariantBlock(len(self.members), width, heads, attention)
            new.load_state_dict(block.state_dict(), strict=False)
            swapped.append(new)
        self.blocks = nn.ModuleList(swapped)

    def attention_maps(self, tokens: torch.Tensor) -> np.ndarray:
        """``(E, layers, H, B, T, T)`` attention weights on tokens ``(E, B, T)`` (no padding)."""
        with torch.no_grad():
            for block in self.blocks:
                block.keep = True
            try:
                self(tokens)
                maps = [block.maps.permute(0, 2, 1, 3, 4).cpu().numpy() for block in self.blocks]
            finally:
                for block in self.blocks:
                    block.keep, block.maps = False, None
        return np.stack(maps, axis=1)
