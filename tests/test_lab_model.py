"""The lab's tiny transformer: invariances, gradients and every scheme against posviz.encodings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posviz.encodings.alibi import alibi_bias, alibi_slopes
from posviz.encodings.rope import default_inv_freq, rope_rotate
from posviz.encodings.sinusoidal import sinusoidal
from posviz.encodings.t5 import t5_bias_matrix
from posviz.lab.config import LabConfig, ModelConfig
from posviz.lab.model import T5_BUCKETS, T5_MAX_DISTANCE, parameter_count, rotate_half
from posviz.lab.tasks import make_batch, train_rng
from posviz.lab.train import Adam, build_model, masked_loss

SMALL = LabConfig(task="reverse", min_len=8, max_len=8, eval_lengths=(8,), width=16, seeds=2)


def _tokens(config: LabConfig, t: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    tokens = torch.from_numpy(rng.integers(0, config.vocab, size=(config.seeds, 4, t)))
    return tokens, torch.ones(tokens.shape, dtype=torch.bool)


@pytest.mark.parametrize("scheme", ["nope", "learned"])
def test_only_the_nope_encoder_is_permutation_equivariant(scheme: str) -> None:
    model = build_model(ModelConfig(scheme=scheme), SMALL)
    tokens, valid = _tokens(SMALL, 8)
    perm = torch.from_numpy(np.random.default_rng(1).permutation(8))
    with torch.no_grad():
        out, out_permuted = model(tokens, valid), model(tokens[..., perm], valid)
    equivariant = torch.allclose(out[..., perm, :], out_permuted, atol=1e-5)
    assert equivariant == (scheme == "nope")


def test_table_rows_past_the_longest_training_sequence_get_exactly_zero_gradient() -> None:
    config = LabConfig(task="kback", min_len=4, max_len=12, eval_lengths=(12,), width=16, seeds=2)
    model = build_model(ModelConfig(scheme="learned", table_rows=20), config)
    rng = train_rng(0)
    batches = [make_batch(config, rng, np.array([4, 7, 12, 9])) for _ in range(2)]
    tokens, targets, mask, valid = (
        torch.from_numpy(np.stack([getattr(b, n) for b in batches]))
        for n in ("inputs", "targets", "mask", "valid")
    )
    masked_loss(model(tokens, valid), targets, mask).sum().backward()
    grad = model.pos.weight.grad.reshape(2, 20, -1)
    assert torch.count_nonzero(grad[:, 12:]) == 0  # exactly zero, not small
    assert torch.count_nonzero(grad[:, :12].abs().sum(-1)) == 2 * 12  # every used row moved


def test_concatenation_parameter_count_matches_adding_within_five_percent() -> None:
    config = LabConfig(task="reverse", min_len=12, max_len=12, eval_lengths=(12,))
    add = parameter_count(build_model(ModelConfig(scheme="learned"), config))
    concat = parameter_count(build_model(ModelConfig(scheme="learned", injection="concat"), config))
    d, p, v, r = config.width, config.width // 2, config.vocab + 1, config.max_len
    assert add - concat == v * p + r * (d - p)  # the embeddings are the only difference
    assert abs(add - concat) / add < 0.05


def test_sinusoid_vectors_are_the_encodings_table() -> None:
    model = build_model(ModelConfig(scheme="sinusoidal"), SMALL)
    expected = sinusoidal(8, 16, dtype=np.float32)
    np.testing.assert_array_equal(model.position_vectors(8)[0, 0].numpy(), expected)


def test_rope_rotation_equals_rope_rotate() -> None:
    x = np.random.default_rng(0).normal(size=(10, 8))
    inv = default_inv_freq(8)
    angles = torch.arange(10, dtype=torch.float64)[:, None] * torch.from_numpy(inv)[None, :]
    ours = rotate_half(torch.from_numpy(x), angles).numpy()
    np.testing.assert_allclose(ours, rope_rotate(x, np.arange(10), inv), atol=1e-12)


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_alibi_bias_equals_the_formula(kind: str) -> None:
    config = LabConfig(task="kback", min_len=6, max_len=6, eval_lengths=(6,), width=16, heads=4)
    model = build_model(ModelConfig(kind=kind, scheme="alibi"), config)
    bias = model.attention_bias(6, torch.ones(config.seeds, 1, 6, dtype=torch.bool))
    expected = alibi_bias(6, alibi_slopes(4), causal=kind == "decoder")
    np.testing.assert_allclose(bias[0, 0].numpy(), expected, atol=1e-6)


def test_t5_bias_equals_the_bucket_formula() -> None:
    config = LabConfig(task="reverse", min_len=9, max_len=9, eval_lengths=(9,), width=16, heads=2)
    model = build_model(ModelConfig(scheme="t5"), config)
    table = np.random.default_rng(0).normal(size=(config.seeds, T5_BUCKETS, 2))
    with torch.no_grad():
        model.t5.copy_(torch.from_numpy(table))
    bias = model.attention_bias(9, torch.ones(config.seeds, 1, 9, dtype=torch.bool))
    for seed in range(config.seeds):
        expected = t5_bias_matrix(table[seed], 9, max_distance=T5_MAX_DISTANCE)
        np.testing.assert_allclose(bias[seed, 0].detach().numpy(), expected, atol=1e-6)


def test_padding_never_changes_the_real_positions() -> None:
    model = build_model(ModelConfig(scheme="learned"), SMALL)
    tokens, valid = _tokens(SMALL, 8)
    padded_valid = valid.clone()
    padded_valid[..., 6:] = False
    with torch.no_grad():
        short = model(tokens[..., :6], valid[..., :6])
        padded = model(tokens, padded_valid)
    torch.testing.assert_close(padded[..., :6, :], short, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"width": 30, "heads": 4}, "heads=4 does not divide width=30"),
        ({"max_len": 100000, "eval_lengths": (8,)}, "POSVIZ_LAB_MAX_LEN"),
        ({"width": 100000}, "POSVIZ_LAB_MAX_WIDTH"),
        ({"steps": 10**9}, "POSVIZ_LAB_MAX_STEPS"),
        ({"lr": 0.0}, "lr=0.0"),
    ],
)
def test_bad_settings_name_the_setting(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        LabConfig(**kwargs)


def test_odd_rope_head_size_is_refused_with_the_fix() -> None:
    config = LabConfig(task="reverse", min_len=8, max_len=8, eval_lengths=(8,), width=18, heads=2)
    with pytest.raises(ValueError, match="head size width/heads = 9 must be even"):
        build_model(ModelConfig(scheme="rope"), config)


def test_relative_schemes_refuse_table_injection_modes() -> None:
    with pytest.raises(ValueError, match="injection='concat' needs a position table"):
        ModelConfig(scheme="rope", injection="concat")


def test_adam_matches_torch_optim_adam() -> None:
    weights = torch.nn.Parameter(torch.tensor([[0.5, -1.0], [2.0, 0.0]]))
    reference = torch.nn.Parameter(weights.detach().clone())
    ours, theirs = Adam([weights], lr=0.01), torch.optim.Adam([reference], lr=0.01)
    for step in range(5):
        for p in (weights, reference):
            p.grad = torch.tensor([[1.0, -2.0], [0.5 * step, 0.0]])  # row 1 col 1: always 0
        ours.step()
        theirs.step()
    torch.testing.assert_close(weights, reference, rtol=1e-6, atol=1e-7)
    assert weights[1, 1] == 0.0  # a zero gradient never moves a weight
