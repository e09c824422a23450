"""The counting task of CoPE scaled to the lab (posviz.lab.studies.counting) and its training
loop (posviz.lab.studies.counting_train): answers read back by an independent interpreter,
position alone shown to be a poor predictor (with a control where it is a good one), and a tiny
run of every scheme."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import pytest
from pin_support import near
from runid_support import ids_with_edit

from posviz.lab.studies.counting import (
    MAX_VALUE,
    PAD,
    PASS,
    CountingConfig,
    counting_rng,
    last_set_error,
    majority_error,
    make_batch,
    position_only_error,
    positions_and_answers,
    recount,
    render,
)

SAMPLES = 1000


@lru_cache(maxsize=8)
def _pair(config: CountingConfig) -> tuple:
    """Two independent samples of one task (fit / test)."""
    fit = make_batch(config, counting_rng(0, 0, config.variables), SAMPLES)
    test = make_batch(config, counting_rng(0, 1, config.variables), SAMPLES)
    return fit, test


@pytest.mark.parametrize("variables", [1, 3, 5])
def test_every_answer_is_what_an_interpreter_reads_from_the_tokens(variables: int) -> None:
    batch = make_batch(CountingConfig(variables=variables), counting_rng(3, 0, variables), 400)
    positions, answers = positions_and_answers(batch)
    assert len(answers) == 400 and (batch.mask.sum(1) == 1).all()
    assert (positions == batch.valid.sum(1) - 1).all()  # the answer is read at the last token
    read = np.array([recount(row) for row in batch.inputs])  # raises on a malformed program
    np.testing.assert_array_equal(read, answers)
    assert answers.min() >= 0 and answers.max() <= MAX_VALUE
    assert set(np.unique(batch.inputs[~batch.valid])) <= {PAD}
    asked = batch.inputs[np.arange(400), positions]
    assert asked.max() < variables  # only the task's own variables appear
    # most statements are filler, and the answers spread (not one count)
    statements = (batch.inputs == PASS).sum() + (batch.inputs < variables).sum() - 400
    assert (batch.inputs == PASS).sum() / statements > 0.6
    assert len(np.unique(answers)) >= 5


def test_the_interpreter_counts_since_the_last_set_and_refuses_a_bad_program() -> None:
    a = 0
    set_, inc, print_ = 5, 6, 8
    program = [a, set_, a, inc, PASS, a, inc, a, set_, PASS, a, inc, print_, a, PAD]
    assert recount(np.array(program)) == 1
    assert render(np.array(program[:4])) == "a =0 a ++"
    with pytest.raises(ValueError, match="never set"):
        recount(np.array([1, set_, print_, a]))
    with pytest.raises(ValueError, match="ends with PRINT"):
        recount(np.array([a, set_, PASS]))


def test_batches_are_a_function_of_seed_and_stream() -> None:
    config = CountingConfig(variables=3)
    one = make_batch(config, counting_rng(1, 0, 3), 50)
    again = make_batch(config, counting_rng(1, 0, 3), 50)
    held = make_batch(config, counting_rng(1, 1, 3), 50)
    np.testing.assert_array_equal(one.inputs, again.inputs)
    assert one.inputs.shape != held.inputs.shape or (one.inputs != held.inputs).any()


@pytest.mark.parametrize("variables", [1, 3, 5])
def test_position_alone_predicts_no_better_than_the_commonest_answer(variables: int) -> None:
    fit, test = _pair(CountingConfig(variables=variables))
    error = position_only_error(positions_and_answers(fit), positions_and_answers(test))
    floor = majority_error(positions_and_answers(test)[1])
    assert error > 0.6  # measured 0.67–0.70 on these samples
    assert error > floor - 0.05  # knowing where the question is buys (almost) nothing


def test_position_only_error_is_low_where_position_gives_the_answer() -> None:
    """The control can fail: where the answer is a function of the question's position it finds
    that rule (error 0), and where it is not, it does no better than the commonest answer."""
    rng = np.random.default_rng(0)
    fit_pos, test_pos = rng.integers(6, 60, size=(2, SAMPLES))
    rule = lambda p: (p * 7) % (MAX_VALUE + 1)  # noqa: E731
    assert position_only_error((fit_pos, rule(fit_pos)), (test_pos, rule(test_pos))) == 0.0
    noise = rng.integers(0, 4, size=(2, SAMPLES))
    blind = position_only_error((fit_pos, noise[0]), (test_pos, noise[1]))
    assert blind > 0.7  # 4 equally likely answers: 0.75 at best


def test_more_variables_need_the_variables_told_apart() -> None:
    errors = {n: last_set_error(_pair(CountingConfig(variables=n))[1]) for n in (1, 3, 5)}
    assert errors[1] == 0.0
    assert errors[3] > 0.15 and errors[5] > errors[3] - 0.02  # measured 0.25, 0.29


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"variables": 6}, "variables"),
        ({"min_statements": 5, "max_statements": 4}, "statements"),
        ({"weights": (0, 5, 7)}, "weights"),
        ({"weights": (1, 2)}, "weights"),
    ],
)
def test_bad_settings_name_the_setting(changes: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        CountingConfig(**changes)


@pytest.mark.slow  # imports torch and builds a model: ~1.4 s CPU alone, more on a busy box
@pytest.mark.parametrize("pool", [None, 20])
def test_a_tiny_run_trains_every_scheme(pool: int | None) -> None:
    from posviz.lab.studies.counting import CountingRun
    from posviz.lab.studies.counting_train import train_counting

    run = CountingRun(
        CountingConfig(variables=3, max_statements=8),
        seeds=2, width=8, heads=2, layers=1, batch=8, steps=3, eval_size=16, checkpoints=3,
        train_programs=pool,
    )  # fmt: skip
    out = train_counting(run)
    assert out.checkpoint_steps == (1, 2, 3)
    for scheme in run.schemes:
        error = out.error[scheme]
        assert error.shape == (2, 3) and ((error >= 0) & (error <= 1)).all()
        assert np.isfinite(out.loss[scheme]).all()
    with pytest.raises(ValueError, match="train_programs"):
        CountingRun(CountingConfig(), batch=8, train_programs=4)


# --------------------------------------------------------------------------- the card's judge

FLOORS = {1: 0.66, 3: 0.69, 5: 0.69}


def _values(absolute: dict[int, float], relative: dict[int, float], spread: float = 0.01):
    """Per-seed errors of 4 seeds around the given means (absolute, and both relative arms)."""
    wobble = np.array([-1.5, -0.5, 0.5, 1.5]) * spread
    out = {"learned": {n: v + wobble for n, v in absolute.items()}}
    for rel in ("t5", "rope"):
        out[rel] = {n: v + wobble[::-1] for n, v in relative.items()}
    return out


def test_the_judge_agrees_with_the_published_shape_and_not_with_a_flat_one() -> None:
    from posviz.lab.studies.counting_card import AGREES, DISAGREES, PUBLISHED, judge_counting

    published = dict(PUBLISHED.numbers)
    shape = _values(
        {n: published[f"Absolute PE, {n} var"] / 100 for n in (1, 3, 5)},
        {n: published[f"Relative PE, {n} var"] / 100 for n in (1, 3, 5)},
    )
    outcome = judge_counting(shape, FLOORS)
    assert outcome.verdict == AGREES and len(outcome.conditions) == 6
    flat = _values({1: 0.10, 3: 0.12, 5: 0.13}, {1: 0.05, 3: 0.07, 5: 0.08})  # same gap
    outcome = judge_counting(flat, FLOORS)
    assert outcome.verdict == DISAGREES
    assert [c.holds for c in outcome.conditions] == [True, True, False] * 2


def test_the_judge_refuses_untrained_or_missing_arms() -> None:
    from posviz.lab.studies.counting_card import NOT_JUDGED, judge_counting

    untrained = _values({1: 0.6, 3: 0.7, 5: 0.7}, {1: 0.05, 3: 0.5, 5: 0.5})
    outcome = judge_counting(untrained, FLOORS)
    assert outcome.verdict == NOT_JUDGED and "not trained" in outcome.reason
    missing = _values({1: 0.1, 3: 0.6}, {1: 0.0, 3: 0.2, 5: 0.2})
    assert "learned at 5" in judge_counting(missing, FLOORS).reason
    one_seed = _values({1: 0.1, 3: 0.6, 5: 0.7}, {1: 0.0, 3: 0.2, 5: 0.2})
    one_seed["rope"][3] = np.array([0.2])
    assert judge_counting(one_seed, FLOORS).verdict == NOT_JUDGED


def test_the_registered_card_judges_its_stored_numbers_by_arm_with_the_same_judge() -> None:
    from posviz.lab.studies.counting_card import AGREES, NOT_JUDGED, PUBLISHED, arm_id
    from posviz.lab.studies.papers import GOLOVNEVA_2024

    published = dict(PUBLISHED.numbers)
    shape = _values(
        {n: published[f"Absolute PE, {n} var"] / 100 for n in (1, 3, 5)},
        {n: published[f"Relative PE, {n} var"] / 100 for n in (1, 3, 5)},
    )
    shape["nope"] = shape["learned"]  # trained and shown, not judged
    values = {
        arm_id(scheme, n): {"test_error": errors, "majority_error": np.full(4, FLOORS[n])}
        for scheme, by_n in shape.items()
        for n, errors in by_n.items()
    }
    assert GOLOVNEVA_2024.check(values).verdict == AGREES
    assert {a.id for a in GOLOVNEVA_2024.arms} == set(values)
    del values["learned_3v"]
    assert GOLOVNEVA_2024.check(values).verdict == NOT_JUDGED


def test_the_cards_arms_keep_the_pilot_e_setting_and_weigh_what_they_train() -> None:
    from posviz.lab.engine.run import step_cpu_s
    from posviz.lab.studies.counting_card import CARD_RUN
    from posviz.lab.studies.papers import GOLOVNEVA_2024

    assert (CARD_RUN.train_programs, CARD_RUN.seeds, CARD_RUN.first_seed) == (500, 5, 3)
    assert len(GOLOVNEVA_2024.arms) == len(CARD_RUN.schemes) * 3
    for arm in GOLOVNEVA_2024.arms:
        run = arm.config.run
        assert run.schemes == (arm.model.scheme,) and arm.id.endswith(f"_{run.task.variables}v")
        assert arm.config.max_len == run.task.max_tokens == 50
        assert step_cpu_s(arm.config) > 0
    with pytest.raises(ValueError, match="width"):
        dataclasses.replace(GOLOVNEVA_2024.arms[0].config, width=30)


@pytest.mark.slow
def test_the_card_trains_through_the_one_runner_and_is_judged_again_on_load(
    tmp_path, monkeypatch
) -> None:
    """A tiny card through :func:`run_paper_check`: the runner splits its arms over two
    threads, and every number is the one :func:`train_counting` gives the same run alone."""
    from posviz.lab.engine.store import RunStore
    from posviz.lab.studies import cards, papers
    from posviz.lab.studies.counting_train import train_counting

    tiny = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 8}
    arms = tuple(
        dataclasses.replace(a, config=dataclasses.replace(a.config, eval_batch=16, **tiny))
        for a in papers.GOLOVNEVA_2024.arms
    )
    check = dataclasses.replace(papers.GOLOVNEVA_2024, arms=arms)
    monkeypatch.setitem(papers.PAPER_CHECKS, check.id, check)
    reports = []
    card = cards.run_paper_check(check.id, store=RunStore(tmp_path), on_progress=reports.append)
    assert card.run_id == cards.card_run_id(check) != cards.card_run_id(papers.GOLOVNEVA_2024)
    assert set(card.inputs) == {a.id for a in arms} and reports[-1].step == 4
    assert card.verdict in (papers.AGREES, papers.DISAGREES, papers.NOT_JUDGED)
    alone = train_counting(
        dataclasses.replace(arms[0].config.run, schemes=("learned", "t5", "rope", "nope")),
        marks=(1, 2, 3, 4),
    )
    assert card.inputs["t5_1v"]["test_error"] == tuple(alone.error["t5"][:, -1])
    assert card.inputs["rope_1v"]["majority_error"] == tuple(alone.majority)
    again = RunStore(tmp_path).load_card(card.run_id, judge=cards.rejudge_card)
    assert (again.verdict, again.reason, again.inputs) == (card.verdict, card.reason, card.inputs)


def test_the_published_numbers_are_table_3_as_the_figure_prints_it() -> None:
    from posviz.lab.studies.counting_card import FIGURE, PUBLISHED

    assert "read from the authors' figure" in PUBLISHED.table and PUBLISHED.read_at == FIGURE
    assert FIGURE.endswith("projects/cope/figures/counting_task.png")
    rows = dict(PUBLISHED.numbers)
    assert [rows[f"Absolute PE, {n} var"] for n in (1, 3, 5)] == [5.3, 67.6, 71.5]
    assert [rows[f"Relative PE, {n} var"] for n in (1, 3, 5)] == [1.1, 17.8, 22.4]
    assert [rows[f"CoPE, {n} var"] for n in (1, 3, 5)] == [0.0, 1.2, 7.4]


# --------------------------------------------------------------------------- the card's run id


def _ids_with(monkeypatch, edited: str | None) -> dict[str, str]:
    """The counting card's run id (by its own function) and every registered study's, when the
    hashed source of the file named ``edited`` has one more line."""
    from posviz.lab.studies.counting_card import counting_run_id

    return ids_with_edit(monkeypatch, edited, counting=counting_run_id)


@pytest.mark.parametrize("edited", ["counting.py", "counting_train.py"])
def test_editing_the_task_changes_the_counting_id_and_no_other(monkeypatch, edited) -> None:
    before = _ids_with(monkeypatch, None)
    after = _ids_with(monkeypatch, edited)
    assert {k for k in before if after[k] != before[k]} == {"counting", "golovneva_2024"}
    assert before["counting"] == before["golovneva_2024"]
    for words in ("counting_card.py", "papers.py"):  # claim, criterion, judge: no retrain
        assert _ids_with(monkeypatch, words) == before


def check_card_numbers(card) -> None:
    """The registered counting card as docs/benchmarks.md quotes it (5 seeds, 500 programs), on
    any CPU (tests/pin_support.py): each judged estimate within 2 std over seeds of the docs'
    number, and pinned, the decisions that came out the same on the three numerics measured (the
    docs' machine, AVX-512 and AVX2 kernels here): the learned table behind T5 at 3 and 5
    variables, not behind RoPE — so the criterion's RoPE half fails. Whether the gap to T5 grows
    from 1 to 5 variables moved with the CPU (undecided on AVX2): checked as a number only."""
    rows = {c.text.split(" (")[0]: c for c in card.conditions}
    pins = {
        "absolute table above t5 at 3 variables": (0.036, True),
        "absolute table above t5 at 5 variables": (0.046, True),
        "the gap absolute − t5 grows from 1 to 5 variables": (0.110, None),
        "absolute table above rope at 3 variables": (-0.005, False),
        "absolute table above rope at 5 variables": (-0.013, False),
        "the gap absolute − rope grows from 1 to 5 variables": (0.002, False),
    }
    assert set(rows) == set(pins)
    for rule, (estimate, holds) in pins.items():
        assert near(rows[rule].numbers, estimate, seeds=5), (rule, rows[rule].numbers)
        assert holds is None or rows[rule].holds is holds, rule
    assert card.verdict == "does not agree in shape"


@pytest.mark.slow
@pytest.mark.answers
@pytest.mark.timeout(2400)  # 637 CPU-s: 12 min on 2 cores under a load of 4–6
def test_the_counting_card_is_what_the_docs_say(tmp_path) -> None:
    from posviz.lab.engine.store import RunStore
    from posviz.lab.studies.cards import run_paper_check

    check_card_numbers(run_paper_check("golovneva_2024", store=RunStore(tmp_path)))
