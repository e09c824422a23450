"""Cached wrappers for the experiment pages: model handles once per process, results per input.

``posviz.ui.cache.cached_resource`` holds models and the big read-only arrays (shared, never
mutated); ``posviz.ui.cache.cached_data`` holds results, keyed by their arguments' values and
bounded by the process-wide byte budget of ``posviz.settings``. Heavy computations (large
probes, layer probes) wait for a ``posviz.jobs.job_slot`` on a cache miss, showing their place
in the queue.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from posviz.analysis.add_concat import (
    concat_hypothesis,
    dimension_magnitudes,
    last_dimensions_table,
    principal_axes,
    word_position_cloud,
)
from posviz.analysis.embedding_lookup import lookup_vs_onehot
from posviz.analysis.layers import layer_position_probe
from posviz.analysis.permutation import permutation_test
from posviz.analysis.probes import probe_with_control
from posviz.charts.experiments import (
    cloud_chart,
    magnitude_chart,
    predicted_vs_actual_chart,
    probe_error_chart,
)
from posviz.charts.figure import Figure
from posviz.encodings.sinusoidal import sinusoidal
from posviz.jobs import JobCancelled, job_slot
from posviz.models import (
    additive_position_modules,
    bundled_position_embeddings,
    bundled_word_embeddings,
    load_bundled_model,
    load_hub_model,
)
from posviz.models import bundled_tokenizer as load_bundled_tokenizer
from posviz.settings import settings
from posviz.ui.cache import cached_data, cached_resource
from posviz.ui.display import user_errors
from posviz.ui.text import safe_md


@cached_resource(show_spinner="Loading the bundled MiniLM model (once)…")
def bundled_model() -> Any:
    """The bundled MiniLM (``posviz.models.LoadedModel``), SHA-256 verified, loaded once."""

    return load_bundled_model()


@cached_resource(show_spinner="Loading the model from the Hugging Face hub/cache…", max_entries=2)
def hub_model(model_id: str) -> Any:
    """A hub model (``LoadedModel``); at most two are kept in memory."""

    return load_hub_model(model_id)


@cached_resource(show_spinner=False)
def bundled_arrays() -> tuple[np.ndarray, np.ndarray]:
    """``(word_embeddings (30522, 384), position_embeddings (512, 384))`` of the bundled model."""

    return bundled_word_embeddings(), bundled_position_embeddings()


@cached_resource(show_spinner=False)
def bundled_tokenizer() -> Any:
    """The bundled WordPiece tokenizer (no padding/truncation), loaded once."""
    tokenizer = load_bundled_tokenizer()
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@cached_resource(show_spinner="Decomposing the word-embedding table (once)…")
def bundled_word_axes() -> tuple[np.ndarray, np.ndarray]:
    """Principal axes and explained-variance fractions of MiniLM's word embeddings."""

    with _blas_threads_per_job(renice=False):
        return principal_axes(bundled_arrays()[0])


@cached_data()
def concat_report(table: str, n_positions: int, fraction: float) -> pd.DataFrame:
    """``concat_hypothesis`` of a position table against MiniLM's word embeddings, as a frame.

    ``table``: ``"learned"`` (MiniLM's rows ``0…n−1``), ``"sinusoid"`` (width 384) or ``"random"``
    (Gaussian with the learned table's std, seed 0).
    """

    words, learned = bundled_arrays()
    if table == "learned":
        matrix = learned[:n_positions].astype(np.float64)
    elif table == "sinusoid":
        matrix = sinusoidal(n_positions, words.shape[1])
    else:
        matrix = np.random.default_rng(0).normal(0, learned.std(), (n_positions, words.shape[1]))
    axes = bundled_word_axes()
    with _blas_threads_per_job(renice=False):
        report = concat_hypothesis(matrix, words, fraction=fraction, word_axes=axes)
    return report.frame()


