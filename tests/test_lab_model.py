"""The lab's batched transformer: each mechanism against its formula, every member against a
textbook single model built from its own parameters, invariances and gradients."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from posviz.encodings.alibi import alibi_bias, alibi_slopes
from posviz.encodings.families import FAMILIES, LabMechanism
from posviz.encodings.lab_mechanisms import LAB_T5_MAX_DISTANCE
from posviz.encodings.rope import default_inv_freq, rope_rotate
from posviz.encodings.sinusoidal import sinusoidal
from posviz.encodings.t5 import t5_bias_matrix
from posviz.lab.engine import model as lab_model
from posviz.lab.engine import train as lab_train
from posviz.lab.engine.config import LabConfig, ModelConfig, absolute_schemes, schemes
from posviz.lab.engine.model import KEY_ALIGN, LabModel, Member
from posviz.lab.engine.train import build_model, masked_loss


@pytest.fixture(autouse=True)
def _on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's math is checked on the CPU (the lab's target) even where CUDA is present."""
    monkeypatch.setattr(lab_train, "device", lambda: torch.device("cpu"))


SMALL = LabConfig(task="reverse", min_len=8, max_len=8, eval_lengths=(8,), width=16, seeds=2)
KBACK = LabConfig(task="kback", min_len=6, max_len=10, eval_lengths=(10,), width=16, heads=4)


def _members(*models: ModelConfig, rows: int = 12, n_in: int = 17, seed: int = 0) -> list[Member]:
    return [Member(m, seed, rows, n_in) for m in models]


def _model(members: list[Member], *, width: int = 16, heads: int = 4) -> LabModel:
    return LabModel(members, n_out=16, width=width, heads=heads, layers=2)


def _tokens(e: int, b: int, t: int, seed: int = 0, vocab: int = 16) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, vocab, size=(e, b, t)))


ROWS = 24  # learned tables of the zoo: enough for every length tested


def _variants(scheme: str) -> list[ModelConfig]:
    """Both kinds; for a scheme with position vectors also concatenated and every-layer."""
    variants = [
        ModelConfig(kind="encoder", scheme=scheme),
        ModelConfig(kind="decoder", scheme=scheme),
    ]
    if scheme in absolute_schemes():
        variants += [
            ModelConfig(kind="decoder", scheme=scheme, injection="concat", concat_width=6),
            ModelConfig(kind="encoder", scheme=scheme, injection="every_layer", pos_init_std=0.3),
        ]
    return variants


# Every registered lab family (a new one included, with no test edit), both kinds and every
# injection, in ONE heterogeneous model; learned tables at a visible initial scale.
ZOO = tuple(
    replace(m, pos_init_std=0.5) if m.injection == "input" and m.scheme == "learned" else m
    for scheme in schemes()
    for m in _variants(scheme)
)
LEARNED_ADD = ZOO.index(ModelConfig(kind="encoder", scheme="learned", pos_init_std=0.5))
LEARNED_CONCAT = ZOO.index(
    ModelConfig(kind="decoder", scheme="learned", injection="concat", concat_width=6)
)


def _zoo() -> LabModel:
    model = _model(_members(*ZOO, rows=ROWS))
    with torch.no_grad():  # non-zero bucket biases and LayerNorm affines, so they are exercised
        generator = torch.Generator().manual_seed(5)
        model.t5.copy_(torch.randn(model.t5.shape, generator=generator))
        for block in model.blocks:
            for norm in (block.ln1, block.ln2):
                norm.add_(0.3 * torch.randn(norm.shape, generator=generator))
            block.up_bias.add_(0.1 * torch.randn(block.up_bias.shape, generator=generator))
    return model


