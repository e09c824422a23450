"""ALiBi slopes (Press et al. 2022) and bias matrices, against the paper's constants and BLOOM."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings.alibi import alibi_bias
from posviz.encodings.families import parse_config
from posviz.encodings.model_config import PRESETS, alibi_config_from_dict


def test_eight_heads_are_one_half_to_one_256th():
    np.testing.assert_allclose(posviz.alibi_slopes(8), [1 / 2**k for k in range(1, 9)])


def test_sixteen_heads_follow_two_to_the_minus_half_steps():
    np.testing.assert_allclose(posviz.alibi_slopes(16), 2.0 ** (-0.5 * np.arange(1, 17)))


def test_twelve_heads_interleave_as_in_the_paper():
    # 8 slopes of the 8-head model, then every other slope of the 16-head model: 2^-0.5, 2^-1.5 …
    expected = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    np.testing.assert_allclose(posviz.alibi_slopes(12), expected)


def test_one_head_has_slope_one_over_256():
    np.testing.assert_allclose(posviz.alibi_slopes(1), [2.0**-8])


@pytest.mark.parametrize("n_heads", [1, 5, 8, 12, 16, 24, 32, 40, 71, 112])
def test_slopes_match_bloom_build_alibi_tensor(n_heads):
    torch = pytest.importorskip("torch")
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    mask = torch.ones(1, 4)
    alibi = build_alibi_tensor(mask, n_heads, torch.float64)  # (heads, 1, 4) = slope·key position
    np.testing.assert_allclose(posviz.alibi_slopes(n_heads), alibi[:, 0, 1].numpy(), rtol=1e-6)


@pytest.mark.parametrize("bad", [0, -1, 10_000, 2.5, True, "8"])
def test_bad_head_counts_raise(bad):
    with pytest.raises(ValueError, match="n_heads"):
        posviz.alibi_slopes(bad)


def test_causal_bias_is_minus_slope_times_distance_and_masks_the_future():
    bias = alibi_bias(4, np.array([0.5, 0.25]), causal=True)
    assert bias.shape == (2, 4, 4)
    np.testing.assert_allclose(bias[0, 3, :], [-1.5, -1.0, -0.5, 0.0])
    assert np.isneginf(bias[1, 0, 1:]).all()


def test_symmetric_bias_is_symmetric_and_agrees_with_causal_below_the_diagonal():
    sym = alibi_bias(6, posviz.alibi_slopes(4), causal=False)
    causal = alibi_bias(6, posviz.alibi_slopes(4), causal=True)
    np.testing.assert_allclose(sym, np.swapaxes(sym, 1, 2))
    lower = np.tril(np.ones((6, 6), dtype=bool))
    np.testing.assert_allclose(sym[:, lower], causal[:, lower])


def test_bias_gives_the_same_softmax_as_bloom_slope_times_key_position():
    slopes = posviz.alibi_slopes(8)
    bias = alibi_bias(5, slopes)
    bloom = slopes[:, None, None] * np.arange(5)[None, None, :] + np.where(
        np.triu(np.ones((5, 5), dtype=bool), 1), -np.inf, 0.0
    )

    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    np.testing.assert_allclose(softmax(bias), softmax(bloom))


def test_bias_size_is_capped():
    with pytest.raises(ValueError, match="out of range"):
        alibi_bias(100_000, [0.5])


def test_alibi_configs():
    assert parse_config("alibi", PRESETS["MPT-7B (ALiBi, 32 heads)"]).n_heads == 32
    assert parse_config("alibi", PRESETS["BLOOM-176B (ALiBi, 112 heads)"]).n_heads == 112
    falcon = {"model_type": "falcon", "alibi": True, "num_attention_heads": 71, "rope_theta": 1e4}
    assert parse_config("alibi", falcon).n_heads == 71  # alibi=true beats Falcon's rope_theta
    with pytest.raises(ValueError, match=r"uses RoPE, not ALiBi.*RoPE page"):
        parse_config("alibi", {"model_type": "llama", "num_attention_heads": 32})
    with pytest.raises(ValueError, match="does not use ALiBi"):
        parse_config("alibi", {"model_type": "gpt2", "n_head": 12})
    with pytest.raises(ValueError, match="head count"):
        parse_config("alibi", {"model_type": "bloom"})
    # BLOOM names no ALiBi switch: only the registry's model types say it uses ALiBi
    with pytest.raises(ValueError, match="does not use ALiBi"):
        alibi_config_from_dict({"model_type": "bloom", "n_head": 16})


# --- analysis.alibi_numbers: what the ALiBi page draws ------------------------------------------


def test_head_bias_is_minus_slope_times_distance():
    from posviz.analysis.alibi_numbers import head_bias

    i, j = np.indices((6, 6))
    np.testing.assert_allclose(head_bias(6, 0.25, causal=False), -0.25 * np.abs(i - j))
    causal = head_bias(6, 0.25, causal=True)
    assert np.all(np.isneginf(causal[j > i]))
    np.testing.assert_allclose(causal[j <= i], -0.25 * (i - j)[j <= i])


def test_slope_table_and_split_follow_the_paper():
    from posviz.analysis.alibi_numbers import slope_split, slope_table

    assert slope_split(12) == (8, 4) and slope_split(16) == (16, 0)
    table = slope_table(12)
    np.testing.assert_allclose(table["slope"], posviz.alibi_slopes(12))
    np.testing.assert_allclose(table["log2(slope)"][:8], -np.arange(1, 9))  # 2^(−8h/8)
    assert set(table["from"][8:]) == {"every other of 16"}


def test_decay_factors_are_exp_minus_slope_times_distance():
    from posviz.analysis.alibi_numbers import decay_factors, shown_heads

    slopes = posviz.alibi_slopes(8)
    distances, factors = decay_factors(slopes, 100)
    assert distances.tolist() == list(range(101)) and factors.shape == (101, 8)
    assert np.all(factors[0] == 1)
    np.testing.assert_allclose(np.log(factors[50]), -50 * slopes)
    assert shown_heads(8).tolist() == list(range(8))
    many = shown_heads(64)
    assert many.size == 16 and many[0] == 0 and many[-1] == 63
    with pytest.raises(ValueError, match="out of range"):
        decay_factors(slopes, 0)
