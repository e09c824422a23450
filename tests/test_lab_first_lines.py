"""The lab's answers in one line with the evidence folded (issue 37 item 1), and text that never
contradicts its chart (item 3), checked at the generator (:mod:`posviz.lab.present`).

For every question of the registry (:data:`posviz.lab.QUESTIONS`) and every paper check
(:data:`posviz.lab.studies.papers.PAPER_CHECKS`) — tiny real runs of each (the slow test), and
judged synthetic sweeps that reach the decided branches (every kind: a verdict that holds
everywhere, one that depends on a setting, one at the accuracy ceiling, one decided only with
longer training, a ranking, rare rows, need positions) — the text a page shows must:

* open with a first line of at most 15 words with no formula character;
* hold in the line and the folded evidence every number of the paragraph the page showed before
  (the headline and the bullets under it), nothing dropped;
* say no clause twice (sentences, ``;`` clauses and long parentheticals such as an arm's
  "(token d−p ‖ position p)" or "(not trained, or the interval is too wide)"), nor its answer
  word ("Yes: … Yes: …").
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from test_first_lines import numbers_in
from test_lab_verdicts import _extrapolating, _judged_cells, _learned_wins, _pair, _result

from posviz.analysis.headlines import FIRST_SENTENCE_WORDS, FORMULA_CHARS, Verdict
from posviz.lab import QUESTIONS, LabResult, RunStore, run_question
from posviz.lab.engine.results import Bound
from posviz.lab.present import answer, cards, figures
from posviz.lab.studies import judging as judge
from posviz.lab.studies.cards import run_paper_check
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.lab.studies.summarise import with_panel

TINY = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 4, "eval_batch": 8}

_SPLIT = re.compile(r"(?<=[.;!?])\s| — ")
_PARENTHETICAL = re.compile(r"\([^()]{12,}\)")


def clauses_of(verdict: Verdict) -> list[str]:
    """Every clause the page shows: the line, each item's label and its text cut at sentence
    ends, ``;`` and ``:``, and every long parenthetical (lower case, without stops)."""
    out = [verdict.first_line]
    for label, text in verdict.folded:
        out += [label, *_SPLIT.split(text), *(p[1:-1] for p in _PARENTHETICAL.findall(text))]
    said = [c.strip().rstrip(".;:").lower() for c in out]
    # prose: three words or more; four with a number (a measured value that two arms share by
    # chance, "in range accuracy 0.058 ± 0.006", is not a clause said twice)
    return [c for c in said if len(re.findall(r"[a-z]{2,}", c)) >= 3 + bool(re.search(r"\d", c))]


def check(verdict: Verdict, old: str, where: str) -> None:
    line = verdict.first_line
    assert line and len(line.split()) <= FIRST_SENTENCE_WORDS, f"{where}: {line!r}"
    assert not set(line) & FORMULA_CHARS, f"{where}: a formula in the first line {line!r}"
    assert verdict.folded, f"{where}: no evidence under {line!r}"
    for label, text in verdict.folded:  # show_verdict shows up to 80 / 400 characters whole
        assert len(label) <= answer.MAX_LABEL and len(text) <= answer.MAX_TEXT, (where, label)
    shown = " ".join([line, *(f"{label} {text}" for label, text in verdict.folded)])
    missing = numbers_in(old) - numbers_in(shown)
    assert not missing, f"{where}: {sorted(missing)} dropped from {old!r}"
    said = clauses_of(verdict)
    twice = sorted({c for c in said if said.count(c) > 1})
    assert not twice, f"{where}: said twice: {twice}"
    if ":" in line.split()[0]:  # "Yes: …", "Undecided: …" — not again in the evidence
        word = line.split()[0].lower()
        again = [text for _, text in verdict.folded if text.lower().startswith(word)]
        assert not again, f"{where}: {word!r} said again in {again}"


def check_answer(result: LabResult, where: str) -> None:
    """The question page's text: the old paragraph is the headline and its bullets."""
    old = " ".join([answer.headline(result), *answer.support_lines(result)])
    check(answer.verdict(result), old, where)
    assert answer.index_line(result.question_id, result) == answer.verdict(result).first_line


# --------------------------------------------------------------------------- decided branches


