"""run_question end to end on tiny settings: the sweep's cells and instances, a stop, a diverged
arm, a learned table past its rows, row movement and its built-in control, and the matched-init
cell being exactly a re-run with that init."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from posviz.lab import QUESTIONS, LabStopped, RunStore, run_question
from posviz.lab.engine import train as lab_train
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.results import grid_frame
from posviz.lab.engine.sweep import INIT_MATCHED, checkpoints


def _tiny(question_id: str, **changes) -> LabConfig:
    base = QUESTIONS[question_id].default
    return replace(
        base, **{"steps": 4, "width": 16, "batch": 8, "eval_batch": 16, "seeds": 2, **changes}
    )


@pytest.fixture(scope="module")
def learned_tiny(tmp_path_factory: pytest.TempPathFactory):
    store = RunStore(tmp_path_factory.mktemp("learned"))
    return run_question("learned", config=_tiny("learned"), store=store)


def test_every_cell_of_the_sweep_is_measured(learned_tiny) -> None:
    q = QUESTIONS["learned"]
    sweep = q.sweep
    assert len(learned_tiny.cells) == len(sweep.tasks) * len(sweep.inits) * len(sweep.budgets)
    assert learned_tiny.cells[0].default and sum(c.default for c in learned_tiny.cells) == 1
    # arms without a learned table train once per task, shared by the init cells
    assert set(learned_tiny.instances) == {
        "learned", "sinusoid", "nope", "learned.reverse.matched",
        "learned.kback.small", "sinusoid.kback", "nope.kback", "learned.kback.matched",
    }  # fmt: skip
    steps = {c.steps for c in learned_tiny.cells}
    assert steps == {4, 12}  # the preset's budget and 3×, read from one run's checkpoints
    grid = grid_frame(learned_tiny)
    assert len(grid) == len(learned_tiny.cells) and grid["verdict"].str.len().min() > 0
    for finding in learned_tiny.findings:
        assert set(finding.keys) == {c.id for c in learned_tiny.cells}


def test_the_matched_cell_is_a_rerun_with_the_matched_init(learned_tiny) -> None:
    """Its instance equals the learned arm trained alone with the table at the token scale."""
    config = replace(_tiny("learned"), steps=12, snapshots=13)
    model = ModelConfig(kind="encoder", scheme="learned", pos_init_std=INIT_MATCHED.std)
    marks = checkpoints(4, QUESTIONS["learned"].sweep)
    alone = lab_train.train_arms(
        [lab_train.Arm("alone", model, config)], steps=12, checkpoints=marks
    )["alone"]
    inst = learned_tiny.instances["learned.reverse.matched"]
    np.testing.assert_allclose(inst.heldout_loss["12"], alone.heldout[12].loss, rtol=1e-4)
    np.testing.assert_allclose(inst.snapshots, alone.snapshots, rtol=1e-4, atol=1e-6)


def test_stop_mid_run_raises_and_stores_nothing(tmp_path: Path) -> None:
    calls = []

    def should_stop() -> bool:
        calls.append(1)
        return len(calls) > 5

    store = RunStore(tmp_path)
    with pytest.raises(LabStopped):
        run_question(
            "learned", config=_tiny("learned", steps=50), store=store, should_stop=should_stop
        )
    assert store.list() == [] and len(calls) < 20


def test_a_diverged_arm_is_flagged_and_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = lab_train.train_arms

    def diverge_concat(arms, **kw):
        outputs = real(arms, **kw)
        for arm_id, out in outputs.items():
            if arm_id.startswith("concat"):
                out.diverged_at = np.full_like(out.diverged_at, 3)
                for held in out.heldout.values():
                    held.accuracy[:] = np.nan
                    held.loss[:] = np.nan
        return outputs

    monkeypatch.setattr(lab_train, "train_arms", diverge_concat)
    store = RunStore(tmp_path)
    result = run_question("concat", config=_tiny("concat"), store=store)
    assert result.diverged == ("concat",)
    cell = result.default_cell
    assert not cell.converged["concat"] and "diverged" in cell.convergence["concat"]
    assert cell.verdict.key in ("undecided", "undefined")
    assert "lower the learning rate" in result.answer
    assert store.load(result.run_id).diverged == ("concat",)


def test_a_learned_table_is_not_defined_past_its_rows(tmp_path: Path) -> None:
    result = run_question("extrapolation", config=_tiny("extrapolation"), store=RunStore(tmp_path))
    cell = result.default_cell
    assert all(math.isnan(v) for v in cell.metrics["learned"]["accuracy_unseen"])
    assert all(np.isfinite(cell.metrics[v]["accuracy_unseen"]).all() for v in ("rope", "alibi"))
    assert "learned table: not defined on unseen positions" in result.answer
    assert "learned" not in {r.arm for r in cell.ranking}
    assert "NoPE (learns position from the causal mask)" in result.variant_labels
    assert "control" not in result.arm("nope").role


@pytest.fixture(scope="module")
def rare_rows_small(tmp_path_factory: pytest.TempPathFactory):
    """The rare_rows preset shrunk to seconds, trained once."""
    config = replace(
        QUESTIONS["rare_rows"].default, width=16, steps=80, seeds=3, eval_batch=32, lr=1e-2
    )
    return run_question("rare_rows", config=config, store=RunStore(tmp_path_factory.mktemp("rr")))


@pytest.mark.slow
def test_rare_rows_has_a_table_free_arm_and_computed_reach_odds(rare_rows_small) -> None:
    from posviz.lab.engine.tasks import one_in, reach_probability

    assert rare_rows_small.arm("rope_short").role == "table-free control"
    short = QUESTIONS["rare_rows"].variant("short").config_for(rare_rows_small.config)
    odds = one_in(reach_probability(short, short.max_len - 1))
    assert odds in rare_rows_small.answer and "1 in 500" not in rare_rows_small.answer
    for cell in rare_rows_small.cells:
        assert {"short", "uniform", "rope_short"} <= set(cell.metrics)
        assert len(cell.metrics["short"]["probe_error_late_at_init"]) == 3


@pytest.mark.slow
def test_unseen_rows_move_exactly_zero_in_every_cell(rare_rows_small) -> None:
    """Rows past the longest training length get no gradient, so they move exactly 0 — the
    engine's property, measured; since it cannot fail it is not stated as a control."""
    for inst in rare_rows_small.instances.values():
        if inst.snapshots is None:
            continue
        tail = inst.snapshots[:, :, inst.trained_rows :]
        np.testing.assert_array_equal(tail[:, -1], tail[:, 0])
    for cell in rare_rows_small.cells:
        for arm in ("short", "uniform"):
            assert cell.metrics[arm]["movement_unseen_max"] == (0.0, 0.0, 0.0)
    assert "moved at most 0" not in rare_rows_small.answer


