"""The Probing and Position-through-layers pages' glue: cached probes that queue for a job slot
when large (:mod:`posviz.analysis.heavy_probes`), with their place in the queue and their
progress shown, and the results table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from posviz.analysis.headlines import split_verdicts
from posviz.analysis.heavy_probes import queued_layer_probe, queued_probe
from posviz.analysis.probe_views import Reports, probe_results_frame
from posviz.analysis.probes import ProbeReport
from posviz.jobs import JobCancelled
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone
from posviz.ui.display import user_errors
from posviz.ui.model_handles import loaded_model
from posviz.ui.text import safe_md


@cached_data()
def probe_report(
    matrix: np.ndarray,
    *,
    train: str,
    test: str,
    folds: int,
    alpha: float | str,
    seed: int,
    labels: np.ndarray | None = None,
    hold_out: str | None = "positions",
    _on_wait: Callable[[int], None] | None = None,
    _should_stop: Callable[[], bool] | None = None,
    _progress: Callable[[float, str], None] | None = None,
) -> ProbeReport:
    """:func:`posviz.analysis.heavy_probes.queued_probe`, cached (a cached result never queues).

    Arguments starting with ``_`` are not part of the cache key.
    """
    return queued_probe(
        matrix,
        train=train,
        test=test,
        folds=folds,
        alpha=alpha,
        seed=seed,
        labels=labels,
        hold_out=hold_out,
        on_wait=_on_wait,
        should_stop=_should_stop,
        progress=_progress,
    )


def queue_note(note: Any, what: str) -> Callable[[int], None]:
    """An ``on_wait(position)`` that shows ``what`` waits at that place in the job queue
    (0: the same probe is being computed for another session; this one waits for its result)."""

    def waiting(position: int) -> None:
        if not position:
            note.info(f"{what} is being computed for another visitor; its result shows here.")
            return
        note.info(
            f"{what} waits for a free slot — place {position} in the queue "
            f"({settings().max_jobs} run at once on this server)."
        )

    return waiting


def run_probe_reports(
    matrices: dict[str, tuple[np.ndarray, np.ndarray | None]],
    *,
    train: str,
    test: str,
    folds: int,
    alpha: float | str,
    seed: int,
    hold_out: str | None,
) -> Reports:
    """Probe each named ``(matrix, labels)`` beside its random table, showing queue and progress.

    A probe that waits for a job slot shows its place in the queue; a running one shows a
    progress bar (both disappear when it is done). Errors are shown per table (``user_errors``).
    """
    reports = []
    for index, (name, (matrix, labels)) in enumerate(matrices.items()):
        note, bar = st.empty(), st.empty()

        def progress(
            fraction: float, what: str, index: int = index, bar: Any = bar, note: Any = note
        ) -> None:
            note.empty()
            bar.progress(
                (index + fraction) / len(matrices),
                text=f"Table {index + 1} of {len(matrices)}: {what}",
            )

        with user_errors(name):
            try:
                report = probe_report(
                    matrix,
                    train=train,
                    test=test,
                    folds=folds,
                    alpha=alpha,
                    seed=seed,
                    labels=labels,
                    hold_out=hold_out,
                    _on_wait=queue_note(note, f"{safe_md(name)}: a large probe"),
                    _should_stop=this_session_gone,
                    _progress=progress,
                )
            except JobCancelled:
                st.stop()  # the browser left while queued: nobody is there to show it to
            finally:
                note.empty()
                bar.empty()
            reports.append((name, report))
    return reports


def show_probe_results(reports: Reports) -> None:
    """The results table (numbers only: a sentence in a cell is cut) and each verdict below it."""
    frame, verdicts = split_verdicts(probe_results_frame(reports))
    st.dataframe(frame, hide_index=True, width="stretch")
    st.markdown("\n".join(f"- {safe_md(line, max_len=400)}" for line in verdicts))


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
    """:func:`layer_probe` with its place in the job queue shown while it waits."""
    note = st.empty()
    try:
        return layer_probe(
            model_id,
            text,
            window,
            zero_positions,
            _on_wait=queue_note(note, "This probe"),
            _should_stop=this_session_gone,
        )
    except JobCancelled:
        st.stop()  # the browser left while queued
    finally:
        note.empty()
