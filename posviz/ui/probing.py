"""The Probing and Position-through-layers pages' glue: cached probes that queue for a job slot
when large (:mod:`posviz.analysis.heavy_probes`), saying what they wait for (as every heavy
computation does: :func:`posviz.jobs.queue_wait_text`) and their progress, and the results table."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from posviz import jobs
from posviz.analysis.heavy_probes import queued_layer_probe, queued_probe
from posviz.analysis.probe_numbers import Reports
from posviz.analysis.probes import ProbeReport
from posviz.jobs import JobCancelled
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone
from posviz.ui.display import user_errors
from posviz.ui.model_handles import loaded_model
from posviz.ui.text import safe_md


@cached_data()
def probe_report(
    matrix: np.ndarray,
    *,
    _on_wait: Callable[[int], None] | None = None,
    _should_stop: Callable[[], bool] | None = None,
    _progress: Callable[[float, str], None] | None = None,
    **options: Any,
) -> ProbeReport:
    """:func:`posviz.analysis.heavy_probes.queued_probe` with its ``options`` (train, test, folds,
    alpha, seed, labels, hold_out), cached (a cached result never queues).

    Arguments starting with ``_`` are not part of the cache key.
    """
    return queued_probe(
        matrix, on_wait=_on_wait, should_stop=_should_stop, progress=_progress, **options
    )


@contextlib.contextmanager
def queued(what: str, about: str) -> Iterator[tuple[Any, Callable[[int], None]]]:
    """A slot (for the job's progress) and an ``on_wait(position)`` saying in it what ``what``
    waits for; cleared when done. The job is ``about`` to those queued behind it. A job given up
    because the browser left stops the script: nobody is there to show it to."""
    slot = st.empty()

    def on_wait(position: int) -> None:
        slot.info(jobs.queue_wait_text(position, what=what))

    try:
        with jobs.described(about):
            yield slot, on_wait
    except JobCancelled:
        st.stop()
    finally:
        slot.empty()


def run_probe_reports(
    matrices: dict[str, tuple[np.ndarray, np.ndarray | None]], **options: Any
) -> Reports:
    """Probe each named ``(matrix, labels)`` beside its random table (``options``: train, test,
    folds, alpha, seed and hold_out, as for :func:`probe_report`), showing queue and progress.

    A probe that waits for a job slot says what runs ahead of it and when it should start; a
    running one shows a progress bar (both disappear when it is done). Errors are shown per
    table (``user_errors``).
    """
    reports = []
    for index, (name, (matrix, labels)) in enumerate(matrices.items()):
        shown = safe_md(name)
        about = f"the probing page's large probe of {shown}"
        with user_errors(name), queued(f"The large probe of {shown}", about) as (slot, on_wait):

            def progress(fraction: float, what: str, index: int = index, slot: Any = slot) -> None:
                slot.progress(
                    (index + fraction) / len(matrices),
                    text=f"Table {index + 1} of {len(matrices)}: {what}",
                )

            report = probe_report(
                matrix,
                labels=labels,
                _on_wait=on_wait,
                _should_stop=this_session_gone,
                _progress=progress,
                **options,
            )
            reports.append((name, report))
    return reports


@cached_data()
def layer_probe(
    model_id: str,
    text: str,
    window: int,
    zero_positions: bool,
    _on_wait: Callable[[int], None] | None = None,
    _should_stop: Callable[[], bool] | None = None,
) -> pd.DataFrame:
    """:func:`posviz.analysis.heavy_probes.queued_layer_probe` of the bundled model
    (``model_id == "bundled"``) or a hub model, cached."""
    label = "MiniLM-L6 (bundled)" if model_id == "bundled" else model_id
    return queued_layer_probe(
        loaded_model(model_id),
        text,
        window=window,
        zero_positions=zero_positions,
        label=label,
        on_wait=_on_wait,
        should_stop=_should_stop,
    )


def layer_probe_queued(model_id: str, text: str, window: int, zero_positions: bool) -> pd.DataFrame:
    """:func:`layer_probe`, saying while it waits what runs ahead of it and when it should start."""
    shown = "MiniLM-L6 (bundled)" if model_id == "bundled" else safe_md(model_id)
    with queued("This probe", f"a probe of {shown} through its layers") as (_slot, on_wait):
        return layer_probe(
            model_id, text, window, zero_positions, _on_wait=on_wait, _should_stop=this_session_gone
        )
