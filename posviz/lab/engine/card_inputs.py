"""A paper check's stored numbers: the per-seed inputs its judge reads, taken from the engine's
held-out results (:func:`card_values`).

These are stored with the card, so this module is part of the engine whose source every run id
hashes (:mod:`posviz.lab.engine.store`); the checks themselves (:mod:`posviz.lab.studies.papers`)
name the
extractor they use, with its settings, as data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

#: The budgets a check's gap is read at, as shares of its steps. They are checkpoints of its one
#: run: the lab trains with a constant learning rate (no schedule), so the model at step S of a
#: longer run is the model a run of S steps ends with.
LADDER_SHARES = (0.25, 0.5, 0.75, 1.0)


class _Arm(Protocol):
    """A check's arm as the extractors read it (:class:`posviz.lab.studies.papers.CardArm`)."""

    @property
    def id(self) -> str: ...

    @property
    def config(self) -> Any: ...


class _Check(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def all_arms(self) -> tuple[Any, ...]: ...

    @property
    def extract(self) -> Callable[[Any, Mapping[int, Any]], dict[str, np.ndarray]]: ...


def ladder_steps(steps: int) -> tuple[int, ...]:
    """The steps a run of ``steps`` is evaluated at: every :data:`LADDER_SHARES` of it."""
    return tuple(sorted({max(1, round(share * steps)) for share in LADDER_SHARES}))


def rung_key(name: str, step: int) -> str:
    """The input name of ``name`` read at checkpoint ``step`` (``loss@step375``)."""
    return f"{name}@step{step}"


def ladder_inputs(
    name: str, arm: _Arm, series: np.ndarray, *, per_position_start: int | None = None
) -> dict[str, np.ndarray]:
    """``{name@stepS: (E,)}`` for every checkpoint of a run evaluated at :func:`ladder_steps`.

    ``series`` is ``(E, checkpoints)`` (or ``(E, checkpoints, length)`` with
    ``per_position_start``: the mean over positions from there on). A run with other
    checkpoints gives nothing (an older run: its card shows no ladder).
    """
    steps = ladder_steps(arm.config.steps)
    array = np.asarray(series, dtype=np.float64)
    if array.ndim < 2 or array.shape[1] != len(steps):
        return {}
    out = {}
    for index, step in enumerate(steps):
        if per_position_start is None:
            out[rung_key(name, step)] = array[:, index]
        else:
            out[rung_key(name, step)] = position_accuracy(
                array[:, : index + 1], start=per_position_start
            )
    return out


def at_last_checkpoint(values: np.ndarray) -> np.ndarray:
    """``(E,)`` from the engine's ``(E, checkpoints)`` held-out loss or accuracy (1-D: as is)."""
    array = np.asarray(values, dtype=np.float64)
    return array[:, -1] if array.ndim == 2 else array


def position_accuracy(
    per_position: np.ndarray, *, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """``(E,)`` mean held-out accuracy over positions ``start … stop − 1`` at the last checkpoint.

    ``per_position`` is the engine's ``(E, checkpoints, length)`` (or ``(E, length)``); positions
    with no counted target (NaN) are left out of the mean. Unseen positions of a model trained
    up to ``max_len``: ``start=max_len``.
    """
    array = np.asarray(per_position, dtype=np.float64)
    last = array[:, -1, :] if array.ndim == 3 else array
    window = last[:, start:stop]
    if window.shape[1] == 0 or np.isnan(window).all(axis=1).any():
        return np.full(last.shape[0], np.nan)
    return np.nanmean(window, axis=1)


def heldout_at(arm: _Arm, heldout: Mapping[int, Any], length: int) -> Any:
    """The held-out result of ``arm`` at ``length``, or a ValueError naming the fix."""
    if length not in heldout:
        raise ValueError(
            f"arm {arm.id!r} was not evaluated at length {length}; run it with the check's "
            f"eval_lengths {arm.config.eval_lengths}."
        )
    return heldout[length]


# --------------------------------------------------------------------------- extractors


def losses_at(
    arm: _Arm, heldout: Mapping[int, Any], *, lengths: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """``{loss@N: (E,)}``: the held-out loss at the last checkpoint at every length ``N``."""
    return {f"loss@{n}": at_last_checkpoint(heldout_at(arm, heldout, n).loss) for n in lengths}


def loss_and_accuracy_at(
    arm: _Arm, heldout: Mapping[int, Any], *, length: int, ladder: str
) -> dict[str, np.ndarray]:
    """Loss and accuracy at ``length`` (last checkpoint), and input ``ladder`` at every rung."""
    result = heldout_at(arm, heldout, length)
    return {
        "loss": at_last_checkpoint(result.loss),
        "accuracy": at_last_checkpoint(result.accuracy),
        **ladder_inputs(ladder, arm, getattr(result, ladder)),
    }


def unseen_accuracy_at(arm: _Arm, heldout: Mapping[int, Any]) -> dict[str, np.ndarray]:
    """Accuracy on the trained lengths, and on the unseen positions of twice them (every rung)."""
    trained = arm.config.max_len
    unseen = heldout_at(arm, heldout, 2 * trained).per_position
    return {
        "in_range_accuracy": at_last_checkpoint(heldout_at(arm, heldout, trained).accuracy),
        "unseen_accuracy": position_accuracy(unseen, start=trained),
        **ladder_inputs("unseen_accuracy", arm, unseen, per_position_start=trained),
    }


def card_values(
    check: _Check, heldout: Mapping[str, Mapping[int, Any]]
) -> dict[str, dict[str, np.ndarray]]:
    """The judge's inputs from the lab engine's held-out results.

    Args:
        check: the paper check.
        heldout: arm id → evaluation length → an object with ``loss (E, c)``, ``accuracy (E, c)``
            and ``per_position (E, c, length)`` (the engine's ``ArmOutput.heldout``).
    Returns:
        arm id → input name → ``(E,)`` per seed, at the last checkpoint.
    Raises:
        ValueError: an arm or evaluation length the check needs is missing.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    for arm in check.all_arms:
        if arm.id not in heldout:
            raise ValueError(f"heldout has no arm {arm.id!r}; run every arm of {check.id!r}.")
        out[arm.id] = check.extract(arm, heldout[arm.id])
    return out