def _learned(metrics_of, panel_metrics=None) -> LabResult:
    q = QUESTIONS["learned"]
    default = _result(q, _judged_cells(q, q.sweep, metrics_of))
    if panel_metrics is None:
        return with_panel(default, None)
    return with_panel(default, _result(q, _judged_cells(q, q.panel, panel_metrics)))


def _depends_on_init(plan) -> dict:
    if plan.settings[1].key == "matched":
        return _pair((0.70, 0.71, 0.69, 0.70, 0.72), (0.90, 0.91, 0.89, 0.90, 0.92))
    return _learned_wins(plan)


def _at_ceiling(plan) -> dict:
    """Both at accuracy 1; the sinusoid learns faster from a small table, the learned one from
    a matched one (issue 37's example)."""
    ones, nope = (1.0,) * 5, (0.06,) * 5
    fast, slow = (0.40, 0.41, 0.42, 0.40, 0.41), (1.30, 1.32, 1.31, 1.33, 1.30)
    learned, sinusoid = (slow, fast) if plan.settings[1].key != "matched" else (fast, slow)
    return {
        "learned": {"accuracy": ones, "train_loss_mean": learned},
        "sinusoid": {"accuracy": ones, "train_loss_mean": sinusoid},
        "nope": {"accuracy": nope, "train_loss_mean": (2.0,) * 5},
    }


def _induction_longer() -> LabResult:
    """Undecided at the preset's budget (arms still improving), decided at the longer one."""
    q = QUESTIONS["induction"]

    def metrics_of(plan) -> dict:
        rope, nope = (0.99, 0.96) if plan.settings[0].key == "long" else (0.99, 0.6)
        jitter = np.array([0.0, 0.004, -0.004, 0.002, -0.002])
        return {
            arm: {"accuracy": tuple(v + jitter), "train_loss_mean": tuple(1 - v + jitter)}
            for arm, v in (("rope", rope), ("learned", rope), ("nope", nope), ("one_layer", 0.4))
        }

    def status(plan) -> str:
        return "trained" if plan.settings[0].key == "long" else "improving"

    default = _result(q, _judged_cells(q, q.sweep, metrics_of, status=status))
    return with_panel(default, _result(q, _judged_cells(q, q.panel, metrics_of, status=status)))


def _extrapolation() -> LabResult:
    q, run = QUESTIONS["extrapolation"], judge.judge_extrapolation
    metrics_of = _extrapolating(swap_at="lr_x3")
    default = _result(q, _judged_cells(q, q.sweep, metrics_of, run))
    return with_panel(default, _result(q, _judged_cells(q, q.panel, metrics_of, run)))


def _rare_rows() -> LabResult:
    q = QUESTIONS["rare_rows"]

    def metrics_of(plan) -> dict:
        base = {"movement_late_ratio": (0.3, 0.31, 0.29)}
        return {
            "short": {**base, "accuracy_late": (0.13, 0.12, 0.14)},
            "uniform": {**base, "accuracy_late": (0.97, 0.96, 0.98)},
            "rope_short": {"accuracy_late": (1.0, 1.0, 0.99)},
        }

    return with_panel(
        _result(q, _judged_cells(q, q.sweep, metrics_of, judge.judge_rare_rows)), None
    )


def _need_positions() -> LabResult:
    q = QUESTIONS["need_positions"]

    def metrics_of(plan) -> dict:
        def arm(acc: float, loss: float) -> dict:
            jitter = np.array([0.0, 0.01, -0.01])
            return {"accuracy": tuple(acc + jitter), "loss": tuple(loss + jitter)}

        return {
            "enc_nope": arm(0.22, 2.8),
            "enc_learned": arm(0.8, 2.2),
            "dec_nope": arm(0.40, 2.0),
            "dec_learned": arm(0.45, 1.99),
        }

    cells = _judged_cells(q, q.sweep, metrics_of, judge.judge_need_positions)
    ceiling = Bound("mlm", "accuracy", 0.534, "held-out set", "0.534", 0.19)
    return with_panel(_result(q, cells, {"text": ceiling}), None)


DECIDED = {
    "learned wins everywhere, with its panel": lambda: _learned(_learned_wins, _learned_wins),
    "learned depends on the init": lambda: _learned(_depends_on_init),
    "at the ceiling, speed depends on the init": lambda: _learned(_at_ceiling),
    "induction decided only with longer training": _induction_longer,
    "extrapolation ranked, depends on the panel": _extrapolation,
    "rare rows": _rare_rows,
    "need positions": _need_positions,
}


