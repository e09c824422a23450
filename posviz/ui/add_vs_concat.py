"""The Add-vs-concatenate page's glue: MiniLM's word pieces and tables, cached subspace reports,
and the page's hero (see :mod:`posviz.analysis.add_concat_views` and :mod:`posviz.figures`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz import figures
from posviz.analysis import add_concat_views as views
from posviz.analysis.add_concat import ConcatReport, concat_hypothesis
from posviz.analysis.headlines import Verdict
from posviz.charts.figure import Figure
from posviz.governor import heavy_work
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
    return views.concat_inputs(token_id, source, n_positions, words=words, learned=learned)


def concat_sizes(word_vector: np.ndarray, table: np.ndarray) -> dict[str, float]:
    """:func:`posviz.analysis.add_concat_views.concat_sizes` against MiniLM's word table."""
    return views.concat_sizes(word_vector, table, bundled_arrays()[0])


def magnitude_figure(word_vector: np.ndarray, table: np.ndarray) -> tuple[Figure, float, float]:
    """:func:`posviz.figures.magnitude_figure` against MiniLM's word table."""
    return figures.magnitude_figure(word_vector, table, words=bundled_arrays()[0])


@cached_data()
def concat_result(table: str, n_positions: int, fraction: float) -> ConcatReport:
    """``concat_hypothesis`` of one position table (``"learned"``, ``"sinusoid"`` or
    ``"random"``) against MiniLM's word embeddings."""
    words, learned = bundled_arrays()
    matrix = views.position_table(table, n_positions, learned=learned)
    axes = bundled_word_axes()
    with heavy_work(renice=False):
        return concat_hypothesis(matrix, words, fraction=fraction, word_axes=axes)


def concat_hero(n_positions: int, fraction: float) -> tuple[Verdict, Figure]:
    """:func:`posviz.figures.concat_hero` of MiniLM's table and the sinusoid, cached."""
    learned = concat_result("learned", n_positions, fraction)
    sinusoid = concat_result("sinusoid", n_positions, fraction)
    return figures.concat_hero(learned, sinusoid, n_positions=n_positions)


def concat_reports(n_positions: int, fraction: float) -> pd.DataFrame:
    """The subspace report of MiniLM's table beside the sinusoid and a random-table control."""
    return views.side_by_side(
        {
            name: concat_result(kind, n_positions, fraction).frame()
            for name, kind in views.REPORT_TABLES.items()
        }
    )
