"""Train many arms at once: every arm × seed of one task shape is a member of one batched model.

:func:`train_arms` groups the arms by shape (output classes, width, heads, layers, batch, lr,
held-out batch, longest training length), builds one :class:`~posviz.lab.engine.model.LabModel` per
group whose members are the group's arms × seeds (a big group is packed into several models of
at most :data:`MAX_MODEL_TOKENS` tokens per step), and trains each for the same number of steps.
Within a group:

* **Paired design.** Seed ``s`` of every arm draws its weights from the same generator seed, and
  arms with the same data settings see the same training batches: each data stream
  (``tasks.train_rng(s)`` for one set of data settings) is generated once per step and shared.
* **Independence.** No operation mixes members; the loss summed over members gives each its own
  gradient. Adam (Kingma & Ba 2015, ``torch.optim.Adam(foreach=True)``, no weight decay) is
  element-wise, so a parameter entry that never gets a gradient never moves (its update is 0 when
  its moments are 0): table rows past the longest training sequence, the masked columns of a
  concatenation, the table of a member without one.
* **Divergence.** A member whose loss turns NaN/inf is frozen at that step (its parameters are
  restored after every update) and flagged in ``diverged_at``; the others are untouched.
* **Held-out evaluation** at the requested checkpoints, on fresh sequences of the held-out stream
  (``tasks.eval_rng``, ``make_batch(held_out=True)``: disjoint from training), fixed for the run:
  accuracy, loss and accuracy by position per evaluation length.

A budget sweep needs no second run: without a learning-rate schedule the model at step ``S`` of
a ``3S``-step run *is* the model trained for ``S`` steps; checkpoints at ``S`` and ``3S`` give both.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from posviz.encodings.families import lab_mechanism
from posviz.lab.engine.config import CAUSAL_TASKS, LabConfig, ModelConfig
from posviz.lab.engine.model import KEY_ALIGN, LabModel, Member
from posviz.lab.engine.results import LabStopped
from posviz.lab.engine.tasks import (
    Batch,
    eval_rng,
    make_batch,
    sample_lengths,
    train_rng,
    vocab_sizes,
)

MAX_CURVE_POINTS = 200
#: Held-out sequences are evaluated in chunks of about this many attention scores (floats), so a
#: long evaluation length with many members stays within about a hundred MB.
EVAL_CHUNK_SCORES = 8_000_000

#: Tokens per training step above which arms of one shape go to a second batched model. Past
#: about this size each member costs more, not less (its activations stop fitting the caches):
#: CPU time per member-step, character LM length 32, 2.6 GHz Xeon, one thread, shared machine —
#: 6.6 ms at 5 members (5k tokens), 6.8 at 10, 7.2 at 20, 7.4 at 30; k-back 8–16 (8 heads):
#: 3.6 at 15–20 members (8–10k tokens), 3.9 at 30; reverse length 12: flat from 10 to 30.
MAX_MODEL_TOKENS = 10_240

OnStep = Callable[[int, int, dict[str, float]], None]


@dataclass(frozen=True)
class Arm:
    """One arm of an experiment: a model trained on a run's settings over ``config.seeds`` seeds.

    Seeds are ``0 … config.seeds − 1``: seed ``s`` sets the initial weights and the data stream.
    """

    id: str
    model: ModelConfig
    config: LabConfig


@dataclass(frozen=True)
class HeldOut:
    """Held-out results at one evaluation length, per seed and checkpoint.

    Attributes:
        accuracy: ``(E, c)`` token accuracy over the counted positions.
        loss: ``(E, c)`` mean cross-entropy (nats) over the counted positions.
        per_position: ``(E, c, length)`` accuracy at each position (NaN where nothing counts).
        undefined: why every value is NaN (a learned table shorter than the length), else ``""``.
            A diverged seed is NaN from its divergence on (see ``ArmOutput.diverged_at``).
    """

    accuracy: np.ndarray
    loss: np.ndarray
    per_position: np.ndarray
    undefined: str = ""


@dataclass
class ArmOutput:
    """One trained arm (``E`` = its seeds).

    Attributes:
        arm: the arm.
        curve_steps: ``(n,)`` steps at which the training loss was recorded.
        losses: ``(E, n)`` training loss (each step trains on fresh sequences).
        checkpoint_steps: ``(c,)`` steps of the held-out evaluations (0 = before training).
        heldout: evaluation length → :class:`HeldOut`.
        snapshot_steps: ``(s,)`` steps of the learned-table snapshots (first and last included).
        snapshots: ``(E, s, rows, p)`` learned tables, or None for arms without one.
        diverged_at: ``(E,)`` step whose loss was NaN/inf (−1 = never).
        n_params: one model's live parameters.
        seconds: wall seconds of the arm's batched model (shared with its group), evaluation
            included.
    """

    arm: Arm
    curve_steps: np.ndarray
    losses: np.ndarray
    checkpoint_steps: np.ndarray
    heldout: dict[int, HeldOut]
    snapshot_steps: np.ndarray
    snapshots: np.ndarray | None
    diverged_at: np.ndarray
    n_params: int
    seconds: float = 0.0
    _group: _Group | None = field(default=None, repr=False)

    @property
    def model(self) -> LabModel:
        """The batched model the arm's seeds live in (shared with the arms of its shape)."""
        return self._attached().model

    @property
    def members(self) -> slice:
        """The arm's seeds' member indices in :attr:`model`."""
        return self._attached().slices[self.arm.id]

    def _attached(self) -> _Group:
        if self._group is None:
            raise ValueError(f"arm {self.arm.id!r} has no trained model attached.")
        return self._group

    @torch.no_grad()
    def logits(self, tokens: np.ndarray) -> np.ndarray:
        """The trained seeds' logits ``(E, B, T, n_out)`` for tokens ``(E, B, T)`` (no padding).

        Raises:
            ValueError: tokens of another shape or out of the arm's vocabulary.
        """
        group, part = self._attached(), self.members
        e = part.stop - part.start
        n_in = vocab_sizes(self.arm.config)[0]
        tokens = np.asarray(tokens)
        if tokens.ndim != 3 or tokens.shape[0] != e or tokens.min() < 0 or tokens.max() >= n_in:
            raise ValueError(
                f"tokens must be ({e}, batch, length) integers in 0 … {n_in - 1}; got shape "
                f"{tokens.shape}."
            )
        full = torch.zeros((group.size, *tokens.shape[1:]), dtype=torch.int64, device=group.dev)
        full[part] = torch.from_numpy(tokens.astype(np.int64)).to(group.dev)
        return group.model(full)[part].cpu().numpy()

    def hidden_states(self, length: int, n_sequences: int) -> list[np.ndarray]:
        """Residual stream of the trained seeds on held-out sequences of one length.

        Returns:
            ``layers + 1`` arrays ``(E, n_sequences, length, width)`` float32: the input of every
            block (the first is the embedding, positions included) and the last block's output.
        Raises:
            ValueError: a length the arm cannot be run at, or a bad ``n_sequences``.
        """
        return self._attached().hidden_states(self.arm, length, n_sequences)


