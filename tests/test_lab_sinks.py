"""The attention variants of the sinks pilot and Gu et al.'s Sink₁^ε, against identities.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781): α₁ and Sink₁^ε §3.2 (p. 4–5), sigmoid attention without
normalisation Table 6 (p. 10), the key-bias slot ("K biases") Table 4 (p. 9).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posviz.lab.attention_variants import (
    VariantModel,
    attend,
    first_token_score,
    proxy_weights,
    sink_metrics,
    sink_rate,
)
from posviz.lab.engine.config import ModelConfig
from posviz.lab.engine.induction import attention_maps
from posviz.lab.engine.model import LabModel, Member
from posviz.lab.sink_task import backcopy_batch, bigram_chain


def _causal_scores(seed: int, n: int = 3, t: int = 7, tk: int = 16) -> torch.Tensor:
    """``(n, t, tk)`` logits with the causal mask and padded keys at −inf, as the engine's."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(n, t, tk, generator=g) * 2
    mask = torch.ones(t, tk, dtype=torch.bool).triu(1)
    return scores.masked_fill(mask, -math.inf)


def test_a_key_bias_slot_at_minus_infinity_is_plain_softmax() -> None:
    scores = _causal_scores(0)
    slot = torch.full((*scores.shape[:-1], 1), -math.inf)
    torch.testing.assert_close(attend(scores, "key_bias", slot), attend(scores, "softmax"))


def test_the_key_bias_slot_takes_its_softmax_share_and_gives_nothing() -> None:
    scores = _causal_scores(1)
    slot = torch.randn(*scores.shape[:-1], 1, generator=torch.Generator().manual_seed(2))
    weights = attend(scores, "key_bias", slot)
    # the slot's share exp(s) / (exp(s) + Σ exp(scores)) is what the tokens' rows lack
    share = 1 / (1 + torch.exp(torch.logsumexp(scores, -1) - slot[..., 0]))
    torch.testing.assert_close(weights.sum(-1), 1 - share)
    # among the tokens the weights are softmax's, rescaled
    torch.testing.assert_close(weights / weights.sum(-1, keepdim=True), scores.softmax(-1))


def test_sigmoid_attention_weighs_each_key_alone_and_rows_are_not_normalised() -> None:
    scores = _causal_scores(3)
    weights = attend(scores, "sigmoid")
    torch.testing.assert_close(weights, 1 / (1 + torch.exp(-scores)))
    assert torch.all(weights[:, 0, 1:] == 0)  # masked keys weigh exactly 0
    sums = weights.sum(-1)
    assert not torch.allclose(sums, torch.ones_like(sums))
    # query t sees t + 1 keys, each weighed in (0, 1): its row sum lies in (0, t + 1)
    assert torch.all(sums < torch.arange(1, 8)) and torch.all(sums > 0)


def test_sigmoid_with_the_log_length_bias_is_sigmoid_of_shifted_scores() -> None:
    scores = _causal_scores(4)  # T = 7 queries, keys padded to 16
    weights = attend(scores, "sigmoid_bias", length=7)
    torch.testing.assert_close(weights, torch.sigmoid(scores - math.log(7)))
    # zero logits: each seen key weighs 1/(1 + T), so the last row (T keys) sums to T/(T + 1)
    flat = attend(torch.zeros(7, 7).masked_fill(torch.ones(7, 7).triu(1).bool(), -math.inf),
                  "sigmoid_bias", length=7)  # fmt: skip
    assert float(flat[-1].sum()) == pytest.approx(7 / 8)
    with pytest.raises(ValueError, match="length"):
        attend(scores, "sigmoid_bias")


def test_attend_rejects_unknown_kinds_and_a_missing_slot() -> None:
    with pytest.raises(ValueError, match="choose one of"):
        attend(_causal_scores(0), "relu")
    with pytest.raises(ValueError, match="slot"):
        attend(_causal_scores(0), "key_bias")


