"""ViT position tables on their 2-D patch grid.

The figure users of google-research/vision_transformer ask how to make (Dosovitskiy et al. 2021,
Fig. 7 centre): for each patch ``(r, c)`` of an ``h×w`` grid, the cosine similarity of its position
embedding to every other patch's, shown as an ``h×w`` tile placed at ``(r, c)``.
"""

from __future__ import annotations

import numpy as np

from posviz.analysis.stats import cosine_similarity_matrix

MAX_GRID_SIDE = 64
MAX_TILES_SIDE = 16  # at most 16×16 tiles are drawn (each tile is the full h×w grid)


def _check_grid(grid: tuple[int, int], n_rows: int) -> tuple[int, int]:
    if grid is None or len(grid) != 2:
        raise ValueError("this table has no 2-D patch grid; pick a ViT table (grid = (h, w)).")
    h, w = (int(g) for g in grid)
    if not (1 <= h <= MAX_GRID_SIDE and 1 <= w <= MAX_GRID_SIDE):
        raise ValueError(f"grid {h}×{w} is out of range; each side must be 1 … {MAX_GRID_SIDE}.")
    if h * w != n_rows:
        raise ValueError(
            f"grid {h}×{w} = {h * w} patches but the table has {n_rows} rows; set the CLS row "
            "aside first (posviz.load_table does) or give the right grid."
        )
    return h, w


def patch_similarity_grid(matrix: np.ndarray, grid: tuple[int, int]) -> np.ndarray:
    """Cosine similarity of every patch's position embedding to every other patch's.

    Args:
        matrix: ``(h·w, d_model)``, rows in row-major patch order (CLS removed).
        grid: ``(h, w)``.
    Returns:
        ``(h, w, h, w)`` float64: ``S[r, c, r2, c2] = cos(PE[r·w + c], PE[r2·w + c2])``.
    """
    table = np.asarray(matrix)
    h, w = _check_grid(grid, table.shape[0] if table.ndim == 2 else -1)
    return cosine_similarity_matrix(table).reshape(h, w, h, w)


def _sincos_1d(positions: np.ndarray, dim: int, base: float) -> np.ndarray:
    omega = 1.0 / base ** (np.arange(dim // 2, dtype=np.float64) / (dim // 2))
    angles = np.outer(positions, omega)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def sincos_2d_table(h: int, w: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """A synthetic 2-D sin-cos position table: first half of the width encodes the row, second the
    column, each with ``[sin(pω_i), cos(pω_i)]``, ``ω_i = base^(−i/(d/4))``.

    The fixed 2-D encoding of MAE (He et al. 2022, ``get_2d_sincos_pos_embed``, which puts the
    column half first) and of "simple ViT" (Beyer et al. 2022); a stand-in for a learned ViT table.

    Returns:
        ``(h·w, d_model)`` float64, rows in row-major patch order.
    """
    _check_grid((h, w), h * w)
    if d_model % 4 or not 4 <= d_model <= 4096:
        raise ValueError(f"d_model={d_model} must be a multiple of 4 in 4 … 4096.")
    rows, cols = np.divmod(np.arange(h * w), w)
    return np.concatenate(
        [_sincos_1d(rows, d_model // 2, base), _sincos_1d(cols, d_model // 2, base)], axis=1
    )


def display_tiles(
    similarity: np.ndarray, *, max_side: int = MAX_TILES_SIDE
) -> tuple[np.ndarray, int]:
    """Every ``stride``-th patch's tile, so at most ``max_side`` tiles per side are drawn.

    Args:
        similarity: ``(h, w, h, w)`` from :func:`patch_similarity_grid`.
    Returns:
        ``(tiles (⌈h/stride⌉, ⌈w/stride⌉, h, w), stride)``, ``stride = ⌈max(h, w) / max_side⌉``.
    """
    h, w = similarity.shape[:2]
    stride = max(1, -(-max(h, w) // max_side))
    return similarity[::stride, ::stride], stride
