"""Verdicts from numbers (no training): each judge on known per-seed values, convergence, and
findings that hold across the sweep or name the setting they depend on."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from posviz.lab.engine import metrics as m
from posviz.lab.engine.results import ArmInfo, Bound, Cell, Instance, LabResult, Setting, Verdict
from posviz.lab.engine.sweep import cells as sweep_cells
from posviz.lab.present import answer as answer_views
from posviz.lab.present.clauses import MAX_FIRST_WORDS
from posviz.lab.studies import judging as judge
from posviz.lab.studies.presets import QUESTIONS
from posviz.lab.studies.summarise import findings_and_answer, panel_pending, with_panel

LABELS = {v.id: v.label for q in QUESTIONS.values() for v in q.variants}


def _cell_input(qid: str, metrics: dict, converged: dict | None = None, metric: str = ""):
    q = QUESTIONS[qid]
    labels = {v.id: v.label for v in q.variants}
    ok = {v.id: True for v in q.variants} | (converged or {})
    return judge.CellInput(q, q.sweep.tasks[0].key, metric or q.metric, metrics, ok, labels, None)


def _judge_learned_pair(accuracy: dict, train_loss_mean: dict | None = None):
    """``judge_pair`` on the learned-vs-sinusoid question: per-seed held-out accuracy and mean
    training loss of the two arms (``{"learned": …, "sinusoid": …}``; the loss 1.0 in both
    unless given: no difference in speed), the NoPE control far below both."""
    train_loss_mean = train_loss_mean or {"learned": (1.0, 1.0, 1.0), "sinusoid": (1.0, 1.0, 1.0)}
    metrics = {
        arm: {"accuracy": accuracy[arm], "train_loss_mean": train_loss_mean[arm]}
        for arm in ("learned", "sinusoid")
    }
    metrics["nope"] = {"accuracy": (0.21, 0.22, 0.22), "train_loss_mean": (2.0, 2.0, 2.0)}
    return judge.judge_pair(_cell_input("learned", metrics))


def test_pair_decides_on_the_paired_interval_and_says_better_in_words() -> None:
    judged = _judge_learned_pair({"learned": (0.91, 0.93, 0.92), "sinusoid": (0.85, 0.88, 0.86)})
    assert judged.verdict.key == "a"
    assert "higher held-out accuracy (better)" in judged.verdict.text
    assert "paired 95% interval" in judged.verdict.text


def test_pair_at_the_ceiling_compares_speed_as_lower_loss_better() -> None:
    judged = _judge_learned_pair(
        accuracy={"learned": (1.0, 1.0, 1.0), "sinusoid": (1.0, 1.0, 0.999)},
        train_loss_mean={"learned": (1.34, 1.30, 1.38), "sinusoid": (0.41, 0.42, 0.43)},
    )
    assert judged.verdict.key == "ceiling:b"
    assert "fixed sinusoid learns faster" in judged.verdict.short
    assert "speed of learning: fixed sinusoid: lower mean training loss over the run (better)" in (
        judged.verdict.text
    )
    assert "higher (worse)" not in judged.verdict.text


def test_an_under_trained_arm_is_left_out_unless_it_is_the_winner() -> None:
    metrics = {
        "enc_nope": {"loss": (2.90, 2.91, 2.92)},
        "enc_learned": {"loss": (2.30, 2.31, 2.29)},
        "dec_nope": {"loss": (2.10, 2.12, 2.11)},
        "dec_learned": {"loss": (2.05, 2.08, 2.06)},
    }
    still_learning = {"enc_learned": False}
    judged = judge.judge_need_positions(_cell_input("need_positions", metrics, still_learning))
    assert judged.verdict.key.startswith("enc:b|dec:b")  # the encoder's gap is a lower bound
    assert "is still improving, so the gap is a lower bound" in judged.verdict.text
    loser_still_learning = {"enc_nope": False}
    judged = judge.judge_need_positions(
        _cell_input("need_positions", metrics, loser_still_learning)
    )
    assert judged.verdict.key.startswith("enc:undecided")


def test_extrapolation_ranks_converged_arms_on_unseen_positions_only() -> None:
    def arm(seen: float, unseen: float) -> dict:
        jitter = np.array([0, 0.01, -0.01])
        s, u = seen + jitter, unseen + jitter
        return {
            "accuracy_in_range": tuple(s),
            "accuracy_unseen": tuple(u),
            "retention": tuple(u / s),
        }

    metrics = {
        "learned": {"accuracy_unseen": (np.nan,) * 3, "accuracy_in_range": (1.0,) * 3},
        "sinusoid": arm(1.0, 0.18),
        "rope": arm(1.0, 0.83),
        "alibi": arm(0.97, 0.88),
        "t5": arm(1.0, 0.87),
        "nope": arm(0.99, 0.23),
    }
    judged = judge.judge_extrapolation(_cell_input("extrapolation", metrics, {"alibi": False}))
    ranked = [r.arm for r in judged.ranking]
    assert ranked == ["t5", "rope", "nope", "sinusoid"]  # ALiBi under-trained: left out
    assert {r.arm for r in judged.ranking if r.holds} == {"t5", "rope"}
    assert judged.verdict.key == "holds:rope,t5"
    assert all(0 <= r.low <= r.mean <= r.high <= 1 for r in judged.ranking)


def test_rare_rows_separates_rows_from_lengths_by_the_table_free_arm() -> None:
    base = {"movement_late_ratio": (0.3, 0.3, 0.3)}
    short = {**base, "accuracy_late": (0.13, 0.12, 0.14)}
    uniform = {**base, "accuracy_late": (0.97, 0.96, 0.98)}
    rows = judge.judge_rare_rows(
        _cell_input(
            "rare_rows",
            {"short": short, "uniform": uniform, "rope_short": {"accuracy_late": (1, 1, 0.99)}},
        )
    )
    assert rows.verdict.key == "rows"
    lengths = judge.judge_rare_rows(
        _cell_input(
            "rare_rows",
            {"short": short, "uniform": uniform, "rope_short": {"accuracy_late": (0.1, 0.2, 0.1)}},
        )
    )
    assert lengths.verdict.key == "attention"


def _cells(keys: dict[tuple[str, str, str], str]) -> tuple[Cell, ...]:
    cells = []
    for (task, init, budget), key in keys.items():
        settings = (Setting("task", task, task), Setting("init", init, init))
        settings += (Setting("budget", budget, budget),)
        default = (task, init, budget) == next(iter(keys))
        cells.append(
            Cell(f"{task}.{init}.{budget}", settings, 1, default, {}, {}, (), {}, {}, (), (),
                 Verdict(key, key, f"verdict {key}"))
        )  # fmt: skip
    return tuple(cells)


def test_a_finding_holds_everywhere_or_names_what_it_depends_on() -> None:
    grid = {(t, i, b): "a" for t in ("reverse", "kback") for i in ("small", "matched")
            for b in ("x1", "x3")}  # fmt: skip
    cells = _cells(grid)
    same = judge.finding("topic", cells, {c.id: c.verdict for c in cells})
    assert same.holds_everywhere and "the same in all 8 cells" in same.text
    flipped = {k: ("b" if k[1] == "matched" else "a") for k in grid}
    cells = _cells(flipped)
    found = judge.finding("topic", cells, {c.id: c.verdict for c in cells})
    assert not found.holds_everywhere and found.depends_on == ("init",)
    assert "depends on the table's initial scale" in found.text
    assert "verdict a" in found.text and "verdict b" in found.text  # both cells' numbers
    assert "holds in 4 of 8 cells" in found.text


def _instance(accuracy: list[list[float]], loss: list[list[float]]) -> Instance:
    """One instance with per-seed held-out accuracy and loss at two checkpoints."""
    acc, los = np.array(accuracy, dtype=float), np.array(loss, dtype=float)
    seeds = acc.shape[0]
    return Instance("x", "x", "t", "", np.ones((seeds, 4)), {"12": acc}, {"12": los}, {}, None,
                    (-1,) * seeds, 10, 12)  # fmt: skip


CHANCE = 0.19  # e.g. the most frequent character of a text task


def test_a_seed_is_trained_when_it_learned_and_stopped_improving() -> None:
    high = m.convergence(_instance([[0.5, 0.96]] * 3, [[1.0, 0.5]] * 3), length="12", index=1)
    assert high.converged and high.status == "trained"  # ≥ 0.95: nothing left to learn
    flat = m.convergence(
        _instance([[0.3, 0.31]] * 3, [[2.0, 1.99]] * 3), length="12", index=1, chance=CHANCE
    )
    assert flat.converged and flat.status == "trained"  # 0.31 ≥ 0.19 + 0.1·0.81 = 0.271
    falling = m.convergence(_instance([[0.3, 0.4]] * 3, [[2.0, 1.8]] * 3), length="12", index=1)
    assert not falling.converged and falling.status == "improving"


def test_a_stalled_arm_is_named_and_never_counts_as_trained() -> None:
    # flat held-out loss at chance accuracy: the old mean-plateau rule called this converged
    stalled = m.convergence(
        _instance([[0.19, 0.19]] * 3, [[2.9, 2.9]] * 3), length="12", index=1, chance=CHANCE
    )
    assert not stalled.converged and stalled.status == "stalled"
    assert stalled.text.startswith("stalled") and "chance 0.190" in stalled.text
    # a control is not required to learn (its best score without positions is bounded)
    control = m.convergence(_instance([[0.19, 0.19]] * 3, [[2.9, 2.9]] * 3), length="12", index=1)
    assert control.converged


def test_one_collapsed_seed_is_found_though_the_mean_looks_trained() -> None:
    accuracy = [[0.80, 0.81]] * 4 + [[0.115, 0.115]]
    loss = [[1.0, 0.999]] * 4 + [[3.0, 3.0]]
    c = m.convergence(_instance(accuracy, loss), length="12", index=1, chance=CHANCE)
    assert float(np.mean([a[1] for a in accuracy])) > 0.67  # the mean alone looks fine
    assert not c.converged and c.status == "collapsed"
    assert c.seeds.count("stalled") == 1 and "1 of 5 seeds failed (1 stalled" in c.text
    assert "0.115" in c.text


def test_the_plateau_is_judged_per_seed_not_on_the_mean() -> None:
    # mean gain 0.97 % (< 1 %) but one seed still gains 2.9 %: not trained
    loss = [[2.0, 2.0], [2.0, 2.0], [2.0, 1.942]]
    c = m.convergence(_instance([[0.33, 0.33]] * 3, loss), length="12", index=1, chance=CHANCE)
    mean_gain = (2.0 - np.mean([r[1] for r in loss])) / 2.0
    assert mean_gain < m.PLATEAU
    assert not c.converged and c.status == "improving"


def _pair(learned: tuple, sinusoid: tuple) -> dict:
    nope = tuple(0.06 for _ in learned)
    return {
        "learned": {"accuracy": learned, "train_loss_mean": learned},
        "sinusoid": {"accuracy": sinusoid, "train_loss_mean": sinusoid},
        "nope": {"accuracy": nope, "train_loss_mean": nope},
    }


def _judge_pair_with_status(metrics: dict, **status: str):
    """``judge_pair`` on the learned question with these arms' training status (every other arm
    "trained"; an arm that is not counts as not converged)."""
    status = {"learned": "trained", "sinusoid": "trained", "nope": "trained"} | status
    converged = {arm: False for arm, said in status.items() if said != "trained"}
    return judge.judge_pair(replace(_cell_input("learned", metrics, converged), status=status))


def test_a_stalled_or_collapsed_arm_never_supports_a_verdict() -> None:
    metrics = _pair((0.80, 0.81, 0.80, 0.79, 0.80), (0.19, 0.19, 0.19, 0.19, 0.19))
    for status in ("stalled", "collapsed", "diverged"):
        judged = _judge_pair_with_status(metrics, sinusoid=status)
        assert judged.verdict.key == "undecided", status
        assert "fixed sinusoid" in judged.verdict.text and status in judged.verdict.text
    # a winner merely still improving over a trained loser: the gap stands, as a lower bound
    judged = _judge_pair_with_status(metrics, learned="improving")
    assert judged.verdict.key == "a" and "the gap is a lower bound" in judged.verdict.text


def test_a_collapsed_seed_in_a_mean_is_not_read_as_no_difference() -> None:
    metrics = _pair((0.999,) * 5, (0.99, 0.99, 0.99, 0.99, 0.115))
    plain = judge.judge_pair(_cell_input("learned", metrics))
    assert plain.verdict.key != "tie"  # the interval is wide: never "no difference"
    assert "no difference" not in plain.verdict.text
    judged = _judge_pair_with_status(metrics, sinusoid="collapsed")
    assert judged.verdict.key == "undecided" and "collapsed" in judged.verdict.text


def test_no_difference_only_inside_the_equivalence_margin() -> None:
    labels = {"x": "x", "y": "y"}
    same = {
        "x": {"accuracy": (0.90, 0.91, 0.92, 0.90)},
        "y": {"accuracy": (0.90, 0.905, 0.92, 0.91)},
    }
    c = judge.compare(same, "x", "y", "accuracy", labels)
    assert c.outcome == "tie" and c.low > -0.02 and c.high < 0.02
    assert "no difference" in c.text and "±0.02, the equivalence margin" in c.text
    wide = {
        "x": {"accuracy": (0.90, 0.70, 0.95, 0.80)},
        "y": {"accuracy": (0.85, 0.85, 0.85, 0.85)},
    }
    c = judge.compare(wide, "x", "y", "accuracy", labels)
    assert c.low < 0 < c.high and (c.low < -0.02 or c.high > 0.02)
    assert c.outcome == "unclear" and "undecided" in c.text and "no difference" not in c.text


def _unseen(mean: float, spread: float, n: int = 5) -> dict:
    offsets = np.linspace(-spread, spread, n)
    u = np.clip(mean + offsets, 0, 1)
    return {"accuracy_in_range": (1.0,) * n, "accuracy_unseen": tuple(u), "retention": tuple(u)}


def test_ties_are_decided_against_the_best_not_by_a_chain() -> None:
    # ALiBi 0.981 tight, RoPE 0.918 wide (overlaps both), T5 0.835 tight: a chain of neighbours
    # would put T5 at rank 1 with ALiBi through RoPE
    metrics = {
        "learned": {"accuracy_unseen": (np.nan,) * 5, "accuracy_in_range": (1.0,) * 5},
        "alibi": _unseen(0.981, 0.01),
        "rope": {**_unseen(0.918, 0.0), "accuracy_unseen": (0.70, 1.0, 0.99, 0.92, 0.98)},
        "t5": _unseen(0.835, 0.006),
        "sinusoid": _unseen(0.16, 0.01),
        "nope": _unseen(0.20, 0.01),
    }
    judged = judge.judge_extrapolation(_cell_input("extrapolation", metrics))
    ranks = {r.arm: r.rank for r in judged.ranking}
    assert ranks["alibi"] == ranks["rope"] == 1
    assert ranks["t5"] > 1
    assert "best on unseen positions: ALiBi, RoPE (not separated)" in judged.verdict.text


def test_no_best_is_named_while_an_untrained_arm_reaches_it() -> None:
    # the old rule named NoPE best at 0.327 while ALiBi (0.408) was left out as still improving
    metrics = {
        "learned": {"accuracy_unseen": (np.nan,) * 5, "accuracy_in_range": (0.5,) * 5},
        "alibi": _unseen(0.408, 0.01),
        "nope": _unseen(0.327, 0.01),
        "sinusoid": _unseen(0.1, 0.01),
        "rope": _unseen(0.37, 0.01),
        "t5": _unseen(0.395, 0.01),
    }
    status = {"alibi": "improving", "rope": "improving", "t5": "improving", "nope": "trained"}
    status |= {"sinusoid": "trained", "learned": "trained"}
    cell = replace(
        _cell_input("extrapolation", metrics, {a: s == "trained" for a, s in status.items()}),
        status=status,
    )
    judged = judge.judge_extrapolation(cell)
    assert "best on unseen positions: undecided (ALiBi still improving" in judged.verdict.text
    best = judge.best_on_unseen(judged.ranking, metrics, cell.converged, status, cell.labels)
    assert best.key == "undecided"


@pytest.mark.parametrize("metric", list(m.METRICS))
def test_metric_labels_say_which_way_is_better_in_words(metric: str) -> None:
    label = m.label(metric)
    if m.spec(metric).meaning:  # descriptive: says what the scale means instead of a direction
        assert label.endswith(f"({m.spec(metric).meaning})")
    else:
        assert re.search(r"\((higher|lower) is better\)$", label)
    assert "_" not in label and "@" not in label  # words, never an id like train_loss_mean


# --------------------------------------------------------------------------- the held-out panel


def _judged_cells(q, sweep, metrics_of, judge_fn=judge.judge_pair, status="trained") -> list[Cell]:
    """Cells of ``sweep`` judged on synthetic per-seed values (``metrics_of(cell plan)``), every
    arm with training status ``status`` (or ``status(cell plan)``)."""
    labels = {v.id: v.label for v in q.variants}
    out = []
    for plan in sweep_cells(q.arm_specs(), sweep, q.default):
        metrics = metrics_of(plan)
        how = status(plan) if callable(status) else status
        ok = dict.fromkeys(metrics, how == "trained")
        cell = judge.CellInput(q, plan.settings[0].key, q.metric, metrics, ok, labels, None,
                               dict.fromkeys(metrics, how))  # fmt: skip
        judged = judge_fn(cell)
        out.append(
            Cell(plan.id, plan.settings, plan.steps, plan.default, plan.instances, metrics, (),
                 ok, dict.fromkeys(metrics, how), judged.comparisons, judged.ranking,
                 judged.verdict, dict.fromkeys(metrics, how))
        )  # fmt: skip
    return out


def _result(q, cells: list[Cell], bounds: dict | None = None) -> LabResult:
    labels = {v.id: v.label for v in q.variants}
    cells.sort(key=lambda c: not c.default)
    found, text = findings_and_answer(q, tuple(cells), labels, bounds or {}, None, q.default)
    arms = tuple(
        ArmInfo(v.id, v.label, v.role, "encoder", v.model.scheme, "input", "reverse", "12",
                False, 1)
        for v in q.variants
    )  # fmt: skip
    return LabResult("r", q.id, q.default, "c", arms, tuple(cells), found, text, (), None,
                     {}, {}, {}, {})  # fmt: skip


def _learned_wins(plan) -> dict:
    return _pair((0.95, 0.96, 0.95, 0.97, 0.96), (0.80, 0.81, 0.79, 0.80, 0.82))


def test_a_finding_holds_only_where_it_also_holds_on_the_held_out_panel() -> None:
    q = QUESTIONS["learned"]
    default = _result(q, _judged_cells(q, q.sweep, _learned_wins))
    assert with_panel(default, None).answer.endswith(panel_pending(q))
    assert "Held-out check pending" in panel_pending(q)
    same = with_panel(default, _result(q, _judged_cells(q, q.panel, _learned_wins)))
    main = same.findings[0]
    assert main.holds_everywhere and "of the sweep and the held-out panel" in main.text
    per_setting = len(q.sweep.budgets) * len(q.sweep.inits)  # the panel trains every init
    assert len(same.cells) == len(default.cells) + per_setting * len(q.panel_settings)

    def flips_at_lr_x3(plan) -> dict:
        if plan.settings[0].key == "lr_x3":  # the sinusoid wins with 3× the learning rate
            return _pair((0.70, 0.71, 0.69, 0.70, 0.72), (0.90, 0.91, 0.89, 0.90, 0.92))
        return _learned_wins(plan)

    flipped = with_panel(default, _result(q, _judged_cells(q, q.panel, flips_at_lr_x3)))
    main = flipped.findings[0]
    assert not main.holds_everywhere and main.depends_on == ("panel",)
    assert "depends on a held-out setting" in main.text
    assert "learning rate 0.03 (3× the preset's 0.01)" in main.text  # what it depends on
    assert "fixed sinusoid: higher held-out accuracy (better)" in main.text  # with its numbers
    assert default.findings[0].holds_everywhere  # the sweep alone could not see it


def test_a_longer_budget_trains_in_the_panel_part_and_joins_the_sweep_as_budget_cells() -> None:
    q = QUESTIONS["induction"]  # 2-layer RoPE vs without positions; the latter still improving
    assert "2,700 steps (18× the preset)" in panel_pending(q)
    (long,) = [t for t in q.panel.tasks if t.key == "long"]
    assert long.config(q.default).steps == 900  # read at 1× and 3× of it: 6× and 18× the preset

    def accuracy(rope: float, nope: float) -> dict:
        jitter = np.array([0.0, 0.004, -0.004, 0.002, -0.002])
        return {
            arm: {"accuracy": tuple(v + jitter), "train_loss_mean": tuple(1 - v + jitter)}
            for arm, v in (("rope", rope), ("learned", rope), ("nope", nope), ("one_layer", 0.4))
        }

    def metrics_of(plan) -> dict:
        return accuracy(0.99, 0.96) if plan.settings[0].key == "long" else accuracy(0.99, 0.6)

    def status(plan) -> str:  # trained only with the longer budget
        return "trained" if plan.settings[0].key == "long" else "improving"

    default = _result(q, _judged_cells(q, q.sweep, metrics_of, status=status))
    assert default.cells[0].verdict.key == "undecided"
    panel = _result(q, _judged_cells(q, q.panel, metrics_of, status=status))
    joined = with_panel(default, panel)
    longer = {c.id: c for c in joined.cells if c.setting("budget").key in ("x6", "x18")}
    assert set(longer) == {"induction.small.x6", "induction.small.x18"}
    assert {c.setting("budget").label for c in longer.values()} == {
        "900 steps (6× preset)",
        "2,700 steps (18× preset)",
    }
    assert all(c.setting("panel").key == "preset" for c in longer.values())  # not held out
    after_sweep = [c.id for c in joined.cells][len(default.cells) : len(default.cells) + 2]
    assert after_sweep == ["induction.small.x6", "induction.small.x18"]  # before the panel's
    main = joined.findings[0]
    assert main.depends_on == ("budget",)  # decided only where the arms trained
    assert "With 900 steps (6× preset): 2-layer RoPE model: higher held-out accuracy" in main.text
    assert answer_views.plain_answer(joined) == (
        "With longer training, the 2-layer RoPE model does better than the 2-layer model without "
        "positions."
    )
    assert "Longer training on next token of a repeated random block" in joined.answer
    assert "only: 900 steps (6× preset), 2,700 steps (18× preset)." in joined.answer
    with pytest.raises(ValueError, match="multiple of the sweep's longest budget"):
        replace(q, long_budget=4)


def test_task_labels_come_from_the_config() -> None:
    q = QUESTIONS["learned"]
    ten = replace(q.default, min_len=10, max_len=10, eval_lengths=(10,))
    labels = {p.settings[0].label for p in sweep_cells(q.arm_specs(), q.sweep, ten)}
    assert labels == {"reverse (length 10)", "token 2 back (length 10)"}
    rare = QUESTIONS["rare_rows"]
    (label,) = {
        p.settings[0].label for p in sweep_cells(rare.arm_specs(), rare.sweep, rare.default)
    }
    assert label == "token 2 back (lengths 4–32)"


def test_the_answer_opens_with_a_plain_sentence_of_at_most_15_words() -> None:
    q = QUESTIONS["learned"]
    wins = _result(q, _judged_cells(q, q.sweep, _learned_wins))
    first = answer_views.plain_answer(wins)
    assert first == "The learned table does better than the fixed sinusoid."
    assert len(first.split()) <= MAX_FIRST_WORDS
    assert answer_views.headline(wins).startswith(first + " ")  # then the numbers

    def depends(plan) -> dict:
        if plan.settings[1].key == "matched":
            return _pair((0.70, 0.71, 0.69, 0.70, 0.72), (0.90, 0.91, 0.89, 0.90, 0.92))
        return _learned_wins(plan)

    mixed = _result(q, _judged_cells(q, q.sweep, depends))
    line = answer_views.plain_answer(mixed)  # both sides named where they fit in the line
    assert line.startswith("It depends on the table's") and len(line.split()) <= MAX_FIRST_WORDS
    assert "learned table better from small" in line and "sinusoid from matched" in line


def test_a_control_check_that_cannot_fail_is_dropped_and_said_so() -> None:
    q = QUESTIONS["need_positions"]
    ceiling = Bound("mlm", "accuracy", 0.534, "held-out set", "0.534", 0.19)

    def arms(with_positions: float):
        def metrics_of(plan) -> dict:
            def arm(acc: float, loss: float) -> dict:
                jitter = np.array([0.0, 0.01, -0.01])
                return {"accuracy": tuple(acc + jitter), "loss": tuple(loss + jitter)}

            return {
                "enc_nope": arm(0.22, 2.8),
                "enc_learned": arm(with_positions, 2.2),
                "dec_nope": arm(0.40, 2.0),
                "dec_learned": arm(0.45, 1.9),
            }

        return metrics_of

    def run(with_positions: float) -> LabResult:
        cells = _judged_cells(q, q.sweep, arms(with_positions), judge.judge_need_positions)
        return _result(q, cells, {"text": ceiling})

    weak = run(0.30)  # the encoder WITH positions stays under the ceiling too: cannot fail
    assert all(f.topic != "The encoder without positions" for f in weak.findings)
    assert "is not used as a check" in weak.answer and "0.300" in weak.answer
    strong = run(0.80)  # positions lift it past the ceiling: staying under it now means something
    control = next(f for f in strong.findings if f.topic == "The encoder without positions")
    assert control.holds_everywhere and "at or below it" in control.text
    assert "is not used as a check" not in strong.answer


def _extrapolating(swap_at: str = ""):
    """Synthetic extrapolation arms: ALiBi above RoPE above T5 above the sinusoid, each
    separated by its paired interval; RoPE and ALiBi swap places in the ``swap_at`` panel
    setting."""

    def metrics_of(plan) -> dict:
        means = {"alibi": 0.98, "rope": 0.90, "t5": 0.83, "sinusoid": 0.17, "nope": 0.20}
        if plan.settings[0].key == swap_at:
            means |= {"alibi": 0.90, "rope": 0.98}
        width = 0.004
        out = {"learned": {"accuracy_unseen": (np.nan,) * 3, "accuracy_in_range": (1.0,) * 3}}
        for arm, mean in means.items():
            u = tuple(np.clip(mean + np.array([-width, 0.0, width * 1.3]), 0, 1))
            out[arm] = {"accuracy_in_range": (1.0,) * 3, "accuracy_unseen": u, "retention": u}
        return out

    return metrics_of


def test_a_ranking_is_stated_as_a_tie_unless_separated_in_every_setting() -> None:
    """ALiBi above RoPE at the preset's settings, RoPE above ALiBi with 3× the learning rate:
    the two are tied (no single best), while every pair separated the same way in every cell
    of the preset's task — the sweep's and the panel's — keeps its order."""
    q = QUESTIONS["extrapolation"]
    run = judge.judge_extrapolation

    def judged(metrics_of) -> LabResult:
        default = _result(q, _judged_cells(q, q.sweep, metrics_of, run))
        return with_panel(default, _result(q, _judged_cells(q, q.panel, metrics_of, run)))

    steady = judged(_extrapolating())
    best = steady.findings[1]
    assert best.holds_everywhere and best.keys[steady.default_cell.id] == "top:alibi"
    assert "ALiBi above RoPE, T5 buckets," in steady.answer
    assert "stated as tied" not in steady.answer
    swapped = judged(_extrapolating(swap_at="lr_x3"))
    best = swapped.findings[1]
    assert not best.holds_everywhere and best.depends_on == ("panel",)
    assert "no single best — ALiBi, RoPE each rank first somewhere" in best.text
    assert "learning rate 0.03 (3× the preset's 0.01): best: RoPE" in best.text
    assert "ALiBi above T5 buckets," in swapped.answer and "RoPE above T5" in swapped.answer
    assert "stated as tied: ALiBi and RoPE." in swapped.answer


