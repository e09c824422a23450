"""The ablations and the content control of the Inside-real-models page, on tiny hand-built
``transformers`` models (fast, no checkpoint): an ablation that flips a class (a previous-token
head made by RoPE vanishes with every position id 0) and one that does not (a first-token head
made by the token's content keeps its class), the moved control telling the two apart, the
positional-head class, and the zeroed position table doing what it says."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from posviz.analysis import inside_models  # noqa: E402
from posviz.analysis.heads import class_counts  # noqa: E402
from posviz.models import LoadedModel  # noqa: E402

T, N, MARK = 8, 4, 1  # tokens per window, windows, the token a content head looks for


def _tiny_llama(*, seed: int | None = None) -> LoadedModel:
    """One layer, two 4-dim heads, RoPE base 100 (pair 0 turns 1 rad a token, pair 1 0.1 rad).

    Token ``MARK`` embeds on dimension 0, every other token on dimension 1 (RMSNorm makes both
    √8). Head 0's query and key are the same for every token, set so that the rotated score is
    40·cos(Δ − 1) + 40·cos(0.1(Δ − 1)): largest at Δ = 1, a previous-token head made by RoPE
    alone. Head 1's key is non-zero only for ``MARK``, on the slow pair: a head on that token
    wherever it is (cos(0.1Δ) ≥ 0.76 over 8 tokens). ``seed``: random weights instead."""
    config = transformers.LlamaConfig(
        vocab_size=8, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, head_dim=4, rope_theta=100.0,
        max_position_embeddings=64, tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0 if seed is None else seed)
    model = transformers.LlamaForCausalLM(config).eval()
    model.config._attn_implementation = "eager"
    if seed is not None:
        return LoadedModel(model, None, "tiny llama, random", "llama", 1, 8)
    scale = 1 / np.sqrt(8)  # undo RMSNorm's √8, so a weight is the vector's entry itself
    with torch.no_grad():
        emb = torch.zeros(8, 8)
        emb[:, 1] = 1.0
        emb[MARK] = torch.tensor([1.0] + [0.0] * 7)
        model.model.embed_tokens.weight.copy_(emb)
        q, k = torch.zeros(8, 8), torch.zeros(8, 8)
        # head 0 (rows 0–3; pair 0 = dims 0, 2; pair 1 = dims 1, 3), from either token dim
        a = 40.0 * 2  # scores are divided by √4
        for col in (0, 1):
            q[0, col], q[2, col] = a * np.cos(-1.0) * scale, a * np.sin(-1.0) * scale
            q[1, col], q[3, col] = a * np.cos(-0.1) * scale, a * np.sin(-0.1) * scale
            k[0, col] = k[1, col] = scale
            q[5, col] = 10.0 * 2 * scale  # head 1's query, on its slow pair (dims 5, 7)
        k[5, 0] = scale  # head 1's key: only MARK has one
        model.model.layers[0].self_attn.q_proj.weight.copy_(q)
        model.model.layers[0].self_attn.k_proj.weight.copy_(k)
    return LoadedModel(model, None, "tiny llama", "llama", 1, 8)


def _rows() -> np.ndarray:
    rng = np.random.default_rng(0)
    rows = rng.integers(2, 8, size=(N, T))
    rows[:, 0] = MARK  # the windows open on the marked token, as a text window opens on a word
    return rows


@pytest.fixture(scope="module")
def tiny() -> inside_models.HeadsResult:
    arrays = inside_models.smollm2_conditions(
        _tiny_llama(), lambda: _tiny_llama(seed=1), _rows(), np.array([2, 3, 4]),
        lambda _f, _w: None,
    )  # fmt: skip
    arrays.pop("q"), arrays.pop("k")
    return inside_models._result("smollm2", arrays).heads


def test_rope_off_removes_the_previous_token_head_but_not_the_content_head(tiny) -> None:
    trained, ablated = tiny.labels("trained"), tiny.labels("ablated")
    assert trained.tolist() == [["previous-token", "first-token (sink)"]]
    # every position id 0: head 0's scores are all equal, a uniform causal row: it flips
    assert ablated.tolist() == [["broad", "first-token (sink)"]]
    assert class_counts(tiny.labels("untrained"))["broad"] == 2  # random weights: the control
    prev = tiny.scores[0, 0, 0, 0]  # (windows,) previous-token scores of head 0, trained
    assert (prev > 0.9).all() and (tiny.scores[3, 0, 0, 0] < 0.4).all()


def test_the_moved_control_can_say_token(tiny) -> None:
    """Three other tokens before each window: head 1 stays on the marked token (now slot 3),
    not on slot 0 — the answer the real SmolLM2 does *not* give (its heads go to slot 0)."""
    slot0, token = tiny.moved_counts()
    assert (slot0, token) == (0, 1)
    assert tiny.moved[1, 0, 1].min() > 0.9 and tiny.moved[0, 0, 1].max() < 0.05


def test_the_positional_class_is_the_rope_head_and_it_does_not_survive_rope_off(tiny) -> None:
    positional, peak = tiny.positional("trained")
    assert positional.tolist() == [[True, False]]
    assert tiny.distances[peak[0, 0]] == 1
    assert tiny.positional_kept() == 0
    found = inside_models.findings(inside_models.InsideResult(tiny))
    assert found["trained"]["positional"] == 1 and found["trained"]["positional_at"] == {1: 1}
    assert found["ablated"]["positional_kept"] == 0
    assert found["ablated"]["pooled"]["previous-token"] == 0
    assert found["moved"]["on_the_token"] == 1


def test_the_distance_profile_leaves_the_sink_key_out(tiny) -> None:
    """Head 1 puts nearly all of query T−1's attention on key 0: the full profile's last point
    is that one cell (the "rise at Δ = T−1"), the content profile has no point there."""
    assert tiny.by_distance[0, 0, 1, -1] > 0.9
    assert np.isnan(tiny.content[0, 0, 1, :, -1]).all()
    assert np.nanmax(tiny.content[0, 0, 1]) < 0.1


def test_chunks_split_long_windows_evenly() -> None:
    rows = np.zeros((8, 256), dtype=np.int64)
    chunks = inside_models._chunks(rows)
    assert [len(c) for c in chunks] == [2, 2, 2, 2]
    assert [len(c) for c in inside_models._chunks(np.zeros((8, 32), dtype=np.int64))] == [8]


def test_the_zeroed_position_table_is_the_table_zeroed() -> None:
    """The forward hook's attention maps equal those of a copy whose position table is 0, and
    differ from the model's own (the ablation changes something)."""
    config = transformers.BertConfig(
        vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=16,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    model.config._attn_implementation = "eager"
    rows = np.random.default_rng(0).integers(1, 30, size=(2, 6))
    loaded = LoadedModel(model, None, "tiny bert", "bert", 1, 16)

    def maps(**run: object) -> np.ndarray:
        return np.stack([np.stack(list(c)) for c in inside_models._attentions(loaded, rows, **run)])

    hooked, own = maps(zero_positions=True), maps()
    with torch.no_grad():
        model.embeddings.position_embeddings.weight.zero_()
    assert np.allclose(hooked, maps(), atol=1e-6)
    assert not np.allclose(hooked, own, atol=1e-3)
