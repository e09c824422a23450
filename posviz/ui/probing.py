"""The Probing page's glue: cached probes that queue for a job slot when large, with their place
in the queue and their progress shown, and the charts of their predictions.

Heavy probes wait for a ``posviz.jobs.job_slot("probe")`` and run under
:func:`posviz.governor.heavy_work`, so a few huge probes cannot slow every other page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from posviz.analysis.headlines import Verdict, probe_hero_frame, probe_verdict, split_verdicts
from posviz.analysis.probe_views import Reports, probe_chart_frame, probe_results_frame
from posviz.analysis.probes import ProbeReport, probe_with_control
from posviz.charts.experiments import (
    evidence_chart,
    predicted_vs_actual_chart,
    probe_error_chart,
)
from posviz.charts.figure import Figure
from posviz.governor import heavy_work
from posviz.jobs import JobCancelled, job_slot
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone
from posviz.ui.display import user_errors
from posviz.ui.text import safe_md

HEAVY_PROBE_CELLS = 1024 * 1024
"""Probes of more positions × width than this (MiniLM's 512 × 384 is 0.2 M) wait for a
``posviz.jobs.job_slot("probe")``, so a few huge probes cannot slow every other page."""


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
    """``probe_with_control``: the probe beside a random table, with spreads.

    ``hold_out`` is the order probe's protocol (``None``: no order probe). A probe larger than
    :data:`HEAVY_PROBE_CELLS` first waits for a ``job_slot("probe")`` (``_on_wait(position)``
    while queued, ``_should_stop()`` polled) and runs with BLAS limited per job. Arguments
    starting with ``_`` are not part of the cache key; a cached result never queues.

    Raises:
        posviz.jobs.JobCancelled: ``_should_stop()`` turned true while queued.
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
            progress=_progress,
        )

    if np.size(matrix) <= HEAVY_PROBE_CELLS:
        with heavy_work(renice=False):  # small: no queue, but no thread storm either
            return run()
    with job_slot("probe", on_wait=_on_wait, should_stop=_should_stop), heavy_work():
        return run()


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


def probe_figures(reports: Reports) -> tuple[Figure, Figure]:
    """Predicted-vs-actual and error-by-position Figures (charts and exports from one frame)."""
    both = probe_chart_frame(reports)
    return (
        Figure(
            predicted_vs_actual_chart(both),
            both[["position", "predicted"]].to_numpy(),
            "probe_predictions",
        ),
        Figure(probe_error_chart(both), both[["position", "abs_error"]].to_numpy(), "probe_errors"),
    )


def probe_hero(reports: Reports) -> tuple[Verdict, Figure]:
    """The page's verdict (the first table's probe against its control) and the hero chart."""
    name, report = reports[0]
    frame = probe_hero_frame(reports)
    chart = evidence_chart(
        frame,
        x_title="mean absolute error (positions)",
        title="How far off is the probe?",
        subtitle="mean absolute error, lower is better",
    )
    return probe_verdict(name, report), Figure(chart, frame[["mean", "low", "high"]], "probe_mae")


def show_probe_results(reports: Reports) -> None:
    """The results table (numbers only: a sentence in a cell is cut) and each verdict below it."""
    frame, verdicts = split_verdicts(probe_results_frame(reports))
    st.dataframe(frame, hide_index=True, width="stretch")
    st.markdown("\n".join(f"- {safe_md(line, max_len=400)}" for line in verdicts))
