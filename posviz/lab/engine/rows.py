"""How far training moved each row of a learned table, against how often its position was seen.

Jexus (2020) read BERT's poor late rows as "rarely trained". The direct test: a row's movement
``‖W_T[p] − W_0[p]‖`` (final table minus the same seed's table at step 0) against the
probability that a training sequence reaches position ``p``. Rows past the longest training
sequence get no gradient at all, so they move exactly 0 (the built-in control; Adam's update is
0 when its moments are 0). Every statistic here is a ratio or a rank, so it does not depend on
the table's units.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

EARLY_ROWS = 8  # rows 0 … 7: reached by every training sequence of the lab's presets


def row_movement(snapshots: np.ndarray) -> np.ndarray:
    """``(E, rows)`` Euclidean distance of every row from its start, per seed.

    ``snapshots``: ``(E, n_snapshots, rows, p)``; movement = ``‖S[e, −1, r] − S[e, 0, r]‖₂``.
    """
    tables = np.asarray(snapshots, dtype=np.float64)
    if tables.ndim != 4 or tables.shape[1] < 2:
        raise ValueError(
            f"snapshots must be (seeds, steps ≥ 2, rows, width); got shape {tables.shape}."
        )
    return np.linalg.norm(tables[:, -1] - tables[:, 0], axis=-1)


def late_to_early_ratio(movement: np.ndarray, *, late: int, trained: int) -> np.ndarray:
    """``(E,)`` mean movement of rows ``late … trained−1`` over that of rows ``0 … 7``.

    1 = late rows moved as much as early ones; → 0 = late rows stayed at their start. A ratio of
    two movements of one table, so the table's scale cancels.

    Raises:
        ValueError: ``late`` not in ``(EARLY_ROWS, trained)``.
    """
    if not EARLY_ROWS <= late < trained <= movement.shape[1]:
        raise ValueError(
            f"late={late} must lie in [{EARLY_ROWS}, trained={trained}) with trained ≤ "
            f"{movement.shape[1]} rows."
        )
    early = movement[:, :EARLY_ROWS].mean(axis=1)
    return movement[:, late:trained].mean(axis=1) / np.maximum(early, np.finfo(float).tiny)


def rank_correlation(movement: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """``(E,)`` Spearman rank correlation (Spearman 1904) of each seed's movement with ``seen``.

    ``scipy.stats.spearmanr`` over the rows that ``seen`` covers (``seen``: ``(n,)`` probability
    that a sequence reaches each row, ``n ≤ rows``; ties get their average rank). +1: the more
    often a row is seen, the further it moved, without exception. NaN when either side is
    constant (no ranking exists).
    """
    # Lazy: scipy is heavy and only needed once a run is summarised.
    from scipy.stats import spearmanr

    seen = np.asarray(seen, dtype=np.float64)
    n = seen.shape[0]
    out = []
    for row in np.asarray(movement, dtype=np.float64)[:, :n]:
        if np.ptp(row) == 0 or np.ptp(seen) == 0:
            out.append(float("nan"))
            continue
        out.append(float(spearmanr(row, seen).statistic))
    return np.array(out)


def movement_frame(
    movement: dict[str, np.ndarray], labels: dict[str, str], seen: dict[str, np.ndarray]
) -> pd.DataFrame:
    """Long form for the chart: ``variant, position, seen, mean, low, high`` per row.

    ``mean`` is the movement over seeds divided by that variant's mean early-row movement (so
    the arms share a unit-free axis); ``low``/``high`` = mean ± one standard deviation over
    seeds; ``seen`` is the probability that a training sequence reaches the row (0 past it).
    """
    parts = []
    for variant, values in movement.items():
        scale = max(float(values[:, :EARLY_ROWS].mean()), np.finfo(float).tiny)
        relative = values / scale
        mean = relative.mean(axis=0)
        std = relative.std(axis=0, ddof=1) if relative.shape[0] > 1 else np.zeros_like(mean)
        rows = np.arange(mean.shape[0])
        probability = np.zeros(mean.shape[0])
        reach = seen[variant][: mean.shape[0]]
        probability[: reach.shape[0]] = reach
        parts.append(
            pd.DataFrame(
                {
                    "variant": labels[variant],
                    "position": rows,
                    "seen": probability,
                    "mean": mean,
                    "low": mean - std,
                    "high": mean + std,
                }
            )
        )
    columns = ["variant", "position", "seen", "mean", "low", "high"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
