"""The default answers, trained as shipped: the numbers they state are what the code computes from
the stored arrays, each verdict survives the robustness cases (the learned table started at the
token embeddings' scale, 3× the steps) or names the setting it depends on, and the pinned
results hold within their measured spread (2 std over seeds: tests/pin_support.py, which says
why a pin must hold on another CPU's rounding).

Each preset trains once per session at full size (about a minute on 2 quiet cores each, up to
three under a loaded suite; deterministic on one CPU): the only place the presets train at full
size, hence the ``answers`` tier (``./scripts/test.sh --answers``, run by scripts/docker-smoke.sh
where the image's warm store is built), not the default run; every other lab test trains tiny
configs (``lab warm`` itself: tests/test_lab_cli.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from pin_support import near_comparison, within

from posviz.analysis.evidence import spread
from posviz.lab import QUESTIONS, RunStore, rejudge, run_question
from posviz.lab.engine.results import LabResult
from posviz.lab.engine.store import _entry

pytestmark = [pytest.mark.slow, pytest.mark.answers]

_RESULTS: dict[str, LabResult] = {}


@pytest.fixture(scope="session")
def lab_store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    return RunStore(tmp_path_factory.mktemp("lab_defaults"))


def default(question_id: str, store: RunStore) -> LabResult:
    """The question's default run (trained once per session)."""
    if question_id not in _RESULTS:
        _RESULTS[question_id] = run_question(question_id, store=store)
    return _RESULTS[question_id]


def _cell(result: LabResult, *, task: str | None = None, init: str = "small", budget: str = "x1"):
    task = task or result.default_cell.setting("task").key
    return result.cell(f"{task}.{init}.{budget}")


def _mean(values) -> float:
    return float(np.mean(values))


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_the_answer_is_what_the_code_computes_from_the_stored_arrays(
    question_id: str, lab_store: RunStore
) -> None:
    result = default(question_id, lab_store)
    stored = lab_store.load(result.run_id)
    again = rejudge(stored)  # every cell, verdict, finding and sentence from the arrays alone
    assert _entry(again)[0] == _entry(stored)[0]
    assert again.answer == result.answer


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_each_verdict_survives_the_robustness_cases_or_names_its_setting(
    question_id: str, lab_store: RunStore
) -> None:
    """Matched init (BERT/GPT-2's 1 : 1) and 3× the steps: the same verdict, or the setting is
    named in the finding's sentence with both cells' numbers."""
    result = default(question_id, lab_store)
    preset = result.default_cell
    cases = {"budget": _cell(result, budget="x3")}
    if any(c.setting("init").key == "matched" for c in result.cells):  # induction: one init
        cases["init"] = _cell(result, init="matched")
    words = {"init": "the table's initial scale", "budget": "the budget"}
    for finding in result.findings:
        for axis, cell in cases.items():
            if finding.keys[cell.id] == finding.keys[preset.id]:
                continue
            assert not finding.holds_everywhere
            assert axis in finding.depends_on or len(finding.depends_on) > 1, finding.text
            # the axis in words, or (where no cell decides otherwise) the undecided cell's setting
            assert any(words[a] in finding.text for a in finding.depends_on if a in words) or (
                "the same in every cell where it is decided" in finding.text
                and any(s.label in finding.text for s in cell.settings if s.axis == axis)
            ), finding.text
        if finding.holds_everywhere:
            assert len(set(finding.keys.values())) == 1
            assert f"the same in all {len(result.cells)} cells" in finding.text


@pytest.mark.parametrize("question_id", list(QUESTIONS))
def test_answers_use_metric_names_in_words(question_id: str, lab_store: RunStore) -> None:
    result = default(question_id, lab_store)
    assert not re.search(
        r"\b(train_loss_mean|accuracy_\w+|accuracy@\d+|movement_\w+)\b", result.answer
    )
    assert "higher (worse)" not in result.answer and "lower (worse)" not in result.answer


