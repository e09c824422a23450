"""A ViT patch grid's row/column cross, and the bicubic resize a smaller image gets.

The ViT paper (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words",
https://arxiv.org/abs/2010.11929, Fig. 7 centre) shows each patch's position embedding most like
the patches of its own row and column: a cross. :func:`grid_cross` measures it on a real grid —
DINOv2 ViT-S/14 (Oquab et al. 2023, "DINOv2: Learning Robust Visual Features without
Supervision", https://arxiv.org/abs/2304.07193) stores 37 × 37 rows for a 518-px input — in two
ways that a grid without a cross fails: same-row and same-column pairs against all pairs, and, at
the *same* grid distance, pairs along an axis against pairs off both axes (so nearness alone
cannot make the cross). A row-shuffled grid is the control.

:func:`cubic_resize` replays what DINOv2's exported graph does for a 224-px image (16 × 16
patches): ONNX ``Resize`` with ``mode="cubic"``, ``cubic_coeff_a=−0.75``,
``coordinate_transformation_mode="half_pixel"``, ``exclude_outside=0`` (ONNX operator spec,
https://onnx.ai/onnx/operators/onnx__Resize.html): the Keys cubic convolution kernel with
``a = −0.75`` (Keys 1981), source coordinate ``x_in = (x_out + 0.5) · in/out − 0.5``, and edge
samples repeated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.analysis.stats import cosine_similarity_matrix

CUBIC_A = -0.75
#: grid distances at which along-axis and off-axis pairs are compared
MATCHED_DISTANCES = tuple(range(2, 16))


def _grid_indices(grid: tuple[int, int], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    h, w = (int(g) for g in grid)
    if h < 2 or w < 2 or h * w != n_rows:
        raise ValueError(f"a {h}×{w} grid does not hold {n_rows} rows; pick a ViT patch grid.")
    return np.divmod(np.arange(n_rows), w)


@dataclass(frozen=True)
class GridCross:
    same_row: float  # mean cosine of two different patches in one grid row
    same_column: float
    all_pairs: float  # every pair of different patches
    distances: np.ndarray  # whole grid distances 1 … (rounded Euclidean)
    by_distance: np.ndarray  # mean cosine at each of those distances
    on_axis: np.ndarray  # per MATCHED_DISTANCES: pairs in one row or column, at that distance
    off_axis: np.ndarray  # pairs in neither, at that distance (rounded)

    @property
    def axis_margin(self) -> float:
        """Mean of ``on_axis − off_axis`` over the matched distances: the cross beyond nearness."""
        return float(np.mean(self.on_axis - self.off_axis))

    @property
    def cross_ratio(self) -> float:
        """Same row or column against all pairs (≈ 1 with no cross)."""
        return (self.same_row + self.same_column) / 2 / self.all_pairs

    def at(self, distance: int) -> float:
        return float(self.by_distance[list(self.distances).index(distance)])


def grid_cross(matrix: np.ndarray, grid: tuple[int, int]) -> GridCross:
    """Cosine similarity of patch position embeddings by row, column and grid distance."""
    table = np.asarray(matrix, dtype=np.float64)
    rows, cols = _grid_indices(grid, len(table))
    sim = cosine_similarity_matrix(table)
    other = ~np.eye(len(table), dtype=bool)
    dr, dc = rows[:, None] - rows[None, :], cols[:, None] - cols[None, :]
    same_r, same_c = (dr == 0) & other, (dc == 0) & other
    distance = np.rint(np.hypot(dr, dc)).astype(int)
    steps = np.arange(1, int(distance.max()) + 1)
    by = np.array([sim[distance == k].mean() for k in steps])
    axis = (dr == 0) | (dc == 0)
    on = np.array([sim[axis & (distance == k)].mean() for k in MATCHED_DISTANCES])
    off = np.array([sim[~axis & (distance == k)].mean() for k in MATCHED_DISTANCES])
    return GridCross(
        same_row=float(sim[same_r].mean()),
        same_column=float(sim[same_c].mean()),
        all_pairs=float(sim[other].mean()),
        distances=steps,
        by_distance=by,
        on_axis=on,
        off_axis=off,
    )


def _cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weights of the 4 taps at offsets −1, 0, 1, 2 from ``floor(x)``."""
    x = np.stack([1 + t, t, 1 - t, 2 - t], axis=-1)
    ax = np.abs(x)
    near = ((a + 2) * ax - (a + 3)) * ax * ax + 1
    far = ((a * ax - 5 * a) * ax + 8 * a) * ax - 4 * a
    return np.where(ax <= 1, near, np.where(ax < 2, far, 0.0))


def cubic_matrix(n_in: int, n_out: int, *, a: float = CUBIC_A) -> np.ndarray:
    """``(n_out, n_in)`` matrix of 1-D cubic resampling, half-pixel coordinates, edges repeated."""
    if n_in < 1 or n_out < 1:
        raise ValueError("sizes must be at least 1.")
    x = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    base = np.floor(x).astype(int)
    weights = _cubic_weights(x - base, a)
    out = np.zeros((n_out, n_in))
    for tap in range(4):
        np.add.at(out, (np.arange(n_out), np.clip(base - 1 + tap, 0, n_in - 1)), weights[:, tap])
    return out


def cubic_resize(
    grid_values: np.ndarray, size: tuple[int, int], *, a: float = CUBIC_A
) -> np.ndarray:
    """Resize ``(h, w, d)`` to ``(H, W, d)`` separably, as ONNX ``Resize`` (cubic, half-pixel)."""
    values = np.asarray(grid_values, dtype=np.float64)
    if values.ndim != 3:
        raise ValueError(f"expected (h, w, d) grid values, got shape {values.shape}.")
    h, w, _ = values.shape
    rows, cols = cubic_matrix(h, size[0], a=a), cubic_matrix(w, size[1], a=a)
    return np.einsum("Hh,hwd,Ww->HWd", rows, values, cols)
