"""The attention-sinks question (kind ``sinks``): its trainer's outputs and pairing, its judge's
gate, verdicts and controls that can fail, its first line, and its registration through the
registries alone.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781), §3.2 (p. 4–5): α₁ and Sink₁^ε.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from runid_support import ids_with_edit

from posviz.lab.attention_variants import first_token_score
from posviz.lab.engine.results import Cell, Verdict
from posviz.lab.present.kinds import VIEWS
from posviz.lab.studies import judging
from posviz.lab.studies import sinks_arms as arms
from posviz.lab.studies import sinks_question as sq
from posviz.lab.studies.kinds import KINDS
from posviz.lab.studies.presets import QUESTIONS, SINKS

TINY = {"steps": 4, "width": 8, "batch": 4, "eval_batch": 8, "seeds": 2}


def _members(config, conditions=arms.CONDITIONS, schemes=("rope",)):
    from posviz.lab.engine.sweep import Planned
    from posviz.lab.studies.questions import Conditioned

    out = []
    for scheme, condition in itertools.product(schemes, conditions):
        arm = arms.arm_id(scheme, condition)
        planned = Planned(arm, arm, "backcopy", "", SINKS.variant(arm).model, config)
        out.append(Conditioned.of(planned, condition))
    return out


def test_the_question_is_registered_through_the_registries() -> None:
    assert QUESTIONS["sinks"] is SINKS
    assert SINKS.kind in KINDS and SINKS.kind in VIEWS
    assert KINDS["sinks"].train is not None
    assert {v.condition for v in SINKS.variants} == set(arms.CONDITIONS)
    assert {v.model.scheme for v in SINKS.variants} == set(arms.SCHEMES)
    assert [v.id for v in SINKS.variants] == list(arms.ARM_IDS) and len(arms.ARM_IDS) == 8
    assert [v.id for v in SINKS.variants if v.role == "control"] == [
        "learned_no_bos",
        "rope_no_bos",
    ]
    assert all(v.model.kind == "decoder" for v in SINKS.variants)


def test_the_design_hashes_its_task_attention_and_loop() -> None:
    design = SINKS.design()
    assert len(design["source"]) == len(SINKS.source)  # which: test_lab_study_trainer.py
    assert all("condition" in v for v in design["variants"])


def test_a_uniform_head_s_first_token_score_is_the_harmonic_number_over_t() -> None:
    """Query t of a causal head spreading its weight evenly gives the first key 1/t:
    α₁ = H_T / T (H_64 = 4.7439, so 0.0741)."""
    t = 64
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    assert arms.uniform_alpha(t) == pytest.approx(float(first_token_score(uniform)))
    assert arms.uniform_alpha(t) == pytest.approx(4.743890 / 64, abs=1e-6)
    assert arms.uniform_alpha(1) == 1.0


def test_a_config_without_the_task_is_a_clear_error() -> None:
    arms.check(SINKS.default)
    with pytest.raises(ValueError, match="task='kback', k=1, vocab=32"):
        arms.check(dataclasses.replace(SINKS.default, vocab=16))
    with pytest.raises(ValueError, match="min_len = max_len"):
        arms.check(dataclasses.replace(SINKS.default, min_len=32))


@pytest.mark.slow
def test_outputs_are_engine_shaped_paired_and_a_split_changes_no_number() -> None:
    from posviz.lab.studies.sinks_question_train import train_question_arms

    config = dataclasses.replace(SINKS.default, **TINY)
    members = _members(config)
    together = train_question_arms(members, steps=4, checkpoints=[2, 4])
    apart = {}
    for one in members:
        apart.update(train_question_arms([one], steps=4, checkpoints=[2, 4]))
    t = config.max_len
    for member in members:
        a, b = together[member.id], apart[member.id]
        assert list(a.checkpoint_steps) == [0, 2, 4] and list(a.curve_steps)[-1] == 4
        assert a.heldout[t].per_position.shape == (2, 3, t)
        assert a.heldout[arms.ALPHA].per_position.shape == (2, 3, config.layers * config.heads)
        assert all(a.heldout[r].undefined == arms.NOT_A_LENGTH for r in arms.READINGS)
        np.testing.assert_array_equal(a.losses, b.losses)
        np.testing.assert_array_equal(a.heldout[t].loss, b.heldout[t].loss)
        np.testing.assert_array_equal(
            a.heldout[arms.ALPHA].accuracy, b.heldout[arms.ALPHA].accuracy
        )
    soft, slot, bare = (together[arms.arm_id("rope", c)] for c in arms.CONDITIONS)
    # softmax spends all of every row on tokens; the slot keeps some (it starts at logit 0)
    np.testing.assert_allclose(soft.heldout[arms.TOKEN_SHARE].accuracy, 1.0, atol=1e-5)
    assert np.all(slot.heldout[arms.TOKEN_SHARE].accuracy < 1.0)
    assert slot.n_params == soft.n_params + config.layers * config.width
    # the same seed starts from the same weights and reads the same data (with the BOS)
    assert not np.array_equal(soft.losses, bare.losses)  # without a BOS: other sequences
    assert np.all(soft.heldout[arms.COPY].accuracy >= 0)


# --------------------------------------------------------------------------- the judge

SCHEME = sq.Arms("rope", "s", "k", "n")
LABELS = {"s": "softmax", "k": "key-bias slot", "n": "softmax without a BOS"}
UNIFORM = arms.uniform_alpha(64)


def _metrics(alpha, copies=(0.97, 0.97, 0.97), loss=(1.47, 1.47, 1.47), sinks=None):
    """Three seeds per arm, each value with its own small noise (± 0.004)."""
    noise = np.random.default_rng(3).uniform(-0.004, 0.004, size=(3, 3, 3))
    out = {}
    for i, arm in enumerate(("s", "k", "n")):
        out[arm] = {
            sq.METRIC: tuple(alpha[i] + noise[i, 0]),
            sq.COPIES: tuple(copies[i] + noise[i, 1]),
            "loss": tuple(loss[i] + noise[i, 2]),
            sq.SINK: tuple((sinks or {}).get(arm, (1.0 if alpha[i] > 0.3 else 0.0,) * 3)),
        }
    return out


def _key(metrics, status=None):
    return sq.judge_scheme(SCHEME, metrics, status or {}, LABELS, UNIFORM).key


def test_a_sink_the_slot_removes_at_no_cost_is_softmax_s() -> None:
    verdict = sq.judge_scheme(SCHEME, _metrics((0.6, 0.003, 0.07)), {}, LABELS, UNIFORM)
    assert verdict.key == "slot" and "removes softmax's pile-up" in verdict.text
    assert "α₁ 0.599 with softmax, 0.002 with the slot" in verdict.text
    assert "the slot arm learned as well" in verdict.text


def test_the_slot_control_can_fail_when_its_arm_learned_less() -> None:
    worse_copies = _metrics((0.6, 0.003, 0.07), copies=(0.97, 0.5, 0.97))
    verdict = sq.judge_scheme(SCHEME, worse_copies, {}, LABELS, UNIFORM)
    assert verdict.key == "learned_less" and "the slot arm learned less" in verdict.text
    worse_loss = _metrics((0.6, 0.003, 0.07), loss=(1.47, 1.9, 1.47))
    assert _key(worse_loss) == "learned_less"


def test_no_sink_to_remove_is_said_so_not_credited_to_the_slot() -> None:
    """Softmax at a uniform head's α₁: a slot arm lower still is no evidence about a sink."""
    verdict = sq.judge_scheme(SCHEME, _metrics((UNIFORM, 0.05, 0.07)), {}, LABELS, UNIFORM)
    assert verdict.key == "no_sink" and "no more than a uniform head" in verdict.text