class TrainedArms(dict[str, ArmOutput]):
    """:func:`train_arms`' result: arm id → :class:`ArmOutput`, plus :meth:`hidden_states`."""

    def hidden_states(self, arm_id: str, length: int, n_sequences: int) -> list[np.ndarray]:
        """Per-layer hidden states of a trained arm (see :meth:`ArmOutput.hidden_states`)."""
        if arm_id not in self:
            raise ValueError(f"No arm {arm_id!r}; trained arms: {', '.join(self)}.")
        return self[arm_id].hidden_states(length, n_sequences)


def device() -> torch.device:
    """CUDA when present; the CPU is the target (and the only place runs are bit-reproducible)."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


LAB_THREADS = 1


def use_one_thread() -> int:
    """Train on one torch thread; returns the count.

    The lab's models are tiny (a few thousand multiply-adds per op), so a second thread buys
    little even on an idle machine, and on a shared 2-core server it is ruinous: each op waits at
    an OpenMP barrier for a thread the OS has parked behind another process. Measured under a
    load of about 3.7 with another test run busy: 40 steps of the ``learned`` preset's learned arm
    took 44.5 s on 2 threads and 0.45 s on 1 (``bench/bench_lab.py``). One thread also leaves the
    other core to the pages.
    """
    torch.set_num_threads(LAB_THREADS)
    return torch.get_num_threads()


def check_arm(model: ModelConfig, config: LabConfig) -> None:
    """Refuse a model its run's settings cannot train, with the fix.

    Raises:
        ValueError: a task the kind cannot do, a learned table shorter than the training
            sequences, an odd rotary head size, a bad concatenation width, a table the
            mechanism cannot build at that width.
    """
    member = _member(model, config, seed=0)
    mechanism = member.mechanism
    if model.kind == "encoder" and config.task == "lm":
        raise ValueError(
            "task='lm' needs kind='decoder': a bidirectional encoder would see the next "
            "character it is asked to predict."
        )
    if model.kind == "decoder" and config.task not in CAUSAL_TASKS:
        raise ValueError(
            f"task={config.task!r} needs the whole sequence, which a causal decoder cannot see; "
            f"use kind='encoder' (decoder tasks: {', '.join(CAUSAL_TASKS)})."
        )
    if mechanism.kind == "learned_table" and member.rows < config.max_len:
        raise ValueError(
            f"table_rows={member.rows} is shorter than max_len={config.max_len}; a learned table "
            "needs a row for every training position."
        )
    if mechanism.kind == "rotary" and config.head_dim % 2:
        raise ValueError(
            f"RoPE rotates pairs, so the head size width/heads = {config.head_dim} must be even; "
            f"use width={config.width} with heads={config.heads // 2 or 1}, or an even head size."
        )
    p = member.table_width(config.width)
    if model.injection == "concat" and not 0 < p < config.width:
        raise ValueError(
            f"concat_width={model.concat_width} must be between 1 and width−1 ({config.width - 1})."
        )
    if mechanism.kind == "table":
        try:
            mechanism.table(2, p)
        except ValueError as error:
            raise ValueError(
                f"scheme={model.scheme!r} cannot build a table {p} wide ({error}); "
                "use an even width or concat_width."
            ) from error


def _member(model: ModelConfig, config: LabConfig, *, seed: int) -> Member:
    return Member(
        model=model,
        seed=seed,
        rows=model.table_rows or config.max_len,
        n_in=vocab_sizes(config)[0],
    )


def masked_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(E,)`` mean cross-entropy over each member's counted positions."""
    e = logits.shape[0]
    ignored = targets.masked_fill(~mask, -100)  # cross_entropy's ignore_index: loss exactly 0
    ce = F.cross_entropy(logits.flatten(0, 2), ignored.flatten(), reduction="none")
    return ce.view(e, -1).sum(1) / mask.view(e, -1).sum(1).clamp(min=1)