def test_a_dependence_is_named_by_a_cell_that_decides_otherwise() -> None:
    """An undecided cell (every arm still improving at × ⅓ the learning rate) is not what a
    finding depends on: the sentence names the nearest cell that decides otherwise (RoPE best at
    twice the width), with its numbers, and counts the undecided cells."""
    q = QUESTIONS["extrapolation"]
    run = judge.judge_extrapolation
    metrics_of = _extrapolating(swap_at="width_x2")

    def slow_at_lr_third(plan) -> str:
        return "improving" if plan.settings[0].key == "lr_third" else "trained"

    default = _result(q, _judged_cells(q, q.sweep, metrics_of, run))
    panel = _judged_cells(q, q.panel, metrics_of, run, status=slow_at_lr_third)
    both = with_panel(default, _result(q, panel))
    best = both.findings[1]
    assert {best.keys[c.id] for c in both.cells} == {"top:alibi", "top:rope", "undecided"}
    assert "With width 64 (2× the preset's 32): best: RoPE" in best.text  # not lr × ⅓
    assert "Undecided in 2 more cells" in best.text


def test_every_verdict_that_differs_is_named_with_its_numbers() -> None:
    """The sinusoid wins with 3× the learning rate, the two tie at twice the width: the finding
    names both settings with their numbers, not only the nearest one (a flip the other way
    must not hide behind a tie)."""
    q = QUESTIONS["learned"]

    def two_ways(plan) -> dict:
        if plan.settings[0].key == "lr_x3":
            return _pair((0.70, 0.71, 0.69, 0.70, 0.72), (0.90, 0.91, 0.89, 0.90, 0.92))
        if plan.settings[0].key == "width_x2":
            return _pair((0.900, 0.901, 0.899, 0.900, 0.902), (0.901, 0.900, 0.900, 0.899, 0.901))
        return _learned_wins(plan)

    default = _result(q, _judged_cells(q, q.sweep, _learned_wins))
    main = with_panel(default, _result(q, _judged_cells(q, q.panel, two_ways))).findings[0]
    assert {main.keys[c] for c in main.keys} == {"a", "b", "tie"}
    assert "With learning rate 0.03 (3× the preset's 0.01): fixed sinusoid: higher" in main.text
    assert "With width 64 (2× the preset's 32): learned table vs fixed sinusoid: no difference" in (
        main.text
    )