HEAVY_PROBE_CELLS = 1024 * 1024
"""Probes of more positions × width than this (MiniLM's 512 × 384 is 0.2 M) wait for a
``posviz.jobs.job_slot("probe")``, so a few huge probes cannot slow every other page (#13.4)."""

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter: Any = None


NICE_INCREMENT = 10  # heavy work runs this much "nicer" than page rendering (Linux, per thread)


def _lower_this_thread_priority() -> None:
    """Lower the OS scheduling priority of the calling thread only (a no-op where unsupported).

    On Linux each thread is its own task, so ``setpriority(PRIO_PROCESS, native thread id)``
    renices just this thread: the CPU goes to page rendering first and the heavy job takes the
    rest. Streamlit gives a session a new script thread once a run has finished, so other pages
    never inherit it (only a rerun of the same tab asked for during the job may run in this thread
    too); an unprivileged process cannot raise a priority again, so it is not restored.
    """
    if not hasattr(os, "setpriority") or sys.platform != "linux":
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + NICE_INCREMENT)
    except OSError:
        return  # a sandbox that forbids it: the job runs at normal priority


@contextmanager
def _blas_threads_per_job(*, renice: bool = True) -> Iterator[None]:
    """Limit BLAS and OpenMP to ``(cpu_count − 1) // max_jobs`` threads (≥ 1) while heavy work runs.

    One core stays free for the pages everyone else is loading. OpenBLAS's thread count is
    process-wide, so one limit (the same for every job) is set by the first job in and restored
    by the last one out. Without it each probe starts one BLAS thread per core, and a few at once
    oversubscribe the CPU: on the shared 2-core development machine a 5000 × 384 SVD took 13.7 s
    with two BLAS threads and 0.23 s with one. ``renice``: also lower this thread's priority.
    """
    global _blas_users, _blas_limiter
    # Lazy (heavy, only needed by heavy work): threadpoolctl comes with scikit-learn. It limits
    # only the libraries loaded when it is called, so scikit-learn's OpenMP runtime (its logistic
    # loss runs one thread per core) is loaded first.
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_limits

    threads = max(1, ((os.cpu_count() or 1) - 1) // max(1, settings().max_jobs))
    if renice:
        _lower_this_thread_priority()
    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = threadpool_limits(limits=threads)  # BLAS and OpenMP
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_limiter is not None:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


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
) -> Any:
    """``probe_with_control`` (a ``ProbeReport``): the probe beside a random table, with spreads.

    ``hold_out`` is the order probe's protocol (``None``: no order probe). A probe larger than
    :data:`HEAVY_PROBE_CELLS` first waits for a ``job_slot("probe")`` (``_on_wait(position)``
    while queued, ``_should_stop()`` polled) and runs with BLAS limited per job. Arguments
    starting with ``_`` are not part of the cache key; a cached result never queues.

    Raises:
        posviz.jobs.JobCancelled: ``_should_stop()`` turned true while queued.
        ValueError: bad sizes or settings (from the probe).
    """

    def run() -> Any:
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

    if np.shape(matrix)[0] * np.shape(matrix)[1] <= HEAVY_PROBE_CELLS:
        with _blas_threads_per_job(renice=False):  # small: no queue, but no thread storm either
            return run()
    with (
        job_slot("probe", on_wait=_on_wait, should_stop=_should_stop),
        _blas_threads_per_job(),
    ):
        return run()