def _reference(model: LabModel, index: int, tokens: torch.Tensor) -> torch.Tensor:
    """Member ``index``'s logits ``(B, T, n_out)`` from a textbook single pre-LN transformer built
    from its live parameters: real (unmasked) concatenation, LayerNorm with its affine, softmax
    over exactly ``T`` keys, RoPE pair by pair, bias matrices looked up by bucket."""
    member, d, h = model.members[index], model.width, model.heads
    hd, (b, t) = d // h, tokens.shape
    mechanism = member.mechanism
    p = member.table_width(d)
    concat = member.model.injection == "concat"
    x = model.tok[index, : member.n_in, : d - p if concat else d][tokens]  # real embedding
    vectors = None
    if mechanism.kind == "learned_table":
        vectors = model.pos[index, :t, d - p :]  # the (rows, p) table itself
    elif mechanism.kind == "table":
        vectors = torch.from_numpy(np.asarray(mechanism.table(t, p), dtype=np.float32))
    if vectors is not None:
        x = torch.cat([x, vectors.expand(b, t, p)], -1) if concat else x + vectors
    bias = torch.zeros(h, t, t)
    if mechanism.kind == "bias":
        bias = bias + torch.from_numpy(mechanism.bias(t, h, member.causal).astype(np.float32))
    if mechanism.kind == "learned_bucket_bias":
        buckets = torch.from_numpy(mechanism.buckets(t, member.causal)[0])
        bias = bias + model.t5[index][buckets].permute(2, 0, 1)
    if member.causal:
        bias = bias.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), -math.inf)
    for layer, block in enumerate(model.blocks):
        if layer and member.model.injection == "every_layer":
            x = x + vectors
        z = F.layer_norm(x, (d,), block.ln1[index, 0], block.ln1[index, 1])
        q, k, v = (
            part.reshape(b, t, h, hd).transpose(1, 2)
            for part in (z @ block.qkv[index]).split(d, -1)
        )
        if mechanism.kind == "rotary":
            q, k = (
                _textbook_rope(q, mechanism.inv_freq(hd)),
                _textbook_rope(k, mechanism.inv_freq(hd)),
            )
        att = (q @ k.transpose(-1, -2) / math.sqrt(hd) + bias).softmax(-1)
        x = x + (att @ v).transpose(1, 2).reshape(b, t, d) @ block.out[index]
        z = F.layer_norm(x, (d,), block.ln2[index, 0], block.ln2[index, 1])
        up = torch.relu(z @ block.up[index] + block.up_bias[index, 0])
        x = x + up @ block.down[index] + block.down_bias[index, 0]
    z = F.layer_norm(x, (d,), model.ln_f[index, 0], model.ln_f[index, 1])
    return z @ model.head[index]


def _textbook_rope(x: torch.Tensor, inv_freq: np.ndarray) -> torch.Tensor:
    """Su et al. 2021 eq. 34, rotate_half pairing: pair (i, i + hd/2) turned by t·θ_i."""
    half = x.shape[-1] // 2
    angles = torch.arange(x.shape[-2])[:, None] * torch.from_numpy(inv_freq).float()[None, :]
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * angles.cos() - b * angles.sin(), b * angles.cos() + a * angles.sin()], -1)


@pytest.mark.parametrize("t", [5, 12, 16, 20])
def test_every_member_of_a_heterogeneous_model_equals_its_textbook_model(t: int) -> None:
    model = _zoo()
    tokens = _tokens(len(ZOO), 3, t)
    with torch.no_grad():
        logits = model(tokens)
        for index in range(len(ZOO)):
            reference = _reference(model, index, tokens[index])
            torch.testing.assert_close(logits[index], reference, atol=2e-5, rtol=2e-5)


