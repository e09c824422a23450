"""Add or concatenate? How word embeddings (WE) and position embeddings (PE) share one vector.

tensor2tensor issue #1591 ("Why add positional embedding instead of concatenate?") conjectures that
adding the sinusoid is "conceptually a concat": most of PE's dimensions barely move with position,
so the learned word embeddings can use those and leave the moving ones to position. The cnblogs
post "Transformer Position Encoding" (shendawei, 2020) pictures WE+PE as a cloud of points around
the word.

This module measures that on real tables:

* :func:`word_position_cloud` — ``WE[token] + PE[p]`` for ``p = 0 … n−1`` in 2-D (first two
  dimensions, or the cloud's own principal components).
* :func:`dimension_magnitudes` — per dimension, how much PE moves across positions vs how much WE
  varies across the vocabulary.
* :func:`concat_hypothesis` — how much of PE's variance lives in a few directions, and how much of
  it lies inside the word embeddings' principal subspace (explained-variance overlap, and principal
  angles between the subspaces, ``scipy.linalg.subspace_angles`` for the tables and for the
  random-subspace control alike; Björck & Golub 1973). A random subspace of dimension ``k`` in
  ``d`` dimensions captures ``k/d`` of any variance: that is the "independent" baseline; far below
  it means PE and WE avoid each other (a concatenation in disguise), far above means they share
  directions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.evidence import (
    Spread,
    principal_angles,
    random_subspace_angles,
    rng,
    spread,
)

N_BASELINE = 50  # random subspace pairs behind each angle baseline


def principal_axes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal directions and their variance fractions of the rows of ``matrix`` (centred).

    ``matrix``: ``(n, d)``. Returns ``(axes, explained)`` with ``axes`` ``(d, r)`` orthonormal
    columns sorted by variance and ``explained`` ``(r,)`` summing to 1 (``r = min(n, d)``).
    """
    centred = np.asarray(matrix, np.float64) - np.mean(matrix, axis=0)
    if centred.shape[0] > 4 * centred.shape[1]:  # tall: eigen-decompose the d×d covariance
        values, vectors = np.linalg.eigh(centred.T @ centred)
        order = np.argsort(values)[::-1]
        values, vectors = np.clip(values[order], 0, None), vectors[:, order]
    else:
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        values, vectors = s**2, vt.T
    total = values.sum()
    if total <= 0:
        raise ValueError("The table has no variance (all rows equal); nothing to decompose.")
    return vectors, values / total


