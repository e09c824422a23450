"""Train one variant's seeds together (one batched model) and evaluate it on held-out data.

Adam (Kingma & Ba 2015) without weight decay: its update is element-wise, so the seeds stacked in
one :class:`~posviz.lab.model.LabModel` stay exactly independent, and a table row that never gets
a gradient never moves (Adam's update is 0 when its moments are 0). The loss summed over seeds
gives each seed the gradient of its own mean token loss. Adam is written out here (:class:`Adam`,
the paper's Algorithm 1, as ``torch.optim.Adam`` computes it) because ``torch.optim`` pulls in
``torch._dynamo``, seconds of import on a busy server for ten lines of arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from posviz.lab.config import CAUSAL_TASKS, LabConfig, ModelConfig
from posviz.lab.model import LabModel, parameter_count
from posviz.lab.tasks import Batch, eval_rng, make_batch, sample_lengths, train_rng, vocab_sizes

MAX_CURVE_POINTS = 200


@dataclass
class TrainOutput:
    """A trained variant: the model, its loss curve and its learned-table snapshots."""

    model: LabModel
    curve_steps: np.ndarray  # (n_points,)
    losses: np.ndarray  # (E, n_points) training loss per seed
    snapshot_steps: np.ndarray  # (n_snapshots,)
    snapshots: np.ndarray | None  # (E, n_snapshots, rows, p) for learned tables
    diverged_at: int | None  # the step whose loss was NaN/inf, if any
    n_params: int  # of one seed's model


class Adam:
    """Adam, Kingma & Ba 2015, Algorithm 1, with torch.optim.Adam's bias-corrected form.

    ``m ← β₁m + (1−β₁)g``, ``v ← β₂v + (1−β₂)g²``,
    ``θ ← θ − (lr / (1−β₁ᵗ)) · m / (√(v / (1−β₂ᵗ)) + ε)``; β = (0.9, 0.999), ε = 1e-8.
    """

    def __init__(self, params: list[torch.nn.Parameter], *, lr: float) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.beta1, self.beta2, self.eps = float(lr), 0.9, 0.999, 1e-8
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        correction1 = 1 - self.beta1**self.t
        correction2_sqrt = math.sqrt(1 - self.beta2**self.t)
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        params = [self.params[i] for i in live]
        grads = [p.grad for p in params]
        m, v = [self.m[i] for i in live], [self.v[i] for i in live]
        # torch._foreach_*: one kernel launch per step for all tensors (as torch.optim's foreach)
        torch._foreach_mul_(m, self.beta1)
        torch._foreach_add_(m, grads, alpha=1 - self.beta1)
        torch._foreach_mul_(v, self.beta2)
        torch._foreach_addcmul_(v, grads, grads, value=1 - self.beta2)
        denom = torch._foreach_sqrt(v)
        torch._foreach_div_(denom, correction2_sqrt)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(params, m, denom, value=-self.lr / correction1)


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


def build_model(model: ModelConfig, config: LabConfig) -> LabModel:
    """The batched model of one variant: seeds ``0 … config.seeds − 1``."""
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
    n_in, n_out, _ = vocab_sizes(config)
    rows = model.table_rows or config.max_len
    if model.scheme == "learned" and rows < config.max_len:
        raise ValueError(
            f"table_rows={rows} is shorter than max_len={config.max_len}; a learned table needs "
            "a row for every training position."
        )
    if model.scheme == "rope" and config.head_dim % 2:
        raise ValueError(
            f"RoPE rotates pairs, so the head size width/heads = {config.head_dim} must be even; "
            f"use width={config.width} with heads={config.heads // 2 or 1}, or an even head size."
        )
    if (
        model.injection == "concat"
        and not 0 < (model.concat_width or config.width // 2) < config.width
    ):
        raise ValueError(
            f"concat_width={model.concat_width} must be between 1 and width−1 ({config.width - 1})."
        )
    if model.scheme == "sinusoidal" and (model.concat_width or config.width) % 2:
        raise ValueError(
            "a sinusoid table needs an even width (sin/cos pairs); use an even concat_width."
        )
    torch.manual_seed(0)  # nothing should draw from the global generator; pinned all the same
    return LabModel(
        model,
        n_in=n_in,
        n_out=n_out,
        width=config.width,
        heads=config.heads,
        layers=config.layers,
        rows=rows,
        seeds=tuple(range(config.seeds)),
    ).to(device())


def _to_torch(batches: list[Batch]) -> tuple[torch.Tensor, ...]:
    """Stack one batch per seed into ``(E, B, T)`` tensors (padded to the longest)."""
    t = max(b.inputs.shape[1] for b in batches)

    def pad(array: np.ndarray, value: int | bool) -> np.ndarray:
        return np.pad(array, ((0, 0), (0, t - array.shape[1])), constant_values=value)

    dev = device()
    arrays = (
        np.stack(
            [pad(b.inputs, int(b.inputs.max())) if False else pad(b.inputs, 0) for b in batches]
        ),
        np.stack([pad(b.targets, 0) for b in batches]),
        np.stack([pad(b.mask, False) for b in batches]),
        np.stack([pad(b.valid, False) for b in batches]),
    )
    return tuple(torch.from_numpy(a).to(dev) for a in arrays)


def masked_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(E,)`` mean cross-entropy over each seed's counted positions."""
    ce = torch.nn.functional.cross_entropy(
        logits.flatten(0, 2), targets.flatten(), reduction="none"
    )
    ce = ce.view(mask.shape) * mask
    return ce.sum((1, 2)) / mask.sum((1, 2)).clamp(min=1)