# --------------------------------------------------------------------------- pinned results


def test_learned_vs_sinusoid_speed_depends_on_the_tables_initial_scale(lab_store) -> None:
    """Both tables reach accuracy 1; which learns faster flips with the learned table's start:
    BERT/GPT-2's 0.02 (1 : 35 against the token embeddings) makes it slower, the token
    embeddings' own scale (1 : 1) faster — the finding names the setting, on both tasks."""
    result = default("learned", lab_store)
    for task in ("reverse", "kback"):
        assert _cell(result, task=task).verdict.key == "ceiling:b"  # sinusoid faster
        assert _cell(result, task=task, init="matched").verdict.key == "ceiling:a"
    main = result.findings[0]
    assert main.depends_on == ("init",) and "depends on the table's initial scale" in main.text
    preset = result.default_cell.metrics
    assert (
        min(preset["learned"]["accuracy"]) >= 0.99 and min(preset["sinusoid"]["accuracy"]) >= 0.99
    )


def test_the_no_position_control_stays_at_its_exact_ceiling(lab_store) -> None:
    """NoPE scores ≈ 3.5× chance, just under the position-blind ceiling 0.2230 (reverse, 16
    tokens, length 12), in every cell: the control can fail, and does not."""
    result = default("learned", lab_store)
    (reverse,) = [b for b in result.bounds if b.task == "reverse"]
    assert reverse.value == pytest.approx(0.2230, abs=5e-5) and reverse.chance == 1 / 16
    for cell in result.cells:
        values = cell.metrics["nope"]["accuracy"]
        assert spread(values).low <= reverse.value
    assert within(result.default_cell.metrics["nope"]["accuracy"], 0.218)
    control = next(f for f in result.findings if f.topic == "The control")
    assert control.holds_everywhere and "× chance" in control.text


def test_concatenation_learns_faster_only_from_a_small_table(lab_store) -> None:
    """Both arms reach accuracy 1; the concatenated table learns faster when the tables start at
    0.02 (both tasks, both budgets) and never faster from the token embeddings' scale: there
    "same speed" where the interval lies inside ±0.02 (reverse, 3×), else undecided — never a
    win either way."""
    result = default("concat", lab_store)
    for task in ("reverse", "kback"):
        for budget in ("x1", "x3"):
            assert _cell(result, task=task, budget=budget).verdict.key == "ceiling:b"
            matched = _cell(result, task=task, init="matched", budget=budget)
            assert matched.verdict.key in ("ceiling:tie", "ceiling:unclear")
    same = _comparison(
        _cell(result, init="matched", budget="x3"), "train_loss_mean", {"add", "concat"}
    )
    assert same.low > -0.02 and same.high < 0.02  # the tie is an equivalence, not a wide interval
    assert "init" in result.findings[0].depends_on


def test_every_layer_is_never_faster(lab_store) -> None:
    """Re-adding the table before every layer learns faster in no cell of the sweep: at the
    preset's settings the speed is undecided (the interval reaches past ±0.02, so not "no
    difference"); where the input-only table is faster (the matched init on reverse) the gap is
    under 0.01 in mean training loss, and the finding names the setting. (The held-out panel
    can break "never": tests/test_lab_verdicts.py checks that a finding says so.)"""
    result = default("every_layer", lab_store)
    assert result.default_cell.verdict.key == "ceiling:unclear"
    speed = _comparison(result.default_cell, "train_loss_mean", {"every_layer", "input"})
    assert speed.low < -0.02 or speed.high > 0.02
    for cell in result.cells:
        assert cell.verdict.key in ("ceiling:tie", "ceiling:unclear", "ceiling:b")  # never ":a"
        if cell.verdict.key == "ceiling:b":
            speed = next(c for c in cell.comparisons if c.metric == "train_loss_mean")
            assert 0 < speed.estimate < 0.01
    finding = result.findings[0]
    assert finding.holds_everywhere or "init" in finding.depends_on


