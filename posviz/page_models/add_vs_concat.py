"""The Add-vs-concatenate page's model: what /add_vs_concat shows, computed once per input.

Two builders, one per input the page reads through :mod:`posviz.ui`: :func:`concat_page` takes
the subspace reports of MiniLM's table, the sinusoid and the random control
(:func:`posviz.analysis.add_concat.concat_hypothesis`) and returns the verdict, the hero, the
report table and how to read it; :func:`word_view` takes one word's vector, the position table
and MiniLM's word table and returns the cloud, the magnitudes and the captions quoting sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz import figures
from posviz.analysis import add_concat_numbers as numbers
from posviz.analysis.add_concat import ConcatReport
from posviz.analysis.headlines import Verdict
from posviz.charts.figure import Figure
from posviz.references import cite

__all__ = ["REPORT_TABLES", "ConcatPage", "WordView", "concat_page", "concat_report", "word_view"]

LEARNED, SINUSOID = "MiniLM's learned position table", "sinusoid of the same width (384)"
VIEWS = {"first two dimensions (the cnblogs post's picture)": "dims", "PCA of the cloud": "pca"}
REPORT_TABLES = numbers.REPORT_TABLES
INTRO = (
    'A transformer *adds* the position vector to the word vector. The cnblogs post "Transformer '
    'Position Encoding" draws the sum as a '
    "cloud of points around the word; tensor2tensor issue #1591 conjectures that the sum is "
    '"effectively a '
    'concatenation": position uses a few directions, words use the others. Here both are checked '
    "on the bundled MiniLM's real word-embedding table (30 522 × 384) and its learned position "
    "table (512 × 384), next to a sinusoid of the same width."
)
HERO_NOTE = (
    "Dot: the share of the table's position variance inside the words' principal subspace; grey: "
    "the same share for random subspaces of that size (bar: ± one standard deviation over 50 of "
    "them). Far below grey: positions and words use different directions, as a concatenation "
    "would."
)
CLOUD_NOTE = (
    "Each dot is the word's vector plus one position's vector (colour = position); the red "
    "cross is the word alone. With the sinusoid, a sin/cos pair of dimensions puts the dots on "
    "a unit circle around the word (the cnblogs post's clock hand). MiniLM's learned "
    "positions make a "
    "small cloud instead: they are far smaller than 1 in every dimension."
)
T2T = (
    "For `d_model = 512` and 128 positions, the values of late dimensions at positions 0, 64 and "
    "127. tensor2tensor issue #1591 argues these barely move, so words can use them undisturbed."
)
T2T_NUMBER_COLUMNS = ("PE[0]", "PE[64]", "PE[127]", "max change")
SOURCES = "**Sources:** " + "; ".join(cite(k) for k in ("t2t_1591", "cnblogs_2020"))


@dataclass(frozen=True)
class ConcatPage:
    """The subspace answer: the verdict and the hero (MiniLM's table and the sinusoid)."""

    verdict: Verdict
    hero: Figure


def concat_page(reports: dict[str, ConcatReport], *, n_positions: int) -> ConcatPage:
    """The page's answer from the subspace ``reports`` of ``"learned"`` and ``"sinusoid"`` over
    positions ``0 … n_positions − 1``."""
    verdict, hero = figures.concat_hero(
        reports["learned"], reports["sinusoid"], n_positions=n_positions
    )
    return ConcatPage(verdict, hero)


def concat_report(reports: dict[str, ConcatReport], *, fraction: float) -> tuple[pd.DataFrame, str]:
    """The reports of the three :data:`REPORT_TABLES` side by side, and how to read them."""
    report = numbers.side_by_side(
        {name: reports[kind].frame() for name, kind in REPORT_TABLES.items()}
    )
    how_to_read = (
        "How to read this: the principal subspace of a table is the fewest directions holding "
        f"{fraction:.0%} of its variance. If position and word information were simply "
        "concatenated, PE's variance would lie *outside* the words' subspace (share far below "
        "the share inside random subspaces of the same size, mean ± std over 50 of them) and the "
        "principal angles would be larger than between random subspaces (in high dimension those "
        "are already near 90°). A random table lands on the baselines. Computed over positions "
        "0…n−1 and all 30 522 word rows."
    )
    return report, how_to_read


@dataclass(frozen=True)
class WordView:
    """One word moved by every position: the cloud, the sizes, the magnitudes."""

    sizes: str  # the word's and positions' norms (after "Token <piece> = id <id>; ")
    cloud: Figure
    magnitudes: Figure  # per-dimension spread of PE and of the words
    magnitudes_text: str
    t2t_caption: str  # tensor2tensor #1591's table, with the words' scale
    t2t_table: pd.DataFrame


def word_view(
    word_vector: np.ndarray,
    table: np.ndarray,
    words: np.ndarray,
    *,
    piece: str,
    view: str,
    dims: tuple[int, int],
) -> WordView:
    """The page's model of one word piece's ``word_vector`` with the position ``table``, against
    MiniLM's ``words`` table, its cloud drawn as ``view`` (``"dims"`` or ``"pca"``)."""
    sizes = numbers.concat_sizes(word_vector, table, words)
    magnitudes, pe_median, we_median = figures.magnitude_figure(word_vector, table, words=words)
    return WordView(
        sizes=(
            f"‖WE‖₂ = {sizes['word_norm']:.3f}; "
            f"mean ‖PE[p]‖₂ over positions = {sizes['mean_position_norm']:.3f}."
        ),
        cloud=figures.cloud_figure(word_vector, table, view=view, dims=dims, piece=piece),
        magnitudes=magnitudes,
        magnitudes_text=(
            f"PE's spread over positions vs WE's spread over the vocabulary, per dimension "
            f"(median: PE {pe_median:.3f}, WE {we_median:.3f}). Where PE's line is low, adding "
            "the position barely changes the word there."
        ),
        t2t_caption=(
            "interleaved: sin on even, cos on odd dimensions (Vaswani et al. 2017); "
            "tensor2tensor: all sines then all cosines with timescales from 1 to 10⁴ "
            "(`get_timing_signal_1d`). For scale: MiniLM's word embeddings vary by "
            f"~{sizes['word_std_median']:.3f} (std) per dimension; tensor2tensor issue #1591 "
            "quotes BERT's as roughly within [−2, 2]."
        ),
        t2t_table=numbers.last_dimensions_frame(),
    )
