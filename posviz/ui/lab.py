"""The position lab's pages: pick a question, set a run up, train it live, read the answer.

A question page is one call, ``question_page("learned")``. Its settings live in the URL under
``lab_<question>_…`` (e.g. ``?lab_learned_steps=300&lab_learned_run=<run-id>``): a link to a
finished run renders it at once from the store, without training. Training runs in a worker
thread (:mod:`posviz.ui.lab_runs`) whose ``run_question`` holds a ``posviz.jobs.job_slot("lab")``
(bounded concurrency, a queue whose position the page shows); the page polls it
with ``st.fragment(run_every=…)`` and never lets the worker touch Streamlit.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import streamlit as st

from posviz.charts import lab as lab_charts
from posviz.jobs import JobCancelled
from posviz.lab import (
    QUESTIONS,
    LabConfig,
    LabResult,
    LabStopped,
    Question,
    RunStore,
)
from posviz.lab.config import MAX_BATCH, MAX_SEEDS
from posviz.references import cite
from posviz.settings import settings
from posviz.ui import lab_runs, lab_views
from posviz.ui.cache import cached_data
from posviz.ui.display import user_errors
from posviz.ui.state import url_int_list, url_number
from posviz.ui.text import safe_md

#: held-out sequences per seed and length (LabConfig's own bound).
MAX_EVAL_BATCH = 4096
#: seconds between two polls of a running job (also the heartbeat interval).
POLL_S = 1.0


def prefix(question_id: str) -> str:
    """The URL/widget key prefix of a question's page, e.g. ``"lab_learned_"``."""
    return f"lab_{question_id}_"


def page_path(question_id: str) -> str:
    """The page script of a question (relative to the repository root)."""
    return f"pages/lab_{question_id}.py"


# --------------------------------------------------------------------------- the question


def question_intro(question: Question) -> None:
    """The question in plain words, its sources, and what a run trains."""
    st.markdown(f"> {question.question}")
    st.markdown("**Sources:** " + " · ".join(cite(key) for key in question.source_keys))
    st.markdown(f"**How it is measured.** {question.explain}")


def _lengths(config: LabConfig) -> str:
    if config.min_len == config.max_len:
        return str(config.max_len)
    return f"{config.min_len}–{config.max_len} ({config.length_dist})"


def _variant_table(question: Question, config: LabConfig) -> pd.DataFrame:
    rows = []
    for variant in question.variants:
        run = variant.config_for(config)
        role = "control" if variant.id == question.control else ""
        rows.append(
            {
                "variant": variant.label,
                "role": role,
                "attention": variant.model.kind,
                "positions": variant.model.scheme,
                "injection": variant.model.injection,
                "task": run.task,
                "training lengths": _lengths(run),
            }
        )
    return pd.DataFrame(rows)


def what_is_trained(question: Question, config: LabConfig) -> None:
    """Variants, task, seeds and steps of the run the Run button starts."""
    st.markdown("**What a run trains**")
    st.dataframe(_variant_table(question, config), hide_index=True, width="stretch")
    st.caption(
        f"Each variant: {config.seeds} seeds × {config.steps} steps of {config.batch} sequences, "
        f"width {config.width}, {config.heads} heads, {config.layers} layers, learning rate "
        f"{config.lr:g}; held-out evaluation on {config.eval_batch} fresh sequences per seed of "
        f"length {', '.join(map(str, config.eval_lengths))}."
    )


# --------------------------------------------------------------------------- settings


def caps_caption() -> None:
    """What this server allows (the hosted profile is tighter)."""
    caps = settings()
    profile = "hosted" if caps.hosted else "local"
    st.caption(
        f"This server ({profile} profile) allows at most {caps.lab_max_steps:,} steps "
        f"(POSVIZ_LAB_MAX_STEPS), width {caps.lab_max_width} (POSVIZ_LAB_MAX_WIDTH) and "
        f"sequences of {caps.lab_max_len} tokens (POSVIZ_LAB_MAX_LEN); "
        f"{caps.max_jobs} training run(s) at once (POSVIZ_MAX_JOBS), the rest wait in a queue."
    )


