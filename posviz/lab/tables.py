"""Learned tables of finished lab runs as :class:`~posviz.tables.PositionTable` sources.

Spec: ``lab:<run-id>[/<variant>[/<seed>[/<step>]]]``; defaults: the run's first learned-table
variant, seed 0, the final step. ``<step>`` is a training step at which a snapshot was kept.
"""

from __future__ import annotations

import numpy as np

from posviz.lab.store import RunStore
from posviz.tables import PositionTable

PREFIX = "lab:"


def _parse(spec: str) -> tuple[str, str | None, int, int | None]:
    if not isinstance(spec, str) or not spec.startswith(PREFIX):
        raise ValueError(
            f"{spec!r} is not a lab table; use lab:<run-id>[/<variant>[/<seed>[/<step>]]], "
            "e.g. as listed by `python -m posviz lab list`."
        )
    parts = spec[len(PREFIX) :].split("/")
    if len(parts) > 4 or not parts[0]:
        raise ValueError(
            f"{spec!r} has {len(parts)} parts; use lab:<run-id>[/<variant>[/<seed>[/<step>]]]."
        )
    numbers = []
    for name, text in zip(("seed", "step"), parts[2:], strict=False):
        if not text.isdigit():
            raise ValueError(f"{name} {text!r} in {spec!r} must be a whole number ≥ 0.")
        numbers.append(int(text))
    variant = parts[1] if len(parts) > 1 and parts[1] else None
    seed = numbers[0] if numbers else 0
    step = numbers[1] if len(numbers) > 1 else None
    return parts[0], variant, seed, step


def load_lab_table(spec: str, *, store: RunStore | None = None) -> PositionTable:
    """The learned table of a stored run, as a ``PositionTable`` every view can open.

    Returns:
        ``PositionTable`` with ``matrix`` ``(table_rows, p)`` (``p`` = width, or the concatenated
        part's width), ``kind="learned"``, ``source`` the full spec.
    Raises:
        ValueError: malformed spec, unknown or corrupted run, a variant without a learned table,
            a seed or step that the run does not have (the message lists what exists).
    """
    run_id, variant, seed, step = _parse(spec)
    store = store or RunStore()
    result = store.load(run_id)
    if result is None:
        raise ValueError(f"No stored lab run {run_id!r} in {store.root}; run it first.")
    learned = list(result.snapshots)
    if not learned:
        raise ValueError(f"Lab run {run_id} has no learned table (its variants use none).")
    variant = variant or learned[0]
    if variant not in result.snapshots:
        raise ValueError(
            f"Lab run {run_id} has no learned table for {variant!r}; choose {', '.join(learned)}."
        )
    snaps = result.snapshots[variant]  # (seeds, n_snapshots, rows, p)
    if not 0 <= seed < snaps.shape[0]:
        raise ValueError(
            f"seed {seed} is out of range; run {run_id} has seeds 0 … {snaps.shape[0] - 1}."
        )
    steps = [int(s) for s in result.snapshot_steps]
    index = len(steps) - 1 if step is None else (steps.index(step) if step in steps else -1)
    if index < 0:
        raise ValueError(f"step {step} has no snapshot in run {run_id}; choose one of {steps}.")
    source = f"{PREFIX}{run_id}/{variant}/{seed}/{steps[index]}"
    trained = int(result.config.max_len)
    return PositionTable(
        matrix=np.array(snaps[seed, index], dtype=np.float32),
        source=source,
        kind="learned",
        model_type="posviz-lab",
        notes=(
            f"Trained by the position lab ({result.question_id}, {result.label(variant)}), seed "
            f"{seed}, step {steps[index]} of {result.config.steps}.",
            f"Training sequences were at most {trained} tokens long; rows from {trained} on were "
            "never used and keep their random initial values.",
        ),
    )


def list_lab_tables(*, store: RunStore | None = None) -> list[str]:
    """Specs (``lab:<run-id>/<variant>``) of every stored run's learned tables, newest first."""
    store = store or RunStore()
    return [f"{PREFIX}{s.run_id}/{v}" for s in store.list() for v in s.learned_variants]
