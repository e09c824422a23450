"""Tiny randomly initialised transformers models for the tests, built from a config (nothing is
downloaded), and the bundled MiniLM's tokenizer.

    from hf_support import bundled_tokenizer, tiny_bert, tiny_model
"""

from __future__ import annotations


def tiny_model(family: str, head: str = "Model", **config):
    """``<family><head>(<family>Config(**config))`` from transformers, its weights drawn right
    after ``torch.manual_seed(0)`` (the same model every run), in eval mode. For example
    ``tiny_model("ViT", hidden_size=16)`` is ``ViTModel(ViTConfig(hidden_size=16))``."""
    import torch
    import transformers

    torch.manual_seed(0)
    make_config = getattr(transformers, f"{family}Config")
    return getattr(transformers, f"{family}{head}")(make_config(**config)).eval()


def tiny_bert(hidden_size: int):
    """A tiny random BERT with the bundled MiniLM's 30,522-token vocabulary (so
    :func:`bundled_tokenizer` feeds it): 2 layers of 4 heads, a feed-forward twice
    ``hidden_size`` wide, 64 positions."""
    return tiny_model("Bert", vocab_size=30522, hidden_size=hidden_size, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=2 * hidden_size,
                      max_position_embeddings=64)  # fmt: skip


def bundled_tokenizer():
    """The bundled MiniLM's WordPiece tokenizer, read from the repository (offline)."""
    from transformers import AutoTokenizer

    from posviz.tables.bundled import bundled_model_dir

    return AutoTokenizer.from_pretrained(bundled_model_dir(), local_files_only=True)
