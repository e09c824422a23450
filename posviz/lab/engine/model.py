"""Many tiny pre-LN transformers as one module: every weight has a leading *member* axis.

A member is one model: an arm's :class:`~posviz.lab.engine.config.ModelConfig` and a seed
(:class:`Member`). ``E`` members that share a task shape (vocabulary sizes, width, heads, layers)
live in one :class:`LabModel`: a weight of shape ``(E, d_in, d_out)`` is applied with one ``bmm``,
so ``E`` models cost a few batched matmuls instead of ``E`` small ones. No operation mixes members
(matmuls are per member, LayerNorm gains are per member, Adam is element-wise), so a member
trained in a batch follows the path it follows alone, up to the rounding of differently shaped
matmuls. Shapes: ``E`` members, ``B`` sequences, ``T`` positions, ``H`` heads, ``d`` width.

Members may differ in everything that keeps the tensors' shapes: kind (encoder: bidirectional
attention; decoder: causal), position mechanism, injection, concatenation width, table rows and
the learned table's initial scale. The model knows only the six mechanisms of
:class:`posviz.encodings.families.LabMechanism`, never a family's name, so a family registered with
an existing mechanism trains here unchanged. Per member:

* ``none`` — nothing (the position vector is zero, the angles are zero, the bias is zero).
* ``table`` — fixed vectors ``table(T, p)`` added (or concatenated) at the input, e.g. the
  sinusoid of Vaswani et al. 2017 §3.5.
* ``learned_table`` — a ``(rows, p)`` parameter, N(0, ``pos_init_std``²), added (or
  concatenated) at the input.
* ``rotary`` — queries and keys rotated by angles ``t·θ_i``, ``θ = inv_freq(head_dim)``, pairing
  dim ``i`` with ``i + hd/2`` (``rotate_half``, Su et al. 2021 eq. 34). A zero frequency leaves its
  pair unrotated. Only a leading block of members is rotated (the trainer puts rotary arms
  first); a member without rotary positions inside that block has every ``θ_i = 0`` (cos 1,
  sin 0: the identity).
* ``bias`` — fixed additive logits ``bias(T, H, causal)``, e.g. ALiBi (Press et al. 2022 §3).
* ``learned_bucket_bias`` — one learned scalar per relative-distance bucket and head, shared by
  the layers (T5, Raffel et al. 2020 §2.1), started at 0.

Injection: ``input`` adds the ``d``-wide vectors to the token embedding; ``every_layer`` adds the
same vectors again before every block (a per-member 0/1 flag); ``concat`` is a ``(d − p)``-wide
token embedding next to a ``p``-wide table, no projection (tensor2tensor #1591). Concatenation is
written as masks, so it batches with the others: the token embedding is ``d`` wide with its
last ``p`` columns multiplied by 0, the table ``d`` wide with its first ``d − p`` columns times 0;
their sum *is* the concatenation, and the masked parameters get exactly zero gradient and never
move (Adam's update is 0 when its moments are 0). :meth:`LabModel.n_params` counts only a member's
live parameters: a concatenating member has ``V·p + R·(d − p)`` fewer than an adding one (``V``
tokens, ``R`` rows), a few per cent of the whole model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from posviz.encodings.families import LabMechanism, lab_mechanism
from posviz.lab.engine.config import ModelConfig

EMBED_STD = 1 / math.sqrt(2)  # token embeddings: RMS of a sinusoid entry
#: Attention keys are padded to a multiple of this (masked with −inf): PyTorch's CPU softmax is
#: vectorised over the last axis in chunks of 16 floats (AVX-512) and takes a slow path for a
#: remainder; softmax over 12 keys measured 12x slower than over 16.
KEY_ALIGN = 16


@dataclass(frozen=True)
class Member:
    """One model of a batched :class:`LabModel`.

    Attributes:
        model: its position scheme, injection, kind and initial table scale.
        seed: its weights come from ``torch.Generator().manual_seed(seed)``; the blocks, the head
            and the token embedding are drawn first, so two members with one seed start from the
            same weights wherever their shapes agree (the paired design).
        rows: positions a learned table can index (ignored by the other mechanisms).
        n_in: input tokens of its task (padding included); at most the model's.
    """

    model: ModelConfig
    seed: int
    rows: int
    n_in: int

    @property
    def mechanism(self) -> LabMechanism:
        return lab_mechanism(self.model.scheme)

    @property
    def causal(self) -> bool:
        return self.model.kind == "decoder"

    def table_width(self, width: int) -> int:
        """``p``: the width of its position vectors (``width`` unless concatenating)."""
        if self.model.injection == "concat":
            return self.model.concat_width or width // 2
        return width


def _uniform(generator: torch.Generator, d_in: int, d_out: int) -> torch.Tensor:
    """``(d_in, d_out)`` drawn U(±1/√d_in), nn.Linear's default scale."""
    bound = 1 / math.sqrt(d_in)
    return (torch.rand(d_in, d_out, generator=generator) * 2 - 1) * bound


