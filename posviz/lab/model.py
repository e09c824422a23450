"""A tiny pre-LN transformer whose seeds train together: every weight has a leading seed axis.

``E`` independent models (one per seed) are one module: a weight of shape ``(E, d_in, d_out)`` is
applied with one ``bmm``, so ``E`` seeds cost one batched matmul instead of ``E`` small ones, and
Adam (element-wise) keeps them exactly independent. Shapes: ``E`` seeds, ``B`` sequences, ``T``
positions, ``H`` heads, ``d`` width.

Position schemes reuse the formulas in :mod:`posviz.encodings` (numpy → torch buffers), never
copies: :func:`~posviz.encodings.sinusoidal.sinusoidal` (Vaswani et al. 2017 §3.5),
:func:`~posviz.encodings.rope.default_inv_freq` with the ``rotate_half`` pairing of
:func:`~posviz.encodings.rope.rope_rotate` (Su et al. 2021 eq. 34),
:func:`~posviz.encodings.alibi.alibi_bias` (Press et al. 2022 §3) and
:func:`~posviz.encodings.t5.t5_relative_bucket` (Raffel et al. 2020 §2.1). The learned table is
an ``nn.Embedding`` holding the ``E`` tables one after another (``E·rows`` rows).

Concatenation (tensor2tensor #1591): token embedding of width ``d − p`` next to a ``p``-wide table,
no projection. Its embeddings hold ``V·(d − p) + R·p`` parameters against ``V·d + R·d`` when adding
(``V`` tokens, ``R`` rows): ``V·p + R·(d − p)`` fewer, a few per cent of the whole model, whose
``d``-wide blocks are identical. :func:`parameter_count` states both; the tests bound the gap.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from posviz.encodings.alibi import alibi_bias, alibi_slopes
from posviz.encodings.rope import default_inv_freq
from posviz.encodings.sinusoidal import sinusoidal
from posviz.encodings.t5 import t5_relative_bucket
from posviz.lab.config import ModelConfig

T5_BUCKETS = 16  # half of T5's 32: the lab's sequences are short
T5_MAX_DISTANCE = 64
EMBED_STD = 1 / math.sqrt(2)  # token embeddings: RMS of a sinusoid entry


def _stack(e: int, d_in: int, d_out: int, generators: list[torch.Generator]) -> nn.Parameter:
    """``(E, d_in, d_out)`` weight; each seed's slice from its own generator, U(±1/√d_in)."""
    bound = 1 / math.sqrt(d_in)
    slices = [(torch.rand(d_in, d_out, generator=g) * 2 - 1) * bound for g in generators[:e]]
    return nn.Parameter(torch.stack(slices))


def _embedding(
    e: int, rows: int, width: int, generators: list[torch.Generator], *, std: float = EMBED_STD
) -> nn.Embedding:
    """``E`` tables of ``rows × width`` in one ``nn.Embedding`` (table ``e``: rows ``e·rows …``).

    Entries are drawn N(0, std²), each seed's table from its own generator.
    """
    table = nn.Embedding(e * rows, width)
    with torch.no_grad():
        table.weight.copy_(torch.cat([torch.randn(rows, width, generator=g) for g in generators]))
        table.weight.mul_(std)
    return table


class Block(nn.Module):
    """Pre-LN block: ``x + attn(LN(x))`` then ``x + MLP(LN(x))`` (ReLU, 4× width), per seed."""

    def __init__(self, e: int, d: int, heads: int, generators: list[torch.Generator]) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.Parameter(torch.ones(e, 2, d)), nn.Parameter(torch.ones(e, 2, d))
        with torch.no_grad():  # row 0: LayerNorm gain (1), row 1: bias (0)
            self.ln1[:, 1].zero_()
            self.ln2[:, 1].zero_()
        self.qkv = _stack(e, d, 3 * d, generators)
        self.out = _stack(e, d, d, generators)
        self.up = _stack(e, d, 4 * d, generators)
        self.down = _stack(e, 4 * d, d, generators)
        self.up_bias = nn.Parameter(torch.zeros(e, 1, 1, 4 * d))
        self.down_bias = nn.Parameter(torch.zeros(e, 1, 1, d))

    def forward(
        self, x: torch.Tensor, bias: torch.Tensor, rope: torch.Tensor | None
    ) -> torch.Tensor:
        """``x`` ``(E, B, T, d)``; ``bias`` additive logits ``(E|1, B|1, H|1, T, T)``."""
        e, b, t, d = x.shape
        h = _layer_norm(x, self.ln1)
        q, k, v = _linear(h, self.qkv).view(e, b, t, 3, self.heads, -1).unbind(3)
        q, k, v = (z.transpose(2, 3) for z in (q, k, v))  # (E, B, H, T, hd)
        if rope is not None:
            q, k = rotate_half(q, rope), rotate_half(k, rope)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias
        mixed = (scores.softmax(-1) @ v).transpose(2, 3).reshape(e, b, t, d)
        x = x + _linear(mixed, self.out)
        h = torch.relu(_linear(_layer_norm(x, self.ln2), self.up) + self.up_bias)
        return x + _linear(h, self.down) + self.down_bias


