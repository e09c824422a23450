"""Per-seed metrics of a trained instance at one budget, their display names, and convergence.

Metric ids are for code and storage only; answers and tables show :func:`label` ("held-out loss
(lower is better)"), never an id. Every metric is a per-seed array ``(E,)`` read at one
checkpoint, so two arms' values pair up seed by seed (:mod:`posviz.analysis.difference`).

Training status (:func:`convergence`), judged **seed by seed**, never on the mean over seeds
(a mean of 0.807 can hide one seed stuck at 0.115). A seed is

* **trained** when it *learned* and *stopped improving*: learned = held-out accuracy at least
  :data:`LEARN_MARGIN` of the way from chance to 1 (``acc ≥ chance + 0.1·(1 − chance)``, chance
  = the best input-blind guess, :func:`posviz.lab.engine.bounds.chance_level`); stopped improving =
  held-out accuracy ≥ :data:`CONVERGED_ACCURACY`, or held-out loss less than :data:`PLATEAU`
  (relative) better than at the previous checkpoint, a quarter of the budget earlier;
* **improving** when its held-out loss still falls by ≥ :data:`PLATEAU` per quarter budget;
* **stalled** when it stopped improving without having learned (at chance, going nowhere);
* **diverged** when its loss became NaN/inf.

An arm is trained when every seed is; it is **collapsed** when some seeds are trained and
others stalled or diverged, **stalled** when every seed stalled, and **improving** otherwise. A
control (whose best score without positions is bounded) is not required to learn: a stopped
control is trained. Only a trained arm supports a verdict; an improving one may lose a
comparison to a trained arm (the gap is a lower bound); a stalled, collapsed or diverged arm
never supports one (:mod:`posviz.lab.studies.judging`).

Equivalence: two arms are said to do "the same" only when the paired 95 % interval of their
difference lies inside ± the metric's :attr:`MetricSpec.margin` (a two one-sided tests
equivalence decision at the 5 % level, Schuirmann 1987); an interval that contains 0 but reaches
past the margin is "undecided", never "no difference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.engine.results import Instance

CONVERGED_ACCURACY = 0.95
PLATEAU = 0.01  # < 1 % relative held-out loss improvement over the last quarter of the budget
#: a seed has learned when its accuracy is at least this share of the way from chance to 1.
LEARN_MARGIN = 0.1

Status = Literal["trained", "improving", "stalled", "collapsed", "diverged"]


@dataclass(frozen=True)
class MetricSpec:
    """A metric's display name and direction (``unit``: a share in [0, 1]; ``meaning``: set for
    a descriptive metric with no better side, said instead of the direction; ``margin``: the
    equivalence margin, in the metric's units, fixed here before any run: 0.02 = two points of
    accuracy or 0.02 nats of loss)."""

    id: str
    name: str
    higher_is_better: bool
    unit: bool = False
    meaning: str = ""
    margin: float = 0.02  # equivalence margin: |a − b| below it is "the same" in practice


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
        MetricSpec("retention", "retention (unseen ÷ seen-position accuracy)", True, margin=0.05),
        MetricSpec("accuracy_late", "held-out accuracy at the late positions", True, True),
        MetricSpec("accuracy_early", "held-out accuracy at the early positions", True, True),
        MetricSpec(
            "movement_late_ratio",
            "late ÷ early row movement",
            True,
            meaning="1 = the late rows moved as far as the early ones",
            margin=0.1,
        ),
        MetricSpec(
            "movement_rank_corr",
            "rank correlation of row movement with how often a row was seen",
            True,
            meaning="+1 = the more often seen, the further moved",
            margin=0.1,
        ),
        MetricSpec("movement_unseen_max", "largest movement of a row never seen", False),
        MetricSpec(
            "probe_error_late", "probe error on the late rows (positions)", False, margin=0.5
        ),
        MetricSpec(
            "probe_error_late_at_init",
            "probe error on the late rows before training",
            False,
            margin=0.5,
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
    """How an arm's training stands at a budget (see the module docstring).

    ``converged``: trained (the only status that supports a verdict on its own); ``status``:
    ``trained``, ``improving``, ``stalled``, ``collapsed`` or ``diverged``; ``seeds``: each
    seed's own status; ``text``: the judgement in words, with its numbers.
    """

    converged: bool
    text: str
    status: Status = "trained"
    seeds: tuple[str, ...] = ()


def learned_floor(chance: float) -> float:
    """Accuracy a seed must reach to count as having learned: ``chance + 0.1·(1 − chance)``."""
    return chance + LEARN_MARGIN * (1.0 - chance)


def _seed_status(
    accuracy: float, before: float, now: float, *, floor: float | None, first: bool
) -> tuple[str, float]:
    """One seed's status and its relative held-out loss gain over the last quarter budget."""
    gain = (before - now) / before if before > 0 and math.isfinite(before) else 0.0
    if not math.isfinite(now) or not math.isfinite(accuracy):
        return "diverged", gain
    learned = floor is None or accuracy >= floor
    if accuracy >= CONVERGED_ACCURACY:
        return "trained", gain
    if first or gain >= PLATEAU:
        return "improving", gain
    return ("trained" if learned else "stalled"), gain


