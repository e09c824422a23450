"""Paper checks: every criterion agrees on arrays shaped like the paper and fails on arrays that
are not; cards cite a known source and show no published number without its table."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from posviz.analysis.difference import paired_difference
from posviz.lab.engine.bounds import position_blind_ceiling
from posviz.lab.engine.card_inputs import (
    at_last_checkpoint,
    card_values,
    ladder_steps,
    position_accuracy,
)
from posviz.lab.engine.config import BIDIRECTIONAL_TASKS, CAUSAL_TASKS
from posviz.lab.engine.emergence import position_probe_by_layer
from posviz.lab.studies import far_context
from posviz.lab.studies.papers import (
    AGREES,
    COMPETITIVE_RATIO,
    DISAGREES,
    FLAT_RATIO,
    HAVIV_2022,
    HAVIV_LADDER,
    HAVIV_LEN,
    HAVIV_SIZES,
    KAZEMNEJAD_2023,
    KAZEMNEJAD_SIZES,
    NOT_JUDGED,
    PAPER_CHECKS,
    PRESS_2022,
    judge_ladder,
    judge_sizes,
    paper_check,
    size_arm_id,
    step_groups,
)
from posviz.references import REFERENCES

SEEDS = 5
JITTER = np.random.default_rng(0).normal(0, 0.01, SEEDS)  # shared by paired arms, as in the lab


def _seeds(mean: float, spread: float = 0.01, seed: int = 1) -> np.ndarray:
    return mean + JITTER + np.random.default_rng(seed).normal(0, spread, SEEDS)


# --------------------------------------------------------------------------- cards


@pytest.mark.parametrize("check", PAPER_CHECKS.values(), ids=list(PAPER_CHECKS))
def test_every_card_cites_a_known_source_with_a_link(check) -> None:
    ref = REFERENCES[check.reference]
    assert ref.url is not None and ref.url.startswith("https://arxiv.org/abs/")
    assert check.claim.endswith(".") and check.claim_read_at.startswith("https://")
    assert paper_check(check.id) is check


@pytest.mark.parametrize("check", PAPER_CHECKS.values(), ids=list(PAPER_CHECKS))
def test_no_published_number_without_its_table_and_setting(check) -> None:
    if not check.published:
        assert check.published_note.startswith("published numbers not shown:")
        prose = re.sub(r"https://\S+", "", check.published_note)  # arXiv ids are not results
        assert not re.search(r"\d+\.\d\d", prose)  # no number slipped in
        return
    assert check.published_note is None
    for table in check.published:
        if table.read_at.endswith(".md"):  # no PDF: a transcription of the paper, its page marks
            assert re.match(r"Table \d+ \(p\. \d+, read from a transcription, \S+\)$", table.table)
            assert "/blob/" in table.read_at
        elif not table.read_at.endswith(".pdf"):  # no PDF: a figure the authors published
            assert re.match(r"Table \d+ \(read from the authors' figure, \S+\)$", table.table)
            assert table.read_at.endswith(".png") and "/blob/" in table.read_at
        else:
            assert re.match(r"(Appendix )?(Table \d+|Figure \d+[a-z]?) \(p\. \d+\)$", table.table)
        assert table.setting and table.unit and table.numbers
        assert table.read_at.startswith("https://")
        assert all(isinstance(v, float) and label for label, v in table.numbers)


PDF_PAGES = Path(__file__).parent / "data" / "papers"  # the tables' pages, as pdftotext prints them
SCHEMES = ("NoPos", "NoPE", "Learned", "Sinusoidal", "ALiBi", "Rotary")


def _rows_of(label: str, page_text: str) -> list[str]:
    """The page's lines that can hold this row's number: its L_valid row or its scheme's rows."""
    lines = page_text.splitlines()
    if m := re.search(r"L_valid = (\d+)", label):
        return [line for line in lines if re.match(rf"\s*{m.group(1)}\s", line)]
    scheme = next(s for s in SCHEMES if s.lower() in label.lower())
    return [line for line in lines if re.search(rf"\b{scheme}\b", line)]


