"""Training and answering: known answers on the reverse task, determinism, stop, divergence."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from posviz.lab import QUESTIONS, LabStopped
from posviz.lab.engine import train as lab_train
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.tasks import eval_rng, make_batch, train_rng


def _tiny(question_id: str, **changes) -> LabConfig:
    base = QUESTIONS[question_id].default
    return replace(
        base, **{"steps": 3, "width": 16, "batch": 8, "eval_batch": 16, "seeds": 2, **changes}
    )


def test_training_twice_is_bit_identical() -> None:
    config = _tiny("extrapolation", steps=4)
    runs = [
        lab_train.train_variant(ModelConfig(kind="decoder", scheme="learned"), config)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].losses, runs[1].losses)
    np.testing.assert_array_equal(runs[0].snapshots, runs[1].snapshots)
    accuracy = [lab_train.evaluate(r.model, config, 16)[0] for r in runs]
    np.testing.assert_array_equal(accuracy[0], accuracy[1])


def test_seeds_are_independent_models() -> None:
    config = _tiny("learned", steps=3)
    together = lab_train.train_variant(ModelConfig(scheme="learned"), replace(config, seeds=2))
    alone = lab_train.train_variant(ModelConfig(scheme="learned"), replace(config, seeds=1))
    np.testing.assert_allclose(together.snapshots[0], alone.snapshots[0], atol=1e-5)
    assert not np.allclose(together.snapshots[0], together.snapshots[1])


def test_tasks_are_deterministic_and_their_targets_are_right() -> None:
    from posviz.lab.engine.tasks import make_batch, train_rng

    lengths = np.array([5, 8, 3])
    for task, k in (("reverse", 2), ("kback", 2), ("count", 2)):
        config = LabConfig(task=task, k=k, min_len=3, max_len=8, eval_lengths=(8,))
        a, b = (make_batch(config, train_rng(7), lengths) for _ in range(2))
        np.testing.assert_array_equal(a.inputs, b.inputs)
        row = a.inputs[1]  # the length-8 sequence
        expected = {
            "reverse": row[::-1],
            "kback": np.r_[[0, 0], row[:-2]],
            "count": np.array([(row == token).sum() for token in row]),
        }[task]
        np.testing.assert_array_equal(a.targets[1], expected)
        assert a.inputs[2, 3:].tolist() == [config.vocab] * 5 and not a.mask[2, 3:].any()


def test_lm_held_out_windows_come_from_text_never_trained_on() -> None:
    from posviz.lab.engine.tasks import LM_HELD_OUT, _alphabet, eval_rng, make_batch, train_rng

    config = LabConfig(task="lm", min_len=16, max_len=16, eval_lengths=(16,))
    codes = _alphabet()[1]
    cut = int(len(codes) * (1 - LM_HELD_OUT))
    train = make_batch(config, train_rng(0), np.full(64, 16))
    held = make_batch(config, eval_rng(0, 16), np.full(64, 16), held_out=True)
    np.testing.assert_array_equal(train.targets[:, :-1], train.inputs[:, 1:])  # next character
    text = "".join(map(chr, codes[cut:] + 32))
    assert all("".join(map(chr, w + 32)) in text for w in held.inputs)


def test_lm_needs_a_decoder_and_reverse_an_encoder() -> None:
    lm = LabConfig(task="lm", min_len=16, max_len=16, eval_lengths=(16,))
    with pytest.raises(ValueError, match="task='lm' needs kind='decoder'"):
        lab_train.build_model(ModelConfig(kind="encoder", scheme="rope"), lm)
    with pytest.raises(ValueError, match="task='reverse' needs the whole sequence"):
        lab_train.build_model(ModelConfig(kind="decoder"), QUESTIONS["learned"].default)
    lab_train.train_variant(
        ModelConfig(kind="decoder", scheme="rope"), replace(lm, steps=2, seeds=2)
    )


# --- the batched engine: train_arms ------------------------------------------------------------

KB = LabConfig(
    task="kback", k=2, min_len=6, max_len=10, eval_lengths=(10, 14), width=16, heads=4,
    batch=8, eval_batch=32, seeds=2, lr=5e-3,
)  # fmt: skip
MIXED = (  # the rotary arm not first: the engine moves it to the front of the batched model
    lab_train.Arm("alibi", ModelConfig(kind="decoder", scheme="alibi"), replace(KB, seeds=3)),
    lab_train.Arm("rope", ModelConfig(kind="decoder", scheme="rope"), KB),
    lab_train.Arm(
        "concat",
        ModelConfig(scheme="learned", injection="concat", pos_init_std=0.5),
        replace(KB, length_dist="short"),
    ),
    lab_train.Arm("t5", ModelConfig(scheme="t5"), KB),
    lab_train.Arm("every", ModelConfig(scheme="sinusoidal", injection="every_layer"), KB),
    lab_train.Arm("nope", ModelConfig(kind="decoder", scheme="nope"), replace(KB, min_len=10)),
    lab_train.Arm("learned", ModelConfig(kind="decoder", scheme="learned", table_rows=12), KB),
)


def _same(a: lab_train.ArmOutput, b: lab_train.ArmOutput, **tolerance: float) -> None:
    check = (
        np.testing.assert_array_equal
        if not tolerance
        else lambda x, y: np.testing.assert_allclose(x, y, **tolerance)
    )
    check(a.losses, b.losses)
    for length in a.heldout:
        check(a.heldout[length].loss, b.heldout[length].loss)
        check(a.heldout[length].per_position, b.heldout[length].per_position)
    if a.snapshots is not None:
        check(a.snapshots, b.snapshots)


def test_a_member_trained_in_a_heterogeneous_batch_equals_the_member_trained_alone() -> None:
    together = lab_train.train_arms(MIXED, steps=6, checkpoints=(0, 3, 6))
    assert len({id(out.model) for out in together.values()}) == 1  # one batched model
    for arm in MIXED:
        alone = lab_train.train_arms([arm], steps=6, checkpoints=(0, 3, 6))[arm.id]
        _same(together[arm.id], alone, rtol=1e-4, atol=1e-5)
        assert together[arm.id].n_params == alone.n_params


def test_two_identical_runs_are_bit_identical() -> None:
    first, second = (lab_train.train_arms(MIXED, steps=4, checkpoints=(2, 4)) for _ in range(2))
    for arm in MIXED:
        _same(first[arm.id], second[arm.id])


def test_arms_with_equal_settings_start_alike_and_see_the_same_batches() -> None:
    """The paired design: seed s of two arms with equal settings is one model trained twice."""
    twin = (lab_train.Arm("a", MIXED[0].model, KB), lab_train.Arm("b", MIXED[0].model, KB))
    out = lab_train.train_arms(twin, steps=5, checkpoints=(5,))
    _same(out["a"], out["b"])
    assert not np.array_equal(out["a"].losses[0], out["a"].losses[1])  # seeds differ


def test_one_diverging_member_leaves_the_others_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    arms = (
        lab_train.Arm("learned", ModelConfig(scheme="learned"), KB),
        lab_train.Arm("sinusoid", ModelConfig(scheme="sinusoidal"), KB),
    )
    clean = lab_train.train_arms(arms, steps=8, checkpoints=(2, 4, 8))
    original, steps = lab_train.masked_loss, []

    def poisoned(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        loss = original(logits, targets, mask)
        if torch.is_grad_enabled():  # a training step, not an evaluation
            steps.append(1)
            if len(steps) >= 3:  # member 1 (learned, seed 1) turns NaN at step 3, gradients too
                return loss * loss.new_tensor([1.0, math.nan, 1.0, 1.0])
        return loss

    monkeypatch.setattr(lab_train, "masked_loss", poisoned)
    hurt = lab_train.train_arms(arms, steps=8, checkpoints=(2, 4, 8))
    assert hurt["learned"].diverged_at.tolist() == [-1, 3]
    assert hurt["sinusoid"].diverged_at.tolist() == [-1, -1]
    _same(hurt["sinusoid"], clean["sinusoid"])
    np.testing.assert_array_equal(hurt["learned"].losses[0], clean["learned"].losses[0])
    np.testing.assert_array_equal(hurt["learned"].snapshots[0], clean["learned"].snapshots[0])
    # the diverged seed is frozen at its last finite step and reported as NaN from then on
    frozen = hurt["learned"].snapshots[1]
    steps_taken = hurt["learned"].snapshot_steps
    for index in np.flatnonzero(steps_taken >= 3):
        np.testing.assert_array_equal(frozen[index], frozen[np.flatnonzero(steps_taken == 2)[0]])
    assert np.isnan(hurt["learned"].losses[1, 2:]).all()
    accuracy = hurt["learned"].heldout[10].accuracy
    assert np.isfinite(accuracy[1, 0]) and np.isnan(accuracy[1, 1:]).all()
    np.testing.assert_array_equal(accuracy[0], clean["learned"].heldout[10].accuracy[0])


def test_checkpoint_accuracies_are_on_the_held_out_stream() -> None:
    """Recomputed by hand on ``make_batch(eval_rng(seed, n), held_out=True)``: equal. Held-out
    character windows come from the last 10 % of the texts, which training never reads."""
    lm = LabConfig(
        task="lm", min_len=12, max_len=12, eval_lengths=(12,), width=16, batch=8, eval_batch=24,
        seeds=2, lr=5e-3,
    )  # fmt: skip
    out = lab_train.train_arms(
        [lab_train.Arm("lm", ModelConfig(kind="decoder", scheme="rope"), lm)],
        steps=5,
        checkpoints=(5,),
    )["lm"]
    batches = [
        make_batch(lm, eval_rng(seed, 12), np.full(24, 12), held_out=True) for seed in range(2)
    ]
    logits = out.logits(np.stack([b.inputs for b in batches]))
    targets = np.stack([b.targets for b in batches])
    expected = (logits.argmax(-1) == targets).mean(axis=(1, 2))
    np.testing.assert_allclose(out.heldout[12].accuracy[:, -1], expected, rtol=1e-12)
    training = [make_batch(lm, train_rng(seed), np.full(24, 12)) for seed in range(2)]
    assert not any(
        np.array_equal(t.inputs, h.inputs) for t, h in zip(training, batches, strict=True)
    )


def test_a_budget_checkpoint_is_the_shorter_run() -> None:
    """No schedule: step S of a 3S-step run is the S-step model (one run gives both budgets)."""
    arm = MIXED[2]
    long = lab_train.train_arms([arm], steps=9, checkpoints=(3, 9))[arm.id]
    short = lab_train.train_arms([arm], steps=3, checkpoints=(3,))[arm.id]
    for length in arm.config.eval_lengths:
        np.testing.assert_array_equal(
            long.heldout[length].loss[:, 0], short.heldout[length].loss[:, 0]
        )


def test_learned_tables_are_not_defined_past_their_rows() -> None:
    out = lab_train.train_arms(MIXED[5:], steps=2, checkpoints=(2,))
    assert "cannot index positions past its last row" in out["learned"].heldout[14].undefined
    assert np.isnan(out["learned"].heldout[14].accuracy).all()
    assert np.isfinite(out["learned"].heldout[10].accuracy).all()
    assert (
        np.isfinite(out["nope"].heldout[14].accuracy).all()
        and not out["nope"].heldout[14].undefined
    )
    with pytest.raises(ValueError, match="cannot index positions past its last row"):
        out.hidden_states("learned", 14, 4)


def test_unseen_rows_and_masked_columns_never_move_under_adam() -> None:
    arms = (
        lab_train.Arm("rows", ModelConfig(scheme="learned", table_rows=16, pos_init_std=0.5), KB),
        lab_train.Arm("concat", ModelConfig(scheme="learned", injection="concat"), KB),
    )
    out = lab_train.train_arms(arms, steps=6, checkpoints=())
    tables = out["rows"].snapshots  # (E, snapshots, 16, d)
    np.testing.assert_array_equal(tables[:, -1, 10:], tables[:, 0, 10:])  # rows 10-15: unseen
    assert (np.abs(tables[:, -1, :10] - tables[:, 0, :10]).sum(-1) > 0).all()  # the rest moved
    model, part, d = out["concat"].model, out["concat"].members, KB.width
    assert not model.tok[part, :, d // 2 :].any() and not model.pos[part, :, : d // 2].any()
    assert not model.pos[out["rows"].members, 16:].any()  # padding rows of the shared table


def test_progress_is_one_count_across_arms_and_shapes() -> None:
    lm = LabConfig(
        task="lm", min_len=8, max_len=8, eval_lengths=(8,), width=16, batch=4, seeds=3, eval_batch=8
    )
    arms = (
        lab_train.Arm("reverse", ModelConfig(scheme="learned"), _tiny("learned", seeds=2)),
        lab_train.Arm("lm", ModelConfig(kind="decoder", scheme="nope"), lm),
    )
    seen: list[tuple[int, int, dict[str, float]]] = []
    out = lab_train.train_arms(
        arms, steps=4, checkpoints=(4,), on_step=lambda *args: seen.append(args)
    )
    assert out["reverse"].model is not out["lm"].model  # two shapes: two batched models
    done = [s[0] for s in seen]
    assert done == sorted(done) and done[-1] == 4 * (2 + 3) and len(seen) == 2 * 4
    assert {s[1] for s in seen} == {20}
    assert set(seen[-1][2]) == {"reverse", "lm"}


def test_should_stop_is_polled_every_step_and_raises() -> None:
    polls = []

    def should_stop() -> bool:
        polls.append(1)
        return len(polls) > 3

    with pytest.raises(LabStopped, match="Stopped at step 3"):
        lab_train.train_arms(MIXED[:2], steps=50, checkpoints=(), should_stop=should_stop)
    assert len(polls) == 4


def test_hidden_states_of_a_causal_nope_arm() -> None:
    arm = lab_train.Arm("nope", ModelConfig(kind="decoder", scheme="nope"), KB)
    out = lab_train.train_arms([arm], steps=3, checkpoints=())
    states = out.hidden_states("nope", 12, 5)
    assert len(states) == KB.layers + 1
    assert all(s.shape == (2, 5, 12, KB.width) for s in states)
    tokens = [
        make_batch(KB, eval_rng(s, 12), np.full(5, 12), held_out=True).inputs for s in range(2)
    ]
    model = out["nope"].model
    for seed in range(2):  # the input state of a NoPE model is its token embedding alone
        embedding = model.tok[seed].detach().cpu().numpy()[tokens[seed]]
        np.testing.assert_array_equal(states[0][seed], embedding)


@pytest.mark.parametrize(
    ("arms", "words"),
    [
        ([MIXED[0], MIXED[0]], "distinct ids"),
        ([lab_train.Arm("x", ModelConfig(kind="decoder"), _tiny("learned"))], "whole sequence"),
    ],
)
def test_bad_arms_are_refused_with_the_fix(arms: list, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        lab_train.train_arms(arms, steps=2, checkpoints=())
    with pytest.raises(ValueError, match="outside 0 … 2"):
        lab_train.train_arms(MIXED[:1], steps=2, checkpoints=(3,))


def test_a_big_shape_is_packed_into_bounded_models_and_stays_paired() -> None:
    big = replace(KB, batch=64, max_len=32, eval_lengths=(32,), seeds=3)  # 6,144 tokens an arm
    assert 2 * 3 * 64 * 32 > lab_train.MAX_MODEL_TOKENS >= 3 * 64 * 32
    twin = (lab_train.Arm("a", MIXED[0].model, big), lab_train.Arm("b", MIXED[0].model, big))
    out = lab_train.train_arms(twin, steps=2, checkpoints=(2,))
    assert out["a"].model is not out["b"].model  # two batched models ...
    _same(out["a"], out["b"])  # ... the same starts and batches: seed s is one model twice
