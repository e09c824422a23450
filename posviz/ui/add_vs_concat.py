"""The Add-vs-concatenate page's data: MiniLM's word pieces and tables, the cached subspace
reports, and the cached word view (:mod:`posviz.page_models.add_vs_concat`)."""

from __future__ import annotations

import numpy as np

from posviz.analysis import add_concat_numbers as numbers
from posviz.analysis.add_concat import ConcatReport, concat_hypothesis
from posviz.governor import heavy_work
from posviz.page_models import add_vs_concat as model
from posviz.ui.cache import cached_data
from posviz.ui.model_handles import bundled_arrays, bundled_tokenizer, bundled_word_axes


def word_pieces(word: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """MiniLM's WordPiece pieces of ``word`` and their ids (no special tokens)."""
    encoding = bundled_tokenizer().encode(word, add_special_tokens=False)
    return tuple(encoding.tokens), tuple(encoding.ids)


def concat_inputs(token_id: int, source: str, n_positions: int) -> tuple[np.ndarray, np.ndarray]:
    """``(word vector (384,), position table (n, 384))``: MiniLM's word row and its learned
    position rows ``0…n−1`` (``source="learned"``) or the 384-wide sinusoid."""
    words, learned = bundled_arrays()
    return numbers.concat_inputs(token_id, source, n_positions, words=words, learned=learned)


@cached_data(max_entries=32)
def word_view(
    token_id: int, source: str, n_positions: int, *, piece: str, view: str, dims: tuple[int, int]
) -> model.WordView:
    """:func:`posviz.page_models.add_vs_concat.word_view` of one word piece and position table
    (``source`` ``"learned"`` or ``"sinusoid"``) against MiniLM's word table, cached."""
    word_vector, table = concat_inputs(token_id, source, n_positions)
    words = bundled_arrays()[0]
    return model.word_view(word_vector, table, words, piece=piece, view=view, dims=dims)


@cached_data()
def concat_result(table: str, n_positions: int, fraction: float) -> ConcatReport:
    """``concat_hypothesis`` of one position table (``"learned"``, ``"sinusoid"`` or
    ``"random"``) against MiniLM's word embeddings."""
    words, learned = bundled_arrays()
    matrix = numbers.position_table(table, n_positions, learned=learned)
    axes = bundled_word_axes()
    with heavy_work(renice=False):
        return concat_hypothesis(matrix, words, fraction=fraction, word_axes=axes)


def concat_results(n_positions: int, fraction: float, kinds: tuple[str, ...]) -> dict:
    """:func:`concat_result` of each table kind in ``kinds``, by kind."""
    return {kind: concat_result(kind, n_positions, fraction) for kind in kinds}