@pytest.mark.parametrize("check", PAPER_CHECKS.values(), ids=list(PAPER_CHECKS))
def test_every_published_number_is_printed_on_its_table_page_in_the_pdf(check) -> None:
    """Each number is on the PDF page its table names, on a row of its scheme or length.

    tests/data/papers holds the page's table lines as ``pdftotext -layout`` extracts them from the
    PDF at ``read_at``; a number typed from memory or from another table fails here. A number
    read in a transcription of the paper is checked on its row there (tests/test_lab_sinks_card.py).
    """
    arxiv = REFERENCES[check.reference].url.rsplit("/", 1)[1]
    printed_elsewhere = ("read from the authors' figure", "read from a transcription")
    for table in (t for t in check.published if not any(w in t.table for w in printed_elsewhere)):
        assert table.read_at.endswith(f"/{arxiv}.pdf")
        if table.table.startswith("Figure"):  # a figure's bars: found on their rows, by panel,
            assert table in far_context.PUBLISHED  # in tests/test_lab_far_context.py
            continue
        page = int(re.search(r"\(p\. (\d+)\)", table.table).group(1))
        text = (PDF_PAGES / f"{arxiv}-p{page}.txt").read_text(encoding="utf-8")
        assert re.search(rf"Table {table.table.split('Table ')[1].split()[0]}:", text)
        for label, value in table.numbers:
            printed = {f"{value:.2f}", f"{value:.3f}"}
            rows = _rows_of(label, text)
            assert any(p in row.split() for row in rows for p in printed), (label, value)


@pytest.mark.parametrize("check", PAPER_CHECKS.values(), ids=list(PAPER_CHECKS))
def test_every_arm_is_a_run_the_lab_can_train(check) -> None:
    assert len({a.id for a in check.arms}) == len(check.arms) >= 2
    for arm in check.arms:
        if check.train is None:  # the engine's tasks; a check with its own trainer has its own
            tasks = CAUSAL_TASKS if arm.model.kind == "decoder" else BIDIRECTIONAL_TASKS
            assert arm.config.task in tasks
        else:
            assert check.source and arm.model.kind == "decoder"
        assert arm.config.seeds >= 2  # the criteria decide on intervals over seeds
    assert check.criterion and check.caveat and check.inputs


def test_run_settings_match_the_shapes_they_test() -> None:
    (press,) = {a.config for a in PRESS_2022.arms}
    assert press.task == "lm" and press.min_len == press.max_len == press.eval_lengths[0]
    assert press.eval_lengths == (press.max_len, 2 * press.max_len, 4 * press.max_len)
    tasks = {a.id: (a.model.kind, a.model.scheme, a.config.task) for a in HAVIV_2022.arms}
    assert tasks["mlm_nope"] == ("encoder", "nope", "mlm")
    assert tasks["lm_nope"] == ("decoder", "nope", "lm")
    kaz = {a.config for a in KAZEMNEJAD_2023.arms}
    assert len(kaz) == 1 and next(iter(kaz)).eval_lengths == (16, 32)
    assert "learns position from the causal mask" in KAZEMNEJAD_2023.arms[0].label


def test_arms_with_different_budgets_are_run_in_separate_groups() -> None:
    two_budgets = replace(
        HAVIV_2022,
        arms=tuple(
            replace(a, config=replace(a.config, steps=200)) if a.config.task == "lm" else a
            for a in HAVIV_2022.arms
        ),
    )
    groups = step_groups(two_budgets)
    assert sorted(groups) == [200, 1500]
    assert {a.config.task for a in groups[1500]} == {"mlm"}
    assert {a.config.task for a in groups[200]} == {"lm"}
    assert list(step_groups(HAVIV_2022)) == [1500]  # one budget for both halves of the claim
    assert list(step_groups(PRESS_2022)) == [400]


def test_thresholds_read_the_papers_own_tables_as_agreeing() -> None:
    press = dict(PRESS_2022.published[0].numbers)
    assert press["sinusoidal, L_valid = 1012"] / press["sinusoidal, L_valid = 512"] > FLAT_RATIO
    assert press["ALiBi, L_valid = 15512"] / press["ALiBi, L_valid = 512"] <= FLAT_RATIO
    masked, causal = (dict(t.numbers) for t in HAVIV_2022.published[:2])
    assert masked["NoPos"] / masked["Learned"] > COMPETITIVE_RATIO
    assert causal["WikiText-103, NoPos"] / causal["WikiText-103, Learned"] <= COMPETITIVE_RATIO
    assert causal["The Pile, NoPos"] / causal["The Pile, Learned"] <= COMPETITIVE_RATIO