def run_probe_reports(
    matrices: dict[str, tuple[np.ndarray, np.ndarray | None]],
    *,
    train: str,
    test: str,
    folds: int,
    alpha: float | str,
    seed: int,
    hold_out: str | None,
) -> list[tuple[str, Any]]:
    """Probe each named ``(matrix, labels)`` beside its random table, showing queue and progress.

    A probe that waits for a job slot shows its place in the queue; a running one shows a
    progress bar (both disappear when it is done). Errors are shown per table (``user_errors``).
    """
    reports = []
    for index, (name, (matrix, labels)) in enumerate(matrices.items()):
        note, bar = st.empty(), st.empty()

        def waiting(position: int, name: str = name, note: Any = note) -> None:
            note.info(
                f"{safe_md(name)}: a large probe waits for a free slot — place {position} in the "
                f"queue ({settings().max_jobs} run at once on this server)."
            )

        def progress(
            fraction: float, what: str, index: int = index, bar: Any = bar, note: Any = note
        ) -> None:
            note.empty()
            done = (index + fraction) / len(matrices)
            bar.progress(done, text=f"Table {index + 1} of {len(matrices)}: {what}")

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
                    _on_wait=waiting,
                    _should_stop=session_gone,
                    _progress=progress,
                )
            except JobCancelled:
                st.stop()  # the browser left while queued: nobody is there to show it to
            finally:
                note.empty()
                bar.empty()
            reports.append((name, report))
    return reports


def probe_results_frame(reports: list[tuple[str, Any]]) -> pd.DataFrame:
    """One :func:`probe_row` per table, for ``st.dataframe``."""
    return pd.DataFrame([probe_row(name, report) for name, report in reports])


MAX_CHART_POINTS = 1500  # per table, so big tables keep a light chart


def probe_figures(reports: list[tuple[str, Any]]) -> tuple[Figure, Figure]:
    """Predicted-vs-actual and error-by-position Figures (charts and exports from one frame)."""
    frames = []
    for name, report in reports:
        frame = report.result.frame()
        frame["table"] = name
        if len(frame) > MAX_CHART_POINTS:
            frame = frame.iloc[np.linspace(0, len(frame) - 1, MAX_CHART_POINTS).astype(int)]
        frames.append(frame)
    both = pd.concat(frames, ignore_index=True)
    return (
        Figure(
            predicted_vs_actual_chart(both),
            both[["position", "predicted"]].to_numpy(),
            "probe_predictions",
        ),
        Figure(probe_error_chart(both), both[["position", "abs_error"]].to_numpy(), "probe_errors"),
    )


def interpolation_threshold(
    reports: list[tuple[str, Any]], matrices: dict[str, tuple[np.ndarray, Any]]
) -> list[str]:
    """Tables whose OLS fit has about as many training rows as columns (double descent)."""
    names = []
    for name, report in reports:
        width = np.shape(matrices[name][0])[1]
        ols = all(a == 0.0 for a in report.result.alphas)
        if ols and 0.8 * width <= report.result.n_train <= 1.25 * width:
            names.append(name)
    return names


def session_gone() -> bool:
    """Whether this script's browser session has closed (a queued probe then leaves the queue)."""
    ctx = get_script_run_ctx()
    if ctx is None or not st.runtime.exists():
        return False
    return not st.runtime.get_instance().is_active_session(ctx.session_id)


