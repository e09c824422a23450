"""posviz.models.zeroed_position_copy: the ablation copy, and the shared model left untouched."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.models import additive_position_modules, zeroed_position_copy


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_zeroed_copy_has_no_positions_and_leaves_the_model_alone(family):
    import torch
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    torch.manual_seed(0)
    if family == "bert":
        model = BertModel(BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32,
                                     max_position_embeddings=24))  # fmt: skip
    else:
        model = GPT2Model(GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2, n_positions=24))
    model.eval()
    before = additive_position_modules(model)[1].weight.detach().clone()
    clone = zeroed_position_copy(model)
    word, position = additive_position_modules(clone)
    assert torch.count_nonzero(position.weight) == 0
    assert torch.equal(additive_position_modules(model)[1].weight, before)  # the shared model
    assert torch.equal(word.weight, additive_position_modules(model)[0].weight)  # words intact
    ids = torch.tensor([[3, 5, 7, 9]])
    with torch.no_grad():
        states = clone(input_ids=ids).last_hidden_state[0].numpy()  # (4, 16)
        swapped = clone(input_ids=ids[:, [1, 0, 2, 3]]).last_hidden_state[0].numpy()
    if family == "bert":  # no positions, no mask: order-blind, swapped tokens swap their states
        np.testing.assert_allclose(swapped[[1, 0, 2, 3]], states, atol=1e-5)


def test_a_model_without_a_table_is_refused_before_copying():
    from transformers import LlamaConfig, LlamaModel

    config = LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, vocab_size=50)  # fmt: skip
    with pytest.raises(ValueError, match="table added to the words"):
        zeroed_position_copy(LlamaModel(config))