@pytest.mark.parametrize("name", list(DECIDED))
def test_a_decided_answer_opens_with_one_line_and_folds_every_number(name: str) -> None:
    check_answer(DECIDED[name](), name)


def test_the_example_of_the_issue_reads_as_it_should() -> None:
    ceiling = _learned(_at_ceiling)
    verdict = answer.verdict(ceiling)
    assert verdict.first_line == (
        "It depends on the table's start: fixed sinusoid faster from small, learned table from "
        "matched."
    )
    labels = [label for label, _ in verdict.folded]
    assert labels[:2] == ["Accuracy", "Which learns faster depends on"]
    assert "fixed sinusoid learns faster" in dict(verdict.folded)["With the preset's settings"]
    rows = _rare_rows()
    line, evidence = answer.verdict(rows).first_line, dict(answer.verdict(rows).folded)
    assert line.startswith("Yes: ") and not evidence["With the preset's settings"].startswith("yes")


def test_an_arms_formula_is_defined_once_and_the_undecided_reason_said_once() -> None:
    q = QUESTIONS["concat"]
    metrics = {
        arm: {"accuracy": acc, "train_loss_mean": acc}
        for arm, acc in (
            ("add", (0.95, 0.96, 0.95)),
            ("concat", (0.80, 0.81, 0.79)),
            ("nope", (0.06, 0.06, 0.06)),
        )
    }
    result = with_panel(_result(q, _judged_cells(q, q.sweep, lambda plan: metrics)), None)
    verdict = answer.verdict(result)
    shown = " ".join(text for _, text in verdict.folded)
    assert shown.count("token d−p ‖ position p") == 1
    assert dict(verdict.folded)["Arms"].startswith("add = token d + position d")
    undecided = _need_positions_undecided()
    shown = " ".join(text for _, text in answer.verdict(undecided).folded)
    assert shown.count("not trained, or the interval is too wide") == 1


def _need_positions_undecided() -> LabResult:
    q = QUESTIONS["need_positions"]

    def metrics_of(plan) -> dict:
        jitter = np.array([0.0, 0.01, -0.01])
        return {a: {"accuracy": tuple(0.2 + jitter), "loss": tuple(3.0 + jitter)} for a in
                ("enc_nope", "enc_learned", "dec_nope", "dec_learned")}  # fmt: skip

    cells = _judged_cells(q, q.sweep, metrics_of, judge.judge_need_positions, status="improving")
    return with_panel(_result(q, cells), None)


def test_the_check_catches_a_repeated_clause_and_a_dropped_number() -> None:
    """The controls: the same checks fail a verdict built the old way."""
    result = _need_positions_undecided()
    old = " ".join([answer.headline(result), *answer.support_lines(result)])
    verdict = answer.verdict(result)
    twice = dataclasses.replace(verdict, evidence=(*verdict.evidence, verdict.evidence[0]))
    with pytest.raises(AssertionError, match="said twice"):
        check(twice, old, "an item said twice")
    (aside,) = _PARENTHETICAL.findall(" ".join(text for _, text in verdict.evidence))[:1]
    again = ("Again", f"as said {aside}")
    aside = dataclasses.replace(verdict, evidence=(*verdict.evidence, again))
    with pytest.raises(AssertionError, match="said twice"):
        check(aside, old, "a parenthetical said twice")
    dropped = dataclasses.replace(verdict, evidence=verdict.evidence[1:])
    with pytest.raises(AssertionError, match="dropped"):
        check(dropped, old, "an item left out")


def test_a_dependence_two_findings_share_is_said_once() -> None:
    """The sinks answer's full-size run ended two findings with "…; depends on the budget": the
    clause is cut from each and said once, naming both; a dependence of one finding stays."""
    items = [
        ("Positions", "RoPE more than NoPE, in 1 of 2; depends on the budget"),
        ("Sink₁", "not every seed, in 1 of 2; depends on the budget"),
        ("Held-out", "lr 0.06, in 3 of 4; depends on the learning rate"),
    ]
    said = answer._depends_once(items)
    assert said == [
        ("Positions", "RoPE more than NoPE, in 1 of 2"),
        ("Sink₁", "not every seed, in 1 of 2"),
        ("Held-out", "lr 0.06, in 3 of 4; depends on the learning rate"),
        ("Depends on the budget", "Positions and Sink₁"),
    ]
    assert answer._depends_once(items[1:]) == items[1:]


