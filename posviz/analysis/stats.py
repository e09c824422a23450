"""Statistics of a position table: per-dimension variance, similarity between positions, PCA.

Every function takes ``matrix`` of shape ``(n_positions, d_model)`` — row ``p`` is the vector
added at position ``p`` — and works for any table: sinusoidal, learned, uploaded.
numpy in, numpy out.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

Metric = Literal["cosine", "dot"]
_COLUMN_BLOCK = 256


def _as_table(matrix: np.ndarray, *, name: str = "matrix", min_rows: int = 1) -> np.ndarray:
    """Validate a position table and return it as float64 ``(n_positions, d_model)``."""
    array = np.asarray(matrix)
    if array.ndim != 2:
        raise ValueError(
            f"{name} has shape {array.shape}; expected 2-D (n_positions, d_model). "
            "Pass one table (e.g. a model's position-embedding weight), not a batch or a vector."
        )
    if array.shape[0] < min_rows or array.shape[1] < 1:
        raise ValueError(
            f"{name} has shape {array.shape}; need at least {min_rows} position(s) and 1 dimension."
        )
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name} has dtype {array.dtype}; expected real numbers (float or int).")
    array = array.astype(np.float64, copy=False)
    if not np.isfinite(array).all():
        bad = int(np.size(array) - np.isfinite(array).sum())
        raise ValueError(
            f"{name} contains {bad} NaN/inf value(s); remove or replace them (e.g. np.nan_to_num) "
            "before analysing the table."
        )
    return array


def dimension_variance(matrix: np.ndarray) -> np.ndarray:
    """Variance of each dimension across positions.

    ``var[j] = mean_p (M[p, j] - mean_p M[p, j])²`` (population variance, ``ddof=0``).
    A dimension with (near) zero variance carries (almost) no position information.
    Computed in float64 on blocks of columns, so a big float32 table needs no full float64 copy.

    Args:
        matrix: ``(n_positions, d_model)``.
    Returns:
        ``(d_model,)`` float64.
    """
    array = np.asarray(matrix)
    if array.ndim != 2 or 0 in array.shape:
        _as_table(array)  # raises with the shape in the message
    out = np.empty(array.shape[1])
    for start in range(0, array.shape[1], _COLUMN_BLOCK):
        block = _as_table(array[:, start : start + _COLUMN_BLOCK])
        out[start : start + block.shape[1]] = block.var(axis=0)
    return out


def position_norms(matrix: np.ndarray) -> np.ndarray:
    """Euclidean norm of each position vector, ``‖M[p]‖₂``.

    For the sinusoidal table every row has norm ``sqrt(d_model / 2)`` (each sin/cos pair adds 1).

    Returns:
        ``(n_positions,)`` float64.
    """
    return np.linalg.norm(_as_table(matrix), axis=1)


def dot_product_matrix(matrix: np.ndarray) -> np.ndarray:
    """All pairwise dot products ``G[p, q] = M[p] · M[q]`` (the Gram matrix).

    Returns:
        ``(n_positions, n_positions)`` float64.
    """
    table = _as_table(matrix)
    return table @ table.T


def _unit_rows(table: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    # A zero row has no direction; give it cosine 0 with everything rather than NaN.
    return np.divide(table, norms, out=np.zeros_like(table), where=norms > 0)


def cosine_similarity_matrix(matrix: np.ndarray) -> np.ndarray:
    """All pairwise cosine similarities ``C[p, q] = M[p]·M[q] / (‖M[p]‖ ‖M[q]‖)``.

    Rows of norm zero get similarity 0 with every row (including themselves).

    Returns:
        ``(n_positions, n_positions)`` float64 in ``[-1, 1]``.
    """
    unit = _unit_rows(_as_table(matrix))
    return np.clip(unit @ unit.T, -1.0, 1.0)


class ShiftSimilarity(NamedTuple):
    """Similarity of position ``p`` with ``p + k``, summarised over all valid ``p`` for each k.

    Attributes (all ``(max_shift + 1,)``, index = k):
        shifts: ``0 … max_shift``.
        mean, std, min, max: over ``p = 0 … n_positions - 1 - k``.
        count: number of pairs ``(p, p + k)`` averaged.
    """

    shifts: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    min: np.ndarray
    max: np.ndarray
    count: np.ndarray


def shift_similarity(
    matrix: np.ndarray, max_shift: int, *, metric: Metric = "cosine"
) -> ShiftSimilarity:
    """Similarity of ``M[p]`` and ``M[p + k]`` for ``k = 0 … max_shift``, with spread over ``p``.

    For the sinusoidal encoding ``PE(p)·PE(p+k) = Σ_i cos(ω_i k)`` does not depend on ``p``
    (Vaswani et al. 2017, §3.5: ``PE(p+k)`` is a linear function of ``PE(p)``), so ``std`` is ~0;
    for a learned table the spread shows how far it is from being shift-invariant.

    Args:
        matrix: ``(n_positions, d_model)``.
        max_shift: largest ``k``; ``1 ≤ max_shift ≤ n_positions - 1``.
        metric: ``"cosine"`` or ``"dot"``.
    Returns:
        :class:`ShiftSimilarity` with arrays of shape ``(max_shift + 1,)``.
    """
    table = _as_table(matrix, min_rows=2)
    n = table.shape[0]
    if metric not in ("cosine", "dot"):
        raise ValueError(f"metric={metric!r} is not supported; use 'cosine' or 'dot'.")
    if isinstance(max_shift, bool) or not isinstance(max_shift, int | np.integer):
        raise ValueError(f"max_shift={max_shift!r} must be a whole number from 1 to {n - 1}.")
    if not 1 <= max_shift <= n - 1:
        raise ValueError(
            f"max_shift={max_shift} is out of range for {n} positions; choose 1 … {n - 1}."
        )
    rows = _unit_rows(table) if metric == "cosine" else table
    stats = np.zeros((5, max_shift + 1))
    for k in range(max_shift + 1):
        values = np.einsum("pd,pd->p", rows[: n - k], rows[k:])  # (n - k,)
        stats[:, k] = values.mean(), values.std(), values.min(), values.max(), values.size
    return ShiftSimilarity(
        shifts=np.arange(max_shift + 1),
        mean=stats[0],
        std=stats[1],
        min=stats[2],
        max=stats[3],
        count=stats[4].astype(np.int64),
    )


class PCAResult(NamedTuple):
    """Principal components of the rows of a table.

    Attributes:
        scores: ``(n_positions, k)`` coordinates of each (centred) row on the components.
        explained_variance_ratio: ``(k,)`` share of total variance per component (sums to ≤ 1).
        components: ``(k, d_model)`` unit-norm principal directions, strongest first.
    """

    scores: np.ndarray
    explained_variance_ratio: np.ndarray
    components: np.ndarray


def pca(matrix: np.ndarray, n_components: int) -> PCAResult:
    """PCA of the positions via SVD of the centred table (its few leading components of a big
    table from the smaller Gram matrix's eigenvectors: :func:`_top_by_gram`).

    ``M - mean = U S Vᵀ``; ``components = Vᵀ[:k]``, ``scores = U[:, :k] S[:k]``,
    ``explained_variance_ratio = S[:k]² / Σ S²``. Signs follow ``numpy.linalg.svd`` with each
    component flipped so its largest-magnitude loading is positive (deterministic across runs).

    Args:
        matrix: ``(n_positions, d_model)``.
        n_components: ``1 ≤ k ≤ min(n_positions, d_model)``.
    Returns:
        :class:`PCAResult`.
    """
    table = _as_table(matrix, min_rows=2)
    limit = min(table.shape)
    if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer):
        raise ValueError(f"n_components={n_components!r} must be a whole number from 1 to {limit}.")
    if not 1 <= n_components <= limit:
        raise ValueError(
            f"n_components={n_components} is out of range for a {table.shape[0]}×{table.shape[1]} "
            f"table; choose 1 … {limit}."
        )
    centred = table - table.mean(axis=0)
    k = int(n_components)
    if min(table.shape) >= GRAM_FROM and k <= GRAM_MAX_COMPONENTS:
        s, vt = _top_by_gram(np.asarray(centred, dtype=np.float64), k)
        u_s = None
    else:
        u, s, vt = np.linalg.svd(centred, full_matrices=False)
        u_s = u[:, :k] * s[:k]
    signs = np.sign(vt[np.arange(k), np.abs(vt[:k]).argmax(axis=1)])
    signs[signs == 0] = 1.0
    components = vt[:k] * signs[:, None]
    scores = (u_s if u_s is not None else centred @ vt[:k].T) * signs
    total = float(np.square(centred, dtype=np.float64).sum())
    ratio = (s[:k] ** 2) / total if total > 0 else np.zeros(k)
    return PCAResult(scores=scores, explained_variance_ratio=ratio, components=components)


#: tables whose smaller side has at least this many entries take their few leading components
#: from the eigenvectors of the smaller Gram matrix, not a full SVD (a 4096 × 1150 table: 0.19 s
#: against 0.89 s, the /learned page's largest cost on a big table)
GRAM_FROM = 256
GRAM_MAX_COMPONENTS = 8


def _top_by_gram(centred: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest singular values and right singular vectors (``(k,)``, ``(k, d)``) of
    ``centred`` from the eigendecomposition of its smaller Gram matrix: ``CᵀC = V S² Vᵀ`` or
    ``CCᵀ = U S² Uᵀ`` with ``V = Cᵀ U S⁻¹`` (Golub & Van Loan, *Matrix Computations*, §8.6: the
    SVD from the symmetric eigenproblem). The leading values keep their accuracy relative to the
    largest; only the small ones, not used here, lose it."""
    n, d = centred.shape
    gram = centred.T @ centred if d <= n else centred @ centred.T
    values, vectors = np.linalg.eigh(gram)
    top = np.argsort(values)[::-1][:k]
    s = np.sqrt(np.clip(values[top], 0.0, None))
    if d <= n:
        return s, vectors[:, top].T
    safe = np.where(s > 0, s, 1.0)
    vt = (vectors[:, top].T @ centred) / safe[:, None]
    return s, vt


def relative_threshold(matrix: np.ndarray, share: float = 0.01) -> float:
    """``share`` × the mean per-dimension variance, rounded to a power of 10 in quarter steps.

    The variance view's slider moves in steps of 0.25 in log₁₀; this lands on that grid. Returns
    ``1e-3`` for a constant table (no variance to be relative to).
    """
    mean = float(dimension_variance(matrix).mean())
    if not mean > 0:
        return 1e-3
    exponent = min(0.0, max(-8.0, round(4 * np.log10(share * mean)) / 4))
    return float(10.0**exponent)
