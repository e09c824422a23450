"""The lab pages' sections: the answer beside its hero, the sweep at a glance, a cell's numbers,
more evidence, "watch the table form", the index's answers and the paper-check cards.

Everything here lays out what :mod:`posviz.lab.present` and :mod:`posviz.page_models.lab`
compute from a stored run; nothing trains.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz import lab_jobs as runs
from posviz.analysis.probes import MIN_ROWS
from posviz.lab import QUESTIONS, LabConfig, LabResult, Question, RunStore, load_lab_table
from posviz.lab.present import answer, cards, figures
from posviz.lab.present.live import card_plan
from posviz.lab.studies.cards import card_run_id, stored_cards
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.page_models import lab as model
from posviz.page_models.lab import page_path
from posviz.tables import PositionTable
from posviz.ui import lab_runs
from posviz.ui.answer import next_question, show_hero, show_verdict, waiting
from posviz.ui.cache import cached_data
from posviz.ui.display import bullets, show_chart, user_errors
from posviz.ui.learned_views import show_view
from posviz.ui.routes import page_link
from posviz.ui.state import url_select, url_select_slider
from posviz.ui.text import safe_md


def show_answer(result: LabResult, cell: str, *, key_prefix: str) -> None:
    """The answer across the sweep beside the chart that carries the selected cell's verdict."""
    # built before the columns replace the running page's verdict box (none is shown between)
    said, hero = answer.verdict(result), figures.hero(result, cell)
    warning = model.diverged_warning(result)
    left, right = st.columns([4, 5], gap="large")
    with left:  # the line, its evidence folded (every finding, control, check), then the hero
        show_verdict(said)
        if warning:
            st.warning(warning, icon="⚠️")
    with right:
        show_hero(hero.figure, key=f"{key_prefix}hero", note=hero.caption)


def pick_cell(result: LabResult, *, key_prefix: str) -> str:
    """The sweep at a glance (one row per cell); the selected row, synced with the URL."""
    ids, url_key = answer.cell_ids(result), f"{key_prefix}cell"
    raw, warning = model.linked_cell(result, st.query_params.get(url_key), url_key)  # or the
    # cell the answer's line speaks of (answer.answer_cell), so the hero draws what it says
    if warning:
        st.warning(warning, icon=":material/link:")
    st.header("The sweep at a glance")
    st.caption(model.GRID_CAPTION)
    event = st.dataframe(
        answer.grid(result), hide_index=True, on_select="rerun",
        selection_mode="single-row-required", key=f"{key_prefix}grid_{result.run_id}",
        selection_default={"selection": {"rows": [ids.index(raw)]}},
    )  # fmt: skip
    rows = event.selection.rows if hasattr(event, "selection") else []
    cell = ids[rows[0]] if rows else raw
    if st.query_params.get(url_key) != cell:
        st.query_params[url_key] = cell
    return cell


def show_cell(result: LabResult, cell_id: str) -> None:
    """A cell's comparisons (differences with 95% intervals), its table and its convergence."""
    st.markdown(model.cell_heading(result.cell(cell_id)))
    st.dataframe(
        answer.comparisons_frame(result, cell_id), hide_index=True,
        column_config={"difference": st.column_config.NumberColumn(format="%+.3f")},
    )  # fmt: skip
    with st.expander("Every arm's numbers in this cell, and how its training was judged"):
        number = st.column_config.NumberColumn(format="%.4f")
        st.dataframe(
            answer.results_frame(result, cell_id), hide_index=True,
            column_config={name: number for name in ("mean", "±", "low", "high")},
        )  # fmt: skip
        bullets(answer.convergence_lines(result, cell_id))


def show_question(question: Question, config: LabConfig) -> None:
    """The question in words, its sources, how it is measured and what a run trains."""
    st.header("The question")
    st.markdown(f"> {question.question}")
    st.markdown(model.asked_in(question.source_keys, "**Sources:** "))
    st.markdown(f"**How it is measured.** {question.explain}")
    if question.id in answer.REAL_CHECKPOINTS:  # shown with or without a stored answer
        page, label = answer.REAL_CHECKPOINTS[question.id]
        st.page_link(page, label=label, icon=":material/difference:")
    st.dataframe(answer.arms_frame(question, config), hide_index=True)
    st.caption(answer.run_caption(config))


def show_evidence(result: LabResult, cell: str, *, key_prefix: str) -> None:
    """The selected cell's other charts, and the answer in full."""
    st.header("More evidence for this cell")
    shown = figures.evidence(result, cell)
    columns = st.columns(min(len(shown), 2) or 1)
    for index, item in enumerate(shown):
        with columns[index % 2]:
            show_chart(item.figure, key=f"{key_prefix}{item.key}")
            st.caption(item.note)
    with st.expander("The answer in full: every finding with its numbers"):
        bullets(result.answer.splitlines(), max_len=3000)
        for note in result.notes:
            st.caption(safe_md(note, max_len=600))


def next_link(question_id: str) -> None:
    """End a question page with the next page of the guided path (the next lab question; the
    last leads to the paper checks)."""
    next_question(page_path(question_id))


# --------------------------------------------------------------------------- watch the table form