def test_a_failed_arm_supports_no_verdict() -> None:
    assert _key(_metrics((0.6, 0.003, 0.07)), {"k": "diverged"}) == "undecided"
    assert _key(_metrics((0.6, 0.003, 0.07)), {"s": "stalled"}) == "undecided"


def _cell(metrics, status=None) -> Cell:
    return Cell("backcopy.small.x1", (), 200, True, {}, metrics, (), {}, {}, (), (),
                Verdict("", "", ""), status or {})  # fmt: skip


def _question(schemes=("rope",)):
    variants = tuple(v for v in SINKS.variants if v.model.scheme in schemes)
    return dataclasses.replace(SINKS, variants=variants)


def _renamed(metrics, scheme="rope"):
    ids = dict(zip(("s", "k", "n"), (arms.arm_id(scheme, c) for c in arms.CONDITIONS),
                   strict=True))  # fmt: skip
    return {ids[a]: v for a, v in metrics.items()}


def test_the_no_bos_control_flags_a_sink_without_a_bos() -> None:
    q, labels = _question(), {v.id: v.label for v in SINKS.variants}
    fine = _renamed(_metrics((0.6, 0.003, 0.07)))
    assert sq.bos_verdict(q, _cell(fine), labels, SINKS.default).key == "stated|rope:bos"
    # the same α₁ difference, but one seed without a BOS has a head over ε: the control fails
    forced = _renamed(_metrics((0.6, 0.003, 0.07), sinks={"n": (0.0, 0.5, 0.0)}))
    verdict = sq.bos_verdict(q, _cell(forced), labels, SINKS.default)
    assert verdict.key == "stated|rope:sink_without_bos" and "control fails" in verdict.text
    assert "0.9 times a uniform head's 0.074" in verdict.text


