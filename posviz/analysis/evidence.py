"""Honest evidence: a number with its spread, its same-procedure control, and leak-free tuning.

Every experiment in posviz reports a :class:`Spread` (mean ± std over seeds or folds, with a 95%
interval for the mean) next to the same statistic computed the same way on a control (a random
table of the same shape and scale, a random subspace, no positions), bundled as an
:class:`Evidence` whose :meth:`Evidence.verdict` says only what the two intervals support.

Hyper-parameters (the ridge penalty) are chosen by cross-validation *grouped* so that rows that
share information (overlapping windows, the same position) never sit on both sides of a split;
the penalty grid is relative to the data's own scale, so a table ×c gets the same answer.

numpy only at import; scipy (for the t quantile) is imported lazily, inside the one function
that needs it, to keep page start-up light.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_ALPHAS: tuple[float, ...] = tuple(float(a) for a in np.logspace(-6, 2, 17))
"""Relative ridge penalties: α·mean(sᵢ²) with sᵢ the singular values of the centred X."""


# --------------------------------------------------------------------------- spread


def _t_quantile(dof: float) -> float:
    """The 97.5% quantile of Student's t with ``dof`` degrees of freedom (two-sided 95%)."""
    # Lazy: scipy is heavy and only needed once a spread is computed.
    from scipy.stats import t as student_t

    return float(student_t.ppf(0.975, dof))


@dataclass(frozen=True)
class Spread:
    """Mean and spread of repeated measurements (over seeds or folds).

    ``std`` is the sample standard deviation of the values (``ddof=1``); ``low``/``high`` bound a
    95% confidence interval for the mean, ``mean ± t₀.₉₇₅,ₙ₋₁ · std / √n`` (Student's t). With a
    single value the spread is unknown: ``std = 0`` and the interval is ``(-inf, inf)``.
    """

    mean: float
    std: float
    n: int
    low: float
    high: float

    def text(self, digits: int = 2) -> str:
        """``"0.20 ± 0.02"`` (mean ± std); ``"0.20 (n=1)"`` when no spread is known."""
        if self.n < 2:
            return f"{self.mean:.{digits}f} (n=1)"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"

    def __format__(self, spec: str) -> str:
        """``f"{s}"`` → ``text()``; ``f"{s:.3}"`` or ``f"{s:.3f}"`` → ``text(3)``."""
        if not spec:
            return self.text()
        digits = spec.lstrip(".").rstrip("f")
        if not digits.isdigit():
            raise ValueError(f"Spread format {spec!r} not understood; use e.g. '.3' or '.3f'.")
        return self.text(int(digits))

    def __str__(self) -> str:
        return self.text()

    def overlaps(self, other: Spread) -> bool:
        """Whether the two 95% intervals share any point."""
        return self.low <= other.high and other.low <= self.high


def spread(values: Sequence[float] | np.ndarray, *, seed: int = 0) -> Spread:
    """Mean, sample std and 95% t-interval of ``values`` (one value per seed or fold).

    ``seed`` is accepted for API symmetry with resampling estimators; the t-interval is exact
    arithmetic and uses no randomness.

    Raises:
        ValueError: no values, or a NaN/inf among them.
    """
    del seed  # the t-interval is deterministic
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size == 0:
        raise ValueError("spread() got no values; pass one value per seed or fold.")
    if not np.isfinite(array).all():
        raise ValueError(f"spread() got non-finite values {array.tolist()}; check the experiment.")
    mean = float(array.mean())
    if array.size < 2:
        return Spread(mean=mean, std=0.0, n=1, low=-math.inf, high=math.inf)
    std = float(array.std(ddof=1))
    half = _t_quantile(array.size - 1) * std / math.sqrt(array.size)
    return Spread(mean=mean, std=std, n=int(array.size), low=mean - half, high=mean + half)


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class Evidence:
    """A measured value beside the same statistic on a control, computed the same way."""

    label: str
    value: Spread
    control: Spread
    control_label: str
    higher_is_better: bool
    unit: str = ""

    def text(self, digits: int = 2) -> str:
        """``"0.20 ± 0.02; random table 0.50 ± 0.02"`` (with the unit, when there is one)."""
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"{self.value.text(digits)}{unit}; "
            f"{self.control_label} {self.control.text(digits)}{unit}"
        )

    def differs(self) -> bool:
        """Whether the value's and the control's 95% intervals do not overlap.

        Non-overlap of two 95% intervals is a conservative test (it implies p < 0.05 for the
        difference of means); overlap is reported as "no difference within the spread".
        """
        return not self.value.overlaps(self.control)

    def better(self) -> bool:
        """Whether the value differs from the control in the good direction."""
        if not self.differs():
            return False
        above = self.value.mean > self.control.mean
        return above == self.higher_is_better

    def verdict(self) -> str:
        """Plain words that say only what the two intervals support."""
        if self.value.n < 2 or self.control.n < 2:
            return (
                f"{self.label}: one measurement only, so no spread is known; "
                f"no conclusion against {self.control_label}."
            )
        if not self.differs():
            return f"{self.label}: no difference from {self.control_label} within the spread."
        side = "higher" if self.value.mean > self.control.mean else "lower"
        quality = "better" if self.better() else "worse"
        return (
            f"{self.label} is {side} than {self.control_label} ({quality}; the 95% intervals "
            "do not overlap)."
        )