# --------------------------------------------------------------------------- Press et al.


def _press(sin_rise: float, alibi_rise: float) -> dict:
    return {
        "sinusoidal": {
            "loss@32": _seeds(1.8),
            "loss@64": _seeds(1.9),
            "loss@128": _seeds(1.8 + sin_rise, seed=2),
        },
        "alibi": {
            "loss@32": _seeds(1.8, seed=3),
            "loss@64": _seeds(1.75),
            "loss@128": _seeds(1.8 + alibi_rise, seed=4),
        },
    }


def test_press_agrees_when_the_sinusoid_rises_and_alibi_stays_flat() -> None:
    outcome = PRESS_2022.check(_press(0.6, -0.03))
    assert outcome.verdict == AGREES and outcome.agrees is True
    assert all(c.holds for c in outcome.conditions)
    used = outcome.conditions[0].numbers
    values = _press(0.6, -0.03)["sinusoidal"]
    expected = paired_difference(values["loss@128"], values["loss@32"])
    assert used["low"] == pytest.approx(expected.low) and used["threshold"] == math.log(FLAT_RATIO)
    assert "holds:" in outcome.text() and "×" in outcome.text()


@pytest.mark.parametrize(("sin_rise", "alibi_rise", "failing"), [(0.6, 0.3, 1), (0.0, -0.03, 0)])
def test_press_fails_when_the_shape_is_not_there(sin_rise, alibi_rise, failing) -> None:
    outcome = PRESS_2022.check(_press(sin_rise, alibi_rise))
    assert outcome.verdict == DISAGREES and outcome.agrees is False
    assert [c.holds for c in outcome.conditions].count(False) == 1
    assert not outcome.conditions[failing].holds


def test_press_is_not_judged_when_an_arm_is_worse_than_ignoring_the_input() -> None:
    # Overfit to the training text: held-out loss above the input-free loss (≈ 2.9 nats).
    overfit = {arm: {k: v + 2.6 for k, v in d.items()} for arm, d in _press(0.6, 0.3).items()}
    outcome = PRESS_2022.check(overfit)
    assert outcome.verdict == NOT_JUDGED and "overfit" in outcome.reason
    assert re.search(r"sinusoidal 4\.\d+, alibi 4\.\d+", outcome.reason)


def test_press_cannot_be_judged_without_every_seed_and_arm() -> None:
    diverged = _press(0.6, -0.03)
    diverged["alibi"]["loss@128"][2] = np.nan
    assert PRESS_2022.check(diverged).verdict == NOT_JUDGED
    assert "not finite" in PRESS_2022.check(diverged).reason
    one_seed = {arm: {k: v[:1] for k, v in d.items()} for arm, d in _press(0.6, 0).items()}
    assert "≥ 2" in PRESS_2022.check(one_seed).reason
    assert "no arm 'alibi'" in PRESS_2022.check({"sinusoidal": _press(0.6, 0)["sinusoidal"]}).reason
    assert PRESS_2022.check(diverged).agrees is None


# --------------------------------------------------------------------------- Haviv et al.


def _haviv(masked_gap: float, causal_gap: float, masked_accuracy: float = 0.5) -> dict:
    return {
        "mlm_sinusoidal": {"loss": _seeds(1.6), "accuracy": _seeds(masked_accuracy)},
        "mlm_nope": {"loss": _seeds(1.6 + masked_gap, seed=2), "accuracy": _seeds(0.2)},
        "lm_sinusoidal": {"loss": _seeds(1.4, seed=3), "accuracy": _seeds(0.5)},
        "lm_nope": {"loss": _seeds(1.4 + causal_gap, seed=4), "accuracy": _seeds(0.5)},
    }


def test_haviv_agrees_when_only_the_masked_lm_needs_positions() -> None:
    outcome = HAVIV_2022.check(_haviv(1.2, 0.02))
    assert outcome.verdict == AGREES