def _sig(value: float) -> str:
    """Three significant digits, no exponent for everyday sizes (21.5, 182, 0.0712)."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    digits = max(0, 2 - int(np.floor(np.log10(abs(value)))))
    return f"{value:.{min(digits, 6)}f}"


def spread_text(spread: Any) -> str:
    """``"21.5 ± 2.56"`` for a ``posviz.analysis.evidence.Spread`` (mean, then std)."""
    if spread.n < 2:
        return f"{_sig(spread.mean)} (one value, no spread)"
    return f"{_sig(spread.mean)} ± {_sig(spread.std)}"


def probe_row(name: str, report: Any) -> dict[str, Any]:
    """One results row: the probe's numbers each beside the random-table control's."""
    result = report.result
    row: dict[str, Any] = {
        "table": name,
        "protocol": result.protocol
        + (", rounded" if result.rounded else "")
        + (" (in-sample: a fit, not a held-out score)" if result.in_sample else ""),
        "train rows": result.n_train,
        "MAE (positions)": spread_text(report.mae.value),
        "MAE, random table": spread_text(report.mae.control),
        "R²": round(result.r2, 4),
        "R², random table": round(report.control.r2, 4),
        "MAE verdict": report.mae.verdict(),
    }
    if report.order is not None:
        row["order error (chance 0.5)"] = spread_text(report.order.value)
        row["order error, random table"] = spread_text(report.order.control)
        row["order verdict"] = report.order.verdict()
    return row


@cached_data()
def permutation(sentence_a: str, sentence_b: str, layers: int | None, special_tokens: bool) -> Any:
    """``permutation_test`` on the bundled model (a frozen dataclass of arrays and a frame)."""

    loaded = bundled_model()
    return permutation_test(
        loaded.model,
        loaded.tokenizer,
        sentence_a,
        sentence_b,
        layers=layers,
        special_tokens=special_tokens,
    )


def _zeroed_copy(model: Any) -> Any:
    """A deep copy of ``model`` with its position table zeroed (the cached one stays untouched)."""
    import copy

    import torch

    clone = copy.deepcopy(model)
    _, position = additive_position_modules(clone)
    with torch.no_grad():
        position.weight.zero_()
    return clone


@cached_data()
def layer_probe(
    model_id: str,
    text: str,
    window: int,
    zero_positions: bool,
    _on_wait: Callable[[int], None] | None = None,
    _should_stop: Callable[[], bool] | None = None,
) -> pd.DataFrame:
    """Per-layer probe scores for the bundled model (``model_id == "bundled"``) or a hub model.

    A forward pass over every window and a ridge probe per layer: on a cache miss it waits for a
    ``job_slot("probe")`` (``_on_wait(position)`` while queued; ``_should_stop()`` polled).

    Raises:
        posviz.jobs.JobCancelled: ``_should_stop()`` turned true while queued.
        ValueError: bad text, window or model id.
    """

    loaded = bundled_model() if model_id == "bundled" else hub_model(model_id)
    with (
        job_slot("probe", on_wait=_on_wait, should_stop=_should_stop),
        _blas_threads_per_job(),
    ):
        model = _zeroed_copy(loaded.model) if zero_positions else loaded.model
        result = layer_position_probe(model, loaded.tokenizer, text, window=window)
    scores = result.scores.copy()
    short = "MiniLM-L6 (bundled)" if model_id == "bundled" else model_id
    scores["model"] = short + (", positions zeroed" if zero_positions else "")
    scores["train_tokens"] = result.n_train_tokens
    scores["test_tokens"] = result.n_test_tokens
    return scores


def layer_probe_queued(model_id: str, text: str, window: int, zero_positions: bool) -> Any:
    """:func:`layer_probe` with its place in the job queue shown while it waits."""
    note = st.empty()

    def waiting(position: int) -> None:
        note.info(
            f"Waiting for a free slot for heavy work: place {position} in the queue "
            f"({settings().max_jobs} run at once on this server)."
        )

    try:
        return layer_probe(
            model_id, text, window, zero_positions, _on_wait=waiting, _should_stop=session_gone
        )
    except JobCancelled:
        st.stop()  # the browser left while queued
    finally:
        note.empty()


# --------------------------------------------------------------------------- add vs concatenate


def word_pieces(word: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """MiniLM's WordPiece pieces of ``word`` and their ids (no special tokens)."""
    encoding = bundled_tokenizer().encode(word, add_special_tokens=False)
    return tuple(encoding.tokens), tuple(encoding.ids)


def concat_inputs(token_id: int, source: str, n_positions: int) -> tuple[np.ndarray, np.ndarray]:
    """``(word vector (384,), position table (n, 384))``: MiniLM's word row and its learned
    position rows ``0…n−1`` (``source="learned"``) or the 384-wide sinusoid."""

    words, learned = bundled_arrays()
    table = learned[:n_positions] if source == "learned" else sinusoidal(n_positions, 384)
    return words[token_id].astype(np.float64), np.asarray(table, dtype=np.float64)


