"""The lab pages' model: which stored answer a question page shows and what it says around it
(a linked run, a cell that is no cell, a diverged arm, the table links, the stored runs), and the
paper checks' badges. What a stored run says is :mod:`posviz.lab.present`'s; the ui passes its
cached store reads in (``find``), so nothing here caches, draws or trains.
"""

from __future__ import annotations

from collections.abc import Callable

from posviz import lab_jobs as runs
from posviz.lab import QUESTIONS, Cell, LabConfig, LabResult, Question, RunStore
from posviz.lab.present import answer
from posviz.lab.present.cards import CardView
from posviz.navigation import study_url_path
from posviz.page_models.markdown import safe_md
from posviz.references import cite
from posviz.urlparams import NumberField

PAPERS_PAGE = "pages/lab_papers.py"
#: a paper card's outcome badge colour by its agreement (blue: not run yet).
BADGE = {True: "green", False: "orange", None: "gray"}

GRID_CAPTION = (
    "Each row: one combination of the settings a verdict could depend on, the preset's first. "
    "Highlighted: a verdict that differs from the preset's. Select a row to see its numbers and "
    "charts."
)
WATCH_INTRO = (
    "The learned position table (an `nn.Embedding`) was saved at evenly spaced training steps. "
    "Press ▶ play (in your browser, no reload) or move the slider to see it change from random "
    "noise."
)
PAPERS_INTRO = (
    "Published results whose *shape* a CPU lab can test: which curve rises, which arm fails — "
    "never the values (these models are thousands of times smaller). Each check's criterion is "
    "fixed in code before any run."
)


def last_run_note(snapshot: runs.JobView) -> tuple[str, str]:
    """``(level, message)`` of how the last run of these settings ended without an answer
    (``("", "")`` when it did not fail or stop)."""
    if snapshot.state == runs.FAILED:
        return "error", f"The run failed: {safe_md(snapshot.message, max_len=500)}"
    if snapshot.state == runs.STOPPED:
        return "warning", f"{snapshot.message} Nothing was stored; press Run to start again."
    return "", ""


def warmup_watch(view: runs.WarmupView, run_id: str | None) -> tuple[str | None, int]:
    """What a page's warm-up line waits for: ``(run_id, -1)``, its own answer (a question page;
    None for settings of one's own, never computed by the warm-up), or ``(None, n)``, any answer
    beyond the ``n`` stored when the page was drawn (/lab, the paper checks: ``run_id`` None)."""
    if run_id is None:
        return None, view.stored + view.panels_stored
    return (run_id if run_id in view.pending else None), -1


def warmup_changed(view: runs.WarmupView, run_id: str | None, drawn: int) -> bool:
    """Whether an answer the page shows was stored since it was drawn (see :func:`warmup_watch`)."""
    return (run_id is not None and run_id not in view.pending) or (
        drawn >= 0 and view.stored + view.panels_stored != drawn
    )


def run_note(source: str) -> str:
    """The caption under the Run button: where the estimate comes from, what a run does."""
    return (
        f"Estimated {source}; once it runs, the estimate follows its measured pace. A started run "
        "finishes and is stored even if you close the tab; Stop ends it."
    )


#: ``find(store, run_id)``: the stored run judged again, or None (the ui's cached read).
Find = Callable[[RunStore, str], "LabResult | None"]


def prefix(question_id: str) -> str:
    """The URL/widget key prefix of a question's page, e.g. ``"lab_learned_"``."""
    return f"lab_{question_id}_"


def page_path(question_id: str) -> str:
    """The key of a question's page (generated from the study list, no script): ``lab_<id>``;
    link to it with :func:`posviz.ui.routes.page_link`."""
    return study_url_path(question_id)


def asked_in(source_keys: tuple[str, ...] | list[str], lead: str = "Asked in ") -> str:
    """A study's sources as one Markdown line of citations."""
    return lead + " · ".join(cite(key) for key in source_keys)


def reset_keys(key_prefix: str) -> list[str]:
    """The session and URL keys "Back to the preset's settings" forgets."""
    names = (*(n for n, *_ in answer.setting_limits()), "lr", "eval", "run", "cell", "linked")
    return [f"{key_prefix}{name}" for name in names]


def setting_fields(base: LabConfig) -> list[NumberField]:
    """The whole-number settings of one's own run, seeded from ``base`` within their limits."""
    return [
        NumberField(label, name, lo, top, min(max(int(getattr(base, name)), lo), top))
        for name, label, lo, top in answer.setting_limits()
    ]


