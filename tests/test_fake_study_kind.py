"""A kind of question added at run time reaches the runner, the judging, the stored answer judged
again on load, and its generated page, through the kind registries alone.

The fake kind is registered the one way a real one is: a ``StudyKind`` in
``posviz.lab.studies.kinds.KINDS``, a ``KindView`` in ``posviz.lab.present.kinds.VIEWS`` and the
metric its reading adds in ``posviz.lab.engine.metrics.METRICS`` (plus a question of that kind in
the study list). Each records when it is called, so every hook is seen
to be reached; all three are monkeypatched in and gone after each test.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import app_test

from posviz.lab.engine.metrics import METRICS, MetricSpec
from posviz.lab.engine.store import RunStore
from posviz.lab.present import figures
from posviz.lab.present.answer import cell_clause, plain_answer
from posviz.lab.present.kinds import VIEWS, KindView
from posviz.lab.studies import judging, topics
from posviz.lab.studies.kinds import KINDS, StudyKind
from posviz.lab.studies.loading import load_judged
from posviz.lab.studies.presets import LEARNED_VS_SINUSOID, QUESTIONS
from posviz.lab.studies.questions import run_question

FAKE_KIND = "fake_kind"
FAKE_STUDY = "fake_kind_study"
TINY = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 4, "eval_batch": 8}
CLAUSE = "the fake kind's own clause"
PLAIN = "The fake kind answers in its own words."


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """The fake kind, its view and one question of that kind, registered; what each hook saw."""
    seen: list[str] = []

    def judge(cell: judging.CellInput) -> judging.Judged:
        seen.append("judge")
        return judging.judge_pair(cell)

    def findings(q, cells, bounds, config):
        seen.append("findings")
        return topics.pair_findings(q, cells, bounds)

    def lines(q, cells, labels, config):
        return ["A line only the fake kind adds."]

    def reading(inst, config, at):
        seen.append("measure")
        return {"fake_reading": np.full(inst.losses.shape[0], float(at.steps))}, {}

    def clause(result, cell, labels, head):
        seen.append("clause")
        return CLAUSE

    def plain(result, cell, labels):
        seen.append("plain")
        return PLAIN

    kind = StudyKind(FAKE_KIND, judge, findings, lines=lines, measures=(reading,))
    view = KindView(FAKE_KIND, clause, plain, hero="curves", evidence=("loss",))
    study = dataclasses.replace(
        LEARNED_VS_SINUSOID,
        id=FAKE_STUDY,
        title="Does a fake kind judge?",
        kind=FAKE_KIND,
        default=dataclasses.replace(LEARNED_VS_SINUSOID.default, **TINY),
        paper_checks=(),
        panel_settings=(),
    )
    monkeypatch.setitem(METRICS, "fake_reading", MetricSpec("fake_reading", "a fake reading", True))
    monkeypatch.setitem(KINDS, FAKE_KIND, kind)
    monkeypatch.setitem(VIEWS, FAKE_KIND, view)
    monkeypatch.setitem(QUESTIONS, FAKE_STUDY, study)
    return seen


@pytest.mark.slow
def test_the_kind_reaches_the_runner_judging_and_the_words(calls, tmp_path) -> None:
    store = RunStore(tmp_path)
    result = run_question(FAKE_STUDY, store=store)
    assert calls.count("judge") == len(result.cells) and "findings" in calls
    assert "measure" in calls
    default = result.default_cell
    assert default.metrics["learned"]["fake_reading"] == (float(default.steps),) * 2
    assert "A line only the fake kind adds." in result.answer
    calls.clear()
    again = load_judged(store, result.run_id)  # judged again through the registries on load
    assert again.answer == result.answer and "judge" in calls and "findings" in calls
    assert cell_clause(result, default) == CLAUSE
    first = plain_answer(result)  # its own words, or where the verdict depends on a setting
    assert "plain" in calls and (first == PLAIN or first.startswith("It depends on")), first
    colors = figures.arm_colors(result)
    by_name = {n: figures.FIGURES[n](result, default, colors) for n in ("curves", "loss")}
    assert figures.hero(result, default.id).note == by_name["curves"].note  # the view's hero
    assert [s.note for s in figures.evidence(result, default.id)] == [by_name["loss"].note]


def test_nothing_of_the_kind_is_left_once_unregistered() -> None:
    assert FAKE_KIND not in KINDS and FAKE_KIND not in VIEWS and FAKE_STUDY not in QUESTIONS


@pytest.mark.slow
def test_the_kind_s_generated_page_shows_its_answer(calls, tmp_path, monkeypatch) -> None:
    from posviz.ui.cache import clear_caches

    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path))
    monkeypatch.delenv("POSVIZ_LAB_WARM_DIR", raising=False)
    clear_caches()
    run_question(FAKE_STUDY, store=RunStore(tmp_path))
    calls.clear()
    at = app_test(f"lab_{FAKE_STUDY}")
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Does a fake kind judge?"
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "clause" in calls and "plain" in calls, calls  # its view's words, on its page
    assert CLAUSE in shown or PLAIN in shown, shown[:500]