def evidence(
    label: str,
    values: Sequence[float] | np.ndarray,
    control_values: Sequence[float] | np.ndarray,
    *,
    control_label: str,
    higher_is_better: bool,
    unit: str = "",
) -> Evidence:
    """Build an :class:`Evidence` from raw per-seed/per-fold values of a result and its control."""
    return Evidence(
        label=label,
        value=spread(values),
        control=spread(control_values),
        control_label=control_label,
        higher_is_better=higher_is_better,
        unit=unit,
    )


def compare(
    values_a: Sequence[float] | np.ndarray,
    values_b: Sequence[float] | np.ndarray,
    *,
    paired: bool = False,
) -> Spread:
    """Difference of means ``mean(a) − mean(b)`` with its 95% interval.

    Paired (same seeds/folds on both sides): the spread of ``a − b`` (Student's t).
    Unpaired: Welch's interval, ``d ± t_ν · se`` with ``se = √(s_a²/n_a + s_b²/n_b)`` and the
    Welch–Satterthwaite ``ν``; the returned ``std`` is then ``se`` (the difference's standard
    error) and ``n`` is ``n_a + n_b``.

    Raises:
        ValueError: paired with unequal lengths, or fewer than two values on a side (unpaired).
    """
    a = np.asarray(values_a, dtype=np.float64).ravel()
    b = np.asarray(values_b, dtype=np.float64).ravel()
    if paired:
        if a.shape != b.shape:
            raise ValueError(
                f"Paired comparison needs equal lengths, got {a.size} and {b.size}; "
                "use paired=False for independent samples."
            )
        return spread(a - b)
    if a.size < 2 or b.size < 2:
        raise ValueError(
            f"Unpaired comparison needs at least 2 values per side, got {a.size} and {b.size}."
        )
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    diff = float(a.mean() - b.mean())
    if se == 0.0:
        return Spread(mean=diff, std=0.0, n=a.size + b.size, low=diff, high=diff)
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = _t_quantile(dof) * se
    return Spread(mean=diff, std=se, n=a.size + b.size, low=diff - half, high=diff + half)


# --------------------------------------------------------------------------- seeds, controls


def seeds(seed: int, n: int) -> list[int]:
    """``n`` independent, reproducible child seeds of ``seed`` (``numpy.random.SeedSequence``)."""
    if n < 1:
        raise ValueError(f"seeds() needs n ≥ 1, got {n}.")
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(n, dtype=np.uint32)]


def rng(seed: int) -> np.random.Generator:
    """A reproducible generator for ``seed`` (PCG64 seeded through ``SeedSequence``)."""
    return np.random.default_rng(np.random.SeedSequence(seed))


def random_table_like(matrix: np.ndarray, *, seed: int) -> np.ndarray:
    """The "random table" control: Gaussian noise with each column's mean and std of ``matrix``.

    ``R[p, j] = mean_j + std_j · z[p, j]``, ``z ~ N(0, 1)`` i.i.d. Same shape and per-column scale
    as the table, and no relation between a row and its position.

    Returns:
        ``(n_positions, d_model)`` float64.
    """
    table = np.asarray(matrix, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"random_table_like needs a 2-D table, got shape {table.shape}.")
    mean, std = table.mean(axis=0), table.std(axis=0)
    return mean + std * rng(seed).standard_normal(table.shape)