def _linked_result(question: Question, key_prefix: str) -> LabResult | None:
    """The stored run named by the link's ``<prefix>run`` parameter (first script run only)."""
    marker = f"{key_prefix}linked"
    if marker in st.session_state:
        return st.session_state[marker]
    st.session_state[marker] = None
    raw = st.query_params.get(f"{key_prefix}run")
    if not raw:
        return None
    store = RunStore()
    try:
        result = stored_result(str(store.root), raw) if store.exists(raw) else None
    except ValueError as exc:
        st.warning(f"Link parameter `{key_prefix}run` ignored: {safe_md(str(exc), max_len=300)}")
        return None
    if result is None:
        st.info(
            f"No stored run {safe_md(raw, max_len=40)} on this server (runs are kept per server): "
            "the settings below come from the link; press **Run** to train them."
        )
    elif result.question_id != question.id:
        st.warning(
            f"Run {safe_md(raw, max_len=40)} answers another question "
            f"({safe_md(result.question_id, max_len=40)}); open it on that question's page."
        )
        result = None
    st.session_state[marker] = result
    return result


def run_settings(question: Question, *, key_prefix: str, base: LabConfig) -> LabConfig | None:
    """URL-synced settings of a run, seeded from ``base``; None (with a message) if invalid."""
    caps = settings()
    with st.expander("Settings (the preset's defaults answer the question)", expanded=False):
        cols = st.columns(4)
        values: dict[str, object] = {}
        numeric = [
            ("seeds", "Seeds", 1, MAX_SEEDS, base.seeds),
            ("steps", "Steps", 1, caps.lab_max_steps, base.steps),
            ("width", "Width", 4, caps.lab_max_width, base.width),
            ("heads", "Heads", 1, 64, base.heads),
            ("layers", "Layers", 1, 8, base.layers),
            ("batch", "Batch", 1, MAX_BATCH, base.batch),
            ("min_len", "Shortest training length", 2, caps.lab_max_len, base.min_len),
            ("max_len", "Longest training length", 2, caps.lab_max_len, base.max_len),
            ("eval_batch", "Held-out sequences", 1, MAX_EVAL_BATCH, base.eval_batch),
        ]
        for i, (name, label, lo, hi, default) in enumerate(numeric):
            with cols[i % 4]:
                values[name] = int(
                    url_number(
                        label,
                        key=f"{key_prefix}{name}",
                        min_value=lo,
                        max_value=hi,
                        default=min(max(int(default), lo), hi),
                    )
                )
        with cols[1]:
            values["lr"] = float(
                url_number(
                    "Learning rate",
                    key=f"{key_prefix}lr",
                    min_value=1e-5,
                    max_value=1.0,
                    default=float(base.lr),
                    step=1e-4,
                    format="%.4f",
                )
            )
        with cols[2]:
            lengths = url_int_list(
                "Evaluation lengths",
                key=f"{key_prefix}eval",
                default=base.eval_lengths,
                min_value=2,
                max_value=caps.lab_max_len,
                max_items=8,
                help="Held-out sequences of these lengths; above the longest training length "
                "tests extrapolation.",
            )
            values["eval_lengths"] = tuple(lengths) or base.eval_lengths
    with user_errors("Settings"):
        config = dataclasses.replace(base, **values)
        for variant in question.variants:
            variant.config_for(config)  # a variant's own lengths must fit too
        return config
    return None


# --------------------------------------------------------------------------- the store


@cached_data()
def stored_result(root: str, run_id: str) -> LabResult | None:
    """``RunStore(root).load(run_id)``, cached (stored runs are write-once).

    Call only for a run that exists (a miss would be cached). Raises ``ValueError`` for a
    corrupted entry.
    """
    return RunStore(root).load(run_id)


def find_result(store: RunStore, run_id: str) -> LabResult | None:
    """The stored run, or None; a corrupted entry is reported and treated as missing."""
    try:
        if store.exists(run_id):
            return stored_result(str(store.root), run_id)
    except ValueError as exc:
        st.warning(safe_md(str(exc), max_len=400))
    return None


# --------------------------------------------------------------------------- running


