"""The Learned page's model: what /learned shows of a loaded position table, computed once.

:func:`learned_page` takes the table (a :class:`~posviz.tables.PositionTable`) and returns a
:class:`LearnedPage`: the verdict, the similarity of the first positions, the seam (if any), the
first two principal components and the position the hero starts at. :meth:`LearnedPage.hero_at`
draws the linked hero (similarity matrix and PCA path) at the page's one position from those
numbers, so moving the position computes nothing again.
"""

from __future__ import annotations

from dataclasses import dataclass

from posviz import figures
from posviz.analysis.headlines import Verdict, learned_verdict
from posviz.charts.heroes import LinkedHero
from posviz.tables import PositionTable
from posviz.tables.picker import comparison_default, table_cache_key

__all__ = [
    "HERO_NOTE",
    "INTRO",
    "LearnedPage",
    "comparison_default",
    "learned_page",
    "table_cache_key",
    "table_name",
]

INTRO = (
    "BERT, GPT-2, RoBERTa and friends do not compute positions from a formula: they *learn* a "
    "table, one vector per position, added to the token embedding. Here is that table from a real "
    "model — MiniLM-L6 ships with posviz and works offline; any hub model with a learned table is "
    "read in seconds (only its header and this one tensor are fetched). Compare it with a sinusoid "
    "of the same width to see what training found on its own."
)
HERO_NOTE = (
    "Red: the two positions point the same way; blue: opposite ways. The path: the positions on "
    "the table's first two principal components, in order (colour = position). Point at a row of "
    "the matrix or a dot on the path, or press ▶ play: the crossed row and column and the ringed "
    "dot follow the same position. The Position slider sets where they start, and the link keeps "
    "it."
)


def table_name(table: PositionTable) -> str:
    """How a verdict names a table: the bundled one by its model, others by their label."""
    return "MiniLM-L6 (bundled)" if table.source == "bundled" else table.label


@dataclass(frozen=True)
class LearnedPage:
    """Everything /learned shows above its views for one table."""

    n: int  # positions in the table
    verdict: Verdict
    summary: figures.TableSummary  # similarity of the first positions, seam, PCA

    @property
    def start_position(self) -> int:
        """Where the hero starts when the link names no position: the seam's end, else 0."""
        edges = self.summary.edges
        return edges[1] if edges else 0

    def hero_at(self, position: int) -> LinkedHero:
        """The similarity matrix and the PCA path linked at ``position`` (clamped to the table)."""
        return figures.learned_linked_hero(
            self.summary, n_positions=self.n, current=min(max(int(position), 0), self.n - 1)
        )


def learned_page(table: PositionTable) -> LearnedPage:
    """The page's model of ``table``: its verdict
    (:func:`~posviz.analysis.headlines.learned_verdict`) and the numbers its hero draws
    (:func:`posviz.figures.table_summary`), each computed once."""
    matrix = table.matrix
    return LearnedPage(
        n=len(matrix),
        verdict=learned_verdict(matrix, name=table_name(table)),
        summary=figures.table_summary(matrix),
    )
