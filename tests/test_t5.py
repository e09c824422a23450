"""T5 relative position buckets (Raffel et al. 2020) against transformers' T5Attention."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings.families import parse_config
from posviz.encodings.model_config import PRESETS, t5_config_from_dict
from posviz.encodings.t5 import t5_bias_matrix, t5_bucket_spans


def test_distance_zero_is_bucket_zero():
    assert posviz.t5_relative_bucket(np.array([0]))[0] == 0
    assert posviz.t5_relative_bucket(np.array([0]), bidirectional=False)[0] == 0


def test_small_distances_are_exact_and_later_keys_use_the_upper_half():
    rel = np.arange(-7, 8)
    buckets = posviz.t5_relative_bucket(rel)
    np.testing.assert_array_equal(buckets[:8], [7, 6, 5, 4, 3, 2, 1, 0])  # key before query
    np.testing.assert_array_equal(buckets[8:], 16 + np.arange(1, 8))  # key after query


def test_buckets_saturate_at_max_distance():
    far = posviz.t5_relative_bucket(np.array([-128, -129, -5000, 128, 5000]))
    np.testing.assert_array_equal(far, [15, 15, 15, 31, 31])
    # the last log bucket starts before max_distance: 8 + ⌊ln(r/8)/ln(16)·8⌋ = 15 from r = 91
    np.testing.assert_array_equal(posviz.t5_relative_bucket(np.array([-90, -91])), [14, 15])
    causal = posviz.t5_relative_bucket(np.array([-128, -10_000, 5, 100]), bidirectional=False)
    np.testing.assert_array_equal(causal, [31, 31, 0, 0])  # future keys: bucket 0


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(
    ("num_buckets", "max_distance"), [(32, 128), (8, 20), (64, 256), (16, 1000)]
)
def test_matches_transformers_on_a_range(bidirectional, num_buckets, max_distance):
    torch = pytest.importorskip("torch")
    from transformers.models.t5.modeling_t5 import T5Attention

    rel = np.arange(-3000, 3001)
    expected = T5Attention._relative_position_bucket(
        torch.tensor(rel),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    ).numpy()
    ours = posviz.t5_relative_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    np.testing.assert_array_equal(ours, expected)


def test_bias_matrix_matches_t5_compute_bias():
    torch = pytest.importorskip("torch")
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    torch.manual_seed(0)
    config = T5Config(d_model=16, d_kv=4, num_heads=3, relative_attention_num_buckets=32)
    for is_decoder in (False, True):
        config.is_decoder = is_decoder
        attention = T5Attention(config, has_relative_attention_bias=True)
        expected = attention.compute_bias(40, 40)[0].detach().numpy()
        table = attention.relative_attention_bias.weight.detach().numpy()
        ours = t5_bias_matrix(table, 40, bidirectional=not is_decoder)
        np.testing.assert_allclose(ours, expected, rtol=1e-6)


def test_bucket_spans_cover_every_distance_once():
    spans = t5_bucket_spans(300)
    assert len(spans) == 31  # bucket 16 would be "key after query at distance 0": never used
    covered = sum(last - first + 1 for _, first, last in spans)
    assert covered == 601
    widths = {bucket: last - first + 1 for bucket, first, last in spans}
    assert widths[0] == 1 and widths[15] > 100  # the last bucket holds everything ≥ 128 away


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_buckets": 0}, "num_buckets"),
        ({"num_buckets": 2}, "too small"),
        ({"max_distance": 4}, "max_distance"),
        ({"num_buckets": 10_000}, "out of range"),
    ],
)
def test_bad_settings_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        posviz.t5_relative_bucket(np.arange(3), **kwargs)


def test_non_integer_positions_raise():
    with pytest.raises(ValueError, match="whole numbers"):
        posviz.t5_relative_bucket(np.array([0.5]))


def test_t5_configs():
    parsed = parse_config("t5", PRESETS["T5-small (8 heads, 32 buckets)"])
    assert (parsed.num_buckets, parsed.max_distance, parsed.n_heads) == (32, 128, 8)
    old = parse_config(
        "t5", {"model_type": "t5", "num_heads": 12, "relative_attention_num_buckets": 32}
    )
    assert old.max_distance == 128
    # T5's own model types may omit the bucket count: transformers' default 32
    assert parse_config("t5", {"model_type": "mt5", "num_heads": 6}).num_buckets == 32
    with pytest.raises(ValueError, match="uses RoPE, not T5 buckets"):
        parse_config("t5", {"model_type": "llama"})
    with pytest.raises(ValueError, match="not a T5-style"):
        parse_config("t5", {"model_type": "gpt2"})
    with pytest.raises(ValueError, match="not a T5-style"):
        t5_config_from_dict({"model_type": "mt5"})  # without the registry's model types


# --- analysis.t5_numbers: what the T5 page draws ------------------------------------------------


def test_span_table_widths_cover_the_window_once():
    from posviz.analysis.t5_numbers import span_table

    table = span_table(300, bidirectional=True, num_buckets=32, max_distance=128)
    assert table["width"].sum() == 2 * 300 + 1
    assert table["bucket"].is_unique
    causal = span_table(300, bidirectional=False, num_buckets=32, max_distance=128)
    assert causal["width"].sum() == 301 and causal["width"].iloc[-1] == 1  # distance 0 exact


def test_bucket_curves_and_settings_check_cover_both_variants():
    from posviz.analysis.t5_numbers import bucket_curves, check_bucket_settings

    relative, curves = bucket_curves(200, num_buckets=32, max_distance=128)
    assert relative[0] == -200 and relative[-1] == 200
    enc, dec = curves["bidirectional (encoder)"], curves["causal (decoder)"]
    assert enc[relative == 5][0] == 16 + 5 and dec[relative > 0].max() == 0
    check_bucket_settings(num_buckets=32, max_distance=128)
    with pytest.raises(ValueError, match="too small for bidirectional"):
        check_bucket_settings(num_buckets=2, max_distance=128)  # fine causal, not bidirectional


def test_head_bias_and_bias_table_check():
    from posviz.analysis.t5_numbers import check_bias_table, head_bias

    table = np.arange(32 * 2, dtype=float).reshape(32, 2)
    assert check_bias_table(table, num_buckets=32, source="x").shape == (32, 2)
    with pytest.raises(ValueError, match=r"expected \(16, n_heads\)"):
        check_bias_table(table, num_buckets=16, source="x")
    bias = head_bias(table, 5, 1, bidirectional=True, max_distance=128)
    np.testing.assert_allclose(bias, t5_bias_matrix(table, 5)[1])
    assert bias[0, 0] == table[0, 1]  # distance 0 is bucket 0
    with pytest.raises(ValueError, match="heads 0 … 1"):
        head_bias(table, 5, 2, bidirectional=True, max_distance=128)
