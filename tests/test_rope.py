"""RoPE: identities from RoFormer, and every scaling against transformers' modeling_rope_utils."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posviz
from posviz.encodings.families import parse_config
from posviz.encodings.model_config import PRESETS, rope_config_from_dict
from posviz.encodings.rope import (
    pair_regimes,
    rope_attention_factor,
    rope_decay_bound,
    rope_frequencies,
    rope_kernel,
    rope_rotate,
    rope_scores,
)

LLAMA31 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
RNG = np.random.default_rng(0)


def test_default_inverse_frequencies_match_formula():
    inv = posviz.rope_inv_freq(8, base=10000.0)
    np.testing.assert_allclose(inv, [1.0, 10000**-0.25, 10000**-0.5, 10000**-0.75])


@pytest.mark.parametrize("pairing", ["rotate_half", "rotate_every_two"])
def test_rotation_preserves_norms(pairing):
    x = RNG.normal(size=(50, 64))
    out = rope_rotate(x, np.arange(50) * 37, posviz.rope_inv_freq(64), pairing=pairing)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), np.linalg.norm(x, axis=1))


@pytest.mark.parametrize("pairing", ["rotate_half", "rotate_every_two"])
def test_score_depends_only_on_relative_distance(pairing):
    q, k = RNG.normal(size=64), RNG.normal(size=64)
    inv = posviz.rope_inv_freq(64)
    for m, n in [(5, 2), (105, 102), (1003, 1000)]:
        qm = rope_rotate(q, m, inv, pairing=pairing)[0]
        kn = rope_rotate(k, n, inv, pairing=pairing)[0]
        np.testing.assert_allclose(qm @ kn, rope_scores(q, k, [3], inv, pairing=pairing)[0])


def test_pairings_are_equivalent_up_to_a_permutation():
    d = 16
    inv = posviz.rope_inv_freq(d)
    # rotate_half pairs (i, i + d/2); rotate_every_two pairs (2i, 2i + 1)
    perm = np.empty(d, dtype=int)
    perm[0::2], perm[1::2] = np.arange(d // 2), np.arange(d // 2, d)
    x = RNG.normal(size=(7, d))
    half = rope_rotate(x, np.arange(7), inv, pairing="rotate_half")
    every_two = rope_rotate(x[:, perm], np.arange(7), inv, pairing="rotate_every_two")
    np.testing.assert_allclose(every_two, half[:, perm])


def test_rotation_matches_transformers_apply_rotary_pos_emb():
    torch = pytest.importorskip("torch")
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    d, n = 32, 9
    inv = posviz.rope_inv_freq(d)
    x = RNG.normal(size=(n, d))
    angles = torch.tensor(np.arange(n)[:, None] * inv[None, :], dtype=torch.float64)
    emb = torch.cat((angles, angles), dim=-1)
    q = torch.tensor(x)[None, None]
    ours, _ = apply_rotary_pos_emb(q, q, emb.cos()[None], emb.sin()[None])
    np.testing.assert_allclose(rope_rotate(x, np.arange(n), inv), ours[0, 0].numpy(), atol=1e-12)
    # GPT-J: tensor (batch, seq, heads, dim), sin/cos (batch, seq, dim/2)
    gptj = gptj_apply(torch.tensor(x)[None, :, None, :], angles.sin()[None], angles.cos()[None])
    np.testing.assert_allclose(
        rope_rotate(x, np.arange(n), inv, pairing="rotate_every_two"),
        gptj[0, :, 0].numpy(),
        atol=1e-12,
    )


def test_partial_rotary_leaves_the_rest_untouched():
    inv = posviz.rope_inv_freq(64, partial_rotary_factor=0.25)
    assert inv.shape == (8,)
    x = RNG.normal(size=64)
    out = rope_rotate(x, [11], inv)[0]
    np.testing.assert_array_equal(out[16:], x[16:])
    assert not np.allclose(out[:16], x[:16])


def test_decay_bound_starts_at_mean_partial_count_and_bounds_the_score():
    inv = posviz.rope_inv_freq(128)
    bound = rope_decay_bound(np.arange(0, 256), inv)
    assert bound[0] == pytest.approx((64 + 1) / 2)
    assert bound[200] < 0.25 * bound[0]  # RoFormer Fig. 2: it decays with distance
    # Abel summation: |Σ h_i e^{imθ_i}| ≤ max|h_{i+1}-h_i| Σ_j |S_j| with h_{d/2} = 0
    h = RNG.normal(size=64) + 1j * RNG.normal(size=64)
    steps = np.abs(np.diff(np.append(h, 0))).max()
    for m in (1, 10, 100, 1000):
        score = abs((h * np.exp(1j * m * inv)).sum())
        assert score <= steps * 64 * rope_decay_bound([m], inv)[0] + 1e-9


def test_kernel_equals_sinusoid_similarity():
    inv = posviz.rope_inv_freq(64)
    m = np.arange(100)
    sinusoid = np.concatenate([np.sin(m[:, None] * inv), np.cos(m[:, None] * inv)], axis=1)
    np.testing.assert_allclose(rope_kernel(m, inv), sinusoid @ sinusoid[0] / 32)


def test_yarn_attention_factor_is_point_one_log_factor_plus_one():
    for factor in (2.0, 4.0, 16.0):
        scaling = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 4096}
        assert rope_attention_factor(scaling) == pytest.approx(0.1 * math.log(factor) + 1)
    assert rope_attention_factor({"type": "linear", "factor": 4.0}) == 1.0


def test_llama3_keeps_high_and_divides_low_frequencies():
    freqs = rope_frequencies(128, base=500000.0, scaling=LLAMA31)
    wavelength = freqs.original_wavelength
    high = wavelength < 8192 / 4
    low = wavelength > 8192 / 1
    assert high.sum() > 0 and low.sum() > 0
    np.testing.assert_array_equal(freqs.inv_freq[high], freqs.original_inv_freq[high])
    np.testing.assert_allclose(freqs.inv_freq[low], freqs.original_inv_freq[low] / 8)
    regimes = pair_regimes(freqs)
    assert set(regimes[high]) == {"kept"} and set(regimes[low]) == {"interpolated"}
    assert "smoothed" in set(regimes)


def _transformers_inv_freq(rope_parameters, *, head_dim, max_pos, seq_len=None):
    pytest.importorskip("torch")
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_pos,
        rope_parameters=dict(rope_parameters),
    )
    rope_type = config.rope_parameters["rope_type"]
    inv, factor = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
    return inv.numpy().astype(np.float64), float(factor)


SCALINGS = [
    ({"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0}, 4096, None),
    ({"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}, 4096, None),
    ({"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}, 4096, 10000),
    (
        {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
            "rope_theta": 1e6,
        },
        131072,
        None,
    ),
    (
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
            "rope_theta": 10000.0,
        },
        163840,
        None,
    ),
    (
        {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 2048,
            "truncate": False,
            "attention_factor": 1.5,
            "rope_theta": 10000.0,
        },
        16384,
        None,
    ),
    ({**LLAMA31, "rope_theta": 500000.0}, 131072, None),
    (
        {
            "rope_type": "longrope",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "short_factor": list(np.linspace(1, 2, 32)),
            "long_factor": list(np.linspace(1, 30, 32)),
            "rope_theta": 10000.0,
        },
        131072,
        5000,
    ),
]


@pytest.mark.parametrize(
    ("params", "max_pos", "seq_len"),
    SCALINGS,
    ids=lambda v: v["rope_type"] if isinstance(v, dict) else str(v),
)
def test_scalings_match_transformers(params, max_pos, seq_len):
    expected, expected_factor = _transformers_inv_freq(
        params, head_dim=64, max_pos=max_pos, seq_len=seq_len
    )
    freqs = rope_frequencies(
        64,
        base=params["rope_theta"],
        scaling=params,
        max_position_embeddings=max_pos,
        seq_len=seq_len,
    )
    np.testing.assert_allclose(freqs.inv_freq, expected, rtol=2e-6)
    assert freqs.attention_factor == pytest.approx(expected_factor, rel=1e-9)


def test_partial_rotary_scaling_matches_transformers():
    params = {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 2048,
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.5,
    }
    expected, _ = _transformers_inv_freq(params, head_dim=128, max_pos=8192)
    ours = posviz.rope_inv_freq(128, scaling=params, partial_rotary_factor=0.5)
    np.testing.assert_allclose(ours, expected, rtol=2e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"head_dim": 63}, "even"),
        ({"head_dim": 0}, "out of range"),
        ({"head_dim": 10_000}, "out of range"),
        ({"head_dim": 64, "scaling": {"rope_type": "su"}}, "not supported"),
        ({"head_dim": 64, "scaling": {"rope_type": "llama3", "factor": 8.0}}, "low_freq_factor"),
        ({"head_dim": 64, "scaling": {"rope_type": "linear"}}, "factor"),
        (
            {"head_dim": 64, "scaling": {"rope_type": "dynamic", "factor": 2.0}},
            "max_position_embeddings",
        ),
        (
            {"head_dim": 64, "scaling": {"rope_type": "yarn", "factor": 2.0}},
            "original_max_position",
        ),
        ({"head_dim": 64, "base": -1.0}, "positive"),
        ({"head_dim": 64, "scaling": "linear"}, "dict"),
        ({"head_dim": 64, "partial_rotary_factor": 1.5}, "(0, 1]"),
    ],
)
def test_bad_input_raises_clear_value_errors(kwargs, message):
    with pytest.raises(
        ValueError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("]", r"\]"),
    ):
        posviz.rope_inv_freq(**kwargs)


def test_config_parsing_of_presets():
    llama = rope_config_from_dict(PRESETS["Llama-3.1-8B (llama3 scaling, config.json)"])
    assert (llama.head_dim, llama.base, llama.scaling["rope_type"]) == (128, 500000.0, "llama3")
    neox = rope_config_from_dict(PRESETS["GPT-NeoX-20B (rotary_pct 0.25, config.json)"])
    assert (neox.head_dim, neox.rotary_dim) == (96, 24)
    gptj = rope_config_from_dict(PRESETS["GPT-J-6B (rotate_every_two, rotary_dim 64, config.json)"])
    assert (gptj.head_dim, gptj.rotary_dim, gptj.pairing) == (256, 64, "rotate_every_two")
    qwen = rope_config_from_dict(
        PRESETS["Qwen2.5-7B-Instruct + YaRN ×4 (as its model card suggests adding)"]
    )
    assert qwen.scaling["rope_type"] == "yarn" and qwen.frequencies().attention_factor > 1
    for config in PRESETS.values():
        try:
            parsed = parse_config("rope", config)
        except ValueError as exc:
            assert "ALiBi" in str(exc) or "T5" in str(exc)
        else:
            assert parsed.frequencies().inv_freq.size == parsed.rotary_dim // 2


def test_config_parsing_of_v5_and_nested_rope_parameters():
    config = {
        "model_type": "gemma3_text",
        "hidden_size": 640,
        "num_attention_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 32768,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    }
    parsed = rope_config_from_dict(config)
    assert parsed.base == 1e6 and parsed.scaling == {"rope_type": "linear", "factor": 8.0}
    assert any("full_attention" in note for note in parsed.notes)
    wrapped = rope_config_from_dict({"model_type": "llava", "text_config": config})
    assert wrapped.head_dim == 256


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12}, "Learned"),
        ({"model_type": "bloom", "n_head": 16}, "uses ALiBi, not RoPE.*ALiBi page"),
        ({"model_type": "falcon", "alibi": True, "rope_theta": 1e4}, "uses ALiBi, not RoPE"),
        ({"model_type": "t5", "num_heads": 8}, "uses T5 buckets, not RoPE"),
        ({"model_type": "marian", "d_model": 512}, "uses sinusoid, not RoPE.*Sinusoidal page"),
        ({"model_type": "llama", "rope_theta": 10000.0}, "hidden_size"),
        (
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "rope_scaling": {"type": "weird", "factor": 2},
            },
            "not supported",
        ),
        (
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
            },
            "low_freq_factor",
        ),
        ([1, 2], "dict"),
    ],
)
def test_bad_configs_raise_value_errors(config, message):
    with pytest.raises(ValueError, match=message):
        parse_config("rope", config).frequencies()


def test_rope_model_types_without_rope_fields_get_transformers_defaults():
    old_llama = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32}
    parsed = parse_config("rope", old_llama)
    assert parsed.base == 10000.0 and any("10000" in note for note in parsed.notes)
    with pytest.raises(ValueError, match="no RoPE fields"):
        rope_config_from_dict(old_llama)  # the parser alone does not know llama uses RoPE


def test_phi3_style_longrope_config_with_the_old_su_name():
    config = {
        "model_type": "phi3",
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "su", "short_factor": [1.0] * 48, "long_factor": [4.0] * 48},
    }
    parsed = rope_config_from_dict(config)
    assert parsed.scaling["rope_type"] == "longrope" and any("su" in n for n in parsed.notes)
    short = parsed.frequencies(seq_len=100)
    long = parsed.frequencies(seq_len=5000)
    np.testing.assert_allclose(short.inv_freq, short.original_inv_freq)
    np.testing.assert_allclose(long.inv_freq, long.original_inv_freq / 4)
    # factor = 131072 / 4096 = 32: sqrt(1 + ln 32 / ln 4096)
    assert long.attention_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))


# --- analysis.rope_numbers: what the RoPE page draws --------------------------------------------


def test_manual_scaling_gives_llama31_thresholds_from_one_place():
    from posviz.encodings.rope import LLAMA3_DEFAULTS, manual_scaling

    params = manual_scaling("llama3", factor=8.0, original_max_position_embeddings=8192)
    assert params == LLAMA31  # the published Llama-3.1 config, written out above
    assert {k: params[k] for k in LLAMA3_DEFAULTS} == dict(LLAMA3_DEFAULTS)
    assert manual_scaling("default", factor=8.0, original_max_position_embeddings=8192) is None
    with pytest.raises(ValueError, match="longrope"):
        manual_scaling("longrope", factor=2.0, original_max_position_embeddings=4096)


def test_manual_config_declares_the_extended_context_except_for_dynamic():
    from posviz.analysis.rope_numbers import manual_rope_config

    kw = {"head_dim": 128, "base": 500000.0, "partial_rotary_factor": 1.0, "factor": 8.0}
    llama = manual_rope_config(rope_type="llama3", original_context=8192, **kw)
    np.testing.assert_allclose(
        llama.frequencies().inv_freq, posviz.rope_inv_freq(128, base=500000.0, scaling=LLAMA31)
    )
    assert llama.max_position_embeddings == 8 * 8192
    dynamic = manual_rope_config(rope_type="dynamic", original_context=8192, **kw)
    assert dynamic.max_position_embeddings == 8192


@pytest.mark.parametrize("pairing", ["rotate_half", "rotate_every_two"])
def test_score_curves_depend_only_on_the_offset(pairing):
    """RoFormer eq. 16: ⟨R_{n+m} q, R_n k⟩ = s(m) for every key position n."""
    from posviz.analysis.rope_numbers import probe_vectors, score_curves

    freqs = rope_frequencies(
        16, scaling={"rope_type": "yarn", "factor": 4.0}, max_position_embeddings=64
    )
    q, k = probe_vectors(16, random=True, seed=3)
    m = np.arange(40)
    curves = score_curves(freqs, m, q=q, k=k, pairing=pairing)
    assert list(curves) == ["unscaled θ", "yarn θ′"]
    for n in (0, 7, 1000):
        rq = rope_rotate(q, m + n, freqs.original_inv_freq, pairing=pairing)
        rk = rope_rotate(k, n, freqs.original_inv_freq, pairing=pairing)[0]
        np.testing.assert_allclose(curves["unscaled θ"], rq @ rk, atol=1e-9)
    a = freqs.attention_factor
    assert curves["yarn θ′"][0] == pytest.approx(a**2 * q @ k)  # m = 0: no rotation, factor²


def test_probe_vectors_all_ones_and_seeded_random():
    from posviz.analysis.rope_numbers import probe_vectors

    q, k = probe_vectors(8, random=False)
    assert np.all(q == 1) and q is k
    q1, k1 = probe_vectors(8, random=True, seed=5)
    q2, _ = probe_vectors(8, random=True, seed=5)
    np.testing.assert_array_equal(q1, q2)
    assert not np.allclose(q1, k1)


def test_score_distances_are_dense_then_geometric_and_end_at_the_maximum():
    from posviz.analysis.rope_numbers import score_distances

    grid = score_distances(20_000)
    np.testing.assert_array_equal(grid[:513], np.arange(513))
    assert grid[-1] == 20_000 and np.all(np.diff(grid) > 0)
    assert grid.size < 513 + 1500 + 1
    np.testing.assert_array_equal(score_distances(100), np.arange(101))
    with pytest.raises(ValueError, match="out of range"):
        score_distances(0)


def test_pair_table_is_the_theta_table_of_the_chosen_pairs():
    from posviz.analysis.rope_numbers import default_pairs, pair_table, regime_counts

    freqs = rope_frequencies(128, base=500000.0, scaling=LLAMA31)
    pairs = default_pairs(64)
    assert pairs == [0, 1, 16, 63]
    table = pair_table(freqs, pairs, 100)
    np.testing.assert_allclose(table["θ (rad/token)"], freqs.inv_freq[pairs])
    np.testing.assert_allclose(table["wavelength (tokens)"] * table["θ (rad/token)"], 2 * np.pi)
    assert table["turns at p=100"][0] == pytest.approx(100 / (2 * np.pi))  # θ_0 = 1
    counts = regime_counts(freqs)
    assert sum(counts.values()) == 64 and min(counts.values()) > 0
    with pytest.raises(ValueError, match="pairs 0 … 63"):
        pair_table(freqs, [64], 0)


def test_decay_bound_curves_start_at_half_the_pairs_plus_one():
    from posviz.analysis.rope_numbers import decay_bound_curves

    freqs = rope_frequencies(64, scaling={"rope_type": "linear", "factor": 2.0})
    curves = decay_bound_curves(freqs, np.arange(10), scaled=True)
    assert list(curves) == ["unscaled θ", "linear θ′"]
    assert curves["unscaled θ"][0] == pytest.approx((32 + 1) / 2)
    assert list(decay_bound_curves(freqs, np.arange(10), scaled=False)) == ["unscaled θ"]