@cached_data()
def lab_table(root: str, spec: str) -> PositionTable:
    """``load_lab_table(spec)`` from the store at ``root``, cached (runs are write-once)."""
    return load_lab_table(spec, store=RunStore(root))


@cached_data()
def probe_frames(root: str, run_id: str, variant: str, seed: int) -> tuple[pd.DataFrame, ...]:
    """The probe per snapshot of one table and the error by position of every final table."""
    return figures.probe_frames(RunStore(root).load(run_id), variant, seed)


def watch_table_form(result: LabResult, store: RunStore, *, key_prefix: str) -> None:
    """Step slider over a learned table's snapshots: probe, heatmap, cosine similarity, PCA."""
    learned = list(result.snapshots)
    if not learned:
        return
    st.subheader("Watch the table form")
    st.markdown(model.WATCH_INTRO)
    root, cols = str(store.root), st.columns([2, 1, 3])
    with cols[0]:
        variant = url_select("Learned table of", learned, key=f"{key_prefix}tv",
                             default=learned[0], format_func=result.label)  # fmt: skip
    with cols[1]:
        seeds = figures.seed_options(result)
        seed = int(url_select("Seed", seeds, key=f"{key_prefix}ts", default=seeds[0]))
    show_chart(figures.table_forming(result, variant, seed), key=f"{key_prefix}forming")
    with cols[2]:
        steps = [int(s) for s in result.snapshot_steps]
        step = url_select_slider("Training step", steps, key=f"{key_prefix}step")
    spec, links, caption = model.table_links(result.run_id, variant, seed, step)
    with user_errors("Learned table"):
        table = lab_table(root, spec)
        for place, (page, label, icon, query) in zip(st.columns(2), links, strict=True):
            place.page_link(page, label=label, icon=icon, query_params=query)
        st.caption(caption)
        if table.matrix.shape[0] >= MIN_ROWS:
            with waiting("Probing this table at every saved step (once; then cached)…"):
                frames = probe_frames(root, result.run_id, variant, seed)
            charts = st.columns(2)
            for column, item in zip(
                charts, figures.probe_shown(result, variant, step, *frames), strict=True
            ):
                with column:
                    show_chart(item.figure, key=f"{key_prefix}{item.key}")
                    st.caption(item.note)
        for column, view in zip(st.columns(2), ("heatmap", "similarity"), strict=True):
            with column:
                show_view(table, view, {}, key_prefix=f"{key_prefix}t_")


# --------------------------------------------------------------------------- index and cards


def index_answers(answers: dict[str, LabResult | None]) -> None:
    """The lab's front page: a count of answers (while the first start computes them, that it
    does, with its progress line), then each question with its answer."""
    computing = runs.warmup_computing(str(RunStore().root))
    show_verdict(answer.index_verdict(answers, computing=computing))
    lab_runs.warmup_notice()  # the first start's background answers, if running
    for question in QUESTIONS.values():
        with st.container(border=True):
            page_link(page_path(question.id), label=question.title, icon=":material/science:")
            line = answer.index_line(question.id, answers[question.id], computing=computing)
            st.markdown(safe_md(line, max_len=900))
            st.caption(model.asked_in(question.source_keys))
    with st.container(border=True):
        st.page_link(model.PAPERS_PAGE, label="Paper checks", icon=":material/fact_check:")
        line = cards.cards_verdict(stored_cards(), computing=computing).first_line
        st.markdown(safe_md(line, max_len=400))


def _show_card(card: cards.CardView, store: RunStore) -> None:
    with st.container(border=True):
        st.markdown(f"**{card.citation}**")
        st.markdown(model.card_claim(card))
        st.caption(f"[Where the claim was read]({card.claim_read_at})")
        left, right = st.columns(2)
        with left:
            st.markdown("**Published**")
            for heading, numbers in card.published:
                st.caption(safe_md(heading, max_len=600))
                st.dataframe(numbers, hide_index=True)
            st.caption(safe_md(card.published_note, max_len=600))
        with right:
            st.markdown("**This run**")
            bullets(card.this_run or ("Not run on this server yet.",))
        for n, part in enumerate(card.sections):  # criterion, what would differ, the ladders
            st.markdown(f"**{part.heading}** {safe_md(part.text, max_len=1500)}")
            bullets(part.bullets)
            if part.figure is not None:
                show_chart(
                    part.figure, key=f"lab_papers_{card.check_id}_{n}", description=part.text
                )
        st.caption(f"Why a tiny model may differ: {safe_md(card.caveat, max_len=900)}")
        if not card.run_id:
            check = PAPER_CHECKS[card.check_id]
            lab_runs.run_controls(
                card_run_id(check), card_plan(card.check_id), store_root=str(store.root),
                key_prefix=f"lab_papers_{card.check_id}_", work=runs.card_work(card.check_id),
            )  # fmt: skip


def papers_page() -> None:
    """One card per paper check: claim, criterion, published vs this run, outcome."""
    st.title("Paper checks")
    store = RunStore()
    stored = stored_cards(store=store)
    show_verdict(cards.cards_verdict(stored, computing=runs.warmup_computing(str(store.root))))
    lab_runs.warmup_notice()  # the first start's background answers, if running
    st.markdown(model.PAPERS_INTRO)
    for check_id in PAPER_CHECKS:
        _show_card(cards.card_view(check_id, stored.get(check_id)), store)