def _train(job: lab_runs.LabJob) -> None:
    """The worker thread: train (``run_question`` waits for a ``job_slot("lab")`` itself and
    reports its queue position as progress), then record how it ended. Never touches st."""
    from posviz.lab import run_question  # lazy: torch loads only when something trains

    try:
        result = run_question(
            job.question_id,
            config=job.config,
            store=RunStore(job.store_root),
            on_progress=job.on_progress,
            should_stop=job.should_stop,
        )
    except (LabStopped, JobCancelled):
        view = job.snapshot()
        if view.total_steps:
            where = f" ({view.variant})." if view.variant else "."
            reached = f" It had reached step {view.step:,} of {view.total_steps:,}{where}"
        elif view.state == lab_runs.QUEUED:
            reached = " It was still waiting for a training slot."
        else:
            reached = " It stopped within its first steps."
        why = view.message or "Stopped: the Stop button was pressed."
        job.finish(lab_runs.STOPPED, message=why + reached)
    except ValueError as exc:
        job.finish(lab_runs.FAILED, message=str(exc))
    else:
        job.finish(lab_runs.DONE, result=result)
    finally:
        if not job.finished:  # an unexpected error: the thread's excepthook logs it
            job.finish(lab_runs.FAILED, message="The run failed unexpectedly; see the server log.")


def start_run(question: Question, config: LabConfig, run_id: str, store: RunStore) -> None:
    """Start (or join) the background run of ``config``."""
    lab_runs.start_job(
        run_id,
        question.id,
        config,
        store_root=str(store.root),
        session_id=lab_runs.current_session_id(),
        work=_train,
    )


def _progress_text(view: lab_runs.JobView) -> str:
    if view.state == lab_runs.STARTING:
        return "Starting…"
    if view.state == lab_runs.QUEUED:
        return (
            f"Waiting for a free training slot: position {view.queue_position} in the queue "
            "(other runs are training; this server trains a few at a time)."
        )
    eta = f", about {view.eta_s:.0f} s left" if view.eta_s is not None else ""
    current = f" — {view.variant}" if view.variant else ""
    return (
        f"Training{current}: step {view.step:,} of {view.total_steps:,}; "
        f"{view.elapsed_s:.0f} s so far{eta}."
    )


def _curve_frame(view: lab_runs.JobView) -> pd.DataFrame:
    rows = [
        {"variant": variant, "step": step, "loss": loss}
        for variant, curve in view.curves.items()
        for step, loss in curve
    ]
    return pd.DataFrame(rows, columns=["variant", "step", "loss"])


def progress_fraction(elapsed_s: float, eta_s: float | None) -> float:
    """Share of the run done, ``elapsed / (elapsed + eta)``, always a finite number in [0, 1].

    No estimate yet (``eta_s`` None, NaN, infinite, or nothing elapsed) gives 0, never NaN/inf
    (``st.progress`` refuses those).
    """
    if eta_s is None or not (math.isfinite(elapsed_s) and math.isfinite(eta_s)):
        return 0.0
    total = elapsed_s + eta_s
    if total <= 0:
        return 0.0
    return min(max(elapsed_s / total, 0.0), 1.0)


@st.fragment(run_every=POLL_S)
def watch(store_root: str, run_id: str, key_prefix: str) -> None:
    """Live progress of a running job, refreshed every :data:`POLL_S` seconds, with Stop."""
    job = lab_runs.get_job(store_root, run_id)
    if job is None:
        return
    job.beat(lab_runs.current_session_id())
    view = job.snapshot()
    if view.state in (lab_runs.DONE, lab_runs.STOPPED, lab_runs.FAILED):
        st.rerun(scope="app")  # the whole page now shows the result (or why there is none)
    st.progress(progress_fraction(view.elapsed_s, view.eta_s), text=_progress_text(view))
    if st.button("Stop", key=f"{key_prefix}stop", icon=":material/stop:"):
        job.stop_event.set()
        st.info("Stopping after the current step…")
    frame = _curve_frame(view)
    if len(frame):
        # The live chart has no Export menu: it changes every second; the finished run's
        # charts below carry exports of the stored curves.
        st.altair_chart(lab_charts.loss_curve_chart(frame, title="Training loss (live)"))


