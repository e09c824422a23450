"""The position lab's pages: every question answers first, from the store, before anyone runs.

``question_page("learned")``: the answer across the sweep beside the chart that carries it, the
sweep at a glance, then the question and more evidence; the answer is read from the run store
(``POSVIZ_LAB_DIR``, then the warm store ``POSVIZ_LAB_WARM_DIR`` the Docker image bakes).
Settings of one's own live in an expander and in the URL (``lab_<question>_…``); their Run trains
in a worker thread (:mod:`posviz.ui.lab_runs`). A run's link (``lab_<question>_run=<id>``) shows
it at once.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from posviz import lab_jobs as runs
from posviz.lab import QUESTIONS, LabConfig, LabResult, Question, RunStore
from posviz.lab.present import answer
from posviz.lab.present.live import question_plan
from posviz.lab.studies.loading import load_judged
from posviz.settings import settings
from posviz.ui import lab_runs, lab_views
from posviz.ui.answer import show_verdict, waiting
from posviz.ui.cache import cached_data
from posviz.ui.lab_views import page_path
from posviz.ui.routes import page_link
from posviz.ui.state import url_int_list, url_number, url_numbers
from posviz.ui.text import safe_md
from posviz.urlparams import NumberField


def prefix(question_id: str) -> str:
    """The URL/widget key prefix of a question's page, e.g. ``"lab_learned_"``."""
    return f"lab_{question_id}_"


@cached_data()
def stored_result(root: str, run_id: str) -> LabResult | None:
    """``RunStore(root).load(run_id)`` judged again, cached (stored runs are write-once). Call
    only for a run that exists (a miss would be cached); raises ``ValueError`` if corrupted."""
    return load_judged(RunStore(root), run_id)


def find_result(store: RunStore, run_id: str) -> LabResult | None:
    """The stored run, or None; a corrupted entry is reported and treated as missing."""
    try:
        if store.exists(run_id):
            return stored_result(str(store.root), run_id)
    except ValueError as exc:
        st.warning(safe_md(str(exc), max_len=400))
    return None


@cached_data()
def _judged(
    root: str, run_id: str, panel_id: str, _result: LabResult, _panel: LabResult | None
) -> LabResult:
    """A stored answer judged with its stored held-out panel (cached by the two run ids)."""
    return answer.judged(_result, _panel)


def with_panel(store: RunStore, result: LabResult) -> LabResult:
    """``result`` judged together with its held-out panel when one is stored; otherwise as it
    is, its answer saying the check is pending."""
    panel_id = answer.panel_run_id(result.question_id, result.config)
    panel = find_result(store, panel_id)
    return _judged(str(store.root), result.run_id, panel_id if panel else "", result, panel)


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
            "the settings come from the link; press **Run** to train them."
        )
    elif result.question_id != question.id:
        st.warning(
            f"Run {safe_md(raw, max_len=40)} answers another question "
            f"({safe_md(result.question_id, max_len=40)}); open it on that question's page."
        )
        result = None
    st.session_state[marker] = result
    return result


def _reset(question: Question, key_prefix: str) -> None:
    """Forget this page's settings (session and URL) so the preset's answer shows again."""
    for name in (*(n for n, *_ in answer.setting_limits()), "lr", "eval", "run", "cell", "linked"):
        st.session_state.pop(f"{key_prefix}{name}", None)
        st.query_params.pop(f"{key_prefix}{name}", None)


def run_settings(question: Question, *, key_prefix: str, base: LabConfig) -> tuple:
    """URL-synced settings seeded from ``base``: ``(config, "")``, or ``(None, why)``."""
    if st.button("Back to the preset's settings", key=f"{key_prefix}reset"):
        _reset(question, key_prefix)
        st.rerun()
    limits = answer.setting_limits()  # (name, label, lowest, highest)
    fields = [
        NumberField(label, name, lo, top, min(max(int(getattr(base, name)), lo), top))
        for name, label, lo, top in limits
    ]
    cols = st.columns(4)
    numbers = url_numbers(fields, key_prefix=key_prefix, columns=cols)
    values = {name: int(value) for (name, *_), value in zip(limits, numbers, strict=True)}
    with cols[1]:
        values["lr"] = float(
            url_number("Learning rate", key=f"{key_prefix}lr", min_value=1e-5, max_value=1.0,
                       default=float(base.lr), step=1e-4, format="%.4f")
        )  # fmt: skip
    with cols[2]:
        lengths = url_int_list(
            "Evaluation lengths", key=f"{key_prefix}eval", default=base.eval_lengths,
            min_value=2, max_value=settings().lab_max_len, max_items=8,
            help="Held-out sequences of these lengths; above the longest training length tests "
            "extrapolation.",
        )  # fmt: skip
        values["eval_lengths"] = tuple(lengths) or base.eval_lengths
    st.caption(answer.caps_text())
    try:
        config = dataclasses.replace(base, **values)
        question_plan(question.id, config)  # every arm's own lengths and the sweep must fit too
    except ValueError as exc:
        return None, str(exc)
    return config, ""


