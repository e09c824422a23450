"""Probes run as heavy jobs: a big one waits for a ``posviz.jobs.job_slot("probe")`` and every one
runs under :func:`posviz.governor.heavy_work` (BLAS threads limited per job), so a few huge probes
cannot slow every other session of a server.

``on_wait(position)`` is called while a probe waits in the queue and ``should_stop()`` is polled
there (see :func:`posviz.jobs.job_slot`); both are optional.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from posviz.analysis.layer_numbers import labelled_scores
from posviz.analysis.layers import layer_position_probe
from posviz.analysis.probes import ProbeReport, probe_with_control
from posviz.governor import heavy_work
from posviz.jobs import job_slot
from posviz.models import LoadedModel, zeroed_position_copy

OnWait = Callable[[int], None]
ShouldStop = Callable[[], bool]

HEAVY_PROBE_CELLS = 1024 * 1024
"""Probes of more positions × width than this (MiniLM's 512 × 384 is 0.2 M) wait for a
``posviz.jobs.job_slot("probe")``, so a few huge probes cannot slow every other page."""


def queued_probe(
    matrix: np.ndarray,
    *,
    train: str,
    test: str,
    folds: int,
    alpha: float | str,
    seed: int,
    labels: np.ndarray | None = None,
    hold_out: str | None = "positions",
    on_wait: OnWait | None = None,
    should_stop: ShouldStop | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> ProbeReport:
    """:func:`posviz.analysis.probes.probe_with_control`: the probe beside a random table.

    ``hold_out`` is the order probe's protocol (``None``: no order probe). A probe larger than
    :data:`HEAVY_PROBE_CELLS` first waits for a job slot.

    Raises:
        posviz.jobs.JobCancelled: ``should_stop()`` turned true while queued.
        ValueError: bad sizes or settings (from the probe).
    """

    def run() -> ProbeReport:
        return probe_with_control(
            matrix,
            train=train,
            test=test,
            folds=folds,
            alpha=alpha,
            seed=seed,
            positions=labels,
            relative=hold_out is not None,
            hold_out=hold_out or "positions",
            progress=progress,
        )

    if np.size(matrix) <= HEAVY_PROBE_CELLS:
        with heavy_work(renice=False):  # small: no queue, but no thread storm either
            return run()
    with job_slot("probe", on_wait=on_wait, should_stop=should_stop), heavy_work():
        return run()


def queued_layer_probe(
    loaded: LoadedModel,
    text: str,
    *,
    window: int,
    zero_positions: bool,
    label: str,
    on_wait: OnWait | None = None,
    should_stop: ShouldStop | None = None,
) -> pd.DataFrame:
    """Per-layer probe scores of ``loaded`` on ``text`` (``zero_positions``: of a copy whose
    position table is zeroed), labelled ``label`` (plus ", positions zeroed").

    A forward pass over every window and a ridge probe per layer, always in a job slot.

    Raises:
        posviz.jobs.JobCancelled: ``should_stop()`` turned true while queued.
        ValueError: bad text or window, or a model without an additive position table to zero.
    """
    with job_slot("probe", on_wait=on_wait, should_stop=should_stop), heavy_work():
        model = zeroed_position_copy(loaded.model) if zero_positions else loaded.model
        result = layer_position_probe(model, loaded.tokenizer, text, window=window)
    return labelled_scores(result, model=label + (", positions zeroed" if zero_positions else ""))