def test_the_positions_control_fails_when_positions_do_not_help_the_copies() -> None:
    q, labels = _question(("nope", "rope")), {v.id: v.label for v in SINKS.variants}
    nope = _renamed(_metrics((0.3, 0.003, 0.07), copies=(0.2, 0.2, 0.2)), "nope")
    rope = _renamed(_metrics((0.6, 0.003, 0.07)), "rope")
    assert sq.positions_verdict(q, _cell(nope | rope), labels).key == "stated|rope:stronger"
    blind = _renamed(_metrics((0.6, 0.003, 0.07), copies=(0.2, 0.2, 0.2)), "rope")
    verdict = sq.positions_verdict(q, _cell(nope | blind), labels)
    assert verdict.key == "stated|rope:no_copies" and "control fails" in verdict.text


def test_sink1_in_every_seed_fails_on_one_seed_below_one() -> None:
    q = _question()
    every = _renamed(_metrics((0.6, 0.003, 0.07)))
    assert sq.sink_rate_verdict(q, _cell(every)).key == "every_seed"
    one_short = _renamed(_metrics((0.6, 0.003, 0.07), sinks={"s": (1.0, 0.5, 1.0)}))
    verdict = sq.sink_rate_verdict(q, _cell(one_short))
    assert verdict.key == "not_every_seed" and "RoPE softmax 0.83 [0.50, 1.00]" in verdict.text


def test_every_first_line_fits_fifteen_words() -> None:
    for keys in itertools.product(sq.PHRASES, repeat=3):
        verdict = sq._verdict(
            [sq.SchemeVerdict(s, k, "", ()) for s, k in zip(arms.SCHEMES, keys, strict=True)]
        )
        cell = _cell({})
        line = sq.plain(dataclasses.replace(cell, verdict=verdict))
        assert len(line.split()) <= 15, line
        assert judging.undecided_key(verdict.key) == all(k == "undecided" for k in keys)


def _ids_with(monkeypatch, edited: str | None) -> dict[str, str]:
    """Every registered study's run id when the hashed source of ``edited`` has one more line."""
    return ids_with_edit(monkeypatch, edited)


@pytest.mark.parametrize(
    "edited",
    ["sink_task.py", "attention_variants.py", "sinks_arms.py", "sinks_question_train.py"],
)
def test_editing_the_task_attention_or_loop_retrains_this_question_and_nothing_else(
    monkeypatch, edited
):
    before = _ids_with(monkeypatch, None)
    moved = {k for k, v in _ids_with(monkeypatch, edited).items() if v != before[k]}
    assert moved == {"sinks", "gu_2025"}  # the paper card trains on the same task and loop
    assert _ids_with(monkeypatch, "sinks_question.py") == before  # words and judging