def linked_outcome(question: Question, raw: str, result: LabResult | None) -> tuple:
    """``(result, level, message)`` for a link's ``<prefix>run=raw``: the run it names if it
    answers this question, else None with what to say (``level``: "info" or "warning")."""
    if result is None:
        return (
            None,
            "info",
            (
                f"No stored run {safe_md(raw, max_len=40)} on this server (runs are kept per "
                "server): the settings come from the link; press **Run** to train them."
            ),
        )
    if result.question_id != question.id:
        return (
            None,
            "warning",
            (
                f"Run {safe_md(raw, max_len=40)} answers another question "
                f"({safe_md(result.question_id, max_len=40)}); open it on that question's page."
            ),
        )
    return result, "", ""


def current_result(
    store: RunStore, run_id: str, linked: LabResult | None, config: LabConfig, find: Find
) -> tuple[LabResult | None, bool]:
    """The result to show and whether it came from the store: a linked run while the settings
    equal its config (even if the code changed since), else the stored run of these settings,
    else a job of this process that just finished without a store entry."""
    if linked is not None and linked.config == config:
        return linked, True
    result = find(store, run_id)
    if result is not None:
        return result, True
    job = runs.get_job(str(store.root), run_id)
    if job is not None and job.snapshot().state == runs.DONE:
        return job.snapshot().result, False
    return None, False


def no_answer_verdict(question: Question, config: LabConfig, store: RunStore, run_id: str) -> str:
    """What a question page says while these settings have no stored answer."""
    job = runs.get_job(str(store.root), run_id)
    running = job is not None and not job.finished
    queued = not running and runs.warmup_computing(str(store.root), run_id)
    preset = config == question.default
    return answer.no_answer(question.id, config, preset=preset, running=running, queued=queued)


def diverged_warning(result: LabResult) -> str:
    """The warning for arms whose training diverged ("" when none did)."""
    if not result.diverged:
        return ""
    names = ", ".join(result.label(v) for v in result.diverged)
    return (
        f"Training diverged for {safe_md(names, max_len=300)}: the loss became NaN or "
        "infinite, so their metrics are not defined. Lower **Learning rate**, run again."
    )


def linked_cell(result: LabResult, raw: str | None, url_key: str) -> tuple[str, str]:
    """``(cell id, warning)``: the link's cell, else the cell the answer's first line speaks of
    (:func:`posviz.lab.present.answer.answer_cell`: the preset's, or the longer budget's that
    decides), with why when the link's is no cell — the hero draws what the line says."""
    ids, spoken = answer.cell_ids(result), answer.answer_cell(result)
    if raw is None or raw in ids:
        return raw or spoken, ""
    return spoken, (
        f"Link parameter {url_key} = “{safe_md(raw, max_len=60)}” is not a cell of this run; "
        f"showing the preset's. Cells: {', '.join(ids)}."
    )


def table_links(run_id: str, variant: str, seed: int, step: int) -> tuple:
    """``(spec, links, caption)`` of one saved table of a run: its table source, the
    ``(page, label, icon, query)`` of the pages that open it, and the line naming it."""
    spec = f"lab:{run_id}/{variant}/{seed}/{step}"
    return spec, [
        ("pages/learned.py", "Open this table in Learned tables", ":material/psychology:",
         {"lrn_a_src": "lab", "lrn_a_lab": spec}),
        ("pages/probing.py", "Probe this table in Probing positions", ":material/straighten:",
         {"prb_t_src": "lab", "prb_t_lab": spec}),
    ], f"Table source: `{spec}` (also `python -m posviz info {spec}`)."  # fmt: skip


def cell_heading(cell: Cell) -> str:
    """The bold line above a cell's numbers (its settings, escaped; whether they are the
    preset's)."""
    which = " (the preset's settings)" if cell.default else ""
    return f"**This cell: {safe_md(cell.label(), max_len=300)}**{which}"


def card_claim(card: CardView) -> str:
    """A paper card's outcome badge (green agrees, orange differs, gray undecided, blue not run
    yet) before its claim."""
    color = BADGE[card.agrees] if card.run_id else "blue"
    return f":{color}-badge[{card.outcome}] {safe_md(card.claim, max_len=600)}"


def default_results(find: Find, with_panel: Callable) -> dict[str, LabResult | None]:
    """Every question's stored answer at its preset (None where none is stored), judged with
    its held-out panel (``with_panel(store, result)``)."""
    store = RunStore()
    found = {q.id: find(store, store.run_id(q, q.default)) for q in QUESTIONS.values()}
    return {qid: None if r is None else with_panel(store, r) for qid, r in found.items()}


def stored_run_links(limit: int = 20) -> list[tuple[str, str, dict[str, str]]]:
    """``(page, label, query)`` of the runs stored on this server, newest first."""
    kept = [s for s in RunStore().list() if s.question_id in QUESTIONS]
    return [
        (
            page_path(s.question_id),
            f"{QUESTIONS[s.question_id].title} — {s.seeds} seeds, {s.wall_s:.0f} s "
            f"(run {s.run_id})",
            {f"{prefix(s.question_id)}run": s.run_id},
        )
        for s in kept[:limit]
    ]