def _shape_key(arm: Arm) -> tuple:
    c = arm.config
    n_out = vocab_sizes(c)[1]
    return (n_out, c.width, c.heads, c.layers, c.batch, float(c.lr), c.eval_batch, c.max_len)


def _data_key(config: LabConfig) -> tuple:
    """What determines a training stream besides the seed (arms that agree share batches)."""
    c = config
    return (c.task, c.vocab, c.k, c.min_len, c.max_len, c.length_dist, c.batch)


def _eval_key(config: LabConfig) -> tuple:
    """What determines a held-out batch besides the seed and the length."""
    c = config
    return (c.task, c.vocab, c.k, c.eval_batch, vocab_sizes(c))


@dataclass
class _Stream:
    """One training data stream: a run's data settings and a seed (shared by arms that match)."""

    config: LabConfig
    rng: np.random.Generator
    pad: int

    def next(self) -> Batch:
        lengths = sample_lengths(self.config, self.rng, self.config.batch)
        return make_batch(self.config, self.rng, lengths)


def _stack(batches: Sequence[Batch], pads: Sequence[int], t: int) -> tuple[np.ndarray, ...]:
    """``(S, B, t)`` arrays (inputs, targets, mask, valid) from batches padded to ``t``."""
    s, b = len(batches), batches[0].inputs.shape[0]
    inputs = np.empty((s, b, t), dtype=np.int64)
    targets = np.zeros((s, b, t), dtype=np.int64)
    mask = np.zeros((s, b, t), dtype=bool)
    valid = np.zeros((s, b, t), dtype=bool)
    for index, (batch, pad) in enumerate(zip(batches, pads, strict=True)):
        width = batch.inputs.shape[1]
        inputs[index, :, width:] = pad
        inputs[index, :, :width] = batch.inputs
        targets[index, :, :width] = batch.targets
        mask[index, :, :width] = batch.mask
        valid[index, :, :width] = batch.valid
    return inputs, targets, mask, valid


