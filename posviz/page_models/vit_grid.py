"""The ViT page's model: what /vit_grid shows of one 2-D patch table, computed once.

:func:`vit_page` takes the table (a :class:`~posviz.tables.PositionTable` with a ``grid``) and
returns a :class:`VitPage`: every patch's similarity to every other, the verdict, the tiled hero
and the caption when tiles are thinned; :meth:`VitPage.patch` draws one patch's tile large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.analysis.headlines import Verdict, vit_verdict
from posviz.analysis.vit import MAX_GRID_SIDE, display_tiles, patch_similarity_grid
from posviz.charts.families import heatmap_figure, patch_grid_figure
from posviz.charts.figure import Figure
from posviz.references import cite
from posviz.tables import PositionTable
from posviz.tables.picker import table_cache_key

__all__ = ["MAX_GRID_SIDE", "VitPage", "no_grid_reason", "table_cache_key", "vit_page"]

INTRO = (
    "A Vision Transformer cuts the image into an *h×w* grid of patches and learns one position "
    "vector per patch (plus one for the CLS token, set aside here). Tile (*r*, *c*) below shows "
    "the cosine similarity of patch (*r*, *c*)'s vector to every patch's vector, drawn as a small "
    f"*h×w* image at that place — the figure of {cite('dosovitskiy_2021')} (Fig. 7 centre). "
    "In trained "
    "ViTs each tile lights up around its own location, with row and column structure: the 1-D "
    "table has learned 2-D geometry."
)
SYNTHETIC_NOTE = (
    "**Synthetic, not a trained model:** half of each row's vector encodes the patch row and "
    "half the column with sines and cosines (MAE's fixed 2-D embedding). No ViT checkpoint is "
    "bundled offline; choose *A model's table* for e.g. google/vit-base-patch16-224."
)
HERO_NOTE = (
    "Tile (r, c): the cosine of patch (r, c)'s position vector with every patch's, drawn at that "
    "patch's place (yellow: alike). A bright cross through each tile's own place means the table "
    "encodes the patch's row and column."
)
SYNTHETIC_NAME = "the synthetic 2-D sin-cos table"


def no_grid_reason(table: PositionTable) -> str | None:
    """Why ``table`` cannot be shown here (no 2-D patch grid), or ``None`` when it can."""
    if table.grid is not None:
        return None
    return (
        f"{table.label} has no 2-D patch grid (kind `{table.kind}`): this view needs a ViT-style "
        "table (config with image_size and patch_size). Use the Learned tables page for 1-D "
        "tables."
    )


@dataclass(frozen=True)
class VitPage:
    """Everything /vit_grid shows for one table."""

    grid: tuple[int, int]  # (h, w)
    similarity: np.ndarray  # (h, w, h, w): cosine of every patch with every patch
    verdict: Verdict
    hero: Figure  # the tiles, every stride-th patch's
    thinned: str  # a caption when only every stride-th tile is drawn, else ""

    def patch(self, row: int, col: int) -> tuple[Figure, str]:
        """Patch (``row``, ``col``)'s similarity to every patch, large, and its sentence."""
        h, w = self.grid
        figure = heatmap_figure(
            self.similarity[row, col],
            name=f"vit_patch_{row}_{col}",
            x_title="patch column",
            y_title="patch row",
            color_title="cosine",
            height=420,
        )
        return (
            figure,
            f"Cosine similarity of patch ({row}, {col}) to every patch of the {h}×{w} grid.",
        )


def vit_page(table: PositionTable, *, name: str) -> VitPage:
    """The page's model of ``table`` (which has a ``grid``: :func:`no_grid_reason`), named
    ``name`` in the verdict. Raises ``ValueError`` for a matrix that does not fit its grid."""
    if table.grid is None:
        raise ValueError(no_grid_reason(table))
    similarity = patch_similarity_grid(table.matrix, table.grid)
    h, w = table.grid
    tiles, stride = display_tiles(similarity)
    thinned = (
        f"{h}×{w} grid: drawing every {stride}ᵗʰ patch's tile ({tiles.shape[0]}×"
        f"{tiles.shape[1]} tiles) to keep the figure light; the export has all of them."
        if stride > 1
        else ""
    )
    return VitPage(
        grid=(h, w),
        similarity=similarity,
        verdict=vit_verdict(similarity, name=name),
        hero=patch_grid_figure(similarity, tiles),
        thinned=thinned,
    )