def test_row_movement_statistics_are_unit_free_and_exact() -> None:
    from scipy.stats import spearmanr

    from posviz.lab.engine.rows import late_to_early_ratio, rank_correlation, row_movement

    rng = np.random.default_rng(0)
    start = rng.normal(size=(2, 1, 12, 4))
    step = np.linspace(2.0, 0.0, 12)[None, None, :, None] * rng.normal(size=(2, 1, 12, 4))
    snaps = np.concatenate([start, start + step], axis=1)  # (2 seeds, 2 snapshots, 12, 4)
    moved = row_movement(snaps)
    np.testing.assert_allclose(moved, np.linalg.norm(step[:, 0], axis=-1))
    assert (moved[:, -1] == 0).all()  # a row with no update moved exactly 0
    ratio = late_to_early_ratio(moved, late=8, trained=12)
    np.testing.assert_allclose(late_to_early_ratio(moved * 1e3, late=8, trained=12), ratio)
    seen = np.linspace(1.0, 0.1, 12)  # falling, like the movement's scale
    rho = rank_correlation(moved, seen)
    assert rank_correlation(moved * 1e3, seen).tolist() == pytest.approx(rho.tolist())
    assert rho[0] == pytest.approx(spearmanr(moved[0], seen).statistic)
    np.testing.assert_allclose(rank_correlation(np.arange(12.0)[None], -np.arange(12.0)), -1.0)
    assert np.isnan(rank_correlation(np.zeros((1, 12)), seen)[0])  # no ranking of a constant
    with pytest.raises(ValueError, match="late=3"):
        late_to_early_ratio(moved, late=3, trained=12)


# --------------------------------------------------------------------------- balancing threads


def test_threads_finish_together_when_tasks_differ_in_cost() -> None:
    from posviz.lab.engine.run import balance, makespan
    from posviz.lab.studies.questions import QuestionStudy

    q = QUESTIONS["extrapolation"]
    kback, lm = QuestionStudy(q, q.default).units()
    longer = tuple(replace(m, config=replace(m.config, max_len=32)) for m in lm.members)
    units = [kback, replace(lm, members=longer)]  # the character LM at twice the length
    assert units[1].cost > 1.5 * units[0].cost
    balanced = balance(units, threads=2)
    members = sorted(m.id for u in balanced for m in u.members)
    assert members == sorted(m.id for u in units for m in u.members)  # each exactly once
    before, after = makespan(units, threads=2), makespan(balanced, threads=2)
    assert before == max(u.cost for u in units)  # one thread ran alone for the costlier task
    assert after <= 0.85 * before and after >= sum(u.cost for u in units) / 2
    probed = [u for u in balanced if u.probe]
    assert all(any(m.id == u.probe[0] for m in u.members) for u in probed)


def test_one_unit_is_halved_and_a_single_member_is_not_split() -> None:
    from posviz.lab.engine.run import balance
    from posviz.lab.studies.questions import QuestionStudy

    q = QUESTIONS["induction"]
    whole = QuestionStudy(q, q.default).units()[0]
    halves = balance([whole], threads=2)
    assert len(halves) == 2 and {m.id for u in halves for m in u.members} == {
        m.id for m in whole.members
    }
    scored = [s for u in halves for s in u.head_scores]
    assert sorted(scored) == sorted(whole.head_scores)  # the head scores go with their member
    alone = replace(whole, members=whole.members[:1], head_scores=())
    assert balance([alone], threads=2) == [alone]


@pytest.mark.slow
def test_a_split_changes_no_number() -> None:
    """Members of one training call are independent: trained apart, bit for bit the same."""
    from posviz.lab.studies.questions import QuestionStudy

    q = QUESTIONS["extrapolation"]
    unit = QuestionStudy(q, _tiny("extrapolation", steps=3)).units()[0]
    arms = [lab_train.Arm(m.id, m.model, m.config) for m in unit.members[:4]]
    marks = list(unit.checkpoints)
    together = lab_train.train_arms(arms, steps=unit.steps, checkpoints=marks)
    for part in (arms[:2], arms[2:]):
        apart = lab_train.train_arms(part, steps=unit.steps, checkpoints=marks)
        for arm_id, out in apart.items():
            for length, held in out.heldout.items():
                same = together[arm_id].heldout[length]
                np.testing.assert_array_equal(held.loss, same.loss)
                np.testing.assert_array_equal(held.per_position, same.per_position)