def principal_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Principal angles (degrees, ascending) between the column spans of ``a`` and ``b``.

    ``cos θᵢ = σᵢ(Q_aᵀ Q_b)`` with ``Q`` orthonormal bases (Björck & Golub, 1973).

    Args:
        a: ``(dim, k1)``; b: ``(dim, k2)``.
    Returns:
        ``(min(k1, k2),)`` float64 in [0, 90].
    """
    qa, _ = np.linalg.qr(np.asarray(a, dtype=np.float64))
    qb, _ = np.linalg.qr(np.asarray(b, dtype=np.float64))
    cosines = np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0.0, 1.0)
    return np.degrees(np.arccos(cosines))


def random_subspace_angles(dim: int, k1: int, k2: int, *, seed: int, n: int) -> np.ndarray:
    """Principal angles between ``n`` pairs of uniformly random subspaces of ℝ^dim.

    The baseline for "how aligned are these two subspaces": for random subspaces
    ``E[Σᵢ cos² θᵢ] = k1·k2/dim`` (the expected trace of a product of two random projections).

    Returns:
        ``(n, min(k1, k2))`` float64 degrees, each row ascending.
    """
    if not (1 <= k1 <= dim and 1 <= k2 <= dim) or n < 1:
        raise ValueError(
            f"random_subspace_angles needs 1 ≤ k1, k2 ≤ dim and n ≥ 1; got dim={dim}, "
            f"k1={k1}, k2={k2}, n={n}."
        )
    generator = rng(seed)
    out = np.empty((n, min(k1, k2)))
    for i in range(n):
        # Gaussian columns span a Haar-uniform random subspace.
        a = generator.standard_normal((dim, k1))
        b = generator.standard_normal((dim, k2))
        out[i] = principal_angles(a, b)
    return out


# --------------------------------------------------------------------------- grouped CV, ridge


def grouped_kfold(
    groups: Sequence[int] | np.ndarray, n_folds: int, *, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """K folds that never split a group: each group's rows are all in train or all in test.

    Groups are shuffled (reproducibly for ``seed``) and dealt into ``n_folds`` near-equal parts.

    Returns:
        ``n_folds`` pairs ``(train_rows, test_rows)`` of sorted int indices.
    Raises:
        ValueError: fewer distinct groups than folds, or ``n_folds < 2``.
    """
    labels = np.asarray(groups).ravel()
    unique = np.unique(labels)
    if n_folds < 2 or unique.size < n_folds:
        raise ValueError(
            f"Grouped {n_folds}-fold CV needs n_folds ≥ 2 and at least n_folds distinct groups; "
            f"got {unique.size} group(s). Use fewer folds or more data."
        )
    order = rng(seed).permutation(unique)
    fold_of_group = {g: i % n_folds for i, g in enumerate(order)}
    fold = np.array([fold_of_group[g] for g in labels])
    rows = np.arange(labels.size)
    return [(rows[fold != k], rows[fold == k]) for k in range(n_folds)]


def _ridge_path(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alphas: Sequence[float]
) -> np.ndarray:
    """Test predictions of ridge (with intercept) for every relative α, from one decomposition.

    ``β(α) = V diag(1 / (s² + α·mean(s²))) Vᵀ X_cᵀ (y − ȳ)`` on the centred ``X_c = U S Vᵀ``
    (the normal equations ``(X_cᵀX_c + λI) β = X_cᵀ(y − ȳ)`` in the eigenbasis of ``X_cᵀX_c``).
    With more rows than columns ``V`` and ``s²`` come from ``eigh`` of the ``(d, d)`` Gram
    matrix (about 5× cheaper than an SVD of the ``(n, d)`` data); otherwise from the SVD.
    ``mean(s²) = ‖X_c‖_F² / min(n, d)`` either way.

    Returns:
        ``(len(alphas), n_test, n_targets)``.
    """
    x_mean, y_mean = x_train.mean(axis=0), y_train.mean(axis=0)
    centred = x_train - x_mean
    n, d = centred.shape
    if n > d:
        s2, v = np.linalg.eigh(centred.T @ centred)
        s2 = np.clip(s2, 0.0, None)  # rounding can leave tiny negative eigenvalues
    else:
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        s2, v = s**2, vt.T
    xty = v.T @ (centred.T @ (y_train - y_mean))  # (k, t)
    proj = (x_test - x_mean) @ v  # (n_test, k)
    scale = float(np.sum(centred**2)) / min(n, d) or 1.0
    out = np.empty((len(alphas), x_test.shape[0], y_train.shape[1]))
    for i, alpha in enumerate(alphas):
        shrink = 1.0 / (s2 + alpha * scale)
        out[i] = proj @ (shrink[:, None] * xty) + y_mean
    return out


def _as_xy(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    ya = ya[:, None] if ya.ndim == 1 else ya
    if xa.ndim != 2 or ya.shape[0] != xa.shape[0]:
        raise ValueError(
            f"X must be (n, d) and y (n,) or (n, t) with the same n; got {xa.shape} and {ya.shape}."
        )
    return xa, ya


def ridge_cv_errors(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    n_folds: int = 5,
    seed: int = 0,
    per_target: bool = False,
) -> np.ndarray:
    """Mean squared held-out error of ridge for each relative α, over grouped folds.

    Returns:
        ``(len(alphas),)`` float64 (all targets together), or ``(len(alphas), n_targets)`` with
        ``per_target=True`` (each target's own error: the same folds, one decomposition each).
    """
    xa, ya = _as_xy(x, y)
    errors = np.zeros((len(alphas), ya.shape[1]))
    for train, test in grouped_kfold(groups, n_folds, seed=seed):
        pred = _ridge_path(xa[train], ya[train], xa[test], alphas)
        errors += ((pred - ya[test][None]) ** 2).sum(axis=1)
    if per_target:
        return errors / ya.shape[0]
    return errors.sum(axis=1) / ya.size


def choose_ridge_alpha(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    n_folds: int = 5,
    seed: int = 0,
) -> float:
    """The relative ridge penalty with the lowest grouped-CV error.

    Folds are grouped (rows of one group — one window block, one text, one position — are never
    split), so near-duplicate rows cannot reward a tiny penalty, which leave-one-row-out does
    when rows overlap. α is relative to ``mean(s²)`` of the centred ``x``, so ``x × c`` chooses the
    same α. Ties go to the larger penalty.
    """
    errors = ridge_cv_errors(x, y, groups, alphas, n_folds=n_folds, seed=seed)
    best = float(errors.min())
    # Largest α within floating noise of the best error: prefer the simpler model.
    candidates = [a for a, e in zip(alphas, errors, strict=True) if e <= best * (1 + 1e-9)]
    return float(max(candidates))


def choose_ridge_alphas(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    n_folds: int = 5,
    seed: int = 0,
) -> list[float]:
    """:func:`choose_ridge_alpha` for each column of ``y`` (``(n, t)``) on the same folds.

    Equal to calling :func:`choose_ridge_alpha` once per column, at the cost of one call: the
    folds' decompositions of ``x`` are shared by every target.
    """
    errors = ridge_cv_errors(x, y, groups, alphas, n_folds=n_folds, seed=seed, per_target=True)
    chosen = []
    for column in errors.T:
        best = float(column.min())
        chosen.append(
            float(max(a for a, e in zip(alphas, column, strict=True) if e <= best * (1 + 1e-9)))
        )
    return chosen


def ridge_path(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alphas: Sequence[float]
) -> np.ndarray:
    """Ridge (with intercept) test predictions for every relative α in ``alphas``, from one
    decomposition of the training rows.

    Returns:
        ``(len(alphas), n_test, n_targets)`` (a 1-D ``y_train`` is one target).
    """
    xa, ya = _as_xy(x_train, y_train)
    return _ridge_path(xa, ya, np.asarray(x_test, dtype=np.float64), alphas)


def ridge_predict(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, *, alpha: float
) -> np.ndarray:
    """Ridge (with intercept) fit on train, predicted on test, for one relative α.

    Returns:
        ``(n_test,)`` for a 1-D ``y_train``, else ``(n_test, n_targets)``.
    """
    xa, ya = _as_xy(x_train, y_train)
    pred = _ridge_path(xa, ya, np.asarray(x_test, dtype=np.float64), [alpha])[0]
    return pred[:, 0] if np.asarray(y_train).ndim == 1 else pred


def nested_ridge_predictions(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    n_folds: int = 5,
    seed: int = 0,
) -> tuple[np.ndarray, list[np.ndarray], list[float]]:
    """Out-of-fold ridge predictions with α chosen inside each outer training set (nested CV).

    Outer and inner folds are both grouped. The test rows of an outer fold never influence its α.

    Returns:
        ``(predictions like y, [test_rows per fold], [α per fold])``.
    """
    xa, ya = _as_xy(x, y)
    labels = np.asarray(groups).ravel()
    pred = np.empty_like(ya)
    folds, chosen = [], []
    for k, (train, test) in enumerate(grouped_kfold(labels, n_folds, seed=seed)):
        inner = min(n_folds, np.unique(labels[train]).size)
        alpha = choose_ridge_alpha(
            xa[train], ya[train], labels[train], alphas, n_folds=inner, seed=seed + k + 1
        )
        pred[test] = _ridge_path(xa[train], ya[train], xa[test], [alpha])[0]
        folds.append(test)
        chosen.append(alpha)
    return (pred[:, 0] if np.asarray(y).ndim == 1 else pred), folds, chosen
