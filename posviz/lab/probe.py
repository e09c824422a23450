"""The lab's cross-validated position probe: every row's position predicted by a model that
never saw that row (Wang & Chen, EMNLP 2020's linear probe, with a nested-CV ridge penalty)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.analysis.evidence import nested_ridge_predictions


def cv_probe(matrix: np.ndarray, *, seed: int) -> pd.DataFrame:
    """Every row's position predicted by a ridge probe that never saw that row.

    Wang & Chen (EMNLP 2020)'s k-fold linear probe, with
    a ridge penalty chosen inside each outer training fold (nested 5-fold CV,
    :func:`posviz.analysis.evidence.nested_ridge_predictions`): a lab table has about as many
    rows as dimensions, where plain least squares interpolates its training rows and its test
    error blows up. The penalty is relative to the table's own scale, so the score does not
    depend on the table's units.

    Returns:
        ``position, predicted, abs_error`` (one row per table row).
    """
    rows = np.asarray(matrix, dtype=np.float64)  # (n_positions, d)
    positions = np.arange(rows.shape[0], dtype=np.float64)
    predicted, _, _ = nested_ridge_predictions(rows, positions, positions, seed=seed)
    predicted = np.asarray(predicted, dtype=np.float64).reshape(-1)  # (n_positions,)
    return pd.DataFrame(
        {
            "position": positions.astype(int),
            "predicted": predicted,
            "abs_error": np.abs(predicted - positions),
        }
    )
