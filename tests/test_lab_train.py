"""Training and answering: known answers on the reverse task, determinism, stop, divergence."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from posviz.analysis.evidence import spread
from posviz.lab import QUESTIONS, LabStopped, RunStore, run_question
from posviz.lab import train as lab_train
from posviz.lab.answer import CEILING
from posviz.lab.config import LabConfig, ModelConfig


def _tiny(question_id: str, **changes) -> LabConfig:
    base = QUESTIONS[question_id].default
    return replace(
        base, **{"steps": 3, "width": 16, "batch": 8, "eval_batch": 16, "seeds": 2, **changes}
    )


def _order_free_ceiling(n: int, vocab: int, samples: int = 20000) -> float:
    """Best accuracy at reversing without positions: guess the sequence's most common token."""
    x = np.random.default_rng(0).integers(0, vocab, size=(samples, n))
    counts = np.stack([(x == v).sum(1) for v in range(vocab)], axis=1)
    return float((counts.max(1) / n).mean())


def test_reverse_known_answer_with_the_default_budget(tmp_path: Path) -> None:
    """Learned and sinusoid tables learn to reverse; the NoPE encoder stays at the order-free
    ceiling (it is permutation-equivariant), and the answer says what the intervals say."""
    q = QUESTIONS["learned"]
    result = run_question("learned", store=RunStore(tmp_path))
    accuracy = {v: np.array(result.metrics[v]["accuracy"]) for v in result.variant_ids}
    assert accuracy["learned"].min() >= 0.9 and accuracy["sinusoid"].min() >= 0.9
    ceiling = _order_free_ceiling(q.default.max_len, q.default.vocab)
    assert accuracy["nope"].max() <= ceiling + 0.03
    first, *rest = result.answer.splitlines()
    overlap = spread(accuracy["learned"]).overlaps(spread(accuracy["sinusoid"]))
    assert ("no difference" in first) == overlap
    against_control = [line for line in rest if line.startswith("Against the control")]
    assert len(against_control) == 2
    assert all("is higher than no positions" in line for line in against_control)
    # both arms at the ceiling: the answer says accuracy cannot separate them and compares
    # how fast they learned (mean training loss), with its own spread
    at_ceiling = min(accuracy["learned"].mean(), accuracy["sinusoid"].mean()) >= CEILING
    assert any(line.startswith("Both reach the ceiling") for line in rest) == at_ceiling
    speed = {v: np.array(result.metrics[v]["train_loss_mean"]) for v in result.variant_ids}
    assert speed["nope"].min() > max(speed["learned"].max(), speed["sinusoid"].max())


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