def components_for(explained: np.ndarray, fraction: float) -> int:
    """Smallest ``k`` whose top-``k`` components explain at least ``fraction`` of the variance."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction={fraction} must be in (0, 1].")
    return int(min(np.searchsorted(np.cumsum(explained), fraction - 1e-12) + 1, explained.size))


@dataclass(frozen=True)
class ConcatReport:
    """Numbers for the "adding is effectively concatenating" hypothesis (tensor2tensor #1591).

    Attributes:
        d_model: width of both tables.
        k_pe: components PE needs to reach ``fraction`` of its variance (low = a few directions).
        k_we: the same for the word embeddings.
        pe_in_we: fraction of PE's variance inside WE's top-``k_we`` subspace.
        we_in_pe: fraction of WE's variance inside PE's top-``k_pe`` subspace.
        pe_in_we_chance, we_in_pe_chance: the same for a random subspace (``k/d``).
        angles_deg: principal angles between PE's top-``k`` and WE's top-``k`` subspaces
            (``k = min(k_pe, k_we)``), in degrees, smallest first. 0° = shared direction, 90° =
            orthogonal.
        fraction: the variance fraction used to pick ``k_pe`` and ``k_we``.
        angle_baseline: median principal angle between two uniformly random ``k``-dim subspaces
            of ℝ^d_model, over :data:`N_BASELINE` pairs (mean ± std): in high dimension random
            subspaces are already nearly orthogonal, so a large angle alone says little.
        smallest_angle_baseline: the smallest principal angle between the same random pairs.
        pe_in_random, we_in_random: share of PE's (WE's) variance inside :data:`N_BASELINE`
            uniformly random ``k_we``- (``k_pe``-) dim subspaces (mean ± std; the mean is ``k/d``
            up to sampling): the control for ``pe_in_we`` and ``we_in_pe``, computed the same way.
    """

    d_model: int
    k_pe: int
    k_we: int
    pe_in_we: float
    we_in_pe: float
    pe_in_we_chance: float
    we_in_pe_chance: float
    angles_deg: np.ndarray
    fraction: float
    angle_baseline: Spread | None = None
    smallest_angle_baseline: Spread | None = None
    pe_in_random: Spread | None = None
    we_in_random: Spread | None = None

    def frame(self) -> pd.DataFrame:
        """The report as a two-column table (quantity, value) for display."""
        rows = [
            (
                f"PE: components for {self.fraction:.0%} of its variance",
                f"{self.k_pe} of {self.d_model}",
            ),
            (
                f"WE: components for {self.fraction:.0%} of its variance",
                f"{self.k_we} of {self.d_model}",
            ),
            (
                "share of PE variance inside WE's subspace",
                f"{self.pe_in_we:.1%} (random subspaces: "
                f"{_percent(self.pe_in_random, self.pe_in_we_chance)})",
            ),
            (
                "share of WE variance inside PE's subspace",
                f"{self.we_in_pe:.1%} (random subspaces: "
                f"{_percent(self.we_in_random, self.we_in_pe_chance)})",
            ),
            (
                f"median principal angle, PE's top-{min(self.k_pe, self.k_we)} vs WE's "
                f"top-{min(self.k_pe, self.k_we)} subspaces",
                f"{np.median(self.angles_deg):.1f}°"
                + (
                    f" (random subspaces: {self.angle_baseline.text(1)}°)"
                    if self.angle_baseline is not None
                    else ""
                ),
            ),
            (
                "smallest principal angle",
                f"{self.angles_deg.min():.1f}°"
                + (
                    f" (random subspaces: {self.smallest_angle_baseline.text(1)}°)"
                    if self.smallest_angle_baseline is not None
                    else ""
                ),
            ),
        ]
        return pd.DataFrame(rows, columns=["quantity", "value"])


def _percent(value: Spread | None, expected: float) -> str:
    """``"68.8 ± 1.2%"`` for a measured spread of shares, else the expected share ``k/d``."""
    if value is None:
        return f"{expected:.1%} expected"
    return f"{100 * value.mean:.1f} ± {100 * value.std:.1f}%"


def _random_shares(matrix: np.ndarray, k: int, *, seed: int, n: int) -> Spread:
    """Share of ``matrix``'s variance inside ``n`` uniformly random ``k``-dim subspaces.

    ``share(Q) = tr(Qᵀ C Q) / tr(C)`` with ``C = X_cᵀ X_c`` and ``Q`` orthonormal (QR of a Gaussian
    ``(d, k)``, a Haar-random subspace); ``E[share] = k/d``.
    """
    centred = matrix - matrix.mean(axis=0)
    cov = centred.T @ centred
    total = float(np.trace(cov))
    generator = rng(seed)
    shares = []
    for _ in range(n):
        q, _ = np.linalg.qr(generator.standard_normal((matrix.shape[1], k)))
        shares.append(float(np.sum(q * (cov @ q))) / total)  # tr(QᵀCQ), one matmul
    return spread(shares)


def _variance_inside(matrix: np.ndarray, axes: np.ndarray) -> float:
    centred = matrix - matrix.mean(axis=0)
    total = float((centred**2).sum())
    return float(((centred @ axes) ** 2).sum()) / total if total > 0 else float("nan")


def concat_hypothesis(
    position_table: np.ndarray,
    word_table: np.ndarray,
    *,
    fraction: float = 0.9,
    word_axes: tuple[np.ndarray, np.ndarray] | None = None,
) -> ConcatReport:
    """Quantify how much PE and WE occupy separate directions (tensor2tensor #1591's conjecture).

    Args:
        position_table: ``(n_positions, d_model)``.
        word_table: ``(vocab_size, d_model)`` (or a sample of its rows).
        fraction: variance fraction that defines each table's principal subspace.
        word_axes: ``principal_axes(word_table)`` if already computed (it is the slow part).

    Raises:
        ValueError: widths differ, a table has no variance, ``fraction`` outside (0, 1].
    """
    pe, we = np.asarray(position_table, np.float64), np.asarray(word_table, np.float64)
    if pe.ndim != 2 or we.ndim != 2 or pe.shape[1] != we.shape[1]:
        raise ValueError(
            f"The position table {pe.shape} and word table {we.shape} must be 2-D with the same "
            "width (d_model); pick tables from the same model or a sinusoid of that width."
        )
    pe_axes, pe_explained = principal_axes(pe)
    we_axes, we_explained = principal_axes(we) if word_axes is None else word_axes
    k_pe, k_we = components_for(pe_explained, fraction), components_for(we_explained, fraction)
    k = min(k_pe, k_we)
    d = pe.shape[1]
    # The measurement and its random-subspace control go through the same routine
    # (scipy.linalg.subspace_angles, via posviz.analysis.evidence.principal_angles).
    angles = principal_angles(pe_axes[:, :k], we_axes[:, :k])
    random_angles = random_subspace_angles(d, k, k, seed=0, n=N_BASELINE)
    return ConcatReport(
        d_model=d,
        k_pe=k_pe,
        k_we=k_we,
        pe_in_we=_variance_inside(pe, we_axes[:, :k_we]),
        we_in_pe=_variance_inside(we, pe_axes[:, :k_pe]),
        pe_in_we_chance=k_we / d,
        we_in_pe_chance=k_pe / d,
        angles_deg=angles,
        fraction=fraction,
        angle_baseline=spread(np.median(random_angles, axis=1)),
        smallest_angle_baseline=spread(random_angles.min(axis=1)),
        pe_in_random=_random_shares(pe, k_we, seed=1, n=N_BASELINE),
        we_in_random=_random_shares(we, k_pe, seed=2, n=N_BASELINE),
    )


def word_position_cloud(
    word_vector: np.ndarray,
    position_table: np.ndarray,
    *,
    view: str = "dims",
    dims: tuple[int, int] = (0, 1),
) -> pd.DataFrame:
    """2-D coordinates of ``WE + PE[p]`` for every position, plus the word itself (cnblogs, §5).

    Args:
        word_vector: ``(d_model,)`` the token's embedding.
        position_table: ``(n_positions, d_model)``.
        view: ``"dims"`` (two raw dimensions, as in the cnblogs post's picture) or ``"pca"``
            (the cloud's own first two principal components; the word is projected onto the
            same axes).
        dims: the two dimensions for ``view="dims"``.

    Returns:
        Frame with columns ``x``, ``y``, ``position`` (−1 for the word alone), ``kind``.
    """
    word = np.asarray(word_vector, np.float64)
    pe = np.asarray(position_table, np.float64)
    if word.shape != (pe.shape[1],):
        raise ValueError(f"Word vector {word.shape} and table width {pe.shape[1]} differ.")
    cloud = word + pe  # (n_positions, d_model)
    if view == "pca":
        axes, _ = principal_axes(cloud)
        centre = cloud.mean(axis=0)
        points, origin = (cloud - centre) @ axes[:, :2], (word - centre) @ axes[:, :2]
    elif view == "dims":
        if not all(0 <= i < pe.shape[1] for i in dims) or dims[0] == dims[1]:
            raise ValueError(
                f"dims={dims} must be two different dimensions in 0…{pe.shape[1] - 1}."
            )
        points, origin = cloud[:, list(dims)], word[list(dims)]
    else:
        raise ValueError(f"view={view!r} must be 'dims' or 'pca'.")
    frame = pd.DataFrame(
        {
            "x": points[:, 0],
            "y": points[:, 1],
            "position": np.arange(pe.shape[0]),
            "kind": "word + position",
        }
    )
    word_row = pd.DataFrame(
        {"x": [origin[0]], "y": [origin[1]], "position": [-1], "kind": ["word alone"]}
    )
    return pd.concat([frame, word_row], ignore_index=True)


def dimension_magnitudes(
    position_table: np.ndarray, word_table: np.ndarray, word_vector: np.ndarray | None = None
) -> pd.DataFrame:
    """Per dimension: PE's spread across positions vs WE's spread across the vocabulary.

    Returns a frame with ``dimension``, ``pe_std`` (std of PE over positions), ``we_std`` (std of WE
    over tokens), ``pe_range`` (max − min over positions) and, if given, ``word_abs`` (|WE[token]|).
    """
    pe, we = np.asarray(position_table, np.float64), np.asarray(word_table, np.float64)
    frame = pd.DataFrame(
        {
            "dimension": np.arange(pe.shape[1]),
            "pe_std": pe.std(axis=0),
            "we_std": we.std(axis=0),
            "pe_range": pe.max(axis=0) - pe.min(axis=0),
        }
    )
    if word_vector is not None:
        frame["word_abs"] = np.abs(np.asarray(word_vector, np.float64))
    return frame


def last_dimensions_table(
    pe: np.ndarray,
    *,
    positions: tuple[int, ...] = (0, 64, 127),
    dims: tuple[int, ...] = (-1, -2, -16, -17),
    word_std: np.ndarray | None = None,
) -> pd.DataFrame:
    """tensor2tensor #1591's table: values of chosen (late) dimensions at a few positions and
    how much they move.

    ``pe``: ``(n_positions, d_model)``, e.g. the sinusoid with ``n=128, d=512``. Negative ``dims``
    count from the end. ``word_std`` (``(d_model,)``) adds the word embeddings' spread per dimension
    for scale. Returns one row per dimension: ``PE[p]`` for each ``p``, and ``max change`` (largest
    difference between the listed positions).
    """
    n, d = pe.shape
    rows = []
    for dim in dims:
        index = dim % d
        if not -d <= dim < d:
            raise ValueError(f"dimension {dim} is outside the table's {d} dimensions.")
        values = [float(pe[p, index]) for p in positions if 0 <= p < n]
        if len(values) != len(positions):
            raise ValueError(f"positions {positions} must lie in 0…{n - 1}.")
        row = {
            "dimension": index,
            **{f"PE[{p}]": v for p, v in zip(positions, values, strict=True)},
        }
        row["max change"] = max(values) - min(values)
        if word_std is not None:
            row["WE std (scale)"] = float(word_std[index])
        rows.append(row)
    return pd.DataFrame(rows)