# --------------------------------------------------------------------------- line, hero, bullets


def test_the_line_the_hero_and_the_evidence_read_one_result() -> None:
    """The induction page while its longer run is pending says why it is undecided beside the
    preset's chart (the chart's note names the arm still improving); once the longer run is
    judged in, the line, the cell the hero draws and the evidence all change together."""
    q = QUESTIONS["induction"]
    pending = _result(q, _judged_cells(q, q.sweep, lambda p: _induction_metrics(p), status=(
        lambda plan: "improving")))  # fmt: skip
    pending = with_panel(pending, None)
    line = answer.verdict(pending).first_line
    assert line.startswith("Undecided yet: ") and "still improving" in line
    cell = answer.answer_cell(pending)
    assert cell == pending.default_cell.id
    note = figures.hero(pending, cell).caption
    assert note.startswith("Not a verdict yet: ") and "still improving" in note

    landed = _induction_longer()
    line = answer.verdict(landed).first_line
    assert line.startswith("With longer training, the 2-layer RoPE model does better")
    cell = landed.cell(answer.answer_cell(landed))
    assert cell.setting("budget").key in ("x6", "x18")  # the hero draws the cell that decides
    assert not cell.verdict.key.startswith("undecided")
    assert not figures.hero(landed, cell.id).caption.startswith("Not a verdict")
    evidence = dict(answer.verdict(landed).folded)
    assert "900 steps" in evidence["Where it differs"]


def _induction_metrics(plan) -> dict:
    jitter = np.array([0.0, 0.004, -0.004, 0.002, -0.002])
    return {
        arm: {"accuracy": tuple(v + jitter), "train_loss_mean": tuple(1 - v + jitter)}
        for arm, v in (("rope", 1.0), ("learned", 0.99), ("nope", 0.37), ("one_layer", 0.4))
    }


# --------------------------------------------------------------------------- every stored answer


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory):
    """A tiny run of every question and every paper check (seconds each)."""
    store = RunStore(tmp_path_factory.mktemp("lab_text"))
    results = {
        qid: run_question(qid, config=dataclasses.replace(q.default, **TINY), store=store)
        for qid, q in QUESTIONS.items()
    }
    with pytest.MonkeyPatch.context() as patch:
        for cid, check in list(PAPER_CHECKS.items()):
            arms = tuple(
                dataclasses.replace(a, config=dataclasses.replace(a.config, **TINY))
                for a in check.arms
            )
            patch.setitem(PAPER_CHECKS, cid, dataclasses.replace(check, arms=arms))
        stored = {cid: run_paper_check(cid, store=store) for cid in PAPER_CHECKS}
    return results, stored


@pytest.mark.slow
def test_every_stored_answer_and_card_opens_with_one_line(tiny_store) -> None:
    results, stored = tiny_store
    for qid, result in results.items():
        check_answer(with_panel(result, None), f"question {qid}")
    for cid, card in stored.items():
        view = cards.card_view(cid, card)
        check(cards.card_verdict(view), cards.card_paragraph(view), f"card {cid}")
        shown = " ".join([*view.this_run, *view.convergence, *(p.text for p in view.sections)])
        for arm, label in card.arm_labels.items():  # titles, never internal ids
            if arm != label:
                assert not re.search(rf"(?<![\w-]){re.escape(arm)}(?= \d|[:,;)])", shown), arm
        assert not re.search(r"\b[a-z0-9]+_[a-z0-9_]+\b", " ".join(view.convergence))


@pytest.mark.slow
def test_the_index_and_the_paper_checks_open_with_one_line(tiny_store) -> None:
    """/lab and /lab_papers in every state: nothing stored, computing, some, all."""
    results, stored = tiny_store
    none = dict.fromkeys(results)
    some = {**none, "learned": results["learned"]}
    for answers in (none, some, results):
        for computing in (False, True):
            verdict = answer.index_verdict(answers, computing=computing)
            check(verdict, verdict.sentence, f"index {sum(map(bool, answers.values()))}")
    one = dict(list(stored.items())[:1])
    for shown in ({}, one, stored):
        for computing in (False, True):
            verdict = cards.cards_verdict(shown, computing=computing)
            check(verdict, verdict.sentence, f"paper checks {len(shown)}")