def _layer_norm_params(e: int, d: int) -> nn.Parameter:
    """``(E, 2, d)``: row 0 the gain (1), row 1 the bias (0)."""
    return nn.Parameter(torch.stack([torch.ones(e, d), torch.zeros(e, d)], dim=1))


class Block(nn.Module):
    """Pre-LN block, per member: ``x + attn(LN(x))``, then ``x + MLP(LN(x))`` (ReLU, 4× width)."""

    def __init__(self, e: int, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = _layer_norm_params(e, d), _layer_norm_params(e, d)
        self.qkv = nn.Parameter(torch.zeros(e, d, 3 * d))  # columns: q | k | v, head-major
        self.out = nn.Parameter(torch.zeros(e, d, d))
        self.up = nn.Parameter(torch.zeros(e, d, 4 * d))
        self.up_bias = nn.Parameter(torch.zeros(e, 1, 4 * d))
        self.down = nn.Parameter(torch.zeros(e, 4 * d, d))
        self.down_bias = nn.Parameter(torch.zeros(e, 1, d))

    def draw(self, index: int, generator: torch.Generator) -> None:
        """Member ``index``'s weights from its generator (qkv, out, up, down)."""
        d = self.out.shape[-1]
        for weight, (d_in, d_out) in (
            (self.qkv, (d, 3 * d)),
            (self.out, (d, d)),
            (self.up, (d, 4 * d)),
            (self.down, (4 * d, d)),
        ):
            weight[index] = _uniform(generator, d_in, d_out)

    def forward(
        self,
        x: torch.Tensor,
        shape: tuple[int, int],
        bias: torch.Tensor,
        rotary: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> torch.Tensor:
        """``x`` ``(E, B·T, d)`` with ``shape = (B, T)``; ``bias`` ``(E·B·H, T, Tk)`` logits."""
        e, n, d = x.shape
        b, t = shape
        h, hd = self.heads, d // self.heads
        tk = bias.shape[-1]
        qkv = _norm_linear(x, self.ln1, self.qkv)  # (E, B·T, 3d)
        heads = qkv.view(e, b, t, 3, h, hd).permute(3, 0, 1, 4, 2, 5)  # (3, E, B, H, T, hd)
        # one copy into head-major order; keys and values padded with zero rows to Tk
        heads = F.pad(heads, (0, 0, 0, tk - t)) if tk > t else heads.contiguous()
        q, k, v = heads.unbind(0)  # unbind, not indexing: its backward is one stack
        if rotary is not None:
            q, k = _rotate_leading(q, *rotary), _rotate_leading(k, *rotary)
        q = q[:, :, :, :t].reshape(e * b * h, t, hd)
        k, v = k.view(e * b * h, tk, hd), v.view(e * b * h, tk, hd)
        scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1 / math.sqrt(hd))
        mixed = torch.bmm(scores.softmax(-1), v)  # (E·B·H, T, hd)
        mixed = mixed.view(e, b, h, t, hd).transpose(2, 3).reshape(e, n, d)
        x = torch.baddbmm(x, mixed, self.out)
        hidden = _norm_linear(x, self.ln2, self.up, self.up_bias).relu_()
        return torch.baddbmm(x, hidden, self.down) + self.down_bias


def _norm_linear(
    x: torch.Tensor, norm: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """``(LN(x)·γ + β) @ W (+ b)`` per member, with γ and β folded into the weight.

    ``(x̂·γ + β) W = x̂ (γ ⊙ W) + β W``: the same function and gradients, but the per-member
    scale and shift act on the small ``(E, d, d_out)`` weight instead of the ``(E, B·T, d)``
    activations, and the shift joins the matmul as its additive input.
    """
    normed = F.layer_norm(x, x.shape[-1:])
    shift = torch.bmm(norm[:, 1:2], weight)  # (E, 1, d_out)
    if bias is not None:
        shift = shift + bias
    return torch.baddbmm(shift, normed, norm[:, 0, :, None] * weight)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE with ``rotate_half`` pairing: ``(a, b) → (a cos θ − b sin θ, b cos θ + a sin θ)``.

    ``x`` ``(R, B, H, T, hd)``; ``cos`` and ``sin`` ``(R, 1, 1, T, hd)`` hold each pair's
    angle in both of its dims, ``sin`` negated in the first half (see :func:`rotary_tables`).
    """
    half = x.shape[-1] // 2
    swapped = torch.cat([x[..., half:], x[..., :half]], dim=-1)
    return torch.addcmul(x * cos, swapped, sin)


def _rotate_leading(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """:func:`_rotate` the first ``len(cos)`` members of ``x``; the rest pass unchanged.

    The rotary members come first (:class:`LabModel` orders them so when it can): rotating only
    them, instead of turning everyone else by angle 0, saves most of the rotation's memory
    traffic in a group where few members rotate.
    """
    r = cos.shape[0]
    if r == x.shape[0]:
        return _rotate(x, cos, sin)
    return torch.cat([_rotate(x[:r], cos, sin), x[r:]])


def rotary_tables(angles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and signed ``sin`` ``(…, T, hd)`` for :func:`_rotate` from angles ``(…, T, hd/2)``.

    The sine is negated in the first half of the head, so one ``addcmul`` does the rotation.
    """
    cos, sin = angles.cos(), angles.sin()
    return torch.cat([cos, cos], dim=-1), torch.cat([-sin, sin], dim=-1)


class LabModel(nn.Module):
    """``E`` tiny transformers, one per :class:`Member`, sharing a task shape.

    Args:
        members: the models (any mix of kinds, mechanisms and injections).
        n_out: output classes.
        width, heads, layers: model size.
    Raises:
        ValueError: a member whose settings the shape cannot hold (the message says which).
    """

    def __init__(
        self, members: Sequence[Member], *, n_out: int, width: int, heads: int, layers: int
    ) -> None:
        super().__init__()
        self.members = tuple(members)
        e, d = len(self.members), width
        self.width, self.heads, self.n_out = width, heads, n_out
        self.n_in = max(m.n_in for m in self.members)
        kinds = [m.mechanism.kind for m in self.members]
        learned = [k == "learned_table" for k in kinds]
        self.rows = max(
            (m.rows for m, lt in zip(self.members, learned, strict=True) if lt), default=0
        )
        self.blocks = nn.ModuleList(Block(e, d, heads) for _ in range(layers))
        self.ln_f = _layer_norm_params(e, d)
        self.head = nn.Parameter(torch.zeros(e, d, n_out))
        self.tok = nn.Parameter(torch.zeros(e, self.n_in, d))
        self.pos = nn.Parameter(torch.zeros(e, self.rows, d)) if any(learned) else None
        buckets = [self._n_buckets(m) for m in self.members]
        self.t5 = nn.Parameter(torch.zeros(e, max(buckets), heads)) if max(buckets) else None
        with torch.no_grad():
            for index, member in enumerate(self.members):
                self._draw(index, member)
        self._masks()
        self._cache: dict[tuple[str, int], torch.Tensor] = {}

    @staticmethod
    def _n_buckets(member: Member) -> int:
        mechanism = member.mechanism
        if mechanism.kind != "learned_bucket_bias" or mechanism.buckets is None:
            return 0
        return int(mechanism.buckets(2, member.causal)[1])

    def _draw(self, index: int, member: Member) -> None:
        """Member ``index``'s start: blocks, head, token embedding, then its table."""
        generator = torch.Generator().manual_seed(int(member.seed))
        for block in self.blocks:
            block.draw(index, generator)
        self.head[index] = _uniform(generator, self.width, self.n_out)
        token_width = self.width - self._concat(member)
        tok = torch.randn(member.n_in, self.width, generator=generator) * EMBED_STD
        self.tok[index, : member.n_in, :token_width] = tok[:, :token_width]
        if member.mechanism.kind == "learned_table":
            p = member.table_width(self.width)
            table = torch.randn(member.rows, p, generator=generator) * member.model.pos_init_std
            self.pos[index, : member.rows, self.width - p :] = table

    def _concat(self, member: Member) -> int:
        """``p`` for a concatenating member, else 0."""
        return member.table_width(self.width) if member.model.injection == "concat" else 0

    def _masks(self) -> None:
        """0/1 column masks for concatenation and mixed tables, the every-layer flags and the
        rotary frequencies, as buffers (None where every member would get all ones/zeros)."""
        e, d = len(self.members), self.width
        tok_mask = torch.ones(e, 1, d)
        pos_mask = torch.zeros(e, 1, d)
        every = torch.zeros(e, 1, 1)
        inv_freq = torch.zeros(e, d // self.heads // 2)
        for index, member in enumerate(self.members):
            p, kind = member.table_width(d), member.mechanism.kind
            tok_mask[index, :, d - self._concat(member) :] = 0
            if kind == "learned_table":
                pos_mask[index, :, d - p :] = 1
            every[index] = float(member.model.injection == "every_layer")
            if kind == "rotary":
                inv_freq[index] = torch.from_numpy(
                    np.asarray(member.mechanism.inv_freq(d // self.heads), dtype=np.float32)
                )
        self.register_buffer("tok_mask", None if tok_mask.all() else tok_mask, persistent=False)
        needs_pos_mask = self.pos is not None and not pos_mask.all()
        self.register_buffer("pos_mask", pos_mask if needs_pos_mask else None, persistent=False)
        self.register_buffer("every", every if every.any() else None, persistent=False)
        rotary = [m.mechanism.kind == "rotary" for m in self.members]
        # rotate a leading block of members only (all of them if the rotary ones are not first)
        leading = rotary.index(False) if False in rotary else len(rotary)
        leading = leading if not any(rotary[leading:]) else len(rotary)
        inv_freq = inv_freq[:leading] if any(rotary) else None
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @property
    def n_members(self) -> int:
        return len(self.members)

    @property
    def device(self) -> torch.device:
        return self.head.device

    def n_params(self, index: int) -> int:
        """Live parameters of member ``index``: what its own model would have alone."""
        member, d, layers = self.members[index], self.width, len(self.blocks)
        block = 2 * 2 * d + d * 3 * d + d * d + d * 4 * d + 4 * d + 4 * d * d + d
        count = layers * block + 2 * d + d * self.n_out
        count += member.n_in * (d - self._concat(member))
        if member.mechanism.kind == "learned_table":
            count += member.rows * member.table_width(d)
        return count + self._n_buckets(member) * self.heads

    def _fixed_tables(self, t: int) -> torch.Tensor | None:
        """``(E, T, d)`` fixed position vectors (``table`` members), zeros for the others."""
        tables = [(i, m) for i, m in enumerate(self.members) if m.mechanism.kind == "table"]
        if not tables:
            return None
        key = ("table", t)
        if key not in self._cache:
            out = torch.zeros(len(self.members), t, self.width)
            for index, member in tables:
                p = member.table_width(self.width)
                out[index, :, self.width - p :] = torch.from_numpy(
                    np.asarray(member.mechanism.table(t, p), dtype=np.float32)
                )
            self._cache[key] = out.to(self.device)
        return self._cache[key]

    def position_vectors(self, t: int) -> torch.Tensor | None:
        """``(E, T, d)`` vectors added at positions ``0 … T−1`` (zeros where a member has none).

        A learned table's rows past a member's own ``rows`` are zeros that never train: outputs
        there are not defined (the trainer reports them as NaN).
        """
        vectors = self._fixed_tables(t)
        if self.pos is not None:
            table = self.pos[:, :t] if t <= self.rows else F.pad(self.pos, (0, 0, 0, t - self.rows))
            if self.pos_mask is not None:
                table = table * self.pos_mask
            vectors = table if vectors is None else table + vectors
        return vectors

    def _static_bias(self, t: int, tk: int) -> torch.Tensor:
        """``(E, 1, H, T, Tk)``: causal masks, fixed biases, and −inf on the padded keys."""
        key = ("bias", t * 10_000 + tk)
        if key not in self._cache:
            bias = np.zeros((len(self.members), 1, self.heads, t, tk), dtype=np.float32)
            bias[..., t:] = -np.inf
            future = np.triu(np.ones((t, t), dtype=bool), 1)
            for index, member in enumerate(self.members):
                mechanism = member.mechanism
                if mechanism.kind == "bias":
                    values = mechanism.bias(t, self.heads, member.causal)
                    bias[index, 0, :, :, :t] += np.asarray(values, dtype=np.float32)
                if member.causal:
                    bias[index, 0, :, :, :t][:, future] = -np.inf
            self._cache[key] = torch.from_numpy(bias).to(self.device)
        return self._cache[key]

    def _bucket_bias(self, t: int, tk: int) -> torch.Tensor | None:
        """``(E, 1, H, T, Tk)`` learned bucket biases (zeros for other members), or None."""
        if self.t5 is None:
            return None
        key = ("buckets", t)
        if key not in self._cache:
            one_hot = torch.zeros(len(self.members), t * t, self.t5.shape[1])
            for index, member in enumerate(self.members):
                if self._n_buckets(member):
                    buckets = np.asarray(member.mechanism.buckets(t, member.causal)[0])
                    columns = torch.from_numpy(buckets.reshape(-1).astype(np.int64))
                    one_hot[index, torch.arange(t * t), columns] = 1.0
            self._cache[key] = one_hot.to(self.device)
        # One-hot matmul, not fancy indexing: the same values, but indexing's backward is a
        # scatter-add that made bucket-bias members ~30x slower than the others on a CPU.
        table = torch.bmm(self._cache[key], self.t5)  # (E, T·T, H)
        table = table.view(-1, t, t, self.heads).permute(0, 3, 1, 2)
        return F.pad(table, (0, tk - t))[:, None]

    def attention_bias(self, t: int, valid: torch.Tensor | None) -> torch.Tensor:
        """Additive logits ``(E, B|1, H, T, Tk)``, ``Tk`` = ``T`` rounded up to :data:`KEY_ALIGN`:
        causal masks, fixed and learned biases, −inf on padding keys."""
        tk = -(-t // KEY_ALIGN) * KEY_ALIGN
        bias = self._static_bias(t, tk)
        learned = self._bucket_bias(t, tk)
        if learned is not None:
            bias = bias + learned
        if valid is not None and not bool(valid.all()):
            pad = torch.zeros(valid.shape, device=self.device).masked_fill(~valid, -math.inf)
            bias = bias + F.pad(pad, (0, tk - t), value=-math.inf)[:, :, None, None, :]
        return bias

    def _rotary(self, t: int, tk: int) -> tuple[torch.Tensor, torch.Tensor] | None:
        if self.inv_freq is None:
            return None
        key = ("rotary", tk)
        if key not in self._cache:
            positions = torch.arange(tk, dtype=torch.float32, device=self.device)
            angles = positions[None, :, None] * self.inv_freq[:, None, :]  # (R, Tk, hd/2)
            cos, sin = rotary_tables(angles)
            self._cache[key] = torch.stack([cos, sin])[:, :, None, None]  # (2, R, 1, 1, Tk, hd)
        cos, sin = self._cache[key]
        return cos, sin

    def forward(
        self, tokens: torch.Tensor, valid: torch.Tensor | None = None, *, hidden: bool = False
    ) -> torch.Tensor | list[torch.Tensor]:
        """Logits ``(E, B, T, n_out)`` for tokens ``(E, B, T)``; ``valid`` marks non-padding.

        With ``hidden=True``: the residual stream ``(E, B, T, d)`` at the input of every block
        and after the last one (``layers + 1`` tensors), instead of logits.
        """
        e, b, t = tokens.shape
        d = self.width
        tok = self.tok if self.tok_mask is None else self.tok * self.tok_mask
        offsets = torch.arange(e, device=self.device)[:, None, None] * self.n_in
        x = F.embedding(tokens + offsets, tok.reshape(-1, d))  # (E, B, T, d)
        pos = self.position_vectors(t)
        if pos is not None:
            x = x + pos[:, None]
        x = x.view(e, b * t, d)
        bias = self.attention_bias(t, valid)
        tk = bias.shape[-1]
        bias = bias.expand(e, b, self.heads, t, tk).reshape(e * b * self.heads, t, tk)
        rotary = self._rotary(t, tk)
        states = [x]
        for index, block in enumerate(self.blocks):
            if index and pos is not None and self.every is not None:
                x = (x.view(e, b, t, d) + (pos * self.every)[:, None]).view(e, b * t, d)
            x = block(x, (b, t), bias, rotary)
            states.append(x)
        if hidden:
            return [s.view(e, b, t, d) for s in states]
        logits = _norm_linear(x, self.ln_f, self.head)
        return logits.view(e, b, t, self.n_out)

    def tables(self, indices: Sequence[int]) -> np.ndarray | None:
        """The learned tables of members ``indices`` (one arm: equal rows and widths),
        ``(len(indices), rows, p)`` float32 numpy; None unless they are learned tables."""
        members = [self.members[i] for i in indices]
        if self.pos is None or any(m.mechanism.kind != "learned_table" for m in members):
            return None
        rows, p = members[0].rows, members[0].table_width(self.width)
        table = self.pos.detach()[list(indices), :rows, self.width - p :]
        return table.cpu().numpy().copy()
