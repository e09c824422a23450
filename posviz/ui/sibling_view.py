"""The sibling-diff page's model call, cached, and its sections laid out.

:func:`sibling_page_for` pairs :func:`posviz.analysis.sibling.sibling_diff` (numbers, verdict,
captions) with :mod:`posviz.charts.sibling` (the hero and the two tables side by side), computed
once per pair of tables and cached by their content keys. Nothing is computed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from posviz.analysis.sibling import HERO_SERIES, ONLY_SCALED, SiblingDiff, sibling_diff
from posviz.charts.figure import Figure
from posviz.charts.sibling import sibling_hero_figure, side_by_side_figures
from posviz.tables import PositionTable
from posviz.tables.bundled import BUNDLED_MODEL_ID
from posviz.tables.picker import table_cache_key
from posviz.ui.answer import HERO_HEIGHT
from posviz.ui.cache import cached_data
from posviz.ui.display import show_charts_side_by_side


@dataclass(frozen=True)
class SiblingPage:
    """What the page shows: the diff (verdict, numbers, captions) and its three figures."""

    diff: SiblingDiff
    hero: Figure
    tables: tuple[Figure, Figure]


def sibling_name(table: PositionTable) -> str:
    """A table named by what it is: the bundled one by its model, packaged ones by theirs."""
    if table.source == "bundled":
        return BUNDLED_MODEL_ID.split("/")[-1]
    if table.source.startswith("bundled:"):
        return table.source.removeprefix("bundled:")
    return table.label


@cached_data()
def _sibling_page(
    key_a: str, key_b: str, name_a: str, name_b: str, _a: np.ndarray, _b: np.ndarray
) -> SiblingPage:
    diff = sibling_diff(_a, _b, names=(name_a, name_b))
    hero = sibling_hero_figure(
        diff.rows,
        series=HERO_SERIES,
        seams=diff.seams,
        seam_labels=diff.seam_labels,
        threshold=ONLY_SCALED,
        title="How much did each row change?",
        height=HERO_HEIGHT,
    )
    stems = tuple(re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60] for name in (name_a, name_b))
    left, right = side_by_side_figures(
        np.asarray(_a), np.asarray(_b), names=(name_a, name_b), seams=diff.seams
    )
    left = Figure(left.chart, left.data, f"{stems[0]}_table")
    right = Figure(right.chart, right.data, f"{stems[1]}_table")
    return SiblingPage(diff, hero, (left, right))


def sibling_page_for(first: PositionTable, second: PositionTable) -> SiblingPage:
    """The page's model for tables ``first`` (A) and ``second`` (B), cached by their contents.

    Raises:
        ValueError: the tables' shapes differ.
    """
    return _sibling_page(
        table_cache_key(first),
        table_cache_key(second),
        sibling_name(first),
        sibling_name(second),
        first.matrix,
        second.matrix,
    )


def show_side_by_side(page: SiblingPage) -> None:
    """The two tables' heatmaps, one beside the other, with their Export menus."""
    show_charts_side_by_side(*zip(page.tables, ("sib_table_a", "sib_table_b"), strict=True))