def test_concatenation_by_masks_equals_a_real_concatenation_with_the_same_gradients() -> None:
    model = _zoo()
    index = LEARNED_CONCAT  # decoder, learned table concatenated, p = 6
    d, p = model.width, 6
    tokens = _tokens(len(ZOO), 4, 10)
    targets = _tokens(len(ZOO), 4, 10, seed=1)
    mask = torch.ones(tokens.shape, dtype=torch.bool)
    masked_loss(model(tokens), targets, mask)[index].backward()
    real_tok = model.tok[index, :, : d - p].detach().clone().requires_grad_(True)
    real_table = model.pos[index, :, d - p :].detach().clone().requires_grad_(True)
    with torch.no_grad():  # the reference reads the real parameters through the model's slots
        model.tok[index, :, : d - p] = real_tok
        model.pos[index, :, d - p :] = real_table
    x = torch.cat([real_tok[tokens[index]], real_table[:10].expand(4, 10, p)], -1)
    assert x.shape[-1] == d  # (d − p) token columns next to p table columns, no projection
    reference = _reference_from_input(model, index, x)
    F.cross_entropy(reference.flatten(0, 1), targets[index].flatten()).backward()
    torch.testing.assert_close(
        model.tok.grad[index, :, : d - p], real_tok.grad, atol=1e-6, rtol=1e-5
    )
    torch.testing.assert_close(
        model.pos.grad[index, :, d - p :], real_table.grad, atol=1e-6, rtol=1e-5
    )
    # the masked columns: exactly zero gradient
    assert torch.count_nonzero(model.tok.grad[index, :, d - p :]) == 0
    assert torch.count_nonzero(model.pos.grad[index, :, : d - p]) == 0
    assert model.n_params(index) == model.n_params(LEARNED_ADD) - (17 * p + ROWS * (d - p))


def _reference_from_input(model: LabModel, index: int, x: torch.Tensor) -> torch.Tensor:
    """The textbook model of a causal NoPE-inside member from its input vectors ``x``."""
    d, h = model.width, model.heads
    hd, (b, t, _) = d // h, x.shape
    causal = torch.ones(t, t, dtype=torch.bool).triu(1)
    for block in model.blocks:
        z = F.layer_norm(x, (d,), block.ln1[index, 0], block.ln1[index, 1])
        q, k, v = (
            part.reshape(b, t, h, hd).transpose(1, 2)
            for part in (z @ block.qkv[index]).split(d, -1)
        )
        scores = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(causal, -math.inf)
        x = x + (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d) @ block.out[index]
        z = F.layer_norm(x, (d,), block.ln2[index, 0], block.ln2[index, 1])
        up = torch.relu(z @ block.up[index] + block.up_bias[index, 0])
        x = x + up @ block.down[index] + block.down_bias[index, 0]
    z = F.layer_norm(x, (d,), model.ln_f[index, 0], model.ln_f[index, 1])
    return z @ model.head[index]


def test_sinusoid_vectors_are_the_encodings_table() -> None:
    model = build_model(ModelConfig(scheme="sinusoidal"), SMALL)
    expected = sinusoidal(8, 16, dtype=np.float32)
    np.testing.assert_array_equal(model.position_vectors(8)[0].numpy(), expected)
    concat = _model(_members(ModelConfig(scheme="sinusoidal", injection="concat", concat_width=6)))
    vectors = concat.position_vectors(8)[0].numpy()
    np.testing.assert_array_equal(vectors[:, 10:], sinusoidal(8, 6, dtype=np.float32))
    assert not vectors[:, :10].any()  # the token's columns: no position added


def test_rotation_equals_the_rope_formula_and_a_zero_frequency_pair_is_unrotated() -> None:
    inv = default_inv_freq(8)
    inv[[1, 3]] = 0.0  # p-RoPE style: some pairs carry no position
    x = np.random.default_rng(0).normal(size=(10, 8))
    angles = torch.arange(10, dtype=torch.float64)[:, None] * torch.from_numpy(inv)[None, :]
    cos, sin = lab_model.rotary_tables(angles)
    ours = lab_model._rotate(torch.from_numpy(x), cos, sin).numpy()
    np.testing.assert_allclose(ours, rope_rotate(x, np.arange(10), inv), atol=1e-12)
    for pair in (1, 3):  # dims i and i + hd/2 pass through exactly
        np.testing.assert_array_equal(ours[:, [pair, pair + 4]], x[:, [pair, pair + 4]])


