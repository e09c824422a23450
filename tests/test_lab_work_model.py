"""The lab's one work model (:mod:`posviz.lab.engine.run`: :func:`step_cpu_s`,
:func:`eval_cpu_s`, :attr:`Unit.cost`): what it counts, that the runner's thread balancing and the
pages' estimates use the same one, and that it splits evaluation-heavy work evenly. No timing:
the constants' fit to measured runs is in docs/benchmarks.md ("Estimates")."""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from posviz.lab import QUESTIONS
from posviz.lab.engine import run
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.run import Unit, balance, eval_cpu_s, makespan, step_cpu_s
from posviz.lab.present import live
from posviz.lab.studies.cards import CardStudy
from posviz.lab.studies.papers import PAPER_CHECKS
from posviz.lab.studies.questions import QuestionStudy, question_parts


@dataclass(frozen=True)
class _Member:
    id: str
    model: ModelConfig
    config: LabConfig


def _unit(*configs: LabConfig, checkpoints: tuple[int, ...] = (100, 200, 300)) -> Unit:
    members = tuple(_Member(f"m{i}", ModelConfig(), c) for i, c in enumerate(configs))
    return Unit("task", members, configs[0].steps, checkpoints)


def test_evaluation_work_grows_with_the_checkpoints_and_the_eval_lengths() -> None:
    config = LabConfig(eval_lengths=(16,), seeds=3)
    # every checkpoint adds one held-out evaluation of every seed, nothing else
    four, none = _unit(config, checkpoints=(75, 150, 225, 300)), _unit(config, checkpoints=())
    assert four.cost - none.cost == pytest.approx(4 * 3 * eval_cpu_s(config))
    assert none.cost == pytest.approx(3 * 300 * step_cpu_s(config))  # training alone
    # a longer evaluation length adds its own pass; attention makes it grow faster than length
    longer = replace(config, eval_lengths=(16, 64))
    assert eval_cpu_s(longer) == pytest.approx(
        eval_cpu_s(config) + eval_cpu_s(replace(config, eval_lengths=(64,)))
    )
    at = {n: eval_cpu_s(replace(config, eval_lengths=(n,))) for n in (12, 16, 32, 64)}
    assert at[64] / at[32] > 2.0 and at[32] / at[16] > 2.0
    # lengths whose keys pad to the same 16 cost in proportion to their tokens
    assert at[16] / at[12] == pytest.approx(16 / 12)
    # and evaluation scales with its sequences, training not at all
    more = replace(config, eval_batch=2 * config.eval_batch)
    assert eval_cpu_s(more) == pytest.approx(2 * eval_cpu_s(config))
    assert step_cpu_s(more) == step_cpu_s(config)


def test_a_training_step_scales_with_batch_and_layers_and_its_attention_with_heads() -> None:
    config = LabConfig(max_len=32, eval_lengths=(32,), heads=2)
    assert step_cpu_s(replace(config, batch=64)) == pytest.approx(2 * step_cpu_s(config))
    assert step_cpu_s(replace(config, layers=4)) == pytest.approx(2 * step_cpu_s(config))
    # the scores' cost grows with the heads at one width (masking and softmax act per head)
    assert step_cpu_s(replace(config, heads=8)) > step_cpu_s(config)
    assert step_cpu_s(replace(config, max_len=32, min_len=32)) == step_cpu_s(config)
    assert eval_cpu_s(config) < step_cpu_s(config) * config.eval_batch / config.batch  # forward


def test_the_key_padding_is_the_models() -> None:
    # read from the source: importing the model imports torch (seconds), which estimates avoid
    source = Path(run.__file__).with_name("model.py").read_text(encoding="utf-8")
    values = [
        node.value.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "KEY_ALIGN" for t in node.targets)
    ]
    assert values == [run.KEY_ALIGN]


def _trained(member) -> float:
    """CPU seconds of one training step of ``member``: its config's, or a pass at its own
    ``train_length`` (a study's arms that train on less, or nothing)."""
    length = getattr(member, "train_length", None)
    c = member.config
    return step_cpu_s(c) if length is None else run.pass_cpu_s(c, c.batch, length)


def test_the_pages_estimates_count_the_runners_own_work() -> None:
    """One work model: a plan's work is its study's units' cost (what the runner balances its
    threads by), evaluation included, for every question part and paper check."""
    for q in QUESTIONS.values():
        for part in question_parts(q):
            units = QuestionStudy(q, q.default, part).units()
            plan = live.question_plan(q.id, q.default, part=part)
            assert plan.work == pytest.approx(sum(u.cost for u in units))
            assert plan.estimate_s == pytest.approx(live.START_S + plan.work / run.TRAIN_THREADS)
            training = sum(m.config.seeds * u.steps * _trained(m) for u in units for m in u.members)
            assert plan.work > training  # the held-out evaluations are counted
    for check_id, check in PAPER_CHECKS.items():
        units = CardStudy(check).units()
        assert live.card_plan(check_id).work == pytest.approx(sum(u.cost for u in units))
    # a custom Run is counted the same way (fewer seeds: less work)
    q = QUESTIONS["learned"]
    fewer = live.question_plan(q.id, dataclasses.replace(q.default, seeds=q.default.seeds - 2))
    assert fewer.work < live.question_plan(q.id, q.default).work


def test_balance_splits_evaluation_heavy_members_evenly() -> None:
    """Three members with the same training; one also evaluates at a long length, costing about
    the other two together. Counted by training alone they look equal and the greedy split
    pairs the heavy one with a light one (3 : 1); counted with evaluation it trains alone."""
    light = LabConfig(max_len=16, eval_lengths=(16,), eval_batch=8, steps=200, seeds=1)
    marks = tuple(range(20, 201, 20))
    per_sequence = eval_cpu_s(replace(light, eval_lengths=(16, 64), eval_batch=1))
    wanted = (200 * step_cpu_s(light) / len(marks) + eval_cpu_s(light)) / per_sequence
    heavy = replace(light, eval_lengths=(16, 64), eval_batch=round(wanted))
    unit = Unit(
        "task",
        (_Member("heavy", ModelConfig(), heavy), _Member("light0", ModelConfig(), light),
         _Member("light1", ModelConfig(), light)),
        200,
        marks,
    )  # fmt: skip
    train = unit.steps * step_cpu_s(light)
    extra = unit.member_cost(unit.members[0]) - unit.member_cost(unit.members[1])
    assert extra == pytest.approx(train, rel=0.05)  # the heavy member costs two light ones
    balanced = balance([unit], threads=2)
    assert sorted(m.id for u in balanced for m in u.members) == ["heavy", "light0", "light1"]
    assert sorted(sorted(m.id for m in u.members) for u in balanced) == [
        ["heavy"],
        ["light0", "light1"],
    ]
    assert makespan(balanced, threads=2) <= 0.55 * unit.cost
    # equal members still halve evenly
    even = _unit(*[light] * 4)
    halves = balance([even], threads=2)
    assert [len(u.members) for u in halves] == [2, 2]
    assert makespan(halves, threads=2) == pytest.approx(even.cost / 2)