def _uniform_causal(t: int) -> np.ndarray:
    return np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]


def test_first_token_score_of_constructed_maps() -> None:
    t = 64
    on_first = np.zeros((t, t))
    on_first[:, 0] = 1
    assert first_token_score(on_first) == 1.0
    diagonal = np.eye(t)  # a head that reads only itself: the first query's 1 is all α₁ gets
    assert first_token_score(diagonal) == pytest.approx(1 / t)
    # uniform causal attention: α₁ = (1/T) Σ 1/t = H_T / T (0.074 at T = 64)
    harmonic = np.sum(1 / np.arange(1, t + 1)) / t
    assert first_token_score(_uniform_causal(t)) == pytest.approx(harmonic)
    with pytest.raises(ValueError, match="query × key"):
        first_token_score(np.ones((3, 4)))


def test_sink_rate_counts_heads_strictly_above_epsilon() -> None:
    alpha = np.array([[0.9, 0.05], [0.3, 0.31]])  # (layers, heads)
    assert sink_rate(alpha) == 0.5  # 0.9 and 0.31; 0.3 itself is not above ε
    assert sink_rate(alpha, epsilon=0.01) == 1.0
    assert sink_rate(np.stack([alpha, np.zeros((2, 2))])).tolist() == [0.5, 0.0]
    with pytest.raises(ValueError, match="epsilon"):
        sink_rate(alpha, epsilon=1.5)


def test_sink_metrics_on_constructed_maps_per_attention() -> None:
    t, b = 16, 3
    sink = np.zeros((t, t))
    sink[:, 0] = 1
    heads = np.stack([sink, _uniform_causal(t)])  # head 0 a sink, head 1 uniform
    maps = np.broadcast_to(heads[None, :, None], (2, 2, b, t, t))  # (layers, heads, B, T, T)
    found = sink_metrics(maps, "softmax")
    assert found["sink"] == 0.5 and found["row_sum"] == pytest.approx(1.0)
    np.testing.assert_allclose(found["alpha"][:, 0], 1.0)
    # sigmoid rows are scored on proxy weights: scaling a row changes nothing
    scaled = maps * np.arange(1, t + 1)[:, None]
    again = sink_metrics(scaled, "sigmoid")
    assert again["sink"] == 0.5 and again["row_sum"] > 1
    np.testing.assert_allclose(proxy_weights(scaled), maps)
    # …but read as softmax, the unnormalised rows would count head 1 as a sink too
    assert sink_metrics(scaled, "softmax")["sink"] == 1.0


def _members(schemes: tuple[str, ...], n_in: int = 12) -> list[Member]:
    return [
        Member(ModelConfig(kind="decoder", scheme=s), seed, 16, n_in)
        for s in schemes
        for seed in (0, 1)
    ]


def _tokens(e: int, b: int = 2, t: int = 10) -> torch.Tensor:
    return torch.randint(0, 11, (e, b, t), generator=torch.Generator().manual_seed(5))


def test_the_softmax_variant_is_the_engine_s_model() -> None:
    members = _members(("rope", "nope", "learned"))
    shape = {"n_out": 11, "width": 16, "heads": 2, "layers": 2}
    engine = LabModel(members, **shape)
    variant = VariantModel(members, **shape, attention="softmax")
    tokens = _tokens(len(members))
    with torch.no_grad():
        torch.testing.assert_close(variant(tokens), engine(tokens))
    # its kept maps are the ones the engine's induction check recomputes
    np.testing.assert_allclose(
        variant.attention_maps(tokens), attention_maps(engine, tokens), atol=1e-6
    )