def test_a_verdict_undecided_somewhere_is_not_said_to_depend_on_it() -> None:
    """With 3× the learning rate the learned table collapses (undecided there); no cell decides
    otherwise, so the verdict is stated as the same wherever it is decided, with the count, and
    never as holding everywhere."""
    q = QUESTIONS["learned"]

    def collapsed_at_lr_x3(plan) -> str:
        return "collapsed" if plan.settings[0].key == "lr_x3" else "trained"

    default = _result(q, _judged_cells(q, q.sweep, _learned_wins))
    panel = _judged_cells(q, q.panel, _learned_wins, status=collapsed_at_lr_x3)
    both = with_panel(default, _result(q, panel))
    main = both.findings[0]
    assert not main.holds_everywhere and main.depends_on == ("panel",)
    n = len(default.cells) + len(panel)
    off = sum(c.setting("task").key == "lr_x3" for c in panel)  # every init and budget there
    headline = answer_views.headline(both)  # the page's first lines say the same
    assert not headline.startswith("It depends") and "learned table" in headline
    assert f"in every setting where it is decided ({n - off} of {n})" in headline
    assert f"the same in every cell where it is decided ({n - off} of {n} cells" in main.text
    assert "learning rate 0.03 (3× the preset's 0.01): undecided" in main.text
    assert "collapsed" in main.text and "depends on" not in main.text
    # its short line (as every finding after the first is shown) says the same, not "depends on"
    line = answer_views._finding_line(main, both)
    assert f"in every setting where it is decided ({n - off} of {n})" in line
    assert "depends on" not in line