def concat_sizes(word_vector: np.ndarray, table: np.ndarray) -> dict[str, float]:
    """``‖WE‖₂``, the mean over positions of ``‖PE[p]‖₂``, and the median per-dimension std of
    all 30 522 word rows (the words' scale)."""
    return {
        "word_norm": float(np.linalg.norm(word_vector)),
        "mean_position_norm": float(np.linalg.norm(table, axis=1).mean()),
        "word_std_median": float(np.median(bundled_arrays()[0].std(axis=0))),
    }


def cloud_figure(
    word_vector: np.ndarray, table: np.ndarray, *, view: str, dims: tuple[int, int], piece: str
) -> Figure:
    """The word moved by each position (``WE + PE[p]``), as a chart with its export."""

    cloud = word_position_cloud(word_vector, table, view=view, dims=dims)
    axes = ("PC 1", "PC 2") if view == "pca" else (f"dimension {dims[0]}", f"dimension {dims[1]}")
    title = f"{piece!r} + PE[p], p = 0…{table.shape[0] - 1}"  # a Vega title: plain text
    chart = cloud_chart(cloud, title=title, x_title=axes[0], y_title=axes[1])
    return Figure(chart, cloud[["x", "y"]].to_numpy(), "word_plus_position")


def magnitude_figure(word_vector: np.ndarray, table: np.ndarray) -> tuple[Figure, float, float]:
    """Per-dimension spread of PE and WE as a Figure, with the two medians."""

    magnitudes = dimension_magnitudes(table, bundled_arrays()[0], word_vector)
    figure = Figure(
        magnitude_chart(magnitudes),
        magnitudes.drop(columns="dimension").to_numpy(),
        "magnitudes",
    )
    return figure, float(magnitudes.pe_std.median()), float(magnitudes.we_std.median())


def concat_reports(n_positions: int, fraction: float) -> pd.DataFrame:
    """The subspace report of MiniLM's table beside the sinusoid and a random-table control."""
    kinds = {
        "MiniLM's learned position table": "learned",
        "sinusoid of the same width (384)": "sinusoid",
        "random Gaussian (control)": "random",
    }
    merged = None
    for name, kind in kinds.items():
        frame = concat_report(kind, n_positions, fraction).rename(columns={"value": name})
        merged = frame if merged is None else merged.assign(**{name: frame[name]})
    return merged


def last_dimensions_frame() -> pd.DataFrame:
    """tensor2tensor #1591's table for ``d_model = 512``, 128 positions, in both layouts."""

    rows = []
    for layout in ("interleaved", "tensor2tensor"):
        frame = last_dimensions_table(
            sinusoidal(128, 512, layout=layout), dims=(-1, -2, -16, -17, -128, -256)
        )
        frame.insert(0, "layout", layout)
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)


# --------------------------------------------------------------------------- nn.Embedding


def lookup_check(table: str, ids: tuple[int, ...]) -> Any:
    """``lookup_vs_onehot`` on MiniLM's learned table (``"learned"``) or the 512 × 384 sinusoid."""

    matrix = bundled_arrays()[1] if table == "learned" else sinusoidal(512, 384).astype(np.float32)
    return lookup_vs_onehot(matrix, list(ids))


def lookup_frame(check: Any, *, shown: int = 6) -> pd.DataFrame:
    """One row per looked-up id: the one-hot's column and sum, the first ``shown`` dimensions of
    the lookup and of the product side by side."""
    return pd.DataFrame(
        {
            "position": check.ids,
            "one-hot (nonzero column)": check.onehot.argmax(axis=1),
            "one-hot sum": check.onehot.sum(axis=1),
            **{f"lookup[{k}]": check.lookup[:, k] for k in range(shown)},
            **{f"product[{k}]": check.product[:, k] for k in range(shown)},
        }
    )


def layer_frames(scores: pd.DataFrame, zeroed: pd.DataFrame | None) -> pd.DataFrame:
    """The layer probe's scores, with the zeroed-position ablation's rows below when run."""
    return scores if zeroed is None else pd.concat([scores, zeroed], ignore_index=True)