def test_a_rotary_family_with_zero_frequencies_trains_with_no_lab_edit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A family registered with the rotary mechanism and some zero frequencies (as p-RoPE):
    the model takes its frequencies from the registry and leaves those pairs unrotated."""

    def partial(head_dim: int) -> np.ndarray:
        inv = default_inv_freq(head_dim)
        inv[len(inv) // 2 :] = 0.0  # the slowest half: no rotation
        return inv

    real = lab_model.lab_mechanism
    monkeypatch.setattr(
        lab_model,
        "lab_mechanism",
        lambda scheme: (
            LabMechanism("rotary", inv_freq=partial) if scheme == "rope" else real(scheme)
        ),
    )
    for order in ((0, 1), (1, 0)):  # rotary member first (rotated alone) or second (all turn)
        pair = [ModelConfig(scheme="rope"), ModelConfig(scheme="nope")]
        model = _model(_members(*(pair[i] for i in order)))
        tokens = _tokens(2, 2, 9)
        with torch.no_grad():
            logits = model(tokens)
            for index in range(2):
                expected = _reference(model, index, tokens[index])
                torch.testing.assert_close(logits[index], expected, atol=2e-5, rtol=1e-5)
        rope = order.index(0)
        np.testing.assert_array_equal(model.inv_freq[rope].numpy(), partial(4).astype(np.float32))
        assert len(model.inv_freq) == (1 if rope == 0 else 2)  # only a leading block rotates
        assert not model.inv_freq[1:].any() if rope == 0 else not model.inv_freq[0].any()


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_alibi_bias_equals_the_formula_and_padded_keys_are_masked(kind: str) -> None:
    model = build_model(ModelConfig(kind=kind, scheme="alibi"), KBACK)
    bias = model.attention_bias(6, None)
    assert bias.shape[-1] == KEY_ALIGN  # keys padded for the vectorised softmax
    expected = alibi_bias(6, alibi_slopes(4), causal=kind == "decoder")
    np.testing.assert_allclose(bias[0, 0, :, :, :6].numpy(), expected, atol=1e-6)
    assert torch.isneginf(bias[..., 6:]).all()


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_t5_bias_equals_the_bucket_lookup(kind: str) -> None:
    model = build_model(ModelConfig(kind=kind, scheme="t5"), replace(KBACK, heads=2))
    table = np.random.default_rng(0).normal(size=model.t5.shape)
    with torch.no_grad():
        model.t5.copy_(torch.from_numpy(table))
    bias = model.attention_bias(9, None).detach()
    mechanism = FAMILIES["t5"].lab
    for seed in range(KBACK.seeds):
        expected = t5_bias_matrix(
            table[seed], 9, bidirectional=kind == "encoder", max_distance=LAB_T5_MAX_DISTANCE
        )
        if kind == "decoder":
            expected = np.where(np.triu(np.ones((9, 9)), 1) > 0, -np.inf, expected)
        np.testing.assert_allclose(bias[seed, 0, :, :, :9].numpy(), expected, atol=1e-6)
    assert mechanism.buckets(9, False)[1] == model.t5.shape[1]


@pytest.mark.parametrize("scheme", ["nope", "learned"])
def test_only_the_nope_encoder_is_permutation_equivariant(scheme: str) -> None:
    model = build_model(ModelConfig(scheme=scheme), SMALL)
    tokens = _tokens(2, 4, 8)
    perm = torch.from_numpy(np.random.default_rng(1).permutation(8))
    with torch.no_grad():
        out, out_permuted = model(tokens), model(tokens[..., perm])
    equivariant = torch.allclose(out[..., perm, :], out_permuted, atol=1e-5)
    assert equivariant == (scheme == "nope")


def test_a_causal_decoder_never_sees_a_later_token() -> None:
    decoders = [m for m in ZOO if m.kind == "decoder"]
    model = _model(_members(*decoders))
    tokens = _tokens(len(decoders), 3, 11)
    changed = tokens.clone()
    changed[:, :, 7] = (changed[:, :, 7] + 1) % 16
    with torch.no_grad():
        before, after = model(tokens), model(changed)
    torch.testing.assert_close(before[:, :, :7], after[:, :, :7], atol=0, rtol=0)
    assert not torch.allclose(before[:, :, 7:], after[:, :, 7:])


def test_padding_never_changes_the_real_positions() -> None:
    model = _zoo()
    tokens = _tokens(len(ZOO), 4, 9)
    valid = torch.ones(tokens.shape, dtype=torch.bool)
    valid[:, :, 6:] = False
    with torch.no_grad():
        short, padded = model(tokens[..., :6]), model(tokens, valid)
    torch.testing.assert_close(padded[..., :6, :], short, atol=2e-5, rtol=2e-5)


def test_unseen_table_rows_get_exactly_zero_gradient() -> None:
    config = LabConfig(task="kback", min_len=4, max_len=12, eval_lengths=(12,), width=16, seeds=2)
    model = build_model(ModelConfig(scheme="learned", table_rows=20), config)
    tokens = _tokens(2, 4, 12)
    valid = torch.arange(12)[None, None, :] < torch.tensor([4, 7, 12, 9])[None, :, None]
    valid = valid.expand(2, 4, 12)
    masked_loss(model(tokens, valid), tokens, valid).sum().backward()
    grad = model.pos.grad
    assert torch.count_nonzero(grad[:, 12:]) == 0  # exactly zero, not small
    assert torch.count_nonzero(grad[:, :12].abs().sum(-1)) == 2 * 12  # every used row has one


def test_pos_init_std_sets_the_learned_tables_starting_scale() -> None:
    small, large = ModelConfig(scheme="learned"), ModelConfig(scheme="learned", pos_init_std=0.7)
    model = _model(_members(small, large, rows=200), width=32, heads=2)
    tables = [model.tables([i])[0] for i in range(2)]
    assert tables[0].std() == pytest.approx(0.02, rel=0.05)
    assert tables[1].std() == pytest.approx(0.7, rel=0.05)
    # the paired design: one seed, one draw, two scales
    np.testing.assert_allclose(tables[1], tables[0] * 35, rtol=1e-5, atol=1e-6)


def test_members_with_one_seed_share_every_weight_but_their_positions() -> None:
    model = _zoo()  # all seed 0
    for block in model.blocks:
        assert (block.qkv[0] == block.qkv[1:]).all() and (block.down[0] == block.down[1:]).all()
    assert (model.head[0] == model.head[1:]).all()
    # concat: its first d − p columns
    assert (model.tok[0, :, :10] == model.tok[LEARNED_CONCAT, :, :10]).all()


def test_n_params_is_one_members_own_model() -> None:
    model = _zoo()
    d, layers = 16, 2
    blocks = layers * (2 * 2 * d + 3 * d * d + d * d + 4 * d * d + 4 * d + 4 * d * d + d)
    base = blocks + 2 * d + d * 16 + 17 * d
    counts = {m: model.n_params(i) for i, m in enumerate(ZOO)}
    assert counts[ModelConfig(scheme="nope")] == base
    assert counts[ZOO[LEARNED_ADD]] == base + ROWS * d  # learned table: rows × d
    assert counts[ModelConfig(scheme="t5")] == base + 16 * 4  # T5: buckets × heads
    assert counts[ModelConfig(scheme="sinusoidal")] == base  # a fixed table has no parameters
    assert counts[ModelConfig(scheme="rope")] == counts[ModelConfig(scheme="alibi")] == base


def test_concatenation_parameter_count_matches_adding_within_five_percent() -> None:
    config = LabConfig(task="reverse", min_len=12, max_len=12, eval_lengths=(12,))
    both = _model(
        _members(ModelConfig(scheme="learned"), ModelConfig(scheme="learned", injection="concat")),
        width=config.width,
        heads=config.heads,
    )
    add, concat = both.n_params(0), both.n_params(1)
    d, p, v, r = config.width, config.width // 2, 17, 12
    assert add - concat == v * p + r * (d - p)  # the embeddings are the only difference
    assert abs(add - concat) / add < 0.05


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


def test_an_odd_sinusoid_width_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="use an even width or concat_width"):
        build_model(ModelConfig(scheme="sinusoidal", injection="concat", concat_width=5), SMALL)


def test_relative_schemes_refuse_table_injection_modes() -> None:
    with pytest.raises(ValueError, match="injection='concat' needs a position table"):
        ModelConfig(scheme="rope", injection="concat")


def test_the_model_knows_mechanisms_not_family_names() -> None:
    source = Path(lab_model.__file__).read_text(encoding="utf-8")
    for family in FAMILIES:
        assert f'"{family}"' not in source and f"'{family}'" not in source