@pytest.mark.parametrize(("masked_gap", "causal_gap"), [(0.02, 0.02), (1.2, 0.4), (0.0, 0.5)])
def test_haviv_fails_when_the_shape_is_not_there(masked_gap, causal_gap) -> None:
    assert HAVIV_2022.check(_haviv(masked_gap, causal_gap)).verdict == DISAGREES


def test_haviv_is_not_judged_on_causal_lms_that_learned_nothing() -> None:
    values = _haviv(1.2, 0.0)
    for arm in ("lm_sinusoidal", "lm_nope"):
        values[arm]["loss"] = values[arm]["loss"] + 2.0  # 3.4 nats: above the input-free loss
    outcome = HAVIV_2022.check(values)
    assert outcome.verdict == NOT_JUDGED and "lm_nope 3.4" in outcome.reason


def test_haviv_is_not_judged_before_the_masked_lm_uses_positions() -> None:
    ceiling = position_blind_ceiling(HAVIV_2022.arms[0].config).value
    outcome = HAVIV_2022.check(_haviv(0.02, 0.02, masked_accuracy=ceiling - 0.02))
    assert outcome.verdict == NOT_JUDGED and f"{ceiling:.3f}" in outcome.reason
    assert HAVIV_2022.check(_haviv(1.2, 0.02, masked_accuracy=ceiling + 0.05)).verdict == AGREES


# --------------------------------------------------------------------------- Kazemnejad et al.


def _kazemnejad(unseen: dict[str, float], in_range: float = 0.99) -> dict:
    return {
        arm: {
            "in_range_accuracy": _seeds(in_range, 0.002, i),
            "unseen_accuracy": _seeds(acc, 0.02, i),
        }
        for i, (arm, acc) in enumerate(unseen.items())
    }


PAPER_ORDER = {"nope": 0.9, "t5": 0.9, "alibi": 0.7, "rope": 0.4, "sinusoidal": 0.2}
RELATIVE_FIRST = {"nope": 0.23, "t5": 0.87, "alibi": 0.68, "rope": 0.83, "sinusoidal": 0.18}


def test_kazemnejad_agrees_when_nope_leads_with_t5() -> None:
    assert KAZEMNEJAD_2023.check(_kazemnejad(PAPER_ORDER)).verdict == AGREES


def test_kazemnejad_fails_when_relative_schemes_lead() -> None:
    outcome = KAZEMNEJAD_2023.check(_kazemnejad(RELATIVE_FIRST))
    assert outcome.verdict == DISAGREES
    assert [c.holds for c in outcome.conditions] == [False, True, False]


def test_kazemnejad_is_not_judged_on_under_trained_arms() -> None:
    values = _kazemnejad(PAPER_ORDER)
    values["alibi"]["in_range_accuracy"] = _seeds(0.81)
    outcome = KAZEMNEJAD_2023.check(values)
    assert outcome.verdict == NOT_JUDGED and "alibi 0.8" in outcome.reason


def test_the_judge_is_a_pure_function_of_the_arrays() -> None:
    values = _kazemnejad(RELATIVE_FIRST)
    before = {a: {k: v.copy() for k, v in d.items()} for a, d in values.items()}
    assert KAZEMNEJAD_2023.check(values) == KAZEMNEJAD_2023.check(values)
    for arm, inputs in values.items():
        for name, array in inputs.items():
            np.testing.assert_array_equal(array, before[arm][name])


# --------------------------------------------------------------------------- wiring


@dataclass
class _HeldOut:  # the engine's HeldOut: accuracy/loss (E, c), per_position (E, c, length)
    accuracy: np.ndarray
    loss: np.ndarray
    per_position: np.ndarray


def _held(length: int, accuracy: float, loss: float) -> _HeldOut:
    per = np.full((SEEDS, 2, length), accuracy)
    per[:, -1, 16:] = accuracy / 2  # last checkpoint: half as good past position 16
    return _HeldOut(np.full((SEEDS, 2), accuracy), np.full((SEEDS, 2), loss), per)


