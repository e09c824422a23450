"""p-RoPE (Barbero et al. 2025): identities, transformers' implementation, Gemma 4's constants.

Every registry hook of the family is exercised here too: its config parser and routing, its
Compare row, its lab mechanism, its page.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

from posviz.encodings import p_rope
from posviz.encodings.families import (
    code_modules,
    family,
    family_of_config,
    lab_mechanism,
    parse_config,
)
from posviz.encodings.p_rope import (
    PRESETS,
    kept_pairs,
    p_rope_config_from_dict,
    p_rope_inv_freq,
    truncated_score,
)
from posviz.encodings.rope import default_inv_freq, rope_frequencies, rope_rotate, rope_scores

GEMMA4 = next(name for name in PRESETS if name.startswith("Gemma 4"))
RNG = np.random.default_rng(0)

# --- the formula -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head_dim", "p", "kept"),
    [(512, 0.25, 64), (256, 0.75, 96), (128, 0.1, 6), (64, 1.0, 32), (64, 0.0, 0), (8, 0.3, 1)],
)
def test_kept_pairs_are_floor_of_p_times_half_the_head(head_dim, p, kept):
    assert kept_pairs(head_dim, p) == kept == math.floor(p * head_dim / 2)


@pytest.mark.parametrize(("head_dim", "p"), [(512, 0.25), (256, 0.75), (128, 0.4), (64, 0.5)])
def test_kept_frequencies_are_ropes_own_and_the_rest_are_zero(head_dim, p):
    theta = p_rope_inv_freq(head_dim, fraction=p, base=500000.0)
    rope = default_inv_freq(head_dim, 500000.0)
    r = kept_pairs(head_dim, p)
    assert theta.shape == (head_dim // 2,)
    np.testing.assert_array_equal(theta[:r], rope[:r])  # the fastest r, unchanged
    assert not theta[r:].any()  # the slowest, never rotated


def test_p_one_is_rope_and_p_zero_rotates_nothing():
    np.testing.assert_array_equal(
        p_rope_inv_freq(128, fraction=1.0, base=1e4), default_inv_freq(128, 1e4)
    )
    x = RNG.standard_normal(64)
    positions = np.array([0, 1, 17, 4096, 1_000_000])
    rotated = rope_rotate(x, positions, p_rope_inv_freq(64, fraction=0.0))
    np.testing.assert_array_equal(rotated, np.broadcast_to(x, rotated.shape))


def test_unlike_a_partial_rotary_factor_the_kept_pairs_keep_ropes_spacing():
    # GPT-NeoX's rotary_pct spreads base^(-2i/(p·d)) over its rotated dims: same first pair, then
    # ever faster decay; p-RoPE's kept pairs are RoPE's own.
    neox = rope_frequencies(128, base=1e4, partial_rotary_factor=0.25).inv_freq
    kept = p_rope_inv_freq(128, fraction=0.25, base=1e4)[:16]
    assert neox.shape == kept.shape == (16,)
    assert neox[0] == kept[0] == 1.0
    assert np.all(neox[1:] < kept[1:])
    assert neox[-1] == pytest.approx(1e4 ** (-30 / 32))
    assert kept[-1] == pytest.approx(1e4 ** (-30 / 128))


def test_truncated_pairs_score_the_same_at_every_distance():
    head_dim, p = 64, 0.25
    theta, r = p_rope_inv_freq(head_dim, fraction=p), kept_pairs(head_dim, p)
    q, k = RNG.standard_normal(head_dim), RNG.standard_normal(head_dim)
    distances = np.array([0, 1, 5, 100, 10_000, 123_456])
    truncated_only = q.copy()
    truncated_only[:r] = 0
    truncated_only[head_dim // 2 : head_dim // 2 + r] = 0  # rotate_half: pair i = (i, i + d/2)
    constant = rope_scores(truncated_only, k, distances, theta)
    np.testing.assert_allclose(constant, truncated_score(q, k, kept=r), rtol=1e-12)
    # and the whole score is the kept pairs' RoPE score plus that constant
    kept_only = q - truncated_only
    np.testing.assert_allclose(
        rope_scores(q, k, distances, theta),
        rope_scores(kept_only, k, distances, theta) + truncated_score(q, k, kept=r),
        atol=1e-9,
    )


def test_scores_still_depend_only_on_the_distance():
    theta = p_rope_inv_freq(32, fraction=0.5)
    q, k = RNG.standard_normal(32), RNG.standard_normal(32)
    scores = [rope_rotate(q, n + 7, theta)[0] @ rope_rotate(k, n, theta)[0] for n in (0, 3, 900)]
    np.testing.assert_allclose(scores, scores[0], rtol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fraction": 1.5}, r"p=1\.5 is out of range; choose 0 … 1"),
        ({"fraction": -0.1}, "out of range"),
        ({"fraction": True}, "must be a number"),
        ({"fraction": float("nan")}, "out of range"),
        ({"fraction": 0.5, "base": 1.0}, "must be > 1"),
        ({"fraction": 0.5, "factor": 0}, "factor=0 must be a positive number"),
    ],
)
def test_bad_settings_name_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        p_rope_inv_freq(64, **kwargs)
    with pytest.raises(ValueError, match="even"):
        p_rope_inv_freq(63, fraction=0.5)


# --- transformers' implementation and Gemma 4's published constants ---------------------------


def test_equal_to_transformers_proportional_rope_for_gemma4_and_other_settings():
    pytest.importorskip("torch")
    from transformers import Gemma4TextConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    proportional = ROPE_INIT_FUNCTIONS[p_rope.ROPE_TYPE]
    gemma4 = Gemma4TextConfig()  # full-attention layers: p = 0.25, θ = 1e6, global head 512
    theirs, factor = proportional(gemma4, layer_type="full_attention")
    assert factor == 1.0
    ours = parse_config("p_rope", gemma4.to_dict())  # read through its per_layer_config
    assert (ours.head_dim, ours.fraction, ours.base) == (512, 0.25, 1e6)
    np.testing.assert_allclose(ours.inv_freq(), theirs.numpy(), rtol=1e-6, atol=0)
    preset = parse_config("p_rope", PRESETS[GEMMA4])  # the hand-written preset: same numbers
    np.testing.assert_allclose(preset.inv_freq(), theirs.numpy(), rtol=1e-6, atol=0)
    for p, base, head_dim in [(0.75, 1e4, 256), (0.1, 5e5, 128), (1.0, 1e4, 64), (0.0, 1e4, 64)]:
        config = Gemma4TextConfig(
            global_head_dim=head_dim,
            rope_parameters={
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": p,
                    "rope_theta": base,
                },
            },
        )
        theirs, _ = proportional(config, layer_type="full_attention")
        ours = p_rope_inv_freq(head_dim, fraction=p, base=base)
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-6, atol=0, err_msg=str(p))


def test_gemma4_keeps_64_of_256_pairs_the_slowest_turning_every_188_tokens():
    config = parse_config("p_rope", PRESETS[GEMMA4])
    assert config.kept_pairs == 64 and config.head_dim // 2 == 256
    slowest_kept = 2 * math.pi / config.inv_freq()[63]
    assert slowest_kept == pytest.approx(2 * math.pi * 1e6 ** (126 / 512))
    assert round(slowest_kept) == 188
    assert any("'sliding_attention' (default, θ = 10,000)" in note for note in config.notes)


# --- config reading and routing ----------------------------------------------------------------


def test_configs_route_to_p_rope_and_away_from_it():
    for config in PRESETS.values():
        assert family_of_config(config).id == "p_rope"
        assert family_of_config({"model_type": "llava", "text_config": config}).id == "p_rope"
    with pytest.raises(ValueError, match=r"uses p-RoPE, not RoPE.*p-RoPE page"):
        parse_config("rope", PRESETS[GEMMA4])
    llama = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e4}
    with pytest.raises(ValueError, match=r"uses RoPE, not p-RoPE.*RoPE page"):
        parse_config("p_rope", llama)
    with pytest.raises(ValueError, match="rope_type 'proportional'"):
        p_rope_config_from_dict(llama)
    flat = {"model_type": "gemma", "head_dim": 64, "rope_parameters": {"rope_type": "proportional"}}
    parsed = parse_config("p_rope", flat)  # transformers' defaults: p = 1, θ = 10000
    assert (parsed.fraction, parsed.base) == (1.0, 10000.0) and len(parsed.notes) == 2
    bad = {**flat, "rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 2}}
    with pytest.raises(ValueError, match="p=2 is out of range"):
        parse_config("p_rope", bad)


# --- its registry entry: Compare row, lab mechanism, code hash ---------------------------------


def test_compare_row_is_the_kept_kernel_plus_the_unrotated_share():
    from posviz.analysis.comparison import CompareSettings, compare_families
    from posviz.encodings.rope import rope_kernel

    settings = CompareSettings(
        n_distances=400, trained_length=100, rope_head_dim=64, rope_scaling="none"
    )
    result = compare_families(["p_rope", "rope"], settings=settings)
    label = "p-RoPE (p = 0.25)"
    assert list(result.summary["family"]) == ["RoPE", label]
    k = np.arange(400)
    kept = rope_kernel(k, default_inv_freq(64)[:8])  # 8 of 32 pairs
    np.testing.assert_allclose(result.similarity[label], 0.25 * kept + 0.75, atol=1e-12)
    # the 8 kept pairs all turn a full circle within L = 100 and the rest never turn, so no
    # angle past L is new; RoPE's slow pairs (22 of 32 turn less than once) are
    assert not result.unseen[label].any()
    assert result.unseen["RoPE"].max() > 0.5


def test_lab_trains_it_as_a_rotary_mechanism_with_gemma4s_p():
    mechanism = lab_mechanism("p_rope")
    assert mechanism.kind == "rotary" and not mechanism.absolute
    theta = mechanism.inv_freq(16)  # a lab head: 8 pairs, 2 kept
    np.testing.assert_allclose(theta, [1.0, 1e4 ** (-2 / 16), 0, 0, 0, 0, 0, 0])
    assert "posviz.encodings.p_rope" in code_modules()  # editing the formula re-trains
    assert family("p_rope").module == p_rope.__name__


def test_the_lab_model_trains_it_with_no_lab_edit():
    pytest.importorskip("torch")
    from posviz.lab.engine.config import LabConfig, ModelConfig
    from posviz.lab.engine.model import LabModel, Member
    from posviz.lab.engine.train import Arm, train_arms

    members = [
        Member(ModelConfig(kind="decoder", scheme=s), seed=0, rows=8, n_in=20)
        for s in ("rope", "p_rope")
    ]
    model = LabModel(members, n_out=20, width=32, heads=2, layers=1)
    np.testing.assert_allclose(model.inv_freq[0].numpy(), default_inv_freq(16), rtol=1e-6)
    np.testing.assert_allclose(model.inv_freq[1].numpy(), lab_mechanism("p_rope").inv_freq(16))
    assert not model.inv_freq[1, 2:].any()  # 6 of 8 pairs never rotate
    assert (model.tok[0] == model.tok[1]).all()  # same seed, same start: only θ differs
    config = LabConfig(
        task="kback", min_len=8, max_len=8, eval_lengths=(8,), width=32, heads=2, layers=1,
        seeds=2, steps=3, batch=8,
    )  # fmt: skip
    arm = Arm("p_rope", ModelConfig(kind="decoder", scheme="p_rope"), config)
    out = train_arms([arm], steps=3, checkpoints=[0, 3])["p_rope"]
    assert out.losses.shape == (2, 3) and np.isfinite(out.losses).all()
    assert out.heldout[8].accuracy.shape == (2, 2)


# --- the page -----------------------------------------------------------------------------------


def test_page_answers_first_from_its_numbers():
    at = app_test("pages/p_rope.py")
    assert_no_exception(at)
    assert not at.error
    answer = at.markdown[0].value + at.markdown[1].value  # the line, then its folded evidence
    assert "64 fastest" in answer and "256" in answer and "188 tokens" in answer
    assert "131,072 tokens" in answer
    assert len(at.get("vega_lite_chart")) == 2
    at = app_test("pages/p_rope.py", query={"prope_src": "manual", "prope_p": "1.0"})
    assert "p-RoPE is RoPE" in at.markdown[0].value + at.markdown[1].value
    at = app_test("pages/p_rope.py", query={"prope_src": "manual", "prope_p": "3"})
    assert_no_exception(at)
    assert any("prope_p" in w.value for w in at.warning), at.warning
