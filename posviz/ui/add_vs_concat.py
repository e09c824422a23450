"""The Add-vs-concatenate page's glue: MiniLM's word pieces and tables, cached subspace reports,
and the page's Figures (see :mod:`posviz.analysis.add_concat_views`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.analysis import add_concat_views as views
from posviz.analysis.add_concat import ConcatReport, concat_hypothesis, word_position_cloud
from posviz.analysis.headlines import Verdict, concat_hero_frame, concat_verdict
from posviz.charts.experiments import cloud_chart, evidence_chart, magnitude_chart
from posviz.charts.figure import Figure
from posviz.governor import heavy_work
from posviz.ui.cache import cached_data
from posviz.ui.model_handles import bundled_arrays, bundled_tokenizer, bundled_word_axes

#: the tables of the subspace report, by column title: MiniLM's, a sinusoid, a random control.
REPORT_TABLES = {
    "MiniLM's learned position table": "learned",
    "sinusoid of the same width (384)": "sinusoid",
    "random Gaussian (control)": "random",
}


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


def cloud_figure(
    word_vector: np.ndarray, table: np.ndarray, *, view: str, dims: tuple[int, int], piece: str
) -> Figure:
    """The word moved by each position (``WE + PE[p]``), as a chart with its export."""
    cloud = word_position_cloud(word_vector, table, view=view, dims=dims)
    axes = ("PC 1", "PC 2") if view == "pca" else (f"dimension {dims[0]}", f"dimension {dims[1]}")
    title = f"{piece!r} + PE[p], p = 0…{len(table) - 1}"  # a Vega title: plain text
    chart = cloud_chart(cloud, title=title, x_title=axes[0], y_title=axes[1])
    return Figure(chart, cloud[["x", "y"]].to_numpy(), "word_plus_position")


def magnitude_figure(word_vector: np.ndarray, table: np.ndarray) -> tuple[Figure, float, float]:
    """Per-dimension spread of PE and WE as a Figure, with the two medians."""
    result = views.magnitudes(table, bundled_arrays()[0], word_vector)
    figure = Figure(magnitude_chart(result.frame), result.data, "magnitudes")
    return figure, result.pe_median, result.we_median


@cached_data()
def concat_result(table: str, n_positions: int, fraction: float) -> ConcatReport:
    """``concat_hypothesis`` of one position table (``"learned"``, ``"sinusoid"`` or
    ``"random"``) against MiniLM's word embeddings."""
    words, learned = bundled_arrays()
    matrix = views.position_table(table, n_positions, learned=learned)
    axes = bundled_word_axes()
    with heavy_work(renice=False):
        return concat_hypothesis(matrix, words, fraction=fraction, word_axes=axes)


def concat_report(table: str, n_positions: int, fraction: float) -> pd.DataFrame:
    """:func:`concat_result` as a two-column frame (quantity, value)."""
    return concat_result(table, n_positions, fraction).frame()


def concat_hero(n_positions: int, fraction: float) -> tuple[Verdict, Figure]:
    """The page's verdict (MiniLM's table) and its hero: each table's share inside the words'
    subspace beside random subspaces of that size."""
    learned = concat_result("learned", n_positions, fraction)
    sinusoid = concat_result("sinusoid", n_positions, fraction)
    verdict = concat_verdict(learned, name="MiniLM", n_positions=n_positions)
    frame = concat_hero_frame([("MiniLM", learned), ("sinusoid", sinusoid)])
    chart = evidence_chart(
        frame,
        x_title="share of position variance inside the words' principal subspace",
        title="Where does the position signal lie?",
        subtitle=f"inside the words' {learned.k_we} main directions (of {learned.d_model})?",
        percent=True,
    )
    return verdict, Figure(chart, frame[["mean", "low", "high"]], "position_share_in_words")


def concat_reports(n_positions: int, fraction: float) -> pd.DataFrame:
    """The subspace report of MiniLM's table beside the sinusoid and a random-table control."""
    frames = {
        name: concat_report(kind, n_positions, fraction) for name, kind in REPORT_TABLES.items()
    }
    return views.side_by_side(frames)
