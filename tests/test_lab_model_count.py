"""A lab page's model count says how many models train: an evaluation-only arm reads another
arm's trained models, so it adds its evaluations to the estimate's work but no model."""

from __future__ import annotations

from posviz.lab.engine import sweep
from posviz.lab.engine.run import Unit
from posviz.lab.present import answer
from posviz.lab.present.live import LiveView, question_plan
from posviz.lab.studies.presets import question
from posviz.lab.studies.questions import QuestionStudy


def _design(question_id: str) -> tuple[int, int, int]:
    """``(arm settings, of which evaluation-only, optimiser steps of each model)`` of a
    question's default run, from its design (the sweep's instances); an arm shuffled at
    evaluation only reads the intact arm's model."""
    q = question(question_id)
    planned = [p for group in sweep.plan(q.arm_specs(), q.sweep, q.default).values() for p in group]
    read_only = [p for p in planned if q.variant(p.arm).condition == "eval_shuffled"]
    return len(planned), len(read_only), max(p.config.steps for p in planned)


def test_far_context_counts_only_the_models_it_trains():
    q = question("far_context")
    plan = question_plan(q.id, q.default)
    settings, read_only, steps = _design(q.id)
    assert read_only > 0  # the study this test is about has evaluation-only arms
    assert plan.instances == settings - read_only and plan.read_only == read_only
    assert plan.models == (settings - read_only) * q.default.seeds  # 9 settings × 3 seeds = 27
    assert plan.model_steps == plan.models * steps
    units = QuestionStudy(q, q.default, "default").units()
    # the estimate keeps the real work: the evaluation-only arms' held-out evaluations included
    assert plan.work == sum(u.cost for u in units)
    read = [m for u in units for m in u.members if m.train_length == 0]
    assert len(read) == read_only and all(_unit(units, m).member_cost(m) > 0 for m in read)
    assert f"press Run to train {plan.models} small models" in answer.no_answer(
        q.id, q.default, preset=True, running=False
    )
    view = LiveView(0, 0.5, 1, 2, 3.0, None, None, True)  # curves are not read by text()
    line = view.text(plan)
    assert f"Training {plan.models} models ({plan.instances} arm settings" in line
    assert f"{read_only} more are evaluated on them" in line


def _unit(units: list[Unit], member: object) -> Unit:
    return next(u for u in units if member in u.members)


def test_a_question_without_evaluation_only_arms_counts_every_arm():
    q = question("learned")
    plan = question_plan(q.id, q.default)
    settings, read_only, _ = _design(q.id)
    assert read_only == 0 and plan.read_only == 0
    assert plan.instances == settings and plan.models == settings * q.default.seeds
    units = QuestionStudy(q, q.default, "default").units()
    assert plan.model_steps == sum(u.model_steps for u in units)
    assert "more are evaluated" not in LiveView(0, 0.5, 1, 2, 3.0, None, None, True).text(plan)