def run_controls(
    question: Question, config: LabConfig, run_id: str, store: RunStore, *, key_prefix: str
) -> None:
    """The Run button, or the live view of the run in progress, or how the last one ended."""
    job = lab_runs.get_job(str(store.root), run_id)
    if job is not None and not job.finished:
        watch(str(store.root), run_id, key_prefix)
        return
    if job is not None:
        view = job.snapshot()
        if view.state == lab_runs.FAILED:
            st.error(f"The run failed: {safe_md(view.message, max_len=500)}", icon="⚠️")
        elif view.state == lab_runs.STOPPED:
            st.warning(f"{view.message} Nothing was stored; press Run to start again.")
    if st.button("Run", key=f"{key_prefix}go", type="primary", icon=":material/play_arrow:"):
        start_run(question, config, run_id, store)
        watch(str(store.root), run_id, key_prefix)


# --------------------------------------------------------------------------- pages


def _current_result(
    store: RunStore, run_id: str, linked: LabResult | None, config: LabConfig
) -> tuple[LabResult | None, bool]:
    """The result to show for these settings and whether it came from the store.

    A linked run is shown while the settings equal its config (even if the code has changed
    since, which changes the id the current code would give it); else the stored run of the
    current id; else a job of this process that just finished without a store entry.
    """
    if linked is not None and linked.config == config:
        return linked, True
    result = find_result(store, run_id)
    if result is not None:
        return result, True
    job = lab_runs.get_job(str(store.root), run_id)
    if job is not None and job.snapshot().state == lab_runs.DONE:
        return job.snapshot().result, False
    return None, False


def question_page(question_id: str) -> None:
    """A whole lab question page: the question, settings, Run (live), and the stored answer."""
    question = QUESTIONS[question_id]
    key_prefix = prefix(question_id)
    st.title(question.title)
    question_intro(question)
    linked = _linked_result(question, key_prefix)
    config = run_settings(
        question, key_prefix=key_prefix, base=linked.config if linked else question.default
    )
    caps_caption()
    if config is None:
        return
    what_is_trained(question, config)
    store = RunStore()
    run_id = store.run_id(question.id, config)
    result, stored = _current_result(store, run_id, linked, config)
    shown = result.run_id if result is not None else run_id
    if st.query_params.get(f"{key_prefix}run") != shown:
        st.query_params[f"{key_prefix}run"] = shown
    if result is None:
        run_controls(question, config, run_id, store, key_prefix=key_prefix)
        return
    lab_views.show_answer(result, question)
    lab_views.show_table(result)
    lab_views.show_charts(result, question, key_prefix=key_prefix)
    lab_views.watch_table_form(result, store, key_prefix=key_prefix)
    lab_views.show_run_facts(result, stored=stored)


def question_cards(*, columns: int = 2) -> None:
    """Every lab question as a card linking to its page (for the landing page)."""
    cells = st.columns(columns)
    for index, question in enumerate(QUESTIONS.values()):
        with cells[index % columns].container(border=True):
            st.markdown(f"**{question.title}** {question.question}")
            st.caption("Asked in " + " · ".join(cite(key) for key in question.source_keys))
            st.page_link(page_path(question.id), label="Train it", icon=":material/science:")


def index_page() -> None:
    """The lab's front page: every question with its own page, and the runs stored here."""
    st.title("Position lab")
    st.markdown(
        "Questions about positions that only training can answer. Each page trains tiny "
        "transformers on this server's CPU (under a minute with the preset), compares the "
        "variants over several seeds with a control, and keeps the run: its address shows the "
        "result again at once, and its learned tables open in every other view."
    )
    for question in QUESTIONS.values():
        with st.container(border=True):
            st.page_link(page_path(question.id), label=question.title, icon=":material/science:")
            st.markdown(question.question)
            st.caption("Sources: " + " · ".join(cite(key) for key in question.source_keys))
    caps_caption()
    runs = RunStore().list()
    if not runs:
        st.caption("No runs stored on this server yet.")
        return
    st.subheader("Runs stored on this server")
    for summary in runs[:20]:
        if summary.question_id not in QUESTIONS:
            continue
        title = QUESTIONS[summary.question_id].title
        st.page_link(
            page_path(summary.question_id),
            label=f"{title} — {summary.seeds} seeds, {summary.wall_s:.0f} s (run {summary.run_id})",
            query_params={f"{prefix(summary.question_id)}run": summary.run_id},
        )
