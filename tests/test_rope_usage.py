"""RoPE frequency usage from q/k weights and the real-q/k decay curves
(posviz.analysis.rope_usage; Barbero et al. 2025, arXiv 2410.06205)."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.rope_usage import (
    UNUSED_FRACTION_OF_UNIFORM,
    decay_curves,
    frequency_usage,
    pair_index,
    pair_weight_norms,
)
from posviz.encodings.rope import default_inv_freq, rope_kernel

HEAD_DIM, D_MODEL = 8, 6


def one_pair_weight(n_heads: int, pair: int, *, pairing: str = "rotate_half") -> np.ndarray:
    """A projection whose rows are zero except the two that feed rotary ``pair`` of each head."""
    rng = np.random.default_rng(1)
    w = np.zeros((n_heads * HEAD_DIM, D_MODEL))
    a, b = pair_index(HEAD_DIM, pairing)[pair]
    for h in range(n_heads):
        w[h * HEAD_DIM + a] = rng.standard_normal(D_MODEL)
        w[h * HEAD_DIM + b] = rng.standard_normal(D_MODEL)
    return w


def test_pairs_follow_the_layout() -> None:
    assert pair_index(8, "rotate_half").tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert pair_index(8, "rotate_every_two").tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(ValueError, match="even"):
        pair_index(7)


@pytest.mark.parametrize("pairing", ["rotate_half", "rotate_every_two"])
def test_weights_zero_outside_one_pair_use_only_that_pair(pairing: str) -> None:
    """The hand-computed case: every head's q and k weights feed only pair 2, so pair 2 takes
    the whole share and every other pair is unused."""
    q = [one_pair_weight(4, 2, pairing=pairing)] * 3
    k = [one_pair_weight(2, 2, pairing=pairing)] * 3
    usage = frequency_usage(
        q, k, n_heads=4, n_kv_heads=2, head_dim=HEAD_DIM, base=100.0, pairing=pairing
    )
    assert usage.share.shape == (3, 4, 4)
    np.testing.assert_array_equal(usage.share[..., 2], 1.0)
    np.testing.assert_array_equal(np.delete(usage.share, 2, axis=-1), 0.0)
    assert usage.unused[..., [0, 1, 3]].all() and not usage.unused[..., 2].any()
    assert usage.threshold == pytest.approx(UNUSED_FRACTION_OF_UNIFORM / 4)


def test_pair_norms_partition_the_head_norm_and_shares_use_the_right_kv_head() -> None:
    rng = np.random.default_rng(0)
    wq = rng.standard_normal((4 * HEAD_DIM, D_MODEL))
    norms = pair_weight_norms(wq, 4, HEAD_DIM)
    heads = wq.reshape(4, HEAD_DIM, D_MODEL)
    np.testing.assert_allclose((norms**2).sum(axis=1), (heads**2).sum(axis=(1, 2)))
    # key head 0 feeds only pair 0, key head 1 only pair 3: query heads 0-1 read key head 0
    wk = np.zeros((2 * HEAD_DIM, D_MODEL))
    wk[0] = wk[HEAD_DIM + 3] = 1.0
    usage = frequency_usage([wq], [wk], n_heads=4, n_kv_heads=2, head_dim=HEAD_DIM, base=10.0)
    assert usage.share[0, :2].argmax(axis=-1).tolist() == [0, 0]
    assert usage.share[0, 2:].argmax(axis=-1).tolist() == [3, 3]
    np.testing.assert_allclose(usage.share.sum(axis=-1), 1.0)


def test_bad_geometry_is_refused() -> None:
    w = np.zeros((4 * HEAD_DIM, D_MODEL))
    with pytest.raises(ValueError, match="output rows"):
        pair_weight_norms(w, 3, HEAD_DIM)
    with pytest.raises(ValueError, match="cannot share"):
        frequency_usage([w], [w], n_heads=4, n_kv_heads=3, head_dim=HEAD_DIM, base=10.0)


@pytest.mark.slow
def test_decay_of_all_ones_is_the_rope_kernel_and_gaussian_has_none() -> None:
    """q = k = 1: each pair adds 2·cos(Δθ_i), so the normalised score is RoPE's kernel
    (mean of cos Δθ_i); independent Gaussian q, k score 0 in expectation at every Δ (Barbero et
    al. 2025, Prop. 3.2) — their mean stays within 4 standard errors of 0."""
    inv = default_inv_freq(64, 1e5)
    distances = np.arange(0, 200)
    mean_q = np.ones((1, 1, 64))
    curves = decay_curves(mean_q, mean_q, distances, inv, draws=400)
    np.testing.assert_allclose(curves.ones, rope_kernel(distances, inv), atol=1e-12)
    np.testing.assert_allclose(curves.real[0, 0], curves.ones, atol=1e-12)
    assert curves.ones[100:].mean() < curves.ones[1:10].mean() < curves.ones[0] == pytest.approx(1)
    stderr = curves.gaussian_std / np.sqrt(400)
    assert np.all(np.abs(curves.gaussian_mean) < 4 * stderr + 1e-12)


# ------------------------------------------------------------------ from a checkpoint's files


@pytest.mark.slow
def test_a_saved_llama_checkpoint_is_read_by_range_the_same_as_its_weights(tmp_path) -> None:
    """A tiny Llama saved with save_pretrained: the range-read usage equals the usage of its
    in-memory q/k weights; a model without RoPE (the bundled BERT) is refused by name."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from posviz.analysis.rope_usage_source import source_frequency_usage

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=16, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, rope_theta=500.0,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    model.save_pretrained(tmp_path)
    usage, layers = source_frequency_usage(str(tmp_path))
    assert layers == [0, 1, 2]
    attn = [layer.self_attn for layer in model.model.layers]
    expected = frequency_usage(
        [a.q_proj.weight.detach().numpy() for a in attn],
        [a.k_proj.weight.detach().numpy() for a in attn],
        n_heads=4, n_kv_heads=2, head_dim=8, base=500.0,
    )  # fmt: skip
    np.testing.assert_allclose(usage.share, expected.share, rtol=1e-6)
    np.testing.assert_allclose(usage.inv_freq, default_inv_freq(8, 500.0))
    with pytest.raises(ValueError, match="needs a RoPE model"):
        source_frequency_usage("bundled")


@pytest.mark.slow
def test_the_page_reads_any_rope_folder_and_refuses_bert_with_a_message(tmp_path) -> None:
    import sys
    from pathlib import Path

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import app_test, assert_no_exception

    torch.manual_seed(0)
    LlamaForCausalLM(
        LlamaConfig(vocab_size=16, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2)
    ).save_pretrained(tmp_path)  # fmt: skip
    at = app_test("pages/inside_models.py", query={"inside_src": str(tmp_path)}, timeout=240)
    assert_no_exception(at)
    assert not at.error
    assert any("rotary pairs carries" in c.value and "Layers read: 0, 1" in c.value
               for c in at.caption)  # fmt: skip
    at = app_test("pages/inside_models.py", query={"inside_src": "bundled"}, timeout=240)
    assert any("needs a RoPE model" in e.value for e in at.error)