def test_the_other_variants_change_the_model_and_the_slot_learns() -> None:
    members = _members(("nope",))
    shape = {"n_out": 11, "width": 16, "heads": 2, "layers": 2}
    tokens = _tokens(len(members))
    softmax = VariantModel(members, **shape, attention="softmax")(tokens)
    for attention in ("sigmoid", "key_bias"):
        model = VariantModel(members, **shape, attention=attention)
        out = model(tokens)
        assert not torch.allclose(out, softmax)
        maps = model.attention_maps(tokens)  # (E, layers, H, B, T, T)
        sums = maps.sum(-1)
        # the slot keeps a share of every row; near-zero logits at the start weigh ≈ ½ per key
        assert np.all(sums < 1) if attention == "key_bias" else np.all(sums[..., 3:] > 1)
    out.sum().backward()  # the last one is key_bias: its slot gets a gradient
    assert all(block.slot.grad.abs().sum() > 0 for block in model.blocks)
    with pytest.raises(ValueError, match="choose one of"):
        VariantModel(members, **shape, attention="linear")


# ---- the bigram-backcopy task (posviz.lab.sink_task) ----


def test_the_chain_is_fixed_row_stochastic_and_sparse() -> None:
    chain = bigram_chain(n_plain=10, n_triggers=2, successors=3)
    np.testing.assert_allclose(chain.probs.sum(1), 1.0)
    assert np.all((chain.probs > 0).sum(1) == 3)
    np.testing.assert_array_equal(bigram_chain(10, 2, 3).probs, chain.probs)  # a fixed draw
    assert chain.n_tokens == 12 and chain.bos == 12
    assert chain.is_trigger(np.array([9, 10, 11, 12])).tolist() == [False, True, True, False]
    with pytest.raises(ValueError, match="successors"):
        bigram_chain(n_plain=4, successors=5)
    with pytest.raises(ValueError, match="p_trigger"):
        bigram_chain(p_trigger=1.0)


def test_backcopy_sequences_follow_their_rules() -> None:
    chain = bigram_chain(n_plain=12, n_triggers=3, successors=3, p_trigger=0.2)
    batch = backcopy_batch(chain, np.random.default_rng(0), 400, 40)
    x, y = batch.inputs, batch.targets
    assert x.shape == y.shape == (400, 40)
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])  # targets are the next inputs
    assert np.all(x[:, 0] == chain.bos) and not np.any(x[:, 1:] == chain.bos)
    # the token after a trigger is the token before it, and it is never a trigger
    rows, cols = np.nonzero(batch.copy)
    assert np.all(cols >= 2) and np.all(chain.is_trigger(x[rows, cols]))
    np.testing.assert_array_equal(y[rows, cols], x[rows, cols - 1])
    assert not np.any(chain.is_trigger(y[rows, cols]))
    # every other plain → plain step is one the chain allows
    plain = ~batch.copy & ~chain.is_trigger(y) & (x != chain.bos)
    assert np.all(chain.probs[x[plain], y[plain]] > 0)
    # after a plain token, a trigger comes with chance p_trigger (binomial, ≥ 3 000 draws)
    after_plain = (x < chain.n_plain) & (x != chain.bos)
    share = chain.is_trigger(y[after_plain]).mean()
    assert abs(share - 0.2) < 4 * math.sqrt(0.2 * 0.8 / after_plain.sum())


def test_a_copy_needs_the_previous_token_the_trigger_alone_does_not_tell_it() -> None:
    chain = bigram_chain()
    batch = backcopy_batch(chain, np.random.default_rng(1), 500, 64)
    x, y = batch.inputs[batch.copy], batch.targets[batch.copy]
    # the best guess from the trigger alone: the most common copy per trigger
    best = sum(np.bincount(y[x == trig]).max() for trig in np.unique(x))
    assert best / len(y) < 0.25
    # without a BOS the sequence starts on a plain token and no BOS appears
    bare = backcopy_batch(chain, np.random.default_rng(1), 50, 64, bos=False)
    assert np.all(bare.inputs[:, 0] < chain.n_plain) and not np.any(bare.inputs == chain.bos)
    with pytest.raises(ValueError, match="length"):
        backcopy_batch(chain, np.random.default_rng(1), 5, 1)