def test_card_values_read_the_last_checkpoint_of_the_engine_arrays() -> None:
    heldout = {
        a.id: {16: _held(16, 0.98, 0.1), 32: _held(32, 0.8, 0.5)} for a in KAZEMNEJAD_2023.all_arms
    }
    values = card_values(KAZEMNEJAD_2023, heldout)
    np.testing.assert_allclose(values["nope"]["unseen_accuracy"], 0.4)
    np.testing.assert_allclose(values["nope"]["in_range_accuracy"], 0.98)
    heldout = {
        a.id: {n: _held(n, 0.5, 1.0 + n / 100) for n in (32, 64, 128)} for a in PRESS_2022.arms
    }
    np.testing.assert_allclose(card_values(PRESS_2022, heldout)["alibi"]["loss@128"], 2.28)
    with pytest.raises(ValueError, match="eval_lengths \\(32, 64, 128\\)"):
        card_values(PRESS_2022, {a.id: {32: _held(32, 0.5, 1.0)} for a in PRESS_2022.arms})
    with pytest.raises(ValueError, match="no arm 'mlm_sinusoidal'"):
        card_values(HAVIV_2022, {})


def test_position_accuracy_leaves_undefined_positions_out() -> None:
    per = np.array([[[np.nan, np.nan, 1.0, 0.0]], [[np.nan, np.nan, 1.0, 1.0]]])  # (E=2, c=1, 4)
    np.testing.assert_allclose(position_accuracy(per), [0.5, 1.0])
    np.testing.assert_allclose(position_accuracy(per, start=3), [0.0, 1.0])
    assert np.isnan(position_accuracy(per, start=0, stop=2)).all()
    np.testing.assert_allclose(at_last_checkpoint(np.array([[1.0, 2.0], [3.0, 4.0]])), [2.0, 4.0])


def test_a_real_run_of_the_engine_feeds_the_judge_and_the_layer_probe() -> None:
    from posviz.lab.engine.train import Arm, train_arms  # lazy: torch, for this test only

    arms = [
        Arm(a.id, a.model, replace(a.config, width=8, heads=2, seeds=2, eval_batch=8))
        for a in HAVIV_2022.all_arms
    ]
    trained = train_arms(arms, steps=2, checkpoints=[0, 2])
    values = card_values(HAVIV_2022, {arm_id: out.heldout for arm_id, out in trained.items()})
    assert all(v["loss"].shape == (2,) for v in values.values())
    outcome = HAVIV_2022.check(values)  # two steps: the masked LM cannot use positions yet
    assert outcome.verdict == NOT_JUDGED and "under-trained" in outcome.reason
    layers = trained.hidden_states("lm_nope", 64, 8)
    probe = position_probe_by_layer(layers)
    assert len(probe.layers) == len(layers) == 3 and probe.length == 64


# --------------------------------------------------------------------------- budget ladder


def _ladder_values(gaps: list[float], noise: float = 0.01) -> tuple[dict, tuple[int, ...]]:
    """Haviv-shaped values whose causal gap (nats) is ``gaps[i]`` at the i-th ladder step."""
    steps = ladder_steps(1500)
    rng = np.random.default_rng(3)
    base = {s: 2.0 + JITTER for s in steps}
    values = {"lm_nope": {}, "lm_sinusoidal": {}}
    for step, gap in zip(steps, gaps, strict=True):
        values["lm_sinusoidal"][f"loss@step{step}"] = base[step]
        values["lm_nope"][f"loss@step{step}"] = base[step] + gap + rng.normal(0, noise, SEEDS)
    return values, steps


def test_ladder_steps_are_checkpoints_at_every_share_of_the_run() -> None:
    assert ladder_steps(1500) == (375, 750, 1125, 1500)
    assert ladder_steps(1600)[-1] == 1600 and len(ladder_steps(4)) == 4


def test_a_shrinking_gap_is_a_trend_toward_the_papers_shape() -> None:
    values, steps = _ladder_values([0.40, 0.35, 0.30, 0.25])
    out = judge_ladder(HAVIV_LADDER, values, steps)
    assert [r.steps for r in out.rungs] == list(steps)
    assert out.change.high < 0
    assert "gap shrinks" in out.text and "toward the published shape" in out.text
    assert f"{math.exp(0.40):.2f}" in out.text  # the gaps are shown as perplexity ratios


