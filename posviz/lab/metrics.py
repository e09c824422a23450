"""Per-seed metrics of a trained instance at one budget, their display names, and convergence.

Metric ids are for code and storage only; answers and tables show :func:`label` ("held-out loss
(lower is better)"), never an id. Every metric is a per-seed array ``(E,)`` read at one
checkpoint, so two arms' values pair up seed by seed (:mod:`posviz.analysis.difference`).

Convergence (:func:`convergence`): an arm is trained at a budget when its held-out in-range
accuracy is ≥ :data:`CONVERGED_ACCURACY`, or its held-out loss has plateaued: it improved by
less than :data:`PLATEAU` (relative) from the previous checkpoint (a quarter of the budget
earlier). Otherwise it is under-trained there and left out of rankings and verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from posviz.lab.results import Instance

CONVERGED_ACCURACY = 0.95
PLATEAU = 0.01  # < 1 % relative held-out loss improvement over the last quarter of the budget


@dataclass(frozen=True)
class MetricSpec:
    """A metric's display name and direction (``unit``: a share in [0, 1]; ``meaning``: set for
    a descriptive metric with no better side, said instead of the direction)."""

    id: str
    name: str
    higher_is_better: bool
    unit: bool = False
    meaning: str = ""


METRICS: dict[str, MetricSpec] = {
    m.id: m
    for m in (
        MetricSpec("accuracy", "held-out accuracy", True, True),
        MetricSpec("loss", "held-out loss", False),
        MetricSpec("train_loss_mean", "mean training loss over the run", False),
        MetricSpec(
            "accuracy_in_range", "held-out accuracy on positions seen in training", True, True
        ),
        MetricSpec(
            "accuracy_unseen", "held-out accuracy on unseen positions (past training)", True, True
        ),
        MetricSpec("retention", "retention (unseen ÷ seen-position accuracy)", True),
        MetricSpec("accuracy_late", "held-out accuracy at the late positions", True, True),
        MetricSpec("accuracy_early", "held-out accuracy at the early positions", True, True),
        MetricSpec(
            "movement_late_ratio",
            "late ÷ early row movement",
            True,
            meaning="1 = the late rows moved as far as the early ones",
        ),
        MetricSpec(
            "movement_rank_corr",
            "rank correlation of row movement with how often a row was seen",
            True,
            meaning="+1 = the more often seen, the further moved",
        ),
        MetricSpec("movement_unseen_max", "largest movement of a row never seen", False),
        MetricSpec("probe_error_late", "probe error on the late rows (positions)", False),
        MetricSpec(
            "probe_error_late_at_init", "probe error on the late rows before training", False
        ),
    )
}


def spec(metric: str) -> MetricSpec:
    """The spec of a metric id.

    Raises:
        ValueError: unknown id.
    """
    if metric not in METRICS:
        raise ValueError(f"No lab metric {metric!r}; known: {', '.join(METRICS)}.")
    return METRICS[metric]


def label(metric: str) -> str:
    """``"held-out loss (lower is better)"``: the name with its direction, in words."""
    m = spec(metric)
    if m.meaning:
        return f"{m.name} ({m.meaning})"
    return f"{m.name} ({'higher' if m.higher_is_better else 'lower'} is better)"


def better_word(metric: str, a_minus_b: float) -> str:
    """``"higher held-out accuracy (better)"`` / ``"lower held-out loss (better)"`` for the side
    whose value is ``a`` when ``a − b = a_minus_b``."""
    m = spec(metric)
    side = "higher" if a_minus_b > 0 else "lower"
    if m.meaning:
        return f"{side} {m.name}"
    good = (a_minus_b > 0) == m.higher_is_better
    return f"{side} {m.name} ({'better' if good else 'worse'})"


def checkpoint_index(checkpoint_steps: np.ndarray, steps: int) -> int:
    """Index of the checkpoint at ``steps``.

    Raises:
        ValueError: no checkpoint there.
    """
    hits = np.flatnonzero(np.asarray(checkpoint_steps) == steps)
    if hits.size == 0:
        raise ValueError(f"no held-out evaluation at step {steps}; have {list(checkpoint_steps)}.")
    return int(hits[0])


def nan_seeds(inst: Instance) -> np.ndarray:
    return np.full(inst.losses.shape[0], math.nan)


def mean_training_loss(inst: Instance, curve_steps: np.ndarray, steps: int) -> np.ndarray:
    """``(E,)`` training loss averaged over the recorded steps up to ``steps``: the area under
    the learning curve. Every step trains on fresh sequences, so it is also the loss on data the
    model had not seen yet; lower = learned faster."""
    keep = np.asarray(curve_steps) <= steps
    if not keep.any() or max(inst.diverged_at) >= 0:
        return nan_seeds(inst)
    return np.asarray(inst.losses[:, keep], dtype=np.float64).mean(axis=1)


def position_mean(per_position: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``(E,)`` mean accuracy over positions ``start … stop − 1`` (NaN entries skipped)."""
    block = np.asarray(per_position, dtype=np.float64)[:, start:stop]
    if block.shape[1] == 0 or np.isnan(block).all():
        return np.full(block.shape[0], math.nan)
    with np.errstate(invalid="ignore"):
        return np.nanmean(block, axis=1)


@dataclass(frozen=True)
class Convergence:
    """Whether an arm trained to convergence at a budget, and how that was judged."""

    converged: bool
    text: str


def convergence(
    inst: Instance, *, length: str, index: int, in_range: np.ndarray | None = None
) -> Convergence:
    """Judge one instance at checkpoint ``index`` (see the module docstring).

    ``in_range``: ``(E,)`` in-range accuracy (default: held-out accuracy at ``length``).
    """
    if max(inst.diverged_at) >= 0:
        return Convergence(False, "diverged (the loss became NaN/inf); lower the learning rate")
    accuracy = inst.heldout_accuracy[length][:, index] if in_range is None else in_range
    mean_accuracy = float(np.mean(accuracy))
    if mean_accuracy >= CONVERGED_ACCURACY:
        return Convergence(True, f"in-range accuracy {mean_accuracy:.3f} ≥ {CONVERGED_ACCURACY}")
    if index == 0:
        return Convergence(False, "no earlier checkpoint to judge a plateau")
    before = float(np.mean(inst.heldout_loss[length][:, index - 1]))
    now = float(np.mean(inst.heldout_loss[length][:, index]))
    gain = (before - now) / before if before > 0 else 0.0
    if gain < PLATEAU:
        return Convergence(
            True,
            f"held-out loss plateaued ({before:.3f} → {now:.3f}, {gain:+.1%} < {PLATEAU:.0%})",
        )
    return Convergence(
        False,
        f"under-trained: in-range accuracy {mean_accuracy:.3f} < {CONVERGED_ACCURACY} and "
        f"held-out loss still falling ({before:.3f} → {now:.3f}, {gain:.1%} ≥ {PLATEAU:.0%} over "
        "the last quarter of the budget)",
    )