def test_extrapolation_ranks_on_unseen_positions_with_the_relative_schemes_trained(
    lab_store,
) -> None:
    result = default("extrapolation", lab_store)
    preset = result.default_cell
    for arm in ("alibi", "rope", "t5"):
        assert _mean(preset.metrics[arm]["accuracy"]) >= 0.95 and preset.converged[arm]
    for cell in result.cells:
        assert {c.metric for c in cell.comparisons} <= {"accuracy_unseen"}  # unseen only
        holding = {r.arm for r in cell.ranking if r.holds}
        assert "sinusoid" not in holding and "learned" not in {r.arm for r in cell.ranking}
        assert all(cell.converged[r.arm] for r in cell.ranking)  # only trained arms ranked
        if cell.setting("task").key == "kback":
            assert holding == {"alibi", "rope", "t5"}  # NoPE under-trained: left out
    # the character LM on the KJV text is still improving at 200 steps for every arm: no
    # ranking there (not "none holds"); the table's init is not swept (no rows past 16)
    assert {c.setting("init").key for c in result.cells} == {"small"}
    assert _cell(result, task="lm").verdict.key == "undecided"
    assert _cell(result, task="lm").ranking == ()
    assert "learned table: not defined on unseen positions" in result.answer
    assert within(preset.metrics["sinusoid"]["accuracy_unseen"], 0.178)
    # the sweep: every previous-token cell keeps ALiBi, RoPE and T5 past the training length;
    # the character LM differs (at 600 steps still undecided here, NoPE alone decided with
    # another CPU's AVX2 kernels, so the budget may be named too: tests/pin_support.py)
    assert "task" in result.findings[0].depends_on
    assert set(result.findings[0].depends_on) <= {"task", "budget"}


def test_rare_rows_are_untrained_rows_not_unseen_lengths(lab_store) -> None:
    """The short-trained table lags at positions 24–31 while RoPE on the very same lengths does
    not, in every cell (init 0.02, 0.71 and 1; 300 and 900 steps)."""
    result = default("rare_rows", lab_store)
    assert all(c.verdict.key == "rows" for c in result.cells)
    assert result.findings[0].holds_everywhere
    preset = result.default_cell.metrics
    assert _mean(preset["rope_short"]["accuracy_late"]) >= 0.95
    assert _mean(preset["short"]["accuracy_late"]) <= 0.5
    assert "1 in 2,581" in result.answer
    assert "moved at most 0" not in result.answer  # never-indexed rows: a check that cannot fail
    # the short-trained table is still training at 300 steps: its lag is the finding, judged as
    # it stands, never "left out of its verdict"
    assert not result.default_cell.converged["short"]
    short = "learned table, mostly short sequences"
    assert f"{short} is still training at the preset's budget" in result.answer
    assert f"left out of its verdict: {short}" not in result.answer
    movement = result.findings[1]  # second: fragile, as expected with a N(0, 1) start
    # decided (the short-trained rows move less) from the 0.02 start at both budgets; from 0.71
    # and 1 undecided here, while another CPU's AVX2 kernels decide two of those four cells
    # (tests/pin_support.py), so only the 0.02 cells are pinned
    assert "init" in movement.depends_on
    assert {movement.keys[_cell(result, budget=b).id] for b in ("x1", "x3")} == {"b"}


def test_positions_emerge_in_the_causal_decoder_without_any(lab_store) -> None:
    result = default("need_positions", lab_store)
    probe = result.layer_probe
    assert probe is not None and probe.score.shape == probe.control.shape
    assert np.all(probe.score[0] <= 0.05)  # the input: no position by construction
    deeper = probe.score[1:].mean(axis=1)
    assert deeper.max() > probe.control[1:].mean(axis=1).max() + 0.05
    # 400 steps: the masked LM with a table has only begun to use positions (undecided); 1,200:
    # it is decided better than without positions. The causal LMs still improve at both budgets
    # (the KJV text is not memorised), so the decoder's gap is reported but left undecided.
    assert result.default_cell.verdict.key == "enc:undecided|dec:undecided|gap:undecided"
    for init in ("small", "matched"):
        assert _cell(result, init=init, budget="x3").verdict.key.startswith("enc:b|dec:undecided")
    gap = next(c for c in result.default_cell.comparisons if "dec_nope" in (c.a, c.b))
    assert gap.low > 0  # the decoder without positions trails at every seed's pairing
    assert result.findings[0].depends_on == ("budget",)