def test_a_growing_gap_moves_away_and_a_flat_one_shows_no_trend() -> None:
    grows = judge_ladder(HAVIV_LADDER, *_ladder_values([0.25, 0.30, 0.35, 0.40]))
    assert "gap grows" in grows.text and "away from the published shape" in grows.text
    flat = judge_ladder(HAVIV_LADDER, *_ladder_values([0.30, 0.30, 0.30, 0.30], noise=0.05))
    assert flat.change.low < 0 < flat.change.high
    assert "does not move beyond its spread" in flat.text


def test_a_run_without_the_ladder_checkpoints_says_so() -> None:
    out = judge_ladder(HAVIV_LADDER, {"lm_nope": {}, "lm_sinusoidal": {}}, ladder_steps(1500))
    assert out.change is None and "not recorded" in out.text


# --------------------------------------------------------------------------- size ladder


def test_a_size_ladder_trains_its_two_arms_again_at_every_other_size() -> None:
    for check, ladder in ((HAVIV_2022, HAVIV_SIZES), (KAZEMNEJAD_2023, KAZEMNEJAD_SIZES)):
        extra = check.all_arms[len(check.arms) :]
        assert check.all_arms[: len(check.arms)] == check.arms and check.sizes is ladder
        own = getattr(next(a for a in check.arms if a.id == ladder.a).config, ladder.axis)
        others = [size for size in ladder.sizes if size != own]
        assert len(ladder.sizes) >= 3 and own in ladder.sizes
        assert sorted(a.id for a in extra) == sorted(
            size_arm_id(arm, ladder.axis, size) for arm in (ladder.a, ladder.b) for size in others
        )
        for arm in extra:
            twin = next(a for a in check.arms if arm.id.startswith(a.id + "_"))
            assert arm.model == twin.model and getattr(arm.config, ladder.axis) in others
            assert replace(arm.config, **{ladder.axis: own}) == twin.config  # nothing else moves
    assert PRESS_2022.all_arms == PRESS_2022.arms


def _size_values(gaps: dict[int, float], loss: float = 2.0, noise: float = 0.01) -> dict:
    """Haviv-shaped causal values whose gap (nats) at width ``w`` is ``gaps[w]``."""
    rng = np.random.default_rng(5)
    values = {}
    for width, gap in gaps.items():
        a, b = (
            (HAVIV_SIZES.a, HAVIV_SIZES.b)
            if width == 32
            else (size_arm_id(x, "width", width) for x in (HAVIV_SIZES.a, HAVIV_SIZES.b))
        )
        values[b] = {"loss": loss + JITTER}
        values[a] = {"loss": loss + JITTER + gap + rng.normal(0, noise, SEEDS)}
    return values


def test_a_gap_that_shrinks_with_width_is_a_trend_toward_the_paper() -> None:
    out = judge_sizes(HAVIV_SIZES, _size_values({16: 0.45, 32: 0.35, 64: 0.25}), base=32)
    assert [r.size for r in out.rungs] == [16, 32, 64] and out.change.high < 0
    assert "From width 16 to 64 the gap shrinks" in out.text
    assert "toward the published shape" in out.text and "width 32 (this card's)" in out.text
    small = out.rungs[0].gap
    assert small.estimate == pytest.approx(0.45, abs=0.02)
    assert f"width 16: {math.exp(small.estimate):.3f}×" in out.text  # as a perplexity ratio
    grows = judge_sizes(HAVIV_SIZES, _size_values({16: 0.25, 32: 0.35, 64: 0.45}), base=32)
    assert "gap grows" in grows.text and "away from the published shape" in grows.text
    flat = judge_sizes(HAVIV_SIZES, _size_values({16: 0.3, 32: 0.3, 64: 0.3}, noise=0.05), base=32)
    assert flat.change.low < 0 < flat.change.high and "does not move beyond" in flat.text


def test_a_gap_that_rises_then_falls_is_not_summed_up_as_a_trend() -> None:
    out = judge_sizes(HAVIV_SIZES, _size_values({16: 0.22, 32: 0.35, 64: 0.26}), base=32)
    assert "does not move one way with width" in out.text
    assert "from 16 to 32 it grows" in out.text and "from 32 to 64 it shrinks" in out.text
    assert "Between the two largest sizes it shrinks, toward the published shape" in out.text
    assert out.change.low > 0  # the two ends alone would have read as "grows"