def test_the_sweep_grid_puts_the_verdicts_first_and_the_settings_last() -> None:
    """A narrow screen cuts a table's right side: the findings' verdicts lead, settings follow."""
    q = QUESTIONS["learned"]
    result = _result(q, _judged_cells(q, q.sweep, _learned_wins))
    columns = list(answer_views.grid(result).data.columns)
    topics = [f.topic for f in result.findings]
    lead = [topics[0], "under-trained", *topics[1:]]
    assert columns[: len(lead)] == lead
    assert columns[-1] == "budget" and "task" in columns[len(topics) + 1 :]


def _losses_with_interval(estimate: float, low: float, high: float) -> dict:
    """Per-seed mean training losses of learned and sinusoid (3 seeds) whose paired difference
    learned − sinusoid has mean ``estimate`` and 95 % interval half-width ``(high − low) / 2``."""
    from scipy import stats

    half = (high - low) / 2
    spread_ = half / (stats.t.ppf(0.975, 2) / np.sqrt(3))
    d = estimate + spread_ * np.array([-1.0, 0.0, 1.0])
    base = np.array([0.80, 0.82, 0.81])
    return {"learned": tuple(base + d), "sinusoid": tuple(base)}


@pytest.mark.parametrize(
    ("estimate", "low", "high"),
    [
        (-0.0035, -0.013, 0.006),  # concat from 0.71 at 600 steps, one seed set ("same speed")
        (-0.0055, -0.008, -0.003),  # the same cell, another seed set: excludes 0, inside ±0.02
        (0.0055, 0.001, 0.010),  # every_layer's "input faster by 0.006 [0.001, 0.010]"
    ],
)
def test_a_difference_inside_the_margin_is_the_same_in_practice(estimate, low, high) -> None:
    """An interval inside ±margin is "the same in practice" even when it excludes 0 — never
    "faster" (the margin is checked before the sign)."""
    ceiling = {"learned": (1.0, 1.0, 1.0), "sinusoid": (1.0, 1.0, 1.0)}
    judged = _judge_learned_pair(ceiling, _losses_with_interval(estimate, low, high))
    speed = judged.comparisons[1]
    assert speed.low == pytest.approx(low, abs=1e-9) and speed.high == pytest.approx(high, abs=1e-9)
    assert judged.verdict.key == "ceiling:tie"
    assert "faster" not in judged.verdict.short and "better)" not in judged.verdict.text
    assert "the same" in judged.verdict.short and "±0.02" in judged.verdict.short
    assert "in practice" in judged.verdict.text


