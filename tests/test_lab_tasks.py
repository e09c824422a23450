"""The lab's tasks: the masked character task (targets, mask fraction, determinism, held-out
text), task/attention compatibility, and the "1 in N" odds of reaching a position."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.lab.engine.config import BIDIRECTIONAL_TASKS, CAUSAL_TASKS, LabConfig
from posviz.lab.engine.tasks import (
    LM_HELD_OUT,
    MLM_MASK_FRACTION,
    _alphabet,
    eval_rng,
    length_probabilities,
    make_batch,
    mask_id,
    masked_count,
    one_in,
    reach_probability,
    train_rng,
    vocab_sizes,
)

MLM = LabConfig(task="mlm", min_len=8, max_len=48, eval_lengths=(48,))


def _texts() -> tuple[str, str]:
    """The training (first 90 %) and held-out (last 10 %) text, one character per code."""
    chars, codes = _alphabet()
    cut = int(len(codes) * (1 - LM_HELD_OUT))
    text = "".join(chars[c] for c in codes)
    return text[:cut], text[cut:]


def _originals(batch) -> list[str]:
    """Each sequence's unmasked window: the input where kept, the target where masked."""
    chars = _alphabet()[0]
    rows = np.where(batch.mask, batch.targets, batch.inputs)
    pairs = zip(rows, batch.valid, strict=True)
    return ["".join(chars[c] for c in row[valid]) for row, valid in pairs]


def test_mlm_masks_its_inputs_and_targets_the_masked_characters_only() -> None:
    lengths = np.array([8, 20, 48, 33])
    batch = make_batch(MLM, train_rng(3), lengths)
    mask = mask_id(MLM)
    n_in, n_out, pad = vocab_sizes(MLM)
    assert (n_in, n_out) == (n_out + 2, len(_alphabet()[0])) and mask == n_in - 1 != pad
    # Masked slots hold the mask token and count; kept slots hold their character and do not.
    assert ((batch.inputs == mask) == batch.mask).all()
    assert not (batch.mask & ~batch.valid).any()
    assert (batch.targets[batch.mask] < n_out).all()
    train_text, _ = _texts()
    for window in _originals(batch):  # a wrong target would break the text
        assert window in train_text
    assert (batch.inputs[~batch.valid] == pad).all()


def test_mlm_masks_15_percent_of_each_sequence_uniformly() -> None:
    assert MLM_MASK_FRACTION == 0.15
    assert [masked_count(n) for n in (2, 6, 7, 20, 48)] == [1, 1, 1, 3, 7]
    lengths = np.full(4000, 20)
    batch = make_batch(MLM, train_rng(0), lengths)
    assert (batch.mask.sum(1) == 3).all()  # round(0.15 · 20) in every sequence
    # Every position is masked with probability 3/20: 600 of 4000 expected, sd ≈ 22.6.
    per_position = batch.mask.sum(0)
    assert np.abs(per_position - 600).max() < 5 * np.sqrt(4000 * 0.15 * 0.85)
    mixed = make_batch(MLM, train_rng(1), np.array([8, 48, 30]))
    assert mixed.mask.sum(1).tolist() == [1, 7, 4]


def test_mlm_batches_are_a_function_of_seed_and_step() -> None:
    lengths = np.full(16, 32)
    a = make_batch(MLM, train_rng(5), lengths)
    b = make_batch(MLM, train_rng(5), lengths)
    for name in ("inputs", "targets", "mask", "valid"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    rng = train_rng(5)
    first, second = make_batch(MLM, rng, lengths), make_batch(MLM, rng, lengths)
    np.testing.assert_array_equal(first.inputs, a.inputs)  # step 1 of seed 5 again
    assert not np.array_equal(second.mask, first.mask)  # step 2 draws new windows and masks
    other = make_batch(MLM, train_rng(6), lengths)
    assert not np.array_equal(other.inputs, a.inputs)


def test_mlm_held_out_windows_come_from_text_never_trained_on() -> None:
    train_text, held_text = _texts()
    held = make_batch(MLM, eval_rng(0, 48), np.full(64, 48), held_out=True)
    train = make_batch(MLM, train_rng(0), np.full(64, 48))
    assert all(w in held_text for w in _originals(held))
    assert all(w in train_text for w in _originals(train))
    # The two halves do not share a 48-character window, so "in held_text" is a real test.
    assert not any(w in train_text for w in _originals(held))


def test_mlm_needs_an_encoder_and_lm_a_decoder() -> None:
    assert "mlm" in BIDIRECTIONAL_TASKS and "mlm" not in CAUSAL_TASKS
    assert "lm" in CAUSAL_TASKS and "lm" not in BIDIRECTIONAL_TASKS
    with pytest.raises(ValueError, match="only task='mlm' masks"):
        mask_id(LabConfig(task="lm", min_len=8, max_len=8, eval_lengths=(8,)))
    with pytest.raises(ValueError, match="task='masked'"):
        LabConfig(task="masked")  # type: ignore[arg-type]


def test_reaching_row_31_with_mostly_short_sequences_is_1_in_2581() -> None:
    config = LabConfig(
        task="kback", k=2, min_len=4, max_len=32, length_dist="short", eval_lengths=(32,)
    )
    # P(n = 32) with P(n) ∝ 0.8^(n − 4), n = 4 … 32, by hand:
    by_hand = 0.8**28 / sum(0.8**j for j in range(29))
    assert reach_probability(config, 31) == pytest.approx(by_hand, rel=1e-12)
    assert one_in(reach_probability(config, 31)) == "1 in 2,581"
    assert reach_probability(config, 3) == pytest.approx(1.0)  # every sequence has ≥ 4 tokens
    assert reach_probability(config, 4) == pytest.approx(1 - 0.2 / (1 - 0.8**29))
    uniform = LabConfig(task="kback", k=2, min_len=4, max_len=32, eval_lengths=(32,))
    assert one_in(reach_probability(uniform, 31)) == "1 in 29"
    assert length_probabilities(config)[31] == reach_probability(config, 31)


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan")])
def test_one_in_refuses_what_is_not_a_probability(bad: float) -> None:
    with pytest.raises(ValueError, match="must be in"):
        one_in(bad)


def test_reach_probability_names_the_positions_it_knows() -> None:
    with pytest.raises(ValueError, match="0 … 31"):
        reach_probability(LabConfig(task="kback", min_len=4, max_len=32, eval_lengths=(32,)), 32)
