"""Permutation equivariance of self-attention, with and without position embeddings.

The Stack Overflow answer to "The essence of learnable positional embedding?": self-attention is
permutation equivariant, so without positions "I do like coding" and "Do I like coding" get the
same vectors, only in another order. The cnblogs post "Transformer Position Encoding" uses "Tom bit
a dog" / "A dog bit Tom". Here the claim is run on a real model: the sentence's real token
embeddings (word + token-type, then the embedding LayerNorm, as in ``BertEmbeddings.forward`` of
``transformers/models/bert/modeling_bert.py``) go through the model's first self-attention block
(``encoder.layer[0].attention``: attention, output projection, residual, LayerNorm), once without
and once with the position embeddings added.

Without positions ``out_B[k] == out_A[π(k)]`` up to float rounding (~1e-6); with positions they
differ.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from posviz.models import additive_position_modules


@dataclass(frozen=True)
class PermutationResult:
    """Outputs of one attention block for sentence A and its reordering B.

    Attributes:
        tokens_a, tokens_b: word pieces as the model sees them (with [CLS]/[SEP] if used).
        permutation: ``(n_tokens,)`` with ``tokens_b[k] == tokens_a[permutation[k]]``.
        max_diff_without: ``max |out_B − out_A[π]|``, the largest absolute element of the
            difference (not a norm), without position embeddings (≈ 1e-6).
        max_diff_with: the same with position embeddings (order now matters).
        per_token: one row per token of B: its positions in A and B and the Euclidean norm
            ``‖out_B[k] − out_A[π(k)]‖₂`` of the difference of its two outputs, without and with
            positions.
        pooled_diff_without, pooled_diff_with: ``‖mean_k out_B − mean_k out_A‖₂`` of the
            mean-pooled sentence vectors.
        rounding_scale: float32 rounding at the outputs' size, ``ε₃₂ · max |out_A|`` (ε₃₂ =
            2⁻²³, IEEE 754 single precision): the control for ``max_diff_without`` (the model
            computes in float32, so "equal" means within a few of these).
        similarity_without, similarity_with: ``(n_b, n_a)`` cosine similarity of outputs.
    """

    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    permutation: np.ndarray
    max_diff_without: float
    max_diff_with: float
    per_token: pd.DataFrame
    pooled_diff_without: float
    pooled_diff_with: float
    similarity_without: np.ndarray
    similarity_with: np.ndarray
    rounding_scale: float = 0.0


def _listed(tokens: list[Any], limit: int = 8) -> str:
    """``'dog', 'cat'`` (at most ``limit``, then how many more); ``none`` when empty."""
    if not tokens:
        return "none"
    shown = ", ".join(repr(str(t)) for t in tokens[:limit])
    return shown + (f" and {len(tokens) - limit} more" if len(tokens) > limit else "")


def match_permutation(tokens_a: list[Any], tokens_b: list[Any]) -> np.ndarray:
    """The permutation ``π`` with ``tokens_b[k] == tokens_a[π[k]]`` (repeats matched in order).

    Pass word pieces (strings), so that an error names words rather than token ids.

    Raises:
        ValueError: the two token lists are not the same multiset (names the differing tokens).
    """
    slots: dict[Any, list[int]] = defaultdict(list)
    for index, token in enumerate(tokens_a):
        slots[token].append(index)
    permutation, missing = [], []
    for token in tokens_b:
        if slots[token]:
            permutation.append(slots[token].pop(0))
        else:
            missing.append(token)
    extra = [token for token, left in slots.items() for _ in left]
    if missing or extra:
        raise ValueError(
            "Sentence B is not a reordering of sentence A's word pieces: "
            f"only in B: {_listed(missing)}; only in A: {_listed(extra)}. Use the same words "
            "(same case for a cased model), just in another order."
        )
    return np.asarray(permutation, dtype=np.int64)


def tokenize_pair(
    tokenizer: Any, sentence_a: str, sentence_b: str, *, special_tokens: bool = True
) -> tuple[list[int], list[int]]:
    """Token ids of both sentences, checked: non-empty, at least two pieces, same multiset."""
    ids = []
    for label, sentence in (("A", sentence_a), ("B", sentence_b)):
        if not sentence.strip():
            raise ValueError(f"Sentence {label} is empty; type a sentence of two words or more.")
        encoded = tokenizer(sentence, add_special_tokens=special_tokens)["input_ids"]
        words = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        if len(words) < 2:
            raise ValueError(
                f"Sentence {label} ({sentence.strip()[:40]!r}) is a single token; a permutation "
                "needs at least two tokens to reorder."
            )
        ids.append(list(encoded))
    return ids[0], ids[1]


def embed_tokens(model: Any, input_ids: Any, *, with_positions: bool) -> Any:
    """BERT's input embeddings, optionally without the position term.

    ``LayerNorm(word[id] + token_type[0] (+ position[p]))`` as in ``BertEmbeddings.forward``
    (transformers ``modeling_bert.py``); dropout is off in eval mode. ``input_ids``: ``(1, n)``;
    returns ``(1, n, d_model)``.
    """
    import torch

    word, position = additive_position_modules(model)
    embeddings = model.embeddings
    x = word(input_ids)
    token_type = getattr(embeddings, "token_type_embeddings", None)
    if token_type is not None:
        x = x + token_type(torch.zeros_like(input_ids))
    if with_positions:
        x = x + position(torch.arange(input_ids.shape[1]).unsqueeze(0))
    return embeddings.LayerNorm(x)


def attention_block(model: Any, hidden: Any, *, layers: int | None = None) -> Any:
    """The first self-attention block (``layers=None``) or the first ``layers`` encoder layers.

    ``hidden``: ``(1, n, d_model)``; no attention mask (every token sees every token).
    """
    blocks = model.encoder.layer
    if layers is None:
        out = blocks[0].attention(hidden)
        return out[0] if isinstance(out, tuple) else out
    if not 1 <= layers <= len(blocks):
        raise ValueError(f"layers={layers} must be between 1 and {len(blocks)}.")
    for block in blocks[:layers]:
        out = block(hidden)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


def _cosine(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    return b @ a.T


def permutation_test(
    model: Any,
    tokenizer: Any,
    sentence_a: str,
    sentence_b: str,
    *,
    layers: int | None = None,
    special_tokens: bool = True,
) -> PermutationResult:
    """Run both sentences through a real attention block with and without position embeddings.

    Args:
        model: a BERT-style ``transformers`` model in eval mode (``embeddings``, ``encoder.layer``).
        tokenizer: its tokenizer.
        sentence_a, sentence_b: B must reorder A's word pieces exactly.
        layers: ``None`` for the first self-attention block only, else the first ``layers`` layers.
        special_tokens: add [CLS]/[SEP] as the model does (they stay at both ends in A and B).

    Raises:
        ValueError: empty or one-token sentence, B not a reordering of A, model without an additive
            position table.
    """
    import torch

    ids_a, ids_b = tokenize_pair(tokenizer, sentence_a, sentence_b, special_tokens=special_tokens)
    tokens_a = tuple(tokenizer.convert_ids_to_tokens(ids_a))
    tokens_b = tuple(tokenizer.convert_ids_to_tokens(ids_b))
    # Matched on the word pieces (one per id), so a mismatch names words, not token ids.
    permutation = match_permutation(list(tokens_a), list(tokens_b))
    outputs: dict[bool, tuple[np.ndarray, np.ndarray]] = {}
    with torch.inference_mode():
        for with_positions in (False, True):
            pair = []
            for ids in (ids_a, ids_b):
                hidden = embed_tokens(model, torch.tensor([ids]), with_positions=with_positions)
                pair.append(attention_block(model, hidden, layers=layers)[0].double().numpy())
            outputs[with_positions] = (pair[0], pair[1])
    diffs = {flag: out_b - out_a[permutation] for flag, (out_a, out_b) in outputs.items()}
    per_token = pd.DataFrame(
        {
            "token": tokens_b,
            "position_a": permutation,
            "position_b": np.arange(len(ids_b)),
            "distance_without_positions": np.linalg.norm(diffs[False], axis=1),
            "distance_with_positions": np.linalg.norm(diffs[True], axis=1),
        }
    )
    pooled = {
        flag: float(np.linalg.norm(b.mean(0) - a.mean(0))) for flag, (a, b) in outputs.items()
    }
    return PermutationResult(
        tokens_a=tokens_a,
        tokens_b=tokens_b,
        permutation=permutation,
        max_diff_without=float(np.abs(diffs[False]).max()),
        max_diff_with=float(np.abs(diffs[True]).max()),
        rounding_scale=float(np.finfo(np.float32).eps * np.abs(outputs[False][0]).max()),
        per_token=per_token,
        pooled_diff_without=pooled[False],
        pooled_diff_with=pooled[True],
        similarity_without=_cosine(outputs[False][1], outputs[False][0]),
        similarity_with=_cosine(outputs[True][1], outputs[True][0]),
    )