def test_a_scheme_without_a_no_bos_arm_is_left_out_of_the_bos_finding() -> None:
    """NoPE trains no arm without a BOS (the budget): the finding speaks of the others only."""
    labels = {v.id: v.label for v in SINKS.variants}
    metrics = {}
    for scheme in arms.SCHEMES:
        metrics |= _renamed(_metrics((0.6, 0.003, 0.07)), scheme)
    verdict = sq.bos_verdict(SINKS, _cell(metrics), labels, SINKS.default)
    assert verdict.key == "stated|learned:bos|rope:bos" and "NoPE" not in verdict.text
    assert sq.scheme_arms(SINKS)[0] == sq.Arms("nope", "nope_softmax", "nope_key_bias", "")


def check_sinks_answer(result) -> None:
    """The stored default answer's verdicts and numbers as docs/benchmarks.md states them (the
    sinks question, 3 seeds, 200 and 600 steps), on any CPU (tests/pin_support.py): at 200 steps
    NoPE's and the learned table's slot-vs-softmax intervals start within 0.03 of 0 and each was
    undecided on one of the three numerics measured (the README says so), so there either
    verdict is accepted; every other verdict is pinned."""
    x1, x3 = (result.cell(f"backcopy.small.{b}") for b in ("x1", "x3"))
    # the slot removes the pile-up in every scheme at 600 steps, and RoPE's at 200 too
    assert x3.verdict.key == "stated|nope:slot|learned:slot|rope:slot", x3.verdict.text
    schemes = dict(part.split(":") for part in x1.verdict.key.split("|")[1:])
    assert schemes["rope"] == "slot" and set(schemes) == {"nope", "learned", "rope"}
    assert {schemes["nope"], schemes["learned"]} <= {"slot", "undecided"}, x1.verdict.text
    topics = {f.topic: f for f in result.findings}
    assert topics["With vs without a BOS"].holds_everywhere
    assert set(topics["With vs without a BOS"].keys.values()) == {"stated|learned:bos|rope:bos"}
    sink1 = topics["Sink₁ at ε = 0.3"].keys
    assert sink1[x3.id] == "every_seed" and sink1[x1.id] == "not_every_seed"
    for scheme in arms.SCHEMES:  # the slot takes most of the attention by 600 steps
        slot = x3.metrics[arms.arm_id(scheme, "key_bias")]
        assert max(slot[sq.METRIC]) < 0.01 and max(slot[sq.SHARE]) < 0.15
    uniform = arms.uniform_alpha(64)
    for scheme in ("learned", "rope"):  # without a BOS: about a uniform head's, no head over ε
        bare = x3.metrics[arms.arm_id(scheme, "no_bos")]
        assert max(bare[sq.SINK]) == 0 and abs(np.mean(bare[sq.METRIC]) - uniform) < 0.02


@pytest.mark.slow
@pytest.mark.answers
def test_the_sinks_answer_is_what_the_docs_say(tmp_path) -> None:
    """About 85 CPU-s (measured at load 8–9), ≈ 50 s on 2 quiet cores."""
    from posviz.lab import RunStore, run_question

    check_sinks_answer(run_question("sinks", store=RunStore(tmp_path)))


def test_the_question_and_the_inside_page_link_each_other() -> None:
    """The real checkpoints' first-token heads (Inside real models) and the trained question
    point at each other, each by its registry: a renamed page or study breaks the link here."""
    from posviz.lab.present.answer import REAL_CHECKPOINTS
    from posviz.navigation import all_pages, study_url_path
    from posviz.page_models import inside_models

    pages = {spec.path: spec.url_path for spec in all_pages()}
    page, label = REAL_CHECKPOINTS["sinks"]
    assert pages.get(page) == "inside_models" and "real checkpoints" in label
    assert inside_models.SINKS_PAGE == study_url_path("sinks") in pages.values()
