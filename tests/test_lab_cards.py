"""Paper checks through the run machinery: trained, judged by their own pre-registered criterion,
stored with the published numbers beside this run's, read back without training."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from pin_support import near, within

import posviz.lab.studies.cards as cards
import posviz.lab.studies.papers as papers
from posviz.lab.engine.store import RunStore
from posviz.lab.present.cli import main
from posviz.lab.studies.loading import load_judged_card
from posviz.lab.studies.papers import HAVIV_2022, NOT_JUDGED


@pytest.fixture
def tiny_haviv(monkeypatch: pytest.MonkeyPatch):
    """Haviv et al.'s check with every arm shrunk to a few steps (same arms, judge, criterion)."""
    arms = tuple(
        replace(a, config=replace(a.config, steps=4, width=16, batch=4, eval_batch=8, seeds=2))
        for a in HAVIV_2022.arms
    )
    check = replace(HAVIV_2022, arms=arms)
    monkeypatch.setattr(cards, "paper_check", lambda check_id: check)
    monkeypatch.setitem(cards.PAPER_CHECKS, check.id, check)
    return check


@pytest.mark.slow  # over 2 s on 2 quiet cores (a run of every arm and its size ladder)
def test_a_paper_check_runs_judges_and_is_stored(tiny_haviv, tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    card = cards.run_paper_check("haviv_2022", store=store)
    assert card.run_id == cards.card_run_id(tiny_haviv)
    assert card.published == HAVIV_2022.published and card.criterion == HAVIV_2022.criterion
    assert set(card.inputs) == {a.id for a in tiny_haviv.all_arms}  # with the size ladder's
    assert "by model width: width 16 (this card's)" in card.sizes  # judged from what was stored
    own = tiny_haviv.arms[0].config  # the trend says the one setting it was measured at
    assert f"one learning rate ({own.lr:g}) with seeds 0–1" in card.sizes
    assert all(len(v["loss"]) == 2 for v in card.inputs.values())
    assert card.verdict in ("agrees in shape", "does not agree in shape", NOT_JUDGED)
    assert (card.agrees is None) == (card.verdict == NOT_JUDGED)
    assert len(card.this_run) == len(tiny_haviv.arms) and "perplexity" in card.this_run[0]
    assert set(card.convergence) == set(card.inputs)
    again = cards.run_paper_check("haviv_2022", store=store)  # stored: read, not trained
    assert again == card and cards.stored_cards(store=store) == {"haviv_2022": card}


@pytest.mark.slow  # over 2 s on 2 quiet cores (a run of every arm and its size ladder)
def test_a_card_is_not_read_as_a_question_run(tiny_haviv, tmp_path: Path) -> None:
    from posviz.labfiles import CorruptEntry

    store = RunStore(tmp_path)
    card = cards.run_paper_check("haviv_2022", store=store)
    with pytest.raises(CorruptEntry, match="not a 'question' run"):
        store.load(card.run_id)
    assert [s.question_id for s in store.list()] == ["paper:haviv_2022"]


def test_the_card_run_id_follows_every_arm_setting(tiny_haviv) -> None:
    changed = replace(
        tiny_haviv,
        arms=(replace(tiny_haviv.arms[0], config=replace(tiny_haviv.arms[0].config, lr=0.02)),
              *tiny_haviv.arms[1:]),
    )  # fmt: skip
    assert cards.card_run_id(changed) != cards.card_run_id(tiny_haviv)


def test_check_command_prints_published_and_this_run(tiny_haviv, tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["check", "haviv_2022", "--store", str(tmp_path)], out=out) == 0
    text = out.getvalue()
    assert "Published, Table 4 (p. 5)" in text and "147.18" in text  # read from the paper
    assert "This run:" in text and "Criterion (fixed before the run):" in text
    assert "Verdict:" in text
    assert "Does a bigger model move it? " in text and "by model width: width 16" in text


@pytest.mark.slow
@pytest.mark.answers
def test_press_card_agrees_in_shape_as_the_readme_says(tmp_path: Path) -> None:
    """The real Press et al. check (about 25 s): the sinusoid's perplexity at 4x the training
    length rises (README: 1.88x, 95% interval 1.66-2.13), ALiBi's stays flat (0.97x, 0.94-1.00)."""
    import math

    card = cards.run_paper_check("press_2022", store=RunStore(tmp_path))
    assert card.verdict == "agrees in shape"
    sinusoid, alibi = (math.exp(c.numbers["estimate"]) for c in card.conditions)
    assert 1.66 <= sinusoid <= 2.13 and 0.94 <= alibi <= 1.00


@pytest.mark.slow
@pytest.mark.answers
@pytest.mark.timeout(2400)  # Haviv's card with its ladder: 785 s on 2 quiet cores
@pytest.mark.parametrize(
    ("check_id", "gaps", "intervals", "readiness"),
    [
        # perplexity without ÷ with the sinusoid at widths 16, 32 (the card's), 64
        (
            "haviv_2022",
            (1.250, 1.425, 1.291),
            ((1.222, 1.278), (1.416, 1.434), (1.266, 1.316)),
            None,
        ),
        # T5 − NoPE on unseen positions at 2, 3, 4 layers; NoPE's in-range accuracy beside it
        ("kazemnejad_2023", (0.653, 0.566, 0.487), None, (0.658, 0.846, 0.941)),
    ],
)
def test_the_size_ladders_are_what_the_readme_says(
    check_id, gaps, intervals, readiness, tmp_path
) -> None:
    """The two cards that do not reproduce, trained at full size with their size ladders (about
    13 and 5 minutes on 2 quiet cores): each rung's gap, paired over 5 seeds, as README quotes
    it, within 2 std over seeds on any CPU (tests/pin_support.py; a ratio's on its log scale)."""
    import math

    check = papers.paper_check(check_id)
    ladder = check.sizes
    card = cards.run_paper_check(check_id, store=RunStore(tmp_path))
    base = getattr(next(a for a in check.arms if a.id == ladder.a).config, ladder.axis)
    outcome = papers.judge_sizes(ladder, card.inputs, base)
    scale = math.log if ladder.ratio else float
    for i, (rung, pinned) in enumerate(zip(outcome.rungs, gaps, strict=True)):
        numbers = {"estimate": rung.gap.estimate, "low": rung.gap.low, "high": rung.gap.high}
        quoted = tuple(map(scale, intervals[i])) if intervals else None
        assert near(numbers, scale(pinned), seeds=rung.gap.n, pinned_interval=quoted), (
            rung.size,
            numbers,
        )
    if readiness is None:  # every Haviv rung trained: the steps are said one by one
        assert all(not r.untrained for r in outcome.rungs) and outcome.change is not None
        return
    name = ladder.readiness[0]
    nope = [
        ladder.b if size == base else papers.size_arm_id(ladder.b, ladder.axis, size)
        for size in ladder.sizes
    ]
    for arm, pinned in zip(nope, readiness, strict=True):
        assert within(card.inputs[arm][name], pinned), (arm, card.inputs[arm][name])
    assert all(r.untrained for r in outcome.rungs)  # NoPE untrained at every depth: no trend


@pytest.mark.slow  # over 2 s on 2 quiet cores (a run of every arm and its size ladder)
def test_a_stored_card_is_judged_again_when_it_is_loaded(tiny_haviv, tmp_path: Path) -> None:
    """The judge is not in the run id: a stored verdict is recomputed from the stored numbers."""
    store = RunStore(tmp_path)
    card = cards.run_paper_check("haviv_2022", store=store)
    stale = RunStore(tmp_path / "stale")
    stale.save(
        replace(card, verdict="stale words", reason="stale", this_run=("stale",), claim="old")
    )
    again = load_judged_card(stale, card.run_id)
    assert (again.verdict, again.reason, again.this_run) == (
        card.verdict,
        card.reason,
        card.this_run,
    )
    assert again.claim == tiny_haviv.claim  # words are not in the run id: today's are shown


def test_the_card_view_draws_the_size_ladder_with_untrained_sizes_in_grey(tiny_haviv, tmp_path):
    from posviz.charts.style import CONTROL_COLOR
    from posviz.lab.present.cards import card_view

    card = cards.run_paper_check("haviv_2022", store=RunStore(tmp_path))
    view = card_view("haviv_2022", card)
    headings = [s.heading for s in view.sections]
    assert headings[:2] == [
        "Criterion, fixed in code before the run.",
        "What it would take to differ.",
    ]
    assert [b.split(": ", 1)[1] for b in view.sections[0].bullets] == [
        c.text for c in card.conditions
    ]  # the conditions under the criterion
    sized = next(s for s in view.sections if s.heading == "Does a bigger model move it?")
    frame = sized.figure.data
    assert list(frame["variant"].str.split(" ·").str[0]) == [
        "width 16 (this card)",
        "width 32",
        "width 64",
    ]  # the tiny check runs at width 16: 32 and 64 are the ladder's other sizes
    assert "not trained" in frame["variant"].iloc[0]  # four steps: nothing is trained
    assert (frame["low"] <= frame["mean"]).all() and (frame["mean"] <= frame["high"]).all()
    spec = sized.figure.chart.to_dict()
    assert CONTROL_COLOR in str(spec) and "competitive: 1.1×" in str(spec)
    assert [s.heading for s in card_view("haviv_2022", None).sections] == [headings[0]]
