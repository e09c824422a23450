"""The position lab's pages: every question answers first, from the store, before anyone runs.

``question_page("learned")``: the answer across the sweep beside the chart that carries it, the
sweep at a glance, then the question and more evidence; the answer is read from the run store
(``POSVIZ_LAB_DIR``, then the warm store ``POSVIZ_LAB_WARM_DIR`` the Docker image bakes).
Settings of one's own live in an expander and in the URL (``lab_<question>_…``); their Run trains
in a worker thread (:mod:`posviz.ui.lab_runs`). A run's link (``lab_<question>_run=<id>``) shows
it at once. What a page shows around the answer is :mod:`posviz.page_models.lab`'s.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from posviz import lab_jobs as runs
from posviz.lab import QUESTIONS, LabConfig, LabResult, Question, RunStore
from posviz.lab.present import answer
from posviz.lab.present.live import question_plan
from posviz.lab.studies.loading import load_judged
from posviz.page_models import lab as model
from posviz.page_models.lab import page_path, prefix
from posviz.settings import settings
from posviz.ui import lab_runs, lab_sections
from posviz.ui.answer import show_verdict, waiting
from posviz.ui.cache import cached_data
from posviz.ui.routes import page_link
from posviz.ui.state import url_int_list, url_number, url_numbers
from posviz.ui.text import safe_md

__all__ = ["default_results", "index_page", "page_path", "prefix", "question_page"]


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
    result, level, message = model.linked_outcome(question, raw, result)
    if message:
        (st.info if level == "info" else st.warning)(message)
    st.session_state[marker] = result
    return result


def _reset(key_prefix: str) -> None:
    """Forget this page's settings (session and URL) so the preset's answer shows again."""
    for key in model.reset_keys(key_prefix):
        st.session_state.pop(key, None)
        st.query_params.pop(key, None)


def run_settings(question: Question, *, key_prefix: str, base: LabConfig) -> tuple:
    """URL-synced settings seeded from ``base``: ``(config, "")``, or ``(None, why)``."""
    if st.button("Back to the preset's settings", key=f"{key_prefix}reset"):
        _reset(key_prefix)
        st.rerun()
    fields, cols = model.setting_fields(base), st.columns(4)
    numbers = url_numbers(fields, key_prefix=key_prefix, columns=cols)
    values = {f.key: int(value) for f, value in zip(fields, numbers, strict=True)}
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
        result, stored = model.current_result(store, run_id, linked, config, find_result)
        if result is not None:
            result = with_panel(store, result)
    shown = result.run_id if result is not None else run_id
    if st.query_params.get(f"{key_prefix}run") != shown:
        st.query_params[f"{key_prefix}run"] = shown
    if result is None:
        plan = question_plan(question.id, config)
        with top:
            show_verdict(model.no_answer_verdict(question, config, store, run_id))
            lab_runs.warmup_notice(run_id)  # the first start's background answers, if running
            lab_runs.run_controls(
                run_id, plan, store_root=str(store.root), key_prefix=key_prefix,
                work=runs.question_work(question.id, config),
            )  # fmt: skip
        lab_sections.show_question(question, config)
        lab_sections.next_link(question.id)
        return
    with glance:
        cell = lab_sections.pick_cell(result, key_prefix=key_prefix)
        lab_sections.show_cell(result, cell)
    with top:
        lab_sections.show_answer(result, cell, key_prefix=key_prefix)
    lab_sections.show_question(question, config)
    lab_sections.show_evidence(result, cell, key_prefix=key_prefix)
    lab_sections.watch_table_form(result, store, key_prefix=key_prefix)
    st.caption(answer.run_facts(result, stored=stored))
    lab_sections.next_link(question.id)


def default_results() -> dict[str, LabResult | None]:
    """Every question's stored answer at its preset (None where none is stored)."""
    return model.default_results(find_result, with_panel)


def index_page() -> None:
    """The lab's front page: every question with its stored answer, the paper checks, runs."""
    st.title("Position lab")
    with waiting("Reading the stored answers…"):
        answers = default_results()
    lab_sections.index_answers(answers)
    st.caption(answer.caps_text())
    links = model.stored_run_links()
    if links:
        st.header("Runs stored on this server")
        for page, label, query in links:
            page_link(page, label=label, query_params=query)