def test_a_diverging_variant_is_marked_and_the_rest_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = lab_train.masked_loss

    def nan_for_concat(
        logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        loss = original(logits, targets, mask)
        return loss * float("nan") if logits.shape[-2] and concat_running[0] else loss

    concat_running = [False]
    real_train = lab_train.train_variant

    def train(model, config, **kw):
        concat_running[0] = model.injection == "concat"
        return real_train(model, config, **kw)

    monkeypatch.setattr(lab_train, "masked_loss", nan_for_concat)
    monkeypatch.setattr(lab_train, "train_variant", train)
    store = RunStore(tmp_path)
    result = run_question("concat", config=_tiny("concat"), store=store)
    assert result.diverged == ("concat",)
    row = next(r for r in result.summary if r.variant == "concat" and r.metric == "accuracy")
    assert np.isnan(row.mean) and "diverged" in row.note and "lower lr" in row.note
    assert "not defined" in result.answer.splitlines()[0]
    assert store.load(result.run_id).diverged == ("concat",)


def test_train_short_test_long_says_a_learned_table_cannot_index_past_its_rows(
    tmp_path: Path,
) -> None:
    result = run_question("extrapolation", config=_tiny("extrapolation"), store=RunStore(tmp_path))
    row = next(r for r in result.summary if r.variant == "learned" and r.metric == "accuracy@32")
    assert np.isnan(row.mean) and "cannot index positions past its last row" in row.note
    assert all(np.isfinite(result.metrics[v]["accuracy@32"]).all() for v in ("alibi", "rope", "t5"))
    assert "learned table: accuracy@32 is not defined" in result.answer


def test_rare_rows_probe_numbers_come_with_their_control(rare_rows_small) -> None:
    for variant in ("short", "uniform"):
        assert len(rare_rows_small.metrics[variant]["probe_error_late_at_init"]) == 3
    assert any("moved by 0" in note for note in rare_rows_small.notes)
    assert "before training" in rare_rows_small.answer


@pytest.fixture(scope="module")
def rare_rows_small(tmp_path_factory: pytest.TempPathFactory):
    """The rare_rows preset shrunk to seconds (width 16, 250 steps, 3 seeds), trained once."""
    config = replace(
        QUESTIONS["rare_rows"].default, width=16, steps=250, seeds=3, eval_batch=64, lr=1e-2
    )
    return run_question("rare_rows", config=config, store=RunStore(tmp_path_factory.mktemp("rr")))


def test_rarely_seen_rows_move_less_and_unseen_rows_not_at_all(rare_rows_small) -> None:
    """Jexus (2020)'s hypothesis on fixed seeds: with mostly short sequences a row's movement
    from its start rises with how often it was seen (Spearman ρ > 0.5 on every seed), its late
    rows move less (relative to its early rows) than with uniform lengths, and the rows past
    the longest training sequence move exactly 0."""
    m = rare_rows_small.metrics
    assert min(m["short"]["movement_rank_corr"]) > 0.5
    assert max(m["short"]["movement_late_ratio"]) < min(m["uniform"]["movement_late_ratio"])
    for variant in ("short", "uniform"):
        tables = rare_rows_small.snapshots[variant]
        np.testing.assert_array_equal(tables[:, -1, 32:], tables[:, 0, 32:])
        assert m[variant]["movement_unseen_max"] == (0.0, 0.0, 0.0)
    apart = not spread(m["short"]["movement_late_ratio"]).overlaps(
        spread(m["uniform"]["movement_late_ratio"])
    )
    assert ("moved less" in rare_rows_small.answer) == apart  # says only what the spread shows
    assert ("Late-row movement: no difference" in rare_rows_small.answer) == (not apart)


def test_row_movement_statistics_are_unit_free_and_exact() -> None:
    from posviz.lab.rows import late_to_early_ratio, rank_correlation, row_movement

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
    assert rank_correlation(moved * 1e3, seen).tolist() == pytest.approx(
        rank_correlation(moved, seen).tolist()
    )
    np.testing.assert_allclose(rank_correlation(np.arange(12.0)[None], -np.arange(12.0)), -1.0)
    with pytest.raises(ValueError, match="late=3"):
        late_to_early_ratio(moved, late=3, trained=12)


def test_an_arm_that_never_learned_is_not_read_as_extrapolation() -> None:
    from posviz.lab.answer import answer_text

    q = QUESTIONS["extrapolation"]
    good, flat = (0.99, 0.98, 1.0), (0.30, 0.31, 0.29)
    metrics = {v.id: {"accuracy": good, "accuracy@32": (0.5, 0.52, 0.51)} for v in q.variants}
    metrics["alibi"] = {"accuracy": (0.31, 0.30, 0.30), "accuracy@32": (0.29, 0.3, 0.28)}
    metrics["nope"] = {"accuracy": flat, "accuracy@32": (0.27, 0.28, 0.26)}
    text = answer_text(q, metrics, (16, 32))
    assert "Caution: ALiBi did not learn the task" in text
    assert "Caution: RoPE" not in text


def test_tasks_are_deterministic_and_their_targets_are_right() -> None:
    from posviz.lab.tasks import make_batch, train_rng

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
    from posviz.lab.tasks import LM_HELD_OUT, _alphabet, eval_rng, make_batch, train_rng

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