def train_variant(
    model_config: ModelConfig,
    config: LabConfig,
    *,
    on_step: Callable[[int, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainOutput:
    """Train the seeds of one variant for ``config.steps`` Adam steps.

    ``on_step(step, mean_loss)`` is called after every step; ``should_stop()`` is polled every
    step and ends training early (the caller raises :class:`~posviz.lab.results.LabStopped`).
    """
    model = build_model(model_config, config)
    optimizer = Adam(list(model.parameters()), lr=float(config.lr))
    rngs = [train_rng(s) for s in range(config.seeds)]
    every = max(1, math.ceil(config.steps / MAX_CURVE_POINTS))
    snap_steps = np.unique(np.linspace(0, config.steps, config.snapshots).round().astype(int))
    snaps = [model.tables()] if model.tables() is not None else None
    curve_steps, losses, diverged_at = [], [], None
    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            break
        batches = [
            make_batch(config, rng, sample_lengths(config, rng, config.batch)) for rng in rngs
        ]
        tokens, targets, mask, valid = _to_torch(batches)
        loss = masked_loss(model(tokens, valid), targets, mask)
        if not torch.isfinite(loss).all():
            diverged_at = step
            break
        optimizer.zero_grad()
        loss.sum().backward()
        optimizer.step()
        if step % every == 0 or step == config.steps:
            curve_steps.append(step)
            losses.append(loss.detach().cpu().numpy())
        if snaps is not None and step in snap_steps:
            snaps.append(model.tables())
        if on_step is not None:
            on_step(step, float(loss.detach().mean()))
    return TrainOutput(
        model=model,
        curve_steps=np.array(curve_steps, dtype=np.int64),
        losses=np.stack(losses, axis=1) if losses else np.zeros((config.seeds, 0)),
        snapshot_steps=snap_steps[: len(snaps)] if snaps is not None else snap_steps,
        snapshots=np.stack(snaps, axis=1) if snaps is not None else None,
        diverged_at=diverged_at,
        n_params=parameter_count(model),
    )


@torch.no_grad()
def evaluate(model: LabModel, config: LabConfig, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Held-out token accuracy at one length: fresh sequences from a stream never trained on.

    Returns:
        ``(accuracy (E,), per_position (E, length))``; per-position entries where no target
        counts (the first ``k`` of ``kback``) are NaN.
    Raises:
        ValueError: a learned table shorter than ``length`` (the message says so).
    """
    lengths = np.full(config.eval_batch, length)
    batches = [
        make_batch(config, eval_rng(s, length), lengths, held_out=True) for s in range(config.seeds)
    ]
    tokens, targets, mask, valid = _to_torch(batches)
    correct = (model(tokens, valid).argmax(-1) == targets) & mask
    accuracy = correct.sum((1, 2)) / mask.sum((1, 2))
    counted = mask.sum(1).cpu().numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        per_position = np.where(counted > 0, correct.sum(1).cpu().numpy() / counted, np.nan)
    return accuracy.cpu().numpy().astype(np.float64), per_position.astype(np.float64)