def test_an_untrained_size_is_named_and_leaves_no_trend() -> None:
    values = _size_values({16: 0.45, 32: 0.35, 64: 0.25})
    blind = float(np.log(40.0))  # far above any character text's input-free loss
    for arm in (size_arm_id("lm_nope", "width", 16), size_arm_id("lm_sinusoidal", "width", 16)):
        values[arm]["loss"] = values[arm]["loss"] + blind
    out = judge_sizes(HAVIV_SIZES, values, base=32)
    small = out.rungs[0]
    assert "not below" in small.untrained and out.change is None  # shown, not used
    assert re.search(r"width 16: \d\.\d+× \(95% interval [^)]*\), not compared", out.text)
    assert "no trend in the gap is stated" in out.text


def test_a_run_without_the_ladders_arms_states_no_trend() -> None:
    values = _size_values({32: 0.35})  # an older run: only the card's own arms
    out = judge_sizes(HAVIV_SIZES, values, base=32)
    assert [r.untrained for r in out.rungs] == ["not in this run", "", "not in this run"]
    assert out.change is None and "no trend in the gap is stated" in out.text


def test_the_depth_ladder_compares_only_trained_depths() -> None:
    def arm(name: str, layers: int) -> str:
        return name if layers == 2 else size_arm_id(name, "layers", layers)

    values = {
        arm(name, layers): {
            "in_range_accuracy": _seeds(0.99 if layers > 2 or name == "t5" else 0.90),
            "unseen_accuracy": _seeds(0.9 if name == "t5" else 0.3 + 0.1 * layers),
        }
        for name in ("t5", "nope")
        for layers in (2, 3, 4)
    }
    out = judge_sizes(KAZEMNEJAD_SIZES, values, base=2)
    assert "nope 0.9" in out.rungs[0].untrained
    assert out.change is None  # two trained depths are not a ladder
    # but how far each depth is from trained is a finding: 0.90 at 2 layers, 0.99 at 3 and 4
    assert "NoPE's in-range accuracy" in out.text and "from 2 to 4 it rises" in out.text
    values["nope"]["in_range_accuracy"] = _seeds(0.99)
    out = judge_sizes(KAZEMNEJAD_SIZES, values, base=2)
    assert "From layers 2 to 4 the gap shrinks" in out.text and out.change.high < 0


def test_the_extractors_read_every_ladder_checkpoint() -> None:
    arm = next(a for a in HAVIV_2022.arms if a.id == "lm_nope")
    steps = ladder_steps(arm.config.steps)
    loss = np.arange(2 * len(steps), dtype=float).reshape(2, len(steps))
    accuracy = np.zeros_like(loss)
    none = np.zeros((*loss.shape, 1))
    out = HAVIV_2022.extract(arm, {HAVIV_LEN: _HeldOut(accuracy, loss, none)})
    for index, step in enumerate(steps):
        np.testing.assert_array_equal(out[f"loss@step{step}"], loss[:, index])
    older = HAVIV_2022.extract(arm, {HAVIV_LEN: _HeldOut(accuracy[:, :2], loss[:, :2], none)})
    assert not any(k.startswith("loss@step") for k in older)


def test_the_unseen_accuracy_ladder_reads_each_checkpoints_unseen_positions() -> None:
    arm = KAZEMNEJAD_2023.arms[0]
    trained, steps = arm.config.max_len, ladder_steps(arm.config.steps)
    per_position = np.zeros((2, len(steps), 2 * trained))
    per_position[:, :, trained:] = np.arange(len(steps))[None, :, None] / 10  # unseen only
    flat = np.ones((2, len(steps)))
    heldout = {
        trained: _HeldOut(flat, flat, np.ones((2, len(steps), trained))),
        2 * trained: _HeldOut(flat, flat, per_position),
    }
    out = KAZEMNEJAD_2023.extract(arm, heldout)
    for index, step in enumerate(steps):
        np.testing.assert_allclose(out[f"unseen_accuracy@step{step}"], index / 10)