def _comparison(cell, metric: str, arms: set[str]):
    return next(c for c in cell.comparisons if c.metric == metric and {c.a, c.b} == arms)


def test_induction_is_decided_only_with_its_longer_budget(lab_store) -> None:
    """At the sweep's budgets the model without positions is still improving (undecided, said
    so); the panel part trains the preset's task for 18× the steps, where every seed of every
    2-layer arm is trained: RoPE ahead of the model without positions by about 0.02."""
    from posviz.lab.present.answer import plain_answer
    from posviz.lab.studies.summarise import with_panel

    result = default("induction", lab_store)
    assert result.default_cell.verdict.key == "undecided"
    joined = with_panel(result, run_question("induction", store=lab_store, part="panel"))
    longest = joined.cell("induction.small.x18")
    assert longest.steps == 2700 and longest.converged["rope"] and longest.converged["nope"]
    assert within(longest.metrics["rope"]["accuracy"], 1.000)
    assert within(longest.metrics["nope"]["accuracy"], 0.981)
    assert longest.verdict.key == "a"
    assert plain_answer(joined).startswith("With longer training, the 2-layer RoPE model")


def test_the_readme_numbers_are_what_the_stored_runs_compute(lab_store) -> None:
    """README's lab table quotes these differences (paired over seeds, 95% intervals): each
    within 2 std over seeds of the quoted one, on any CPU (tests/pin_support.py), and each
    decided as README says (its interval clear of 0: the same on the three numerics measured)."""
    learned = default("learned", lab_store)
    speed = _comparison(learned.default_cell, "train_loss_mean", {"learned", "sinusoid"})
    matched = _comparison(
        _cell(learned, init="matched"), "train_loss_mean", {"learned", "sinusoid"}
    )
    concat = _comparison(
        default("concat", lab_store).default_cell, "train_loss_mean", {"add", "concat"}
    )
    rows = default("rare_rows", lab_store).default_cell
    uniform = _comparison(rows, "accuracy_late", {"uniform", "short"})
    free = _comparison(rows, "accuracy_late", {"rope_short", "short"})
    need = default("need_positions", lab_store)
    enc = _comparison(_cell(need, budget="x3"), "loss", {"enc_nope", "enc_learned"})
    dec = _comparison(need.default_cell, "loss", {"dec_nope", "dec_learned"})
    quoted = [  # (comparison, README's estimate, its interval)
        (speed, 0.79, (0.68, 0.91)),
        (matched, -0.31, (-0.38, -0.24)),
        (concat, 0.41, (0.32, 0.50)),
        (uniform, 0.880, (0.855, 0.906)),
        (free, 0.900, (0.891, 0.909)),
        (enc, 0.62, (0.34, 0.91)),
        (dec, 0.166, (0.153, 0.179)),
    ]
    assert [c.n for c, _, _ in quoted] == [5, 5, 5, 5, 5, 3, 3]  # the seeds README states
    for comparison, estimate, interval in quoted:
        assert near_comparison(comparison, estimate, interval), comparison.text
        assert (comparison.low > 0) if estimate > 0 else (comparison.high < 0), comparison.text
    preset = default("extrapolation", lab_store).default_cell  # ranked on unseen positions
    for arm, mean in {"alibi": 0.982, "rope": 0.881, "t5": 0.832, "sinusoid": 0.178}.items():
        assert within(preset.metrics[arm]["accuracy_unseen"], mean), arm