def _linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``(E, B, T, d_in) @ (E, d_in, d_out)`` per seed, as one ``bmm`` over ``(E, B·T, d_in)``."""
    e, b, t, d = x.shape
    return torch.bmm(x.reshape(e, b * t, d), weight).view(e, b, t, -1)


def _layer_norm(x: torch.Tensor, params: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last axis with per-seed gain/bias ``params`` ``(E, 2, d)``."""
    normed = torch.nn.functional.layer_norm(x, x.shape[-1:])
    return normed * params[:, 0, None, None, :] + params[:, 1, None, None, :]


def rotate_half(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """RoPE, ``rotate_half`` pairing: dim ``i`` with ``i + r/2``, rotated by ``angles[t, i]``.

    ``(a, b) → (a cos θ − b sin θ, b cos θ + a sin θ)``, as
    :func:`posviz.encodings.rope.rope_rotate` (Su et al. 2021 eq. 34; GPT-NeoX/Llama pairing).
    ``x`` ``(..., T, hd)``, ``angles`` ``(T, hd/2)``.
    """
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    cos, sin = angles.cos(), angles.sin()
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


class LabModel(nn.Module):
    """``E`` tiny transformers (one per seed) with one position scheme and injection mode.

    Args:
        config: the variant's :class:`ModelConfig`.
        n_in, n_out: input vocabulary (padding included) and output classes.
        width, heads, layers: model size.
        rows: rows of the learned table (and of the precomputed sinusoid).
        seeds: the seeds; seed ``s`` draws its weights from ``torch.Generator().manual_seed(s)``.
    """

    def __init__(
        self,
        config: ModelConfig,
        *,
        n_in: int,
        n_out: int,
        width: int,
        heads: int,
        layers: int,
        rows: int,
        seeds: tuple[int, ...],
    ) -> None:
        super().__init__()
        self.config, self.heads, self.rows = config, heads, rows
        e = len(seeds)
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        p = (config.concat_width or width // 2) if config.injection == "concat" else width
        self.pos_width = p
        self.tok_width = width - p if config.injection == "concat" else width
        self.n_in = n_in
        self.tok = _embedding(e, n_in, self.tok_width, gens)
        self.pos = None
        if config.scheme == "learned":
            self.pos = _embedding(e, rows, p, gens, std=config.pos_init_std)
        self.blocks = nn.ModuleList(Block(e, width, heads, gens) for _ in range(layers))
        self.ln_f = nn.Parameter(torch.stack([torch.ones(e, width), torch.zeros(e, width)], 1))
        self.head = _stack(e, width, n_out, gens)
        self.t5 = None
        if config.scheme == "t5":  # one learned scalar per bucket and head, shared by the layers
            self.t5 = nn.Parameter(torch.zeros(e, T5_BUCKETS, heads))
        if config.scheme == "rope":
            inv = default_inv_freq(width // heads)  # θ_i = 10000^(−2i/hd)
            self.register_buffer(
                "inv_freq", torch.tensor(inv, dtype=torch.float32), persistent=False
            )
        self._cache: dict[tuple[str, int], torch.Tensor] = {}

    @property
    def n_seeds(self) -> int:
        return self.head.shape[0]

    @property
    def device(self) -> torch.device:
        return self.head.device

    def position_vectors(self, t: int) -> torch.Tensor | None:
        """``(E|1, 1, T, p)`` vectors added (or concatenated) at positions ``0 … T−1``.

        Raises:
            ValueError: a learned table asked for more positions than it has rows.
        """
        scheme = self.config.scheme
        if scheme == "learned":
            if t > self.rows:
                raise ValueError(
                    f"a learned table has {self.rows} rows and cannot index position {t - 1}; "
                    f"evaluate lengths ≤ {self.rows} or raise table_rows."
                )
            seeds, rows = (
                torch.arange(self.n_seeds, device=self.device),
                torch.arange(t, device=self.device),
            )
            index = seeds[:, None] * self.rows + rows[None, :]
            return self.pos(index)[:, None]  # (E, 1, T, p)
        if scheme == "sinusoidal":
            key = ("sin", t)
            if key not in self._cache:
                table = sinusoidal(t, self.pos_width, dtype=np.float32)  # (T, p)
                self._cache[key] = torch.from_numpy(table)[None, None].to(self.device)
            return self._cache[key]
        return None

    def attention_bias(self, t: int, valid: torch.Tensor) -> torch.Tensor:
        """Additive logits ``(E|1, B, H|1, T, T)``: padding/causal masks plus ALiBi/T5 biases."""
        causal = self.config.kind == "decoder"
        key = ("mask", t)
        if key not in self._cache:
            future = torch.ones(t, t, dtype=torch.bool, device=self.device).triu(1)
            zeros = torch.zeros(1, 1, 1, t, t, device=self.device)
            self._cache[key] = zeros.masked_fill(future, float("-inf")) if causal else zeros
        bias = self._cache[key]
        if self.config.scheme == "alibi":
            key = ("alibi", t)
            if key not in self._cache:  # −m_h·|i − j| (−inf above the diagonal when causal)
                matrix = alibi_bias(t, alibi_slopes(self.heads), causal=causal)
                self._cache[key] = torch.from_numpy(matrix.astype(np.float32))[None, None].to(
                    self.device
                )
            bias = bias + self._cache[key]
        if self.t5 is not None:
            key = ("t5", t)
            if key not in self._cache:
                pos = np.arange(t)
                buckets = t5_relative_bucket(
                    pos[None, :] - pos[:, None],
                    bidirectional=not causal,
                    num_buckets=T5_BUCKETS,
                    max_distance=T5_MAX_DISTANCE,
                )  # (T, T): query i, key j
                one_hot = np.eye(T5_BUCKETS, dtype=np.float32)[buckets.reshape(-1)]  # (T·T, NB)
                self._cache[key] = torch.from_numpy(one_hot).to(self.device)
            # One-hot matmul, not fancy indexing: the same values, but indexing's backward is a
            # scatter-add that made T5 arms ~30x slower than the others on a CPU.
            table = torch.matmul(self._cache[key], self.t5)  # (E, T·T, H)
            bias = bias + table.view(-1, t, t, self.heads).permute(0, 3, 1, 2)[:, None]
        if bool(valid.all()):
            return bias
        pad = torch.zeros(valid.shape, device=self.device).masked_fill(~valid, float("-inf"))
        return bias + pad[:, :, None, None, :]  # keys that are padding get no attention

    def forward(self, tokens: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """Logits ``(E, B, T, n_out)`` for tokens ``(E, B, T)`` (valid: ``(E, B, T)`` bool)."""
        e, b, t = tokens.shape
        offsets = torch.arange(e, device=self.device)[:, None, None] * self.n_in
        x = self.tok(tokens + offsets)  # (E, B, T, d_tok)
        pos = self.position_vectors(t)
        if pos is not None and self.config.injection == "concat":
            x = torch.cat([x, pos.expand(e, b, t, -1)], dim=-1)
        elif pos is not None:
            x = x + pos
        bias = self.attention_bias(t, valid)
        rope = None
        if self.config.scheme == "rope":
            positions = torch.arange(t, dtype=torch.float32, device=self.device)
            rope = positions[:, None] * self.inv_freq[None, :]  # (T, hd/2) angles p·θ_i
        for index, block in enumerate(self.blocks):
            if index > 0 and pos is not None and self.config.injection == "every_layer":
                x = x + pos
            x = block(x, bias, rope)
        return _linear(_layer_norm(x, self.ln_f), self.head)

    def tables(self) -> np.ndarray | None:
        """The learned tables, ``(E, rows, p)`` float32 numpy (None for other schemes)."""
        if self.pos is None:
            return None
        return self.pos.weight.detach().reshape(self.n_seeds, self.rows, -1).cpu().numpy().copy()


def parameter_count(model: LabModel) -> int:
    """Trainable parameters of ONE seed's model (the total divided by the number of seeds)."""
    total = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total // model.n_seeds