def test_a_difference_past_the_margin_is_still_decided_or_undecided() -> None:
    ceiling = {"learned": (1.0, 1.0, 1.0), "sinusoid": (1.0, 1.0, 1.0)}
    past = _judge_learned_pair(ceiling, _losses_with_interval(0.0155, 0.001, 0.030))
    assert past.verdict.key == "ceiling:b"  # excludes 0, reaches past +0.02: sinusoid faster
    wide = _judge_learned_pair(ceiling, _losses_with_interval(0.0125, -0.005, 0.030))
    assert wide.verdict.key == "ceiling:unclear"


def _induction_result(one_layer: float, bound_config) -> LabResult:
    """The induction question judged on synthetic seeds: both 2-layer arms with positions at
    1.000, no positions at 0.90, the one-layer control at ``one_layer``; the control's bound
    computed as the stored answer computes it, on ``bound_config``'s task."""
    from posviz.lab.studies.questions import _bound

    q = QUESTIONS["induction"]

    def metrics_of(plan) -> dict:
        jitter = np.array([0.0, 0.002, -0.002, 0.001, -0.001])

        def arm(acc: float) -> dict:
            return {"accuracy": tuple(np.clip(acc + jitter, 0, 1))}

        return {
            "rope": arm(1.0),
            "learned": arm(1.0),
            "nope": arm(0.90),
            "one_layer": arm(one_layer),
        }

    bounds = {t.key: _bound(q, t.config(bound_config)) for t in q.sweep.tasks}
    return _result(q, _judged_cells(q, q.sweep, metrics_of), bounds)


