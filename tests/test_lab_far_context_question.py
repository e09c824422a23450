"""The far-context question (kind ``far_context``): its trainer's outputs and pairing, its judge's
gate and verdicts, its first line, and its registration through the registries alone."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from posviz.lab.engine.results import Cell, Verdict
from posviz.lab.present.kinds import VIEWS
from posviz.lab.studies import far_context_arms as arms
from posviz.lab.studies import far_context_question as fq
from posviz.lab.studies import judging
from posviz.lab.studies.kinds import KINDS
from posviz.lab.studies.presets import FAR_CONTEXT, QUESTIONS

TINY = {"steps": 6, "width": 16, "batch": 4, "eval_batch": 8, "seeds": 2}


def _members(config, conditions=arms.CONDITIONS, schemes=("learned",)):
    from posviz.lab.engine.sweep import Planned
    from posviz.lab.studies.questions import Conditioned

    out = []
    for scheme, condition in itertools.product(schemes, conditions):
        arm = arms.arm_id(scheme, condition)
        model = FAR_CONTEXT.variant(arm).model
        planned = Planned(arm, arm, "far16", "", model, config)
        out.append(Conditioned.of(planned, condition))
    return out


def test_the_question_is_registered_through_the_registries() -> None:
    assert QUESTIONS["far_context"] is FAR_CONTEXT
    assert FAR_CONTEXT.kind in KINDS and FAR_CONTEXT.kind in VIEWS
    assert KINDS["far_context"].train is not None
    conditions = {v.condition for v in FAR_CONTEXT.variants}
    assert conditions == set(arms.CONDITIONS)
    assert {v.model.scheme for v in FAR_CONTEXT.variants} == set(arms.SCHEMES)


def test_the_design_hashes_its_trainer_and_conditions_and_no_other_design_moves() -> None:
    design = FAR_CONTEXT.design()
    assert len(design["source"]) == len(FAR_CONTEXT.source)  # which: test_lab_study_trainer.py
    assert all("condition" in v for v in design["variants"])
    for q in QUESTIONS.values():
        if q.id not in ("far_context", "sinks"):  # an empty source adds nothing: ids keep
            assert "source" not in q.design()
            assert all("condition" not in v for v in q.design()["variants"])


def test_long_range_is_the_second_half_of_the_targets() -> None:
    per_target = np.random.default_rng(0).random((3, arms.NEAR))
    whole, mid = per_target.mean(-1), per_target[:, : arms.NEAR // 2].mean(-1)
    assert np.allclose(arms.long_range(whole, mid), per_target[:, arms.NEAR // 2 :].mean(-1))


def test_a_bad_window_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="min_len = max_len"):
        arms.split(dataclasses.replace(FAR_CONTEXT.default, min_len=16, max_len=16,
                                       eval_lengths=(16,)))  # fmt: skip
    with pytest.raises(ValueError, match="eval_lengths"):
        arms.split(dataclasses.replace(FAR_CONTEXT.default, eval_lengths=(32,)))


@pytest.mark.slow
def test_outputs_are_engine_shaped_and_a_split_changes_no_number() -> None:
    from posviz.lab.studies.far_context_question_train import train_question_arms

    config = dataclasses.replace(FAR_CONTEXT.default, **TINY)
    members = _members(config)
    together = train_question_arms(members, steps=6, checkpoints=[3, 6])
    apart = {}
    for one in members:  # each member alone: the evaluation-only arm trains its own model
        apart.update(train_question_arms([one], steps=6, checkpoints=[3, 6]))
    whole, mid = arms.eval_lengths(config.max_len - arms.NEAR)
    for member in members:
        a, b = together[member.id], apart[member.id]
        assert list(a.checkpoint_steps) == [0, 3, 6] and list(a.curve_steps)[-1] == 6
        assert a.heldout[whole].per_position.shape == (2, 3, arms.NEAR)
        assert a.heldout[mid].per_position.shape == (2, 3, arms.NEAR // 2)
        np.testing.assert_array_equal(a.losses, b.losses)
        np.testing.assert_array_equal(a.heldout[whole].loss, b.heldout[whole].loss)
        np.testing.assert_array_equal(a.heldout[mid].accuracy, b.heldout[mid].accuracy)
    full, evaluated = together["learned_full"], together["learned_eval"]
    np.testing.assert_array_equal(full.losses, evaluated.losses)  # the same training …
    assert not np.array_equal(full.heldout[whole].loss, evaluated.heldout[whole].loss)  # … read
    shuffled = together["learned_shuffled"]  # shuffled in training: another model
    assert not np.array_equal(full.losses, shuffled.losses)


# --------------------------------------------------------------------------- the judge

SCHEME = fq.Arms("learned", "f", "s", "n", "e")
LABELS = {"f": "full", "s": "shuffled", "n": "no far context", "e": "evaluation only"}


def _metrics(full, shuffled, noinfo, evaluated):
    """Four seeds per arm, each arm with its own small noise (± 0.005 nats)."""
    noise = np.random.default_rng(7).uniform(-0.005, 0.005, size=(4, 4))
    arms_values = (("f", full), ("s", shuffled), ("n", noinfo), ("e", evaluated))
    return {a: {fq.METRIC: tuple(v + noise[i])} for i, (a, v) in enumerate(arms_values)}


def _key(metrics, status=None):
    return fq.judge_scheme(SCHEME, metrics, status or {}, LABELS).key


def test_shuffling_that_costs_part_of_the_usable_information_is_part() -> None:
    verdict = fq.judge_scheme(SCHEME, _metrics(2.0, 2.1, 2.2, 2.3), {}, LABELS)
    assert verdict.key == "part" and "loses 50 % (95 % interval 4" in verdict.text
    assert verdict.eval_key == "harsher"  # evaluation only costs more than trained shuffled


def test_the_order_free_and_all_lost_verdicts() -> None:
    assert _key(_metrics(2.0, 2.005, 2.2, 2.0)) == "order_free"
    assert _key(_metrics(2.0, 2.2, 2.205, 2.3)) == "all"


def test_the_no_information_control_can_fail_and_then_no_share_is_stated() -> None:
    hurt = fq.judge_scheme(SCHEME, _metrics(2.2, 2.3, 2.0, 2.3), {}, LABELS)
    assert hurt.key == "hurts" and "no share" in hurt.text and "%" not in hurt.text
    assert _key(_metrics(2.0, 2.1, 2.005, 2.1)) == "unused"  # inside the margin: nothing to share


def test_a_failed_arm_supports_no_verdict() -> None:
    assert _key(_metrics(2.0, 2.1, 2.2, 2.3), {"s": "diverged"}) == "undecided"


def test_every_first_line_fits_fifteen_words() -> None:
    for keys in itertools.product(fq.PHRASES, repeat=3):
        verdict = fq._verdict(
            [fq.SchemeVerdict(s, k, "", ()) for s, k in zip(arms.SCHEMES, keys, strict=True)]
        )
        key = verdict.key
        verdict = Verdict(key, "", "")
        cell = Cell("far16.small.x1", (), 1, True, {}, {}, (), {}, {}, (), (), verdict)
        line = fq.plain(cell)
        assert len(line.split()) <= 15, line
        assert judging.undecided_key(key) == all(k == "undecided" for k in keys)


def test_the_training_calls_keep_each_evaluation_only_arm_with_its_intact_arm() -> None:
    from posviz.lab.engine.run import TRAIN_THREADS, balance
    from posviz.lab.studies.questions import QuestionStudy

    units = balance(QuestionStudy(FAR_CONTEXT, FAR_CONTEXT.default).units(), threads=TRAIN_THREADS)
    assert len(units) == 2 and sum(len(u.members) for u in units) == len(FAR_CONTEXT.variants)
    for unit in units:  # the runner leaves them whole: every pair trains its model once
        ids = {m.id for m in unit.members}
        for scheme in arms.SCHEMES:
            pair = {arms.arm_id(scheme, "full"), arms.arm_id(scheme, "eval_shuffled")}
            assert pair <= ids or not pair & ids
    windows = [sum(1 if m.condition == "noinfo" else 2 for m in unit.members
                   if m.condition != "eval_shuffled") for unit in units]  # fmt: skip
    assert max(windows) <= 8  # of 15: no call trains more than about half the work


def test_the_work_model_charges_each_arm_what_it_trains_and_never_splits_a_call() -> None:
    """An evaluation-only arm trains nothing (its intact arm's model is read), a no-information
    arm trains on the near window alone: the estimate charges them so (it charged every member
    the whole window: 133.7 CPU-s of work against 97.6 measured), and a call cut by the kind
    stays whole even where halving it would even out the threads."""
    from posviz.lab.engine.run import Unit, balance, eval_cpu_s, pass_cpu_s, step_cpu_s
    from posviz.lab.studies.questions import QuestionStudy

    units = QuestionStudy(FAR_CONTEXT, FAR_CONTEXT.default).units()
    by_condition = {m.condition: (u, m) for u in units for m in u.members}
    evaluation = {}
    for condition, (unit, member) in by_condition.items():
        c = member.config
        evaluation[condition] = c.seeds * len(unit.checkpoints) * eval_cpu_s(c)
        trained = unit.member_cost(member) - evaluation[condition]
        near = pass_cpu_s(c, c.batch, arms.NEAR)
        expected = {"eval_shuffled": 0.0, "noinfo": c.seeds * unit.steps * near}
        full = c.seeds * unit.steps * step_cpu_s(c)
        assert trained == pytest.approx(expected.get(condition, full)), condition
    assert 0 < expected["noinfo"] < full
    lopsided = Unit("lm", units[0].members + units[1].members, units[0].steps,
                    units[0].checkpoints, train=units[0].train, whole=True)  # fmt: skip
    assert balance([lopsided], threads=2) == [lopsided]
    assert len(balance([dataclasses.replace(lopsided, whole=False)], threads=2)) == 2
