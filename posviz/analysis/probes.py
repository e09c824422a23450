"""Linear probes on position tables: can a straight line read the position back out of a row?

Two probes, as in the sources that asked the question:

* **Absolute position regression** (Jexus, "What has the positional "embedding" learned?", 2020;
  Wang & Chen, "What Do Position Embeddings Learn?", EMNLP 2020, code
  ``MiuLab/PE-Study/absolute.py``): fit ``position ≈ w·PE[p] + b`` by ordinary least squares (or
  ridge with α chosen by grouped, nested CV) and report the mean absolute error (MAE) and R² on
  held-out rows.
* **Relative order classification** (Wang & Chen 2020, ``MiuLab/PE-Study/relative.py``): logistic
  regression on the concatenation ``[PE[i], PE[j]]`` predicting whether ``j > i``; reported as the
  k-fold cross-validated error rate. Features are standardised with the training fold's
  statistics, so the result does not depend on the table's units; by default whole *positions*
  are held out (test pairs use only positions no training pair used), because with shared
  positions the probe can memorise a per-position score and a random table looks better than
  chance.

Every result carries its spread over folds (or position blocks) and the same statistic on a random
table of the same shape and per-column scale (:func:`posviz.analysis.evidence.random_table_like`).

Protocols (``train``/``test``):

* ``"even"``→``"odd"``: the blog's split (fit on even positions, test on odd ones — interpolation).
* ``"all"``→``"all"``: fit and test on every row (the blog's second plot). In-sample: it
  measures fit, not generalisation, and is flagged ``in_sample``.
* ``"kfold"``: shuffled k-fold cross-validation; each row is predicted once by a model that did not
  see it. With ``rounded=True`` (the default for k-fold) predictions are rounded to whole positions
  before the error is taken, as in ``absolute.py`` of MiuLab/PE-Study.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from posviz.analysis.evidence import (
    DEFAULT_ALPHAS,
    Evidence,
    choose_ridge_alphas,
    grouped_kfold,
    random_table_like,
    ridge_path,
    spread,
)
from posviz.settings import settings

TRAIN_SPLITS = ("even", "odd", "all", "kfold")
TEST_SPLITS = ("even", "odd", "all")
MIN_ROWS = 8  # fewer rows than this cannot be split into train and test in any useful way
N_BLOCKS = 5  # contiguous position blocks: the spread of a split protocol, and CV groups for α
RELATIVE_PROTOCOLS = ("positions", "pairs")
Progress = Callable[[float, str], None]  # (fraction done, what runs now)


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
        block_mae: MAE per fold (k-fold) or per contiguous block of test positions (splits):
            the spread of the MAE.
        alphas: relative ridge penalty used per fold (0 = OLS), chosen by grouped CV if asked.
        in_sample: the test rows were also training rows (all→all): a fit, not a prediction.
    """

    positions: np.ndarray
    predictions: np.ndarray
    mae: float
    r2: float
    protocol: str
    n_train: int
    rounded: bool
    block_mae: tuple[float, ...] = ()
    alphas: tuple[float, ...] = ()
    in_sample: bool = False

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
    hold_out: str = "positions"  # "positions" (leak-free) or "pairs" (Wang & Chen's protocol)


@dataclass(frozen=True)
class ProbeReport:
    """A probe's result beside the same probe on a random table of the same shape and scale."""

    result: ProbeResult
    control: ProbeResult
    mae: Evidence  # MAE (positions; lower is better) vs the random table, spread over blocks
    order: Evidence | None = None  # relative-order error rate vs the random table (chance 0.5)


def check_probe_size(n_positions: int, d_model: int) -> None:
    """Refuse a probe larger than ``settings().max_probe_cells`` (positions × width).

    Raises:
        ValueError: naming the size, the limit and the fix.
    """
    limit = settings().max_probe_cells
    cells = int(n_positions) * int(d_model)
    if cells > limit:
        raise ValueError(
            f"A probe of {n_positions} positions × {d_model} dimensions is {cells:,} cells; this "
            f"server allows {limit:,} (POSVIZ_MAX_PROBE_CELLS). Use fewer positions or a narrower "
            "table."
        )


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


def _blocks(labels: np.ndarray, n_blocks: int = N_BLOCKS) -> np.ndarray:
    """Contiguous position block of each row (``0 … n_blocks−1``): neighbours share a block."""
    ranks = np.argsort(np.argsort(labels, kind="stable"), kind="stable")
    return (ranks * n_blocks) // max(labels.size, 1)