def _current_result(
    store: RunStore, run_id: str, linked: LabResult | None, config: LabConfig
) -> tuple[LabResult | None, bool]:
    """The result to show and whether it came from the store: a linked run while the settings
    equal its config (even if the code changed since), else the stored run of these settings,
    else a job of this process that just finished without a store entry."""
    if linked is not None and linked.config == config:
        return linked, True
    result = find_result(store, run_id)
    if result is not None:
        return result, True
    job = runs.get_job(str(store.root), run_id)
    if job is not None and job.snapshot().state == runs.DONE:
        return job.snapshot().result, False
    return None, False


def question_page(question_id: str) -> None:
    """A whole lab question page: the answer first, then the sweep, evidence and settings."""
    question, key_prefix = QUESTIONS[question_id], prefix(question_id)
    st.title(question.title)
    top, glance = st.container(), st.container()
    linked = _linked_result(question, key_prefix)
    with st.expander("Run your own settings (seeds, steps, model size, lengths)"):
        base = linked.config if linked else question.default
        config, problem = run_settings(question, key_prefix=key_prefix, base=base)
    if config is None:
        with top:
            show_verdict("These settings cannot run; the message below says which to change.")
            st.error(safe_md(f"Settings: {problem}", max_len=1200), icon="⚠️")
        return
    store = RunStore()
    run_id = store.run_id(question, config)
    with top, waiting("Reading the stored answer…"):
        result, stored = _current_result(store, run_id, linked, config)
        if result is not None:
            result = with_panel(store, result)
    shown = result.run_id if result is not None else run_id
    if st.query_params.get(f"{key_prefix}run") != shown:
        st.query_params[f"{key_prefix}run"] = shown
    if result is None:
        plan = question_plan(question.id, config)
        with top:
            job = runs.get_job(str(store.root), run_id)
            running = job is not None and not job.finished
            preset = config == question.default
            queued = not running and runs.warmup_computing(str(store.root), run_id)
            show_verdict(
                answer.no_answer(question.id, config, preset=preset, running=running, queued=queued)
            )
            lab_runs.warmup_notice(run_id)  # the first start's background answers, if running
            lab_runs.run_controls(
                run_id, plan, store_root=str(store.root), key_prefix=key_prefix,
                work=runs.question_work(question.id, config),
            )  # fmt: skip
        lab_views.show_question(question, config)
        lab_views.next_link(question.id)
        return
    with glance:
        cell = lab_views.pick_cell(result, key_prefix=key_prefix)
        lab_views.show_cell(result, cell)
    with top:
        lab_views.show_answer(result, cell, key_prefix=key_prefix)
    lab_views.show_question(question, config)
    lab_views.show_evidence(result, cell, key_prefix=key_prefix)
    lab_views.watch_table_form(result, store, key_prefix=key_prefix)
    st.caption(answer.run_facts(result, stored=stored))
    lab_views.next_link(question.id)


def default_results() -> dict[str, LabResult | None]:
    """Every question's stored answer at its preset (None where none is stored)."""
    store = RunStore()
    found = {q.id: find_result(store, store.run_id(q, q.default)) for q in QUESTIONS.values()}
    return {qid: None if r is None else with_panel(store, r) for qid, r in found.items()}


def index_page() -> None:
    """The lab's front page: every question with its stored answer, the paper checks, runs."""
    st.title("Position lab")
    with waiting("Reading the stored answers…"):
        answers = default_results()
    lab_views.index_answers(answers)
    st.caption(answer.caps_text())
    kept = [s for s in RunStore().list() if s.question_id in QUESTIONS]
    if kept:
        st.subheader("Runs stored on this server")
        for summary in kept[:20]:
            page_link(
                page_path(summary.question_id),
                label=f"{QUESTIONS[summary.question_id].title} — {summary.seeds} seeds, "
                f"{summary.wall_s:.0f} s (run {summary.run_id})",
                query_params={f"{prefix(summary.question_id)}run": summary.run_id},
            )
