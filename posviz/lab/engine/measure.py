"""One trained instance's per-seed metrics at one budget (a cell), and whether it converged.

Reads only stored arrays (:class:`~posviz.lab.engine.results.Instance`): held-out accuracy and loss
at
every checkpoint, accuracy per position, the loss curve and the table snapshots. What it
computes is every study's base metrics plus the extra readings its kind asks for (``extra``;
each study kind names its own, :mod:`posviz.lab.studies.kinds`):

* every study: held-out accuracy and loss at the first evaluation length, and the mean
  training loss up to the budget (speed of learning);
* :func:`extrapolation`: accuracy on seen positions (``< max_len``) and on unseen ones
  (``max_len … L − 1``) of the longest held-out sequences, and retention = unseen ÷ seen;
* :func:`rare_rows`: accuracy at the late positions (the last quarter of the training length) and
  the early ones, row movement against how often a row was seen (:mod:`posviz.lab.engine.rows`), and
  the cross-validated probe's late-row error (:mod:`posviz.lab.engine.probe`), final and at step 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from posviz.lab.engine import metrics as m
from posviz.lab.engine.bounds import chance_level
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.probe import late_error
from posviz.lab.engine.results import Instance
from posviz.lab.engine.rows import EARLY_ROWS, late_to_early_ratio, rank_correlation, row_movement
from posviz.lab.engine.tasks import length_probabilities

LATE_FRACTION = 0.75  # "late" positions: the last quarter of the longest training length


@dataclass(frozen=True)
class Measured:
    """Per-seed metric values, notes on undefined ones, and the convergence judgement."""

    values: dict[str, tuple[float, ...]]
    notes: dict[str, str]
    convergence: m.Convergence


@lru_cache(maxsize=64)
def task_chance(config: LabConfig) -> float:
    """The task's chance accuracy at its first evaluation length (the best input-blind guess,
    :func:`posviz.lab.engine.bounds.chance_level`): the floor a trained arm must clear by a
    margin."""
    return float(chance_level(config, length=config.eval_lengths[0]).value)


def late_start(config: LabConfig) -> int:
    """First "late" position: ``ceil(0.75 · max_len)`` (24 for a longest length of 32)."""
    return math.ceil(LATE_FRACTION * config.max_len)


def first_counted(config: LabConfig) -> int:
    """First position whose target counts (k-back has none before ``k``)."""
    return config.k if config.task == "kback" else 0


@dataclass(frozen=True)
class Reading:
    """Where a cell reads an instance: checkpoint ``index`` of its held-out evaluations, at
    training step ``steps``, with the run's table ``snapshot_steps``."""

    index: int
    steps: int
    snapshot_steps: np.ndarray


#: an extra reading: ``(instance, config, reading) → (values (E,) by metric, notes by metric)``
Extra = Callable[[Instance, LabConfig, Reading], tuple[dict[str, np.ndarray], dict[str, str]]]


def measure(
    inst: Instance,
    config: LabConfig,
    *,
    control: bool,
    extra: Sequence[Extra] = (),
    curve_steps: np.ndarray,
    checkpoint_steps: np.ndarray,
    snapshot_steps: np.ndarray,
    steps: int,
) -> Measured:
    """The instance's metrics at training step ``steps`` (see the module docstring); a
    ``control`` arm is exempt from the "learned" test (its ceiling is known)."""
    index = m.checkpoint_index(checkpoint_steps, steps)
    first = str(config.eval_lengths[0])
    values: dict[str, np.ndarray] = {
        "accuracy": inst.heldout_accuracy[first][:, index],
        "loss": inst.heldout_loss[first][:, index],
        "train_loss_mean": m.mean_training_loss(inst, curve_steps, steps),
    }
    notes = {}
    if first in inst.undefined:
        notes["accuracy"] = notes["loss"] = inst.undefined[first]
    at = Reading(index, steps, snapshot_steps)
    for reading in extra:
        more, why = reading(inst, config, at)
        values.update(more)
        notes.update(why)
    chance = None if control else task_chance(config)
    convergence = m.convergence(inst, length=first, index=index, chance=chance)
    return Measured({k: tuple(float(x) for x in v) for k, v in values.items()}, notes, convergence)


def extrapolation(
    inst: Instance, config: LabConfig, at: Reading
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Accuracy on seen and unseen positions of the longest held-out sequences, and retention."""
    longest = str(max(config.eval_lengths))
    per_position = inst.per_position[longest][:, at.index]
    # seen positions at the training length (a learned table is defined there; for a causal
    # decoder a prefix is computed exactly as in the longer sequence)
    trained = str(config.max_len) if str(config.max_len) in inst.per_position else longest
    seen_positions = inst.per_position[trained][:, at.index]
    seen = m.position_mean(seen_positions, first_counted(config), config.max_len)
    unseen = m.position_mean(per_position, config.max_len, int(longest))
    values = {"accuracy_in_range": seen, "accuracy_unseen": unseen, "retention": unseen / seen}
    notes = {}
    if longest in inst.undefined:
        notes = dict.fromkeys(("accuracy_unseen", "retention"), inst.undefined[longest])
    return values, notes


def rare_rows(
    inst: Instance, config: LabConfig, at: Reading
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Late and early accuracy, row movement and the probe's late-row error (module docstring)."""
    return _rare_rows(inst, config, at.index, at.snapshot_steps, at.steps), {}


def _rare_rows(
    inst: Instance, config: LabConfig, index: int, snapshot_steps: np.ndarray, steps: int
) -> dict[str, np.ndarray]:
    late = late_start(config)
    per_position = inst.per_position[str(max(config.eval_lengths))][:, index]
    out = {
        "accuracy_late": m.position_mean(per_position, late, config.max_len),
        "accuracy_early": m.position_mean(per_position, first_counted(config), EARLY_ROWS),
    }
    if inst.snapshots is None:
        return out
    at = np.flatnonzero(np.asarray(snapshot_steps) == steps)
    if at.size == 0:
        raise ValueError(f"no table snapshot at step {steps}; have {list(snapshot_steps)}.")
    tables = inst.snapshots[:, [0, int(at[0])]]  # (E, 2, rows, p): start and this budget
    movement = row_movement(tables)
    trained = config.max_len
    seen = length_probabilities(config)[:trained]  # P(a sequence reaches row p)
    seeds = range(tables.shape[0])
    out.update(
        movement_late_ratio=late_to_early_ratio(movement, late=late, trained=trained),
        movement_rank_corr=rank_correlation(movement[:, :trained], seen),
        movement_unseen_max=movement[:, trained:].max(axis=1, initial=0.0),
        probe_error_late=np.array(
            [late_error(tables[s, 1], rows=trained, late=late, seed=0) for s in seeds]
        ),
        probe_error_late_at_init=np.array(
            [late_error(tables[s, 0], rows=trained, late=late, seed=0) for s in seeds]
        ),
    )
    return out