def _fit_predict(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    *,
    alpha: float | str,
    seed: int,
) -> tuple[np.ndarray, float]:
    """Predictions for ``x_test`` and the relative α used (``"cv"``: grouped CV on train only).

    One solver for every α (:func:`posviz.analysis.evidence.ridge_path`): 0 is ordinary least
    squares (minimum-norm when the table is wider than its training rows), α > 0 ridge with the
    penalty α·mean(s²) of the centred training rows, so a table × c gets the same answer.
    """
    if alpha == "cv":
        groups = _blocks(y_train, n_blocks=max(2, min(N_BLOCKS, y_train.size // 2)))
        (chosen,) = choose_ridge_alphas(
            x_train, y_train, groups, DEFAULT_ALPHAS, n_folds=int(groups.max()) + 1, seed=seed
        )
    else:
        chosen = float(alpha)
    return ridge_path(x_train, y_train, x_test, [chosen])[0, :, 0], chosen


def probe_positions(
    matrix: np.ndarray,
    *,
    train: str = "even",
    test: str = "odd",
    folds: int = 5,
    rounded: bool | None = None,
    alpha: float | str = 0.0,
    seed: int = 0,
    positions: np.ndarray | None = None,
) -> ProbeResult:
    """Linear regression from each row of a position table to its position index.

    Jexus (2020): train on even rows, test on odd rows. Wang & Chen (EMNLP 2020, MiuLab/PE-Study
    ``absolute.py``): shuffled 5-fold CV with ``LinearRegression`` and rounded predictions,
    reported as mean absolute error.

    Args:
        matrix: ``(n_positions, d_model)`` table; row ``p`` is the vector for position ``p``.
        train: ``"even"``, ``"odd"``, ``"all"`` or ``"kfold"``; with ``"kfold"``, ``test`` is
            ignored: every row is predicted once by the fold model that did not see it.
        test: ``"even"``, ``"odd"`` or ``"all"``.
        folds: number of folds for ``"kfold"`` (2 … n_positions).
        rounded: round predictions to whole positions before scoring; default: only for k-fold.
        alpha: 0 (default, the papers') is ordinary least squares with intercept; a float > 0 is a
            ridge penalty relative to ``mean(s²)`` of the centred training rows (unit-free);
            ``"cv"`` chooses it per fit by CV over contiguous position blocks of the training
            rows only (nested inside k-fold; the test rows never choose their α).
        seed: shuffles the rows before splitting into folds (k-fold only).
        positions: ``(n_positions,)`` labels of the rows; default ``0 … n−1``. Pass stored-row
            indices here when probing a table that keeps its padding/offset rows.

    Returns:
        :class:`ProbeResult` with predictions, MAE, R² and per-block MAE on the test rows.

    Raises:
        ValueError: unknown split, too few rows, non-finite values, bad α, too large a table.
    """
    matrix = _check_matrix(matrix)
    n = matrix.shape[0]
    check_probe_size(n, matrix.shape[1])
    labels = np.arange(n, dtype=np.float64) if positions is None else np.asarray(positions, float)
    if labels.shape != (n,):
        raise ValueError(f"positions must have one label per row ({n}); got shape {labels.shape}.")
    if train not in TRAIN_SPLITS:
        raise ValueError(f"train={train!r} is not one of {', '.join(TRAIN_SPLITS)}.")
    if train != "kfold" and test not in TEST_SPLITS:
        raise ValueError(f"test={test!r} is not one of {', '.join(TEST_SPLITS)}.")
    if isinstance(alpha, str) and alpha != "cv":
        raise ValueError(f"alpha={alpha!r}: use a number ≥ 0 or 'cv' (chosen by grouped CV).")
    if not isinstance(alpha, str) and alpha < 0:
        raise ValueError(f"alpha={alpha} must be ≥ 0 (0 is ordinary least squares) or 'cv'.")
    if train == "kfold":
        return _probe_kfold(
            matrix, labels, folds=folds, rounded=rounded is not False, alpha=alpha, seed=seed
        )
    train_rows, test_rows = _split(labels, train), _split(labels, test)
    predictions, chosen = _fit_predict(
        matrix[train_rows], labels[train_rows], matrix[test_rows], alpha=alpha, seed=seed
    )
    result = _result(
        labels[test_rows],
        predictions,
        protocol=f"{train}→{test}",
        n_train=int(train_rows.sum()),
        rounded=bool(rounded),
    )
    test_labels = labels[test_rows]
    errors = np.abs(result.predictions - test_labels)
    blocks = _blocks(test_labels)
    return _with(
        result,
        block_mae=tuple(float(errors[blocks == b].mean()) for b in np.unique(blocks)),
        alphas=(chosen,),
        in_sample=bool((train_rows & test_rows).any()),
    )


def _with(result: ProbeResult, **changes: object) -> ProbeResult:
    return replace(result, **changes)  # type: ignore[arg-type]


def _probe_kfold(
    matrix: np.ndarray,
    labels: np.ndarray,
    *,
    folds: int,
    rounded: bool,
    alpha: float | str,
    seed: int,
) -> ProbeResult:
    n = matrix.shape[0]
    if not 2 <= folds <= n:
        raise ValueError(f"folds={folds} must be between 2 and the number of rows ({n}).")
    predictions = np.empty(n)
    n_train = n
    chosen, fold_rows = [], []
    # Every row its own group: plain shuffled k-fold (scikit-learn's splitter, seeded).
    for k, (keep, held_out) in enumerate(grouped_kfold(np.arange(n), folds, seed=seed)):
        predictions[held_out], a = _fit_predict(
            matrix[keep], labels[keep], matrix[held_out], alpha=alpha, seed=seed + k
        )
        chosen.append(a)
        fold_rows.append(held_out)
        n_train = min(n_train, int(keep.size))
    result = _result(
        labels, predictions, protocol=f"{folds}-fold CV", n_train=n_train, rounded=rounded
    )
    errors = np.abs(result.predictions - labels)
    return _with(
        result,
        block_mae=tuple(float(errors[rows].mean()) for rows in fold_rows),
        alphas=tuple(chosen),
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


def _pairs(
    rows: np.ndarray, count: int, generator: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct ordered pairs ``(i, j)``, ``i ≠ j`` or not, drawn from ``rows``."""
    m = rows.size
    flat = generator.choice(m * m, size=min(count, m * m), replace=False)
    return rows[flat // m], rows[flat % m]


def _order_error(
    matrix: np.ndarray,
    train_pairs: tuple[np.ndarray, np.ndarray],
    test_pairs: tuple[np.ndarray, np.ndarray],
    *,
    max_iter: int,
) -> float | None:
    """Test error of standardised logistic regression on ``[PE[i], PE[j]] → j > i``."""
    # Lazy: scikit-learn is slow to import.
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def features(pairs: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return np.hstack((matrix[pairs[0]], matrix[pairs[1]])), pairs[1] > pairs[0]

    x_train, y_train = features(train_pairs)
    x_test, y_test = features(test_pairs)
    if y_train.all() or not y_train.any() or y_test.size == 0:
        return None  # a degenerate fold; too few pairs to fit both classes
    # The scaler is fitted on the training pairs only (inside the pipeline): the L2 penalty then
    # sees unit-free features, so a table × c gets the same answer, and no test pair leaks in.
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter))
    model.fit(x_train, y_train)
    return float((model.predict(x_test) != y_test).mean())


def probe_relative_order(
    matrix: np.ndarray,
    *,
    n_pairs: int | None = None,
    folds: int = 5,
    seed: int = 0,
    max_iter: int = 1000,
    hold_out: str = "positions",
) -> RelativeProbeResult:
    """Logistic-regression probe "is position j after position i?" from ``[PE[i], PE[j]]``.

    Wang & Chen (EMNLP 2020), MiuLab/PE-Study ``relative.py``: pairs ``(i, j)`` drawn without
    replacement (as many pairs as positions by default), label ``j > i``, k-fold CV error rate of
    ``LogisticRegression``. Here features are standardised per training fold (unit-free), and
    ``hold_out="positions"`` (default) splits the *positions* into folds: training pairs use only
    training positions and test pairs only held-out ones, so no per-position score can be
    memorised. ``hold_out="pairs"`` is the paper's protocol (pairs split, positions shared).

    Args:
        matrix: ``(n_positions, d_model)`` table.
        n_pairs: pairs to draw in all (default ``n_positions``, as the paper; at most ``n²``).
        folds: cross-validation folds (2 … n_pairs).
        seed: random pairs and fold assignment.
        hold_out: ``"positions"`` or ``"pairs"``.

    Returns:
        :class:`RelativeProbeResult`; 0.5 is chance, 0 is a perfect reading of order.

    Raises:
        ValueError: too few rows, bad ``n_pairs``/``folds``/``hold_out``, or one-class pairs.
    """
    matrix = _check_matrix(matrix)
    n = matrix.shape[0]
    check_probe_size(n, 2 * matrix.shape[1])
    n_pairs = n if n_pairs is None else int(n_pairs)
    if folds < 2:
        raise ValueError(f"folds={folds} must be at least 2.")
    if not folds <= n_pairs <= n * n:
        raise ValueError(f"n_pairs={n_pairs} must be between folds ({folds}) and n² ({n * n}).")
    if hold_out not in RELATIVE_PROTOCOLS:
        raise ValueError(f"hold_out={hold_out!r} is not one of {', '.join(RELATIVE_PROTOCOLS)}.")
    if hold_out == "positions" and folds > n:
        raise ValueError(
            f"folds={folds} is more than the table's {n} positions; holding out positions needs "
            "at least one position per fold. Use fewer folds."
        )
    generator = np.random.default_rng(seed)
    errors = []
    if hold_out == "pairs":
        first, second = _pairs(np.arange(n), n_pairs, generator)
        for keep, held_out in grouped_kfold(np.arange(first.size), folds, seed=seed):
            error = _order_error(
                matrix,
                (first[keep], second[keep]),
                (first[held_out], second[held_out]),
                max_iter=max_iter,
            )
            if error is not None:
                errors.append(error)
    else:
        # Folds of positions (each position its own group), then pairs within each side.
        for keep, held_out in grouped_kfold(np.arange(n), folds, seed=seed):
            n_test = max(1, n_pairs // folds)
            error = _order_error(
                matrix,
                _pairs(keep, n_pairs - n_test, generator),
                _pairs(held_out, n_test, generator),
                max_iter=max_iter,
            )
            if error is not None:
                errors.append(error)
    if not errors:
        raise ValueError("Every fold had pairs of one order only; draw more pairs (n_pairs).")
    return RelativeProbeResult(float(np.mean(errors)), tuple(errors), n_pairs, folds, hold_out)


def probe_with_control(
    matrix: np.ndarray,
    *,
    train: str = "even",
    test: str = "odd",
    folds: int = 5,
    alpha: float | str = 0.0,
    seed: int = 0,
    positions: np.ndarray | None = None,
    relative: bool = False,
    hold_out: str = "positions",
    progress: Progress | None = None,
) -> ProbeReport:
    """:func:`probe_positions` (and optionally :func:`probe_relative_order`) on ``matrix`` and,
    the same way, on a random table of its shape and per-column scale.

    Spreads: MAE over folds (k-fold) or contiguous blocks of test positions (splits); order error
    over folds. The control uses :func:`posviz.analysis.evidence.random_table_like` with ``seed``.
    ``progress(fraction, what)`` is called before each of the two (four with ``relative``) fits.
    """
    steps = 4 if relative else 2
    report = progress or (lambda fraction, what: None)
    control_matrix = random_table_like(_check_matrix(matrix), seed=seed)
    options = {"train": train, "test": test, "folds": folds, "alpha": alpha, "seed": seed}
    report(0 / steps, "position probe on the table")
    result = probe_positions(matrix, positions=positions, **options)
    report(1 / steps, "position probe on the random-table control")
    control = probe_positions(control_matrix, positions=positions, **options)
    mae = Evidence(
        label=f"MAE ({result.protocol})",
        value=spread(result.block_mae),
        control=spread(control.block_mae),
        control_label="random table",
        higher_is_better=False,
        unit="positions",
    )
    order = None
    if relative:
        report(2 / steps, "order probe on the table")
        mine = probe_relative_order(matrix, folds=folds, seed=seed, hold_out=hold_out)
        report(3 / steps, "order probe on the random-table control")
        theirs = probe_relative_order(control_matrix, folds=folds, seed=seed, hold_out=hold_out)
        order = Evidence(
            label=f"order error (held-out {hold_out})",
            value=spread(mine.fold_error_rates),
            control=spread(theirs.fold_error_rates),
            control_label="random table",
            higher_is_better=False,
        )
    return ProbeReport(result=result, control=control, mae=mae, order=order)


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
