"""The induction question: its task (a repeated block with a random period), the prefix-matching
score (1 for a perfect induction head, the uniform-attention control), the attention maps it is
read from (they rebuild the model's own block outputs), and the question's place in the lab."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from posviz.lab.engine import bounds
from posviz.lab.engine.config import LabConfig, ModelConfig
from posviz.lab.engine.induction import (
    attention_maps,
    prefix_matching_score,
    prefix_targets,
    uniform_baseline,
)
from posviz.lab.engine.tasks import induction_batch, make_batch, train_rng
from posviz.lab.studies.presets import QUESTIONS

TASK = LabConfig(task="induction", vocab=16, k=4, min_len=16, max_len=16, eval_lengths=(16,))


def test_induction_batches_repeat_a_block_of_distinct_tokens_with_a_random_period() -> None:
    lengths = np.array([16] * 200)
    inputs, targets, repeat, periods = induction_batch(TASK, train_rng(0), lengths)
    # the period is drawn per sequence over the whole range k … n/2, not fixed
    assert set(periods.tolist()) == set(range(TASK.k, 16 // 2 + 1))
    for x, y, counted, p in zip(inputs, targets, repeat, periods, strict=True):
        assert len(set(x[:p].tolist())) == p  # the block's tokens are distinct
        assert (x[p:] == x[:-p]).all()  # the identity: the repeat equals the block
        assert (y[:-1] == x[1:]).all()  # the target is the next token
        # counted: exactly the repeat's slots that have a next token
        assert counted.tolist() == [p <= t <= 14 for t in range(16)]


def test_make_batch_counts_only_the_repeat_and_pads_shorter_sequences() -> None:
    config = replace(TASK, min_len=10)
    batch = make_batch(config, train_rng(1), np.array([10, 16, 13]))
    assert not (batch.mask & ~batch.valid).any()
    for x, y, mask, n in zip(batch.inputs, batch.targets, batch.mask, (10, 16, 13), strict=True):
        first = int(np.argmax(mask))  # the period: the first counted slot
        assert 4 <= first <= n // 2 and mask.sum() == n - 1 - first
        assert (x[first:n] == x[: n - first]).all()
        assert (y[mask] == x[1:n][mask[: n - 1]]).all()


def test_induction_refuses_settings_that_leave_no_repeat_or_too_few_tokens() -> None:
    with pytest.raises(ValueError, match="k ≤ 8"):
        make_batch(replace(TASK, k=9, min_len=16), train_rng(0), np.array([16]))
    with pytest.raises(ValueError, match="vocab ≥ 8"):
        make_batch(replace(TASK, vocab=6), train_rng(0), np.array([16]))


def test_chance_is_one_in_the_vocabulary_and_an_encoder_is_refused() -> None:
    assert bounds.chance_level(TASK).value == pytest.approx(1 / 16)
    assert bounds.position_blind_ceiling(TASK, kind="decoder").value is None
    with pytest.raises(ValueError, match="needs kind='decoder'"):
        bounds.position_blind_ceiling(TASK, kind="encoder")


def _perfect_induction(tokens: np.ndarray) -> np.ndarray:
    """A hand-built attention map: every query with a target puts all its attention there (the
    first one), the others attend to themselves."""
    b, t = tokens.shape
    maps = np.zeros((b, t, t))
    targets = prefix_targets(tokens)
    for i in range(b):
        for q in range(t):
            hits = np.flatnonzero(targets[i, q])
            maps[i, q, hits[0] if hits.size else q] = 1.0
    return maps


def test_prefix_matching_is_one_for_a_perfect_induction_head_and_chance_for_uniform() -> None:
    tokens = induction_batch(TASK, train_rng(2), np.array([16] * 64))[0]
    assert prefix_matching_score(_perfect_induction(tokens), tokens) == pytest.approx(1.0)
    # the repeat's query t has t // P earlier copies, each followed by a target, so uniform
    # attention over its t + 1 keys scores the mean of (t // P) / (t + 1)
    periods = np.argmax(prefix_targets(tokens).any(-1), axis=1)
    expected = np.mean([(t // p) / (t + 1) for p in periods for t in range(p, 16)])
    assert uniform_baseline(tokens) == pytest.approx(expected)
    # a previous-token head (attends to t − 1) is not an induction head
    previous = np.broadcast_to(np.eye(16, k=-1) + np.diag([1] + [0] * 15), (64, 16, 16))
    assert prefix_matching_score(previous, tokens) == pytest.approx(0.0)


def test_prefix_targets_follow_the_definition() -> None:
    # … A B … A: the second A (t = 3) targets B (j = 2), the key after A's earlier copy
    targets = prefix_targets(np.array([[7, 1, 2, 1]]))[0]
    assert np.argwhere(targets).tolist() == [[3, 2]]


@pytest.mark.slow
def test_attention_maps_rebuild_every_block_of_the_model() -> None:
    torch = pytest.importorskip("torch")
    from posviz.lab.engine.model import LabModel, Member, _norm_linear

    # RoPE (rotated, first), a learned table and no positions: every mechanism the question uses
    members = [
        Member(ModelConfig(kind="decoder", scheme=s), seed, 16, 17)
        for s in ("rope", "learned", "nope")
        for seed in (0, 1)
    ]
    model = LabModel(members, n_out=16, width=32, heads=2, layers=2)
    with torch.no_grad():  # move the LayerNorm gains off 1 so their folding is exercised
        for block in model.blocks:
            block.ln1.add_(
                0.1 * torch.randn(block.ln1.shape, generator=torch.Generator().manual_seed(0))
            )
    tokens = torch.from_numpy(induction_batch(TASK, train_rng(5), np.full(4, 16))[0])
    tokens = tokens[None].expand(6, 4, 16).contiguous()
    maps = attention_maps(model, tokens)  # (E, layers, H, B, T, T)
    assert maps.shape == (6, 2, 2, 4, 16, 16)
    assert np.allclose(maps.sum(-1), 1, atol=1e-5) and np.allclose(np.triu(maps, 1), 0)
    states = model(tokens, hidden=True)
    with torch.no_grad():
        for index, block in enumerate(model.blocks):
            x = states[index].reshape(6, 64, 32)
            v = _norm_linear(x, block.ln1, block.qkv)[..., 64:].view(6, 4, 16, 2, 16)
            probs = torch.from_numpy(maps[:, index]).float()  # (E, H, B, T, T)
            mixed = torch.einsum("ehbts,ebshd->ebthd", probs, v).reshape(6, 64, 32)
            x = x + torch.bmm(mixed, block.out)
            hidden = _norm_linear(x, block.ln2, block.up, block.up_bias).relu()
            rebuilt = torch.baddbmm(x, hidden, block.down) + block.down_bias
            assert torch.allclose(rebuilt, states[index + 1].reshape_as(rebuilt), atol=1e-4)


def test_the_induction_question_is_a_lab_question_with_its_controls() -> None:
    q = QUESTIONS["induction"]
    assert q.compare == ("rope", "nope") and q.control == "one_layer"
    control = q.variant("one_layer")
    assert control.config_for(q.default).layers == 1 and q.default.layers == 2
    assert "olsson_2022" in q.source_keys