def convergence(
    inst: Instance,
    *,
    length: str,
    index: int,
    in_range: np.ndarray | None = None,
    chance: float | None = None,
    blind: float | None = None,
) -> Convergence:
    """Judge one instance at checkpoint ``index``, seed by seed (see the module docstring).

    ``in_range``: ``(E,)`` in-range accuracy (default: held-out accuracy at ``length``);
    ``chance``: the task's chance accuracy, or None for a control (not required to learn);
    ``blind``: for an arm with positions, the task's position-blind ceiling
    (:func:`posviz.lab.engine.bounds.position_blind_ceiling`): "learned" is then measured from
    it, not from chance — a seed at what a model without positions reaches has not learned the
    task (reverse: chance 0.062, ceiling 0.223, floor 0.301, not 0.156).
    """
    accuracy = np.asarray(
        inst.heldout_accuracy[length][:, index] if in_range is None else in_range, dtype=float
    )
    loss = np.asarray(inst.heldout_loss[length], dtype=float)
    if chance is not None and blind is not None and blind > chance:
        chance = blind  # the floor is measured from what a model without positions reaches
    floor = None if chance is None else learned_floor(chance)
    seeds, gains = [], []
    for e in range(accuracy.shape[0]):
        if inst.diverged_at[e] >= 0:
            seeds.append("diverged")
            gains.append(math.nan)
            continue
        before = float(loss[e, index - 1]) if index > 0 else math.nan
        status, gain = _seed_status(
            float(accuracy[e]), before, float(loss[e, index]), floor=floor, first=index == 0
        )
        seeds.append(status)
        gains.append(gain)
    seeds = _below_floor_as_one(seeds, gains, accuracy, floor, first=index == 0)
    status = _arm_status(seeds)
    return Convergence(
        status == "trained",
        _status_text(status, seeds, accuracy, gains, floor, chance, blind=blind == chance),
        status,
        tuple(seeds),
    )


def _below_floor_as_one(
    seeds: list[str], gains: list[float], accuracy: np.ndarray, floor: float | None, *, first: bool
) -> list[str]:
    """Seeds that have not learned (all under the floor, none trained or diverged) are
    "improving" or "stalled" together, decided on the 95% interval of their relative loss gains
    as differences are (:mod:`posviz.lab.studies.judging`): improving only when the interval
    lies above 0 and not inside ``±PLATEAU``; otherwise stalled — so an arm at chance does not
    swing between the two on one seed's loss noise."""
    if floor is None or first or len(seeds) < 2 or set(seeds) - {"improving", "stalled"}:
        return seeds
    if not (np.asarray(accuracy) < floor).all() or not all(math.isfinite(g) for g in gains):
        return seeds
    d = paired_difference(gains, [0.0] * len(gains))
    inside = d.low > -PLATEAU and d.high < PLATEAU
    improving = d.low > 0 and not inside
    return ["improving" if improving else "stalled"] * len(seeds)


def _arm_status(seeds: list[str]) -> Status:
    kinds = set(seeds)
    if kinds == {"trained"}:
        return "trained"
    if kinds == {"diverged"}:
        return "diverged"
    if "trained" in kinds and kinds & {"stalled", "diverged"}:
        return "collapsed"
    if "improving" in kinds:
        return "improving"
    return "stalled" if "diverged" not in kinds else "diverged"


def _status_text(
    status: Status,
    seeds: list[str],
    accuracy: np.ndarray,
    gains: list[float],
    floor: float | None,
    chance: float | None,
    *,
    blind: bool = False,
) -> str:
    n = len(seeds)
    acc = f"in-range accuracy {_range(accuracy)}"
    finite = [g for g in gains if math.isfinite(g)]
    gain = (
        f"held-out loss {_range(np.array(finite), pct=True)} better than a quarter budget earlier"
    )
    learn = (
        ""
        if floor is None
        else f"; learned = accuracy ≥ {floor:.3f} ("
        + ("the position-blind ceiling" if blind else "chance")
        + f" {chance:.3f} + {LEARN_MARGIN:.0%} of the rest)"
    )
    if status == "trained":
        return f"trained: {acc}, every seed learned and stopped improving ({gain}){learn}"
    if status == "diverged":
        bad = seeds.count("diverged")
        return f"diverged on {bad} of {n} seeds (the loss became NaN/inf); lower the learning rate"
    if status == "collapsed":
        bad = [i for i, s in enumerate(seeds) if s in ("stalled", "diverged")]
        good = [i for i, s in enumerate(seeds) if s == "trained"]
        how = []
        if seeds.count("stalled"):
            how.append(f"{seeds.count('stalled')} stalled without learning")
        if seeds.count("diverged"):
            how.append(f"{seeds.count('diverged')} diverged (loss NaN/inf)")
        return (
            f"collapsed: {len(bad)} of {n} seeds failed ({', '.join(how)}; accuracy "
            f"{_range(accuracy[bad])}) while the others learned ({_range(accuracy[good])}){learn}"
        )
    if status == "stalled":
        return f"stalled: stopped improving without learning ({acc}; {gain}){learn}"
    moving = seeds.count("improving")
    return (
        f"under-trained: still improving on {moving} of {n} seeds ({acc}; {gain}, "
        f"≥ {PLATEAU:.0%} counts as improving){learn}"
    )


def _range(values: np.ndarray, *, pct: bool = False) -> str:
    """``"0.812"`` or ``"0.115–0.823"`` (min–max over seeds); ``pct``: as percentages."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "n/a"
    lo, hi = float(values.min()), float(values.max())
    fmt = (lambda v: f"{v:.1%}") if pct else (lambda v: f"{v:.3f}")
    return fmt(lo) if math.isclose(lo, hi, abs_tol=5e-4) else f"{fmt(lo)}–{fmt(hi)}"
