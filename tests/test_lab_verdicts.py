"""Verdicts from numbers (no training): each judge on known per-seed values, convergence, and
findings that hold across the sweep or name the setting they depend on."""

from __future__ import annotations

import re

import numpy as np
import pytest

from posviz.lab import answer as judge
from posviz.lab import metrics as m
from posviz.lab.presets import QUESTIONS
from posviz.lab.results import Cell, Instance, Setting, Verdict

LABELS = {v.id: v.label for q in QUESTIONS.values() for v in q.variants}


def _cell_input(qid: str, metrics: dict, converged: dict | None = None, metric: str = ""):
    q = QUESTIONS[qid]
    labels = {v.id: v.label for v in q.variants}
    ok = {v.id: True for v in q.variants} | (converged or {})
    return judge.CellInput(q, q.sweep.tasks[0].key, metric or q.metric, metrics, ok, labels, None)


def test_pair_decides_on_the_paired_interval_and_says_better_in_words() -> None:
    metrics = {
        "learned": {"accuracy": (0.91, 0.93, 0.92), "train_loss_mean": (1.0, 1.0, 1.0)},
        "sinusoid": {"accuracy": (0.85, 0.88, 0.86), "train_loss_mean": (1.0, 1.0, 1.0)},
        "nope": {"accuracy": (0.21, 0.22, 0.22), "train_loss_mean": (2.0, 2.0, 2.0)},
    }
    judged = judge.judge_pair(_cell_input("learned", metrics))
    assert judged.verdict.key == "a"
    assert "higher held-out accuracy (better)" in judged.verdict.text
    assert "paired 95% interval" in judged.verdict.text


def test_pair_at_the_ceiling_compares_speed_as_lower_loss_better() -> None:
    metrics = {
        "learned": {"accuracy": (1.0, 1.0, 1.0), "train_loss_mean": (1.34, 1.30, 1.38)},
        "sinusoid": {"accuracy": (1.0, 1.0, 0.999), "train_loss_mean": (0.41, 0.42, 0.43)},
        "nope": {"accuracy": (0.21, 0.22, 0.22), "train_loss_mean": (2.0, 2.0, 2.0)},
    }
    judged = judge.judge_pair(_cell_input("learned", metrics))
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


def _instance(accuracy: list[float], loss: list[float]) -> Instance:
    acc = np.array([accuracy] * 3)
    los = np.array([loss] * 3)
    return Instance("x", "x", "t", "", np.ones((3, 4)), {"12": acc}, {"12": los}, {}, None,
                    (-1, -1, -1), 10, 12)  # fmt: skip


def test_convergence_by_accuracy_or_by_a_loss_plateau() -> None:
    assert m.convergence(_instance([0.5, 0.96], [1.0, 0.5]), length="12", index=1).converged
    flat = m.convergence(_instance([0.3, 0.31], [2.0, 1.99]), length="12", index=1)
    assert flat.converged and "plateaued" in flat.text
    falling = m.convergence(_instance([0.3, 0.4], [2.0, 1.8]), length="12", index=1)
    assert not falling.converged and "under-trained" in falling.text


@pytest.mark.parametrize("metric", list(m.METRICS))
def test_metric_labels_say_which_way_is_better_in_words(metric: str) -> None:
    label = m.label(metric)
    if m.spec(metric).meaning:  # descriptive: says what the scale means instead of a direction
        assert label.endswith(f"({m.spec(metric).meaning})")
    else:
        assert re.search(r"\((higher|lower) is better\)$", label)
    assert "_" not in label and "@" not in label  # words, never an id like train_loss_mean