class _Group:
    """The arms of one shape as one :class:`LabModel`, with their data streams and results."""

    def __init__(self, arms: Sequence[Arm], steps: int, dev: torch.device) -> None:
        # rotary arms first: the model then rotates only its leading members
        rotary = {a.id: lab_mechanism(a.model.scheme).kind == "rotary" for a in arms}
        self.arms = tuple(sorted(arms, key=lambda a: not rotary[a.id]))
        self.steps, self.dev = steps, dev
        members: list[Member] = []
        self.slices: dict[str, slice] = {}
        streams: dict[tuple, int] = {}
        self.streams: list[_Stream] = []
        member_stream: list[int] = []
        for arm in self.arms:
            start = len(members)
            for seed in arm.config.seed_ids:
                members.append(_member(arm.model, arm.config, seed=seed))
                key = (_data_key(arm.config), seed)
                if key not in streams:
                    streams[key] = len(self.streams)
                    pad = vocab_sizes(arm.config)[2]
                    self.streams.append(_Stream(arm.config, train_rng(seed), pad))
                member_stream.append(streams[key])
            self.slices[arm.id] = slice(start, len(members))
        first = self.arms[0].config
        self.model = LabModel(
            members,
            n_out=vocab_sizes(first)[1],
            width=first.width,
            heads=first.heads,
            layers=first.layers,
        ).to(dev)
        self.member_stream = torch.tensor(member_stream, device=dev)
        self.shared = member_stream != list(range(len(members)))
        self.optimizer: torch.optim.Adam | None = torch.optim.Adam(
            self.model.parameters(), lr=float(first.lr), foreach=True
        )
        self.diverged_at = np.full(len(members), -1, dtype=np.int64)
        self._frozen: dict[int, list[torch.Tensor]] = {}
        self._heldout: dict[int, tuple[torch.Tensor, ...]] = {}
        self.seconds = 0.0

    @property
    def size(self) -> int:
        return self.model.n_members

    def batch(self) -> tuple[torch.Tensor, ...]:
        """One training batch per member ``(E, B, T)``: each stream drawn once, then shared."""
        batches = [stream.next() for stream in self.streams]
        t = max(b.inputs.shape[1] for b in batches)
        arrays = _stack(batches, [s.pad for s in self.streams], t)
        tensors = tuple(torch.from_numpy(a).to(self.dev) for a in arrays)
        if self.shared:
            tensors = tuple(x.index_select(0, self.member_stream) for x in tensors)
        return tensors

    def step(self, step: int) -> torch.Tensor:
        """One Adam step of every member; returns the ``(E,)`` losses (NaN for frozen ones)."""
        tokens, targets, mask, valid = self.batch()
        loss = masked_loss(self.model(tokens, valid), targets, mask)
        finite = torch.isfinite(loss)
        if not bool(finite.all()):
            self._freeze(step, (~finite).nonzero().flatten().tolist())
        self.optimizer.zero_grad(set_to_none=True)
        torch.where(finite, loss, 0.0).sum().backward()
        if self._frozen:
            frozen = torch.tensor(sorted(self._frozen), device=self.dev)
            for param in self.model.parameters():
                if param.grad is not None:
                    param.grad.index_fill_(0, frozen, 0.0)  # a fill: NaN gradients do not survive
        self.optimizer.step()
        if self._frozen:
            self._restore()
        return loss.detach().masked_fill(
            torch.from_numpy(self.diverged_at >= 0).to(self.dev), math.nan
        )

    def _freeze(self, step: int, indices: list[int]) -> None:
        """Keep members ``indices`` at their current parameters from now on."""
        params = list(self.model.parameters())
        for index in indices:
            if index not in self._frozen:
                self.diverged_at[index] = step
                self._frozen[index] = [p.detach()[index].clone() for p in params]

    @torch.no_grad()
    def _restore(self) -> None:
        params = list(self.model.parameters())
        for index, saved in self._frozen.items():
            for param, value in zip(params, saved, strict=True):
                param[index] = value

    def heldout_tensors(self, length: int, n: int | None = None) -> tuple[torch.Tensor, ...]:
        """Held-out ``(E, n, length)`` tensors: each member's own stream, fixed for the run."""
        if n is None and length in self._heldout:
            return self._heldout[length]
        batches: dict[tuple, Batch] = {}
        keys = []
        for arm in self.arms:
            size = n or arm.config.eval_batch
            for seed in arm.config.seed_ids:
                key = (_eval_key(arm.config), seed, size)
                if key not in batches:
                    rng = eval_rng(seed, length)
                    lengths = np.full(size, length)
                    batches[key] = make_batch(arm.config, rng, lengths, held_out=True)
                keys.append(key)
        order = list(batches)
        arrays = _stack([batches[k] for k in order], [0] * len(order), length)
        index = torch.tensor([order.index(k) for k in keys], device=self.dev)
        tensors = tuple(torch.from_numpy(a).to(self.dev).index_select(0, index) for a in arrays)
        if n is None:
            self._heldout[length] = tensors
        return tensors

    def _chunk(self, length: int) -> int:
        """Held-out sequences per forward pass (bounds the attention scores' memory)."""
        keys = -(-length // KEY_ALIGN) * KEY_ALIGN
        return max(1, EVAL_CHUNK_SCORES // (self.size * self.model.heads * length * keys))

    @torch.no_grad()
    def evaluate(self, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(accuracy (E,), loss (E,), per_position (E, length))`` on the held-out set."""
        tokens, targets, mask, _ = self.heldout_tensors(length)
        e = self.size
        correct = torch.zeros(e, length, device=self.dev)
        counted = torch.zeros(e, length, device=self.dev)
        ce = torch.zeros(e, device=self.dev)
        chunk = self._chunk(length)
        for start in range(0, tokens.shape[1], chunk):
            part = slice(start, start + chunk)
            logits = self.model(tokens[:, part])
            hits = (logits.argmax(-1) == targets[:, part]) & mask[:, part]
            correct += hits.sum(1)
            counted += mask[:, part].sum(1)
            ce += masked_loss(logits, targets[:, part], mask[:, part]) * mask[:, part].sum((1, 2))
        # counts are whole numbers (exact in float32); the ratios are taken in float64
        c, n = (x.cpu().numpy().astype(np.float64) for x in (correct, counted))
        total = n.sum(1)
        accuracy = c.sum(1) / total
        loss = ce.cpu().numpy().astype(np.float64) / total
        per_position = np.where(n > 0, c / np.maximum(n, 1), np.nan)
        return accuracy, loss, per_position

    @torch.no_grad()
    def hidden_states(self, arm: Arm, length: int, n_sequences: int) -> list[np.ndarray]:
        if isinstance(n_sequences, bool) or not isinstance(n_sequences, int) or n_sequences < 1:
            raise ValueError(f"n_sequences={n_sequences!r} must be a whole number ≥ 1.")
        undefined = _undefined(arm, length)
        if undefined:
            raise ValueError(f"arm {arm.id!r} at length {length}: {undefined}.")
        tokens = self.heldout_tensors(length, n_sequences)[0]
        part = self.slices[arm.id]
        chunk = self._chunk(length)
        pieces = [
            self.model(tokens[:, start : start + chunk], hidden=True)
            for start in range(0, n_sequences, chunk)
        ]
        return [
            torch.cat([p[layer][part] for p in pieces], dim=1).cpu().numpy()
            for layer in range(len(pieces[0]))
        ]


def _undefined(arm: Arm, length: int) -> str:
    """Why an arm has no output at ``length`` (``""`` when it has)."""
    member = _member(arm.model, arm.config, seed=0)
    if member.mechanism.kind == "learned_table" and length > member.rows:
        return (
            "not defined: a learned table cannot index positions past its last row "
            f"({member.rows} rows; length {length} needs {length})"
        )
    return ""


def _steps(values: Iterable[int], steps: int, name: str) -> np.ndarray:
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be whole numbers of steps; got {value!r}.")
        if not 0 <= int(value) <= steps:
            raise ValueError(f"{name} step {value} is outside 0 … {steps} (the training steps).")
        out.append(int(value))
    return np.unique(np.array(out, dtype=np.int64))


def _snapshot_steps(config: LabConfig, steps: int) -> np.ndarray:
    return np.unique(np.linspace(0, steps, config.snapshots).round().astype(np.int64))


def _tokens(arm: Arm) -> int:
    """Training tokens the arm's seeds add to one step of a batched model (padding included)."""
    return arm.config.seeds * arm.config.batch * arm.config.max_len


def _group_arms(arms: Sequence[Arm]) -> list[list[Arm]]:
    """Arms of one shape, packed in order into batched models of at most
    :data:`MAX_MODEL_TOKENS` tokens per step (an arm is never split)."""
    shapes: dict[tuple, list[Arm]] = {}
    for arm in arms:
        shapes.setdefault(_shape_key(arm), []).append(arm)
    groups: list[list[Arm]] = []
    for shape in shapes.values():
        groups.append([])
        for arm in shape:
            full = sum(_tokens(a) for a in groups[-1]) + _tokens(arm) > MAX_MODEL_TOKENS
            if groups[-1] and full:
                groups.append([])
            groups[-1].append(arm)
    return groups


def train_arms(
    arms: Sequence[Arm],
    *,
    steps: int,
    checkpoints: Iterable[int],
    on_step: OnStep | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainedArms:
    """Train every arm for ``steps`` Adam steps, arms of one shape as one batched model.

    Args:
        arms: the arms (unique ids); each trains ``arm.config.seeds`` seeds. ``config.steps`` is
            ignored: every arm trains ``steps``.
        steps: optimiser steps of every arm.
        checkpoints: steps (0 … ``steps``) at which every arm is evaluated on held-out data.
        on_step: ``on_step(done, total, losses)`` after every step of every batched model:
            ``done`` and ``total`` count member-steps (one seed of one arm trained one step)
            over the whole call, so ``done / total`` is the call's progress and its time;
            ``losses`` maps every arm trained so far to its latest training loss (mean over its
            seeds that have not diverged).
        should_stop: polled before every step; when it returns true training ends.
    Returns:
        arm id → :class:`ArmOutput`, with ``hidden_states(arm_id, length, n_sequences)``.
    Raises:
        ValueError: repeated arm ids, an arm its settings cannot train, bad steps/checkpoints.
        LabStopped: ``should_stop()`` returned true (nothing is returned).
    """
    arms = list(arms)
    ids = [arm.id for arm in arms]
    if not arms or len(set(ids)) != len(ids):
        raise ValueError(f"arms need distinct ids; got {ids}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps={steps!r} must be a whole number ≥ 1.")
    for arm in arms:
        check_arm(arm.model, arm.config)
    checkpoint_steps = _steps(checkpoints, steps, "checkpoints")
    dev = device()
    groups = [_Group(g, steps, dev) for g in _group_arms(arms)]
    total = steps * sum(g.size for g in groups)
    done, latest = 0, {}
    outputs = TrainedArms()
    for group in groups:

        def progress(step: int, losses: np.ndarray, group: _Group = group) -> None:
            nonlocal done
            done += group.size
            for arm in group.arms:
                values = losses[group.slices[arm.id]]
                finite = values[np.isfinite(values)]
                latest[arm.id] = float(finite.mean()) if finite.size else math.nan
            if on_step is not None:
                on_step(done, total, dict(latest))

        outputs.update(_train_group(group, checkpoint_steps, progress, should_stop))
    return TrainedArms((arm.id, outputs[arm.id]) for arm in arms)


def _train_group(
    group: _Group,
    checkpoint_steps: np.ndarray,
    progress: Callable[[int, np.ndarray], None],
    should_stop: Callable[[], bool] | None,
) -> dict[str, ArmOutput]:
    """Train one batched model; evaluate, snapshot and record its curve on the way."""
    steps = group.steps
    start = time.perf_counter()
    every = max(1, math.ceil(steps / MAX_CURVE_POINTS))
    snap_steps = {arm.id: _snapshot_steps(arm.config, steps) for arm in group.arms}
    lengths = sorted({n for arm in group.arms for n in arm.config.eval_lengths})
    curve_steps: list[int] = []
    losses: list[np.ndarray] = []
    snapshots: dict[str, list[np.ndarray]] = {arm.id: [] for arm in group.arms}
    evals: list[dict[int, tuple[np.ndarray, ...]]] = []

    def observe(step: int) -> None:
        for arm in group.arms:
            if step in snap_steps[arm.id]:
                indices = range(*group.slices[arm.id].indices(group.size))
                table = group.model.tables(list(indices))
                if table is not None:
                    snapshots[arm.id].append(table)
        if step in checkpoint_steps:
            evals.append({n: group.evaluate(n) for n in lengths})

    observe(0)
    for step in range(1, steps + 1):
        if should_stop is not None and should_stop():
            raise LabStopped(f"Stopped at step {step - 1} of {steps}.")
        loss = group.step(step).cpu().numpy()
        if step % every == 0 or step == steps:
            curve_steps.append(step)
            losses.append(loss)
        observe(step)
        progress(step, loss)
    group.seconds = time.perf_counter() - start
    group.optimizer = None  # trained: Adam's moments (twice the parameters) are not needed
    group.model.zero_grad(set_to_none=True)
    return {
        arm.id: _arm_output(group, arm, checkpoint_steps, evals, curve_steps, losses, snapshots)
        for arm in group.arms
    }


def _arm_output(
    group: _Group,
    arm: Arm,
    checkpoint_steps: np.ndarray,
    evals: list[dict[int, tuple[np.ndarray, ...]]],
    curve_steps: list[int],
    losses: list[np.ndarray],
    snapshots: dict[str, list[np.ndarray]],
) -> ArmOutput:
    part = group.slices[arm.id]
    diverged = group.diverged_at[part]
    heldout = {}
    for length in arm.config.eval_lengths:
        undefined = _undefined(arm, length)
        accuracy, loss, per_position = (
            (np.stack([e[length][i][part] for e in evals], axis=1) for i in range(3))
            if evals
            else _no_checkpoints(part.stop - part.start, length)
        )
        # a seed's values from its divergence on are NaN (it is frozen, not trained)
        late = (diverged[:, None] >= 0) & (checkpoint_steps[None, :] >= diverged[:, None])
        if undefined:
            late[:] = True
        accuracy, loss = np.where(late, np.nan, accuracy), np.where(late, np.nan, loss)
        per_position = np.where(late[:, :, None], np.nan, per_position)
        heldout[length] = HeldOut(accuracy, loss, per_position, undefined)
    snaps = snapshots[arm.id]
    return ArmOutput(
        arm=arm,
        curve_steps=np.array(curve_steps, dtype=np.int64),
        losses=np.stack([x[part] for x in losses], axis=1).astype(np.float64)
        if losses
        else np.zeros((part.stop - part.start, 0)),
        checkpoint_steps=checkpoint_steps,
        heldout=heldout,
        snapshot_steps=_snapshot_steps(arm.config, group.steps),
        snapshots=np.stack(snaps, axis=1) if snaps else None,
        diverged_at=diverged.copy(),
        n_params=group.model.n_params(part.start),
        seconds=group.seconds,
        _group=group,
    )


def _no_checkpoints(e: int, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((e, 0)), np.zeros((e, 0)), np.zeros((e, 0, length))


def build_model(model: ModelConfig, config: LabConfig) -> LabModel:
    """The batched model of one arm alone: seeds ``0 … config.seeds − 1``, untrained.

    Raises:
        ValueError: settings the arm cannot train (see :func:`check_arm`).
    """
    check_arm(model, config)
    members = [_member(model, config, seed=s) for s in config.seed_ids]
    n_out = vocab_sizes(config)[1]
    return LabModel(
        members, n_out=n_out, width=config.width, heads=config.heads, layers=config.layers
    ).to(device())


@dataclass(frozen=True)
class ArmModel:
    """A trained arm's seeds inside their batched model: what :func:`evaluate` takes."""

    group: _Group
    arm: Arm

    @property
    def config(self) -> ModelConfig:
        return self.arm.model

    @property
    def rows(self) -> int:
        return _member(self.arm.model, self.arm.config, seed=0).rows


@dataclass
class TrainOutput:
    """One variant trained by :func:`train_variant` (the single-arm view of :class:`ArmOutput`)."""

    model: ArmModel
    curve_steps: np.ndarray  # (n_points,)
    losses: np.ndarray  # (E, n_points) training loss per seed
    snapshot_steps: np.ndarray  # (n_snapshots,)
    snapshots: np.ndarray | None  # (E, n_snapshots, rows, p) for learned tables
    diverged_at: int | None  # the first step whose loss was NaN/inf, if any
    n_params: int  # of one seed's model


def train_variant(
    model_config: ModelConfig,
    config: LabConfig,
    *,
    on_step: Callable[[int, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainOutput:
    """Train one variant's seeds for ``config.steps`` steps: :func:`train_arms` with one arm.

    ``on_step(step, mean_loss)`` is called after every step; ``should_stop()`` is polled every
    step.

    Raises:
        LabStopped: ``should_stop()`` returned true.
    """
    arm = Arm("variant", model_config, config)

    def progress(done: int, total: int, losses: dict[str, float]) -> None:
        if on_step is not None:
            on_step(done // config.seeds, losses["variant"])

    out = train_arms(
        [arm], steps=config.steps, checkpoints=(), on_step=progress, should_stop=should_stop
    )["variant"]
    diverged = out.diverged_at[out.diverged_at >= 0]
    return TrainOutput(
        model=ArmModel(out._group, arm),
        curve_steps=out.curve_steps,
        losses=out.losses,
        snapshot_steps=out.snapshot_steps,
        snapshots=out.snapshots,
        diverged_at=int(diverged.min()) if diverged.size else None,
        n_params=out.n_params,
    )


def evaluate(model: ArmModel, config: LabConfig, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Held-out token accuracy of a trained variant at one length.

    Returns:
        ``(accuracy (E,), per_position (E, length))``; per-position entries where no target
        counts (the first ``k`` of ``kback``) are NaN.
    Raises:
        ValueError: a learned table shorter than ``length`` (the message says so).
    """
    undefined = _undefined(model.arm, length)
    if undefined:
        raise ValueError(f"length {length}: {undefined}; evaluate lengths ≤ {model.rows}.")
    accuracy, _, per_position = model.group.evaluate(length)
    part = model.group.slices[model.arm.id]
    return accuracy[part], per_position[part]
