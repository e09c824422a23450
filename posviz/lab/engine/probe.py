"""The lab's one position probe: every row's position predicted by a model that never saw that row.

Wang & Chen (EMNLP 2020)'s k-fold linear probe, with a ridge penalty chosen inside each outer
training fold (nested 5-fold CV, :func:`posviz.analysis.evidence.nested_ridge_predictions`). A lab
table has about as many rows as dimensions, where plain least squares interpolates its training
rows and its test error blows up; the nested ridge fits such tiny tables. The penalty is relative
to the table's own scale, so scores do not depend on the table's units. Every lab number and chart
that probes a table uses this estimator (the run's stored late-row errors, the page's probe charts).

What the score means: R² of the held-out predictions, 1 = every position read back exactly along
one direction, 0 = no better than guessing the mean position, **below 0 = worse than the mean**.
A trained table can score below 0 although its model is 100 % accurate: the model needs the rows
to be *distinct*, not *ordered along a line*, and a probe that never saw a row cannot place a
code that is not on the line the other rows follow. A negative score says "positions are not
linearly ordered in this table", never "the table holds no position".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.analysis.evidence import nested_ridge_predictions, random_table_like
from posviz.analysis.probes import r2_score

#: the control's label in probe frames: a random table of the same shape and scale.
CONTROL = "random table, same shape (control)"


def cv_probe(matrix: np.ndarray, *, seed: int) -> pd.DataFrame:
    """Every row's position predicted by a ridge probe that never saw that row.

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


def probe_r2(matrix: np.ndarray, *, seed: int) -> float:
    """R² of :func:`cv_probe`'s held-out predictions (see the module's note on negative values)."""
    frame = cv_probe(matrix, seed=seed)
    return r2_score(frame["position"].to_numpy(float), frame["predicted"].to_numpy())


def late_error(matrix: np.ndarray, *, rows: int, late: int, seed: int) -> float:
    """Mean absolute probe error (in positions) on rows ``late … rows − 1``, probing the first
    ``rows`` rows of ``matrix`` (the rows training can reach)."""
    frame = cv_probe(np.asarray(matrix)[:rows], seed=seed)
    return float(frame.loc[frame["position"] >= late, "abs_error"].mean())


def probe_score_frame(
    snapshots: np.ndarray, steps: list[int], *, label: str, seed: int
) -> pd.DataFrame:
    """The probe's R² on every snapshot of one table, with the control at every step.

    ``snapshots``: ``(n_snapshots, rows, p)`` one seed's table during training; ``steps`` their
    training steps. The control is the same probe on a random Gaussian table with the final
    table's shape and per-column scale (:func:`posviz.analysis.evidence.random_table_like`).

    Returns:
        ``variant, step, score``: ``label`` rows then :data:`CONTROL` rows.
    """
    scores = [probe_r2(snapshots[i], seed=seed) for i in range(len(steps))]
    control = probe_r2(random_table_like(snapshots[-1], seed=seed), seed=seed)
    return pd.DataFrame(
        {
            "variant": [label] * len(steps) + [CONTROL] * len(steps),
            "step": list(steps) + list(steps),
            "score": scores + [control] * len(steps),
        }
    )


def probe_error_frame(tables: dict[str, np.ndarray], *, seed: int) -> pd.DataFrame:
    """Probe error by position on each labelled ``(rows, p)`` table, plus the control.

    The control is a random table shaped and scaled like the first table.

    Returns:
        ``table, position, predicted, abs_error`` (the Probing page's error-by-position frame).
    """
    if not tables:
        raise ValueError("probe_error_frame needs at least one table.")
    frames = []
    for label, matrix in tables.items():
        frame = cv_probe(matrix, seed=seed)
        frame["table"] = label
        frames.append(frame)
    first = next(iter(tables.values()))
    frame = cv_probe(random_table_like(first, seed=seed), seed=seed)
    frame["table"] = CONTROL
    frames.append(frame)
    return pd.concat(frames, ignore_index=True)
