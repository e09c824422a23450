"""Linear probes on position tables: can a straight line read the position back out of a row?

Two probes, as in the seeds and the paper that grew out of them:

* **Absolute position regression** (Jexus, "What has the positional embedding learned?", 2020,
  seed 002; Wang & Chen, "What Do Position Embeddings Learn?", EMNLP 2020, code
  ``MiuLab/PE-Study/absolute.py``): fit ``position ≈ w·PE[p] + b`` by ordinary least squares and
  report the mean absolute error (MAE) and R² on held-out rows.
* **Relative order classification** (Wang & Chen 2020, ``MiuLab/PE-Study/relative.py``): logistic
  regression on the concatenation ``[PE[i], PE[j]]`` predicting whether ``j > i``; reported as the
  k-fold cross-validated error rate.

Protocols (``train``/``test``):

* ``"even"``→``"odd"``: the blog's split (fit on even positions, test on odd ones — interpolation).
* ``"all"``→``"all"``: fit and test on every row (the blog's second plot; measures fit, not
  generalisation).
* ``"kfold"``: shuffled k-fold cross-validation; each row is predicted once by a model that did not
  see it. With ``rounded=True`` (the default for k-fold) predictions are rounded to whole positions
  before the error is taken, as in ``absolute.py`` of MiuLab/PE-Study.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

TRAIN_SPLITS = ("even", "odd", "all", "kfold")
TEST_SPLITS = ("even", "odd", "all")
MIN_ROWS = 8  # fewer rows than this cannot be split into train and test in any useful way


@dataclass(frozen=True)
class ProbeResult:
    """What a position probe predicted for its test rows.

    Attributes:
        positions: ``(n_test,)`` true positions of the test rows.
        predictions: ``(n_test,)`` the probe's predictions for them (rounded if ``rounded``).
        mae: mean absolute error, in positions.
        r2: coefficient of determination ``1 − SS_res / SS_tot`` on the test rows.
        protocol: e.g. ``"even→odd"`` or ``"5-fold CV"``.
        n_train: rows used to fit (per fold for k-fold).
        rounded: whether predictions were rounded to whole positions.
    """

    positions: np.ndarray
    predictions: np.ndarray
    mae: float
    r2: float
    protocol: str
    n_train: int
    rounded: bool

    @property
    def n_test(self) -> int:
        return int(self.positions.shape[0])

    def frame(self) -> pd.DataFrame:
        """Long-form table: one row per test position with its prediction and absolute error."""
        return pd.DataFrame(
            {
                "position": self.positions.astype(int),
                "predicted": self.predictions,
                "abs_error": np.abs(self.predictions - self.positions),
            }
        )


@dataclass(frozen=True)
class RelativeProbeResult:
    """Cross-validated error rate of the "is j after i?" probe (Wang & Chen 2020)."""

    error_rate: float  # mean over folds of the fraction of misclassified pairs
    fold_error_rates: tuple[float, ...]
    n_pairs: int
    folds: int


def _check_matrix(matrix: np.ndarray, *, what: str = "table") -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(
            f"The {what} must be 2-D (positions × dimensions); got shape {matrix.shape}."
        )
    if matrix.shape[0] < MIN_ROWS:
        raise ValueError(
            f"The {what} has {matrix.shape[0]} rows; a probe needs at least {MIN_ROWS} positions "
            "to hold some out. Use a longer table (more positions)."
        )
    if not np.isfinite(matrix).all():
        raise ValueError(f"The {what} contains NaN or infinite values; probes need finite numbers.")
    return matrix


def fit_linear(x: np.ndarray, y: np.ndarray, *, alpha: float = 0.0) -> tuple[np.ndarray, float]:
    """Least squares with an intercept: returns ``(w, b)`` minimising ``‖x·w + b − y‖² + α‖w‖²``.

    ``x``: ``(n, d)``, ``y``: ``(n,)``. With ``alpha=0`` this is ordinary least squares; when
    ``d ≥ n`` it returns the minimum-norm solution, as ``sklearn.linear_model.LinearRegression``
    does (both centre the data, so the intercept is not shrunk).
    """
    x_mean, y_mean = x.mean(axis=0), y.mean()
    xc, yc = x - x_mean, y - y_mean
    if alpha > 0:
        u, s, vt = np.linalg.svd(xc, full_matrices=False)
        w = vt.T @ ((s / (s**2 + alpha)) * (u.T @ yc))
    else:
        w = np.linalg.lstsq(xc, yc, rcond=None)[0]
    return w, float(y_mean - x_mean @ w)


def r2_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """``1 − Σ(y − ŷ)² / Σ(y − ȳ)²``; 0 means no better than predicting the mean, 1 is perfect."""
    ss_tot = float(((y_true - y_true.mean()) ** 2).sum())
    ss_res = float(((y_true - y_pred) ** 2).sum())
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


def _split(positions: np.ndarray, name: str) -> np.ndarray:
    if name == "even":
        return positions % 2 == 0
    if name == "odd":
        return positions % 2 == 1
    return np.ones(positions.shape, dtype=bool)


def probe_positions(
    matrix: np.ndarray,
    *,
    train: str = "even",
    test: str = "odd",
    folds: int = 5,
    rounded: bool | None = None,
    alpha: float = 0.0,
    seed: int = 0,
    positions: np.ndarray | None = None,
) -> ProbeResult:
    """Linear regression from each row of a position table to its position index.

    Jexus (2020, seed 002): train on even rows, test on odd rows. Wang & Chen (EMNLP 2020,
    MiuLab/PE-Study ``absolute.py``): shuffled 5-fold CV with ``LinearRegression`` and rounded
    predictions, reported as mean absolute error.

    Args:
        matrix: ``(n_positions, d_model)`` table; row ``p`` is the vector for position ``p``.
        train: ``"even"``, ``"odd"``, ``"all"`` or ``"kfold"``; with ``"kfold"``, ``test`` is
            ignored: every row is predicted once by the fold model that did not see it.
        test: ``"even"``, ``"odd"`` or ``"all"``.
        folds: number of folds for ``"kfold"`` (2 … n_positions).
        rounded: round predictions to whole positions before scoring; default: only for k-fold.
        alpha: ridge penalty; 0 (default) is ordinary least squares with intercept.
        seed: shuffles the rows before splitting into folds (k-fold only).
        positions: ``(n_positions,)`` labels of the rows; default ``0 … n−1``. Pass stored-row
            indices here when probing a table that keeps its padding/offset rows.

    Returns:
        :class:`ProbeResult` with predictions, MAE and R² on the test rows.

    Raises:
        ValueError: unknown split, too few rows, non-finite values, overlapping-free split empty.
    """
    matrix = _check_matrix(matrix)
    n = matrix.shape[0]
    labels = np.arange(n, dtype=np.float64) if positions is None else np.asarray(positions, float)
    if labels.shape != (n,):
        raise ValueError(f"positions must have one label per row ({n}); got shape {labels.shape}.")
    if train not in TRAIN_SPLITS:
        raise ValueError(f"train={train!r} is not one of {', '.join(TRAIN_SPLITS)}.")
    if train != "kfold" and test not in TEST_SPLITS:
        raise ValueError(f"test={test!r} is not one of {', '.join(TEST_SPLITS)}.")
    if alpha < 0:
        raise ValueError(f"alpha={alpha} must be ≥ 0 (0 is ordinary least squares).")
    if train == "kfold":
        return _probe_kfold(
            matrix, labels, folds=folds, rounded=rounded is not False, alpha=alpha, seed=seed
        )
    train_rows, test_rows = _split(labels, train), _split(labels, test)
    w, b = fit_linear(matrix[train_rows], labels[train_rows], alpha=alpha)
    predictions = matrix[test_rows] @ w + b
    return _result(
        labels[test_rows],
        predictions,
        protocol=f"{train}→{test}",
        n_train=int(train_rows.sum()),
        rounded=bool(rounded),
    )


def _probe_kfold(
    matrix: np.ndarray, labels: np.ndarray, *, folds: int, rounded: bool, alpha: float, seed: int
) -> ProbeResult:
    n = matrix.shape[0]
    if not 2 <= folds <= n:
        raise ValueError(f"folds={folds} must be between 2 and the number of rows ({n}).")
    order = np.random.default_rng(seed).permutation(n)
    predictions = np.empty(n)
    n_train = n
    for held_out in np.array_split(order, folds):
        keep = np.ones(n, dtype=bool)
        keep[held_out] = False
        w, b = fit_linear(matrix[keep], labels[keep], alpha=alpha)
        predictions[held_out] = matrix[held_out] @ w + b
        n_train = min(n_train, int(keep.sum()))
    return _result(
        labels, predictions, protocol=f"{folds}-fold CV", n_train=n_train, rounded=rounded
    )


def _result(
    labels: np.ndarray, predictions: np.ndarray, *, protocol: str, n_train: int, rounded: bool
) -> ProbeResult:
    if rounded:
        predictions = np.round(predictions)
    return ProbeResult(
        positions=labels,
        predictions=predictions,
        mae=float(np.abs(predictions - labels).mean()),
        r2=r2_score(labels, predictions),
        protocol=protocol,
        n_train=n_train,
        rounded=rounded,
    )


def probe_relative_order(
    matrix: np.ndarray,
    *,
    n_pairs: int | None = None,
    folds: int = 5,
    seed: int = 0,
    max_iter: int = 1000,
) -> RelativeProbeResult:
    """Logistic-regression probe "is position j after position i?" from ``[PE[i], PE[j]]``.

    Wang & Chen (EMNLP 2020), MiuLab/PE-Study ``relative.py``: draw pairs ``(i, j)`` without
    replacement from all ``n²`` ordered pairs (as many pairs as positions by default), label
    ``j > i``, and report the k-fold cross-validated error rate of ``LogisticRegression``.

    Args:
        matrix: ``(n_positions, d_model)`` table.
        n_pairs: how many pairs to draw (default ``n_positions``, as the paper; at most ``n²``).
        folds: cross-validation folds (2 … n_pairs).
        seed: random pairs and fold assignment.

    Returns:
        :class:`RelativeProbeResult`; 0.5 is chance, 0 is a perfect reading of order.

    Raises:
        ValueError: too few rows, bad ``n_pairs``/``folds``, or pairs all of one class.
    """
    from sklearn.linear_model import LogisticRegression  # lazy: sklearn is slow to import

    matrix = _check_matrix(matrix)
    n = matrix.shape[0]
    n_pairs = n if n_pairs is None else int(n_pairs)
    if not folds <= n_pairs <= n * n:
        raise ValueError(f"n_pairs={n_pairs} must be between folds ({folds}) and n² ({n * n}).")
    if folds < 2:
        raise ValueError(f"folds={folds} must be at least 2.")
    rng = np.random.default_rng(seed)
    flat = rng.choice(n * n, size=n_pairs, replace=False)
    first, second = flat // n, flat % n
    features = np.hstack((matrix[first], matrix[second]))  # (n_pairs, 2·d_model)
    labels = second > first
    if labels.all() or not labels.any():
        raise ValueError("All sampled pairs have the same order; draw more pairs (n_pairs).")
    errors = []
    for held_out in np.array_split(rng.permutation(n_pairs), folds):
        keep = np.ones(n_pairs, dtype=bool)
        keep[held_out] = False
        if labels[keep].all() or not labels[keep].any():
            continue  # a degenerate fold; too few pairs to fit both classes
        model = LogisticRegression(max_iter=max_iter).fit(features[keep], labels[keep])
        errors.append(float((model.predict(features[held_out]) != labels[held_out]).mean()))
    if not errors:
        raise ValueError("Every fold had pairs of one order only; draw more pairs (n_pairs).")
    return RelativeProbeResult(float(np.mean(errors)), tuple(errors), n_pairs, folds)


def with_set_aside_rows(matrix: np.ndarray, set_aside: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
    """Put a table's set-aside rows (padding/offset rows) back, in stored-tensor order.

    Wang & Chen probe the *stored* tensor, e.g. RoBERTa's 514 rows including its two offset rows;
    a ``PositionTable`` drops those rows and records them in ``set_aside`` (with values when kept).

    Args:
        matrix: ``(n_positions, d_model)`` aligned table (row 0 = first real token position).
        set_aside: ``PositionTable.set_aside`` entries (``rows``, ``values``).

    Returns:
        ``(stored, labels)``: the rows in stored order and their stored-row indices.
    """
    extra_rows: list[int] = []
    extra_values: list[np.ndarray] = []
    for item in set_aside:
        if item.values is None:
            continue
        extra_rows.extend(int(r) for r in item.rows)
        extra_values.append(np.asarray(item.values, dtype=np.float64).reshape(len(item.rows), -1))
    if not extra_rows:
        return np.asarray(matrix, np.float64), np.arange(matrix.shape[0], dtype=np.float64)
    offset = max(extra_rows) + 1 if min(extra_rows) == 0 else 0
    labels = np.concatenate([np.asarray(extra_rows, float), np.arange(matrix.shape[0]) + offset])
    stored = np.vstack([*extra_values, np.asarray(matrix, np.float64)])
    order = np.argsort(labels, kind="stable")
    return stored[order], labels[order]


# Values reported in papers, shown next to "this run" and always labelled as reported.
# Only numbers checked against the publication go here; keys are (source, probe).
REPORTED: Mapping[tuple[str, str], tuple[float, str]] = {}


def probe_summary(
    tables: Mapping[str, np.ndarray],
    *,
    train: str = "even",
    test: str = "odd",
    folds: int = 5,
    relative: bool = True,
    seed: int = 0,
    alpha: float = 0.0,
) -> pd.DataFrame:
    """One results row per table: shape, protocol, MAE, R² and (optionally) relative error rate.

    ``tables`` maps a label to its ``(n_positions, d_model)`` matrix. Reported values from
    :data:`REPORTED` are added in their own columns, never mixed with this run's.
    """
    rows = []
    for name, matrix in tables.items():
        result = probe_positions(
            matrix, train=train, test=test, folds=folds, seed=seed, alpha=alpha
        )
        row = {
            "table": name,
            "positions": int(np.shape(matrix)[0]),
            "d_model": int(np.shape(matrix)[1]),
            "protocol": result.protocol + (" (rounded)" if result.rounded else ""),
            "MAE (this run)": result.mae,
            "R² (this run)": result.r2,
        }
        if relative:
            row["order error rate (this run)"] = probe_relative_order(
                matrix, folds=folds, seed=seed
            ).error_rate
        reported = REPORTED.get((name, "mae"))
        if reported:
            row["MAE (reported)"] = f"{reported[0]:g} ({reported[1]})"
        rows.append(row)
    return pd.DataFrame(rows)
