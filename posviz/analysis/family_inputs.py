"""Inputs of the family pages that are built from a table: the Compare page's learned table and
the ViT page's synthetic 2-D grid (both labelled for what they are)."""

from __future__ import annotations

import numpy as np

from posviz.analysis.comparison import LearnedTable
from posviz.analysis.families import nearest_margin
from posviz.analysis.vit import sincos_2d_table
from posviz.tables import PositionTable


def learned_comparison_table(matrix: np.ndarray, *, n_items: int, label: str) -> LearnedTable:
    """``matrix`` ``(n_positions, d_model)`` with its nearest-row margin over its first
    ``min(n_items, n_positions)`` rows (:func:`posviz.analysis.families.nearest_margin`), as
    :func:`posviz.analysis.comparison.compare_families` takes a learned table.

    Raises:
        ValueError: fewer than 2 rows to compare, or more than the margin allows.
    """
    rows = min(n_items, np.shape(matrix)[0])
    return LearnedTable(label=label, matrix=matrix, margin=nearest_margin(matrix[:rows]))


def synthetic_vit_table(h: int, w: int, d_model: int) -> PositionTable:
    """A clearly labelled synthetic 2-D sin-cos table on an ``h×w`` grid (no checkpoint needed).

    Raises:
        ValueError: a grid or width :func:`posviz.analysis.vit.sincos_2d_table` refuses.
    """
    return PositionTable(
        matrix=sincos_2d_table(h, w, d_model),
        source=f"synthetic 2-D sin-cos {h}×{w}×{d_model}",
        kind="vit-2d",
        grid=(h, w),
        notes=(
            "synthetic: rows encode (row, column) with sin/cos, as MAE's fixed 2-D embedding; "
            "not a trained ViT",
        ),
    )