def test_the_one_layer_control_has_a_ceiling_that_can_fail() -> None:
    """The induction control is judged against the best a one-layer model reaches without
    composing: under it with random periods; above it is reported; and with a fixed period
    (a positional shortcut) the ceiling is the task's own, so the control is void and no
    "vs the control" verdict is stated."""
    q = QUESTIONS["induction"]
    fine = _induction_result(0.40, q.default)
    control = next(f for f in fine.findings if f.topic == "The control")
    assert control.holds_everywhere and "ceiling without composition" in control.text
    assert "at or below it" in control.text
    rope = next(f for f in fine.findings if f.topic == "2-layer RoPE model vs the control")
    assert "better" in rope.text

    leaks = _induction_result(0.98, q.default)  # above the random-period ceiling (≈ 0.71)
    control = next(f for f in leaks.findings if f.topic == "The control")
    assert "above it" in control.text
    rope = next(f for f in leaks.findings if f.topic == "2-layer RoPE model vs the control")
    assert "no difference" not in rope.text and "not judged" in rope.text

    fixed = replace(q.default, k=q.default.min_len // 2)  # periods k … n/2: one period only
    void = _induction_result(1.0, fixed)
    control = next(f for f in void.findings if f.topic == "The control")
    assert "void" in control.text and "positional shortcut" in control.text
    rope = next(f for f in void.findings if f.topic == "2-layer RoPE model vs the control")
    assert "no difference" not in rope.text and "not judged" in rope.text


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_the_held_out_panel_trains_every_init_the_sweep_states_findings_for(qid: str) -> None:
    """A finding stated at an init (e.g. the 0.71 half of a pair finding) is checked on the
    held-out panel at that init too: the panel's cells cover every init of the sweep's cells."""
    q = QUESTIONS[qid]
    if q.panel is None:
        pytest.skip(f"{qid} has no held-out panel")
    sweep_inits = {p.settings[1].key for p in sweep_cells(q.arm_specs(), q.sweep, q.default)}
    panel_inits = {p.settings[1].key for p in sweep_cells(q.arm_specs(), q.panel, q.default)}
    assert panel_inits >= sweep_inits


def test_an_arm_not_separated_from_rank_one_is_printed_as_a_tie() -> None:
    """ALiBi leads; RoPE's interval against it contains 0 (shared rank 1); T5 is separated from
    ALiBi but not from RoPE, so the pairwise ranking puts it third — printed "=1.", never "3."
    (it cannot be said to rank below RoPE); the sinusoid, separated from both, stays below."""
    from posviz.lab.studies.topics import ranking_lines

    q = QUESTIONS["extrapolation"]

    def metrics_of(plan) -> dict:
        unseen = {
            "alibi": (0.980, 0.981, 0.979, 0.980, 0.980),
            "rope": (0.990, 0.940, 0.985, 0.930, 0.990),
            "t5": (0.950, 0.951, 0.949, 0.950, 0.950),
            "sinusoid": (0.20, 0.21, 0.19, 0.20, 0.20),
            "nope": (0.10, 0.11, 0.09, 0.10, 0.10),
        }
        out = {"learned": {"accuracy_unseen": (np.nan,) * 5, "accuracy_in_range": (1.0,) * 5}}
        for arm, u in unseen.items():
            out[arm] = {"accuracy_in_range": (1.0,) * 5, "accuracy_unseen": u, "retention": u}
        return out

    cell = next(c for c in _judged_cells(q, q.sweep, metrics_of, judge.judge_extrapolation)
                if c.default)  # fmt: skip
    ranks = {r.arm: r.rank for r in cell.ranking}
    assert ranks["alibi"] == ranks["rope"] == 1 and ranks["t5"] == 3  # decided against the best
    line = ranking_lines(q, cell)[0]
    labels = {v.id: v.label for v in q.variants}
    assert f"=1. {labels['alibi']}" in line and f"=1. {labels['rope']}" in line
    assert f"=1. {labels['t5']}" in line and "3. " not in line
    assert f"4. {labels['sinusoid']}" in line and "=4." not in line


def test_learned_means_above_what_a_model_without_positions_reaches() -> None:
    """On reverse (16 tokens, length 12) chance is 0.062 and the position-blind ceiling 0.223:
    a seed at 0.171 cleared the chance floor (0.156) but not what a model without positions
    reaches, so an arm with positions at 0.171 has not learned the task (stalled), while the
    stored cells measure that floor for every arm with positions and none without."""
    from posviz.lab.engine import sweep as lab_sweep
    from posviz.lab.engine.bounds import chance_level
    from posviz.lab.studies.questions import _blind_ceiling

    q = QUESTIONS["learned"]
    planned = {p.arm: p for p in lab_sweep.plan(q.arm_specs(), q.sweep, q.default)["reverse"]}
    blind = _blind_ceiling(planned["learned"])
    chance = float(chance_level(planned["learned"].config).value)
    assert blind == pytest.approx(0.2230, abs=1e-4) and _blind_ceiling(planned["nope"]) is None
    seed = _instance([[0.17, 0.171]] * 3, [[2.0, 1.999]] * 3)
    assert m.learned_floor(chance) < 0.171 < blind
    assert m.convergence(seed, length="12", index=1, chance=chance).status == "trained"
    held = m.convergence(seed, length="12", index=1, chance=chance, blind=blind)
    assert held.status == "stalled" and "position-blind ceiling 0.223" in held.text


def test_an_arm_at_chance_is_stalled_or_improving_on_the_interval_not_on_one_seed() -> None:
    """Three seeds at chance whose held-out loss moved +1.5 %, −0.5 %, +1.2 %: one seed's noise
    past the 1 % plateau made the arm "still improving"; decided on the interval of the gains
    (it contains 0) it is stalled. Gains of 5–6 % on every seed are improving."""
    accuracy = [[0.19, 0.19]] * 3
    noisy = [[2.0, 2.0 * (1 - g)] for g in (0.015, -0.005, 0.012)]
    c = m.convergence(_instance(accuracy, noisy), length="12", index=1, chance=CHANCE)
    assert c.status == "stalled" and set(c.seeds) == {"stalled"}
    steady = [[2.0, 2.0 * (1 - g)] for g in (0.05, 0.06, 0.055)]
    c = m.convergence(_instance(accuracy, steady), length="12", index=1, chance=CHANCE)
    assert c.status == "improving"
