"""Honest evidence: a number with its spread, its same-procedure control, and leak-free tuning.

Every experiment in posviz reports a :class:`Spread` (mean ± std over seeds or folds, with a 95%
interval for the mean) next to the same statistic computed the same way on a control (a random
table of the same shape and scale, a random subspace, no positions), bundled as an
:class:`Evidence` whose :meth:`Evidence.verdict` says only what the two intervals support.

Hyper-parameters (the ridge penalty) are chosen by cross-validation *grouped* so that rows that
share information (overlapping windows, the same position) never sit on both sides of a split;
the penalty grid is relative to the data's own scale, so a table ×c gets the same answer.

Which library does what: scikit-learn splits the folds (``GroupKFold``), scipy gives the t
quantile and the principal angles (``scipy.linalg.subspace_angles``), and numpy's linear algebra
solves ridge (:func:`ridge_path`, the one solver). numpy only at import; scipy and scikit-learn
are imported lazily, inside the functions that need them, to keep page start-up light.
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

    ``scipy.linalg.subspace_angles`` (Björck & Golub, 1973, with Knyazev & Argentati's 2002
    sine formula for small angles), in degrees and smallest first: the one routine both a
    measurement and its random-subspace control (:func:`random_subspace_angles`) go through.

    Args:
        a: ``(dim, k1)``; b: ``(dim, k2)``, each of full column rank.
    Returns:
        ``(min(k1, k2),)`` float64 in [0, 90].
    """
    # Lazy: scipy is heavy and only needed once angles are asked for.
    from scipy.linalg import subspace_angles

    radians = subspace_angles(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return np.degrees(radians)[::-1]  # scipy returns them largest first


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

    scikit-learn's ``GroupKFold(shuffle=True)``: the distinct groups are shuffled (reproducibly
    for ``seed``, through ``numpy.random.SeedSequence`` so any seed ≥ 0 works) and cut into
    ``n_folds`` near-equal runs. With every row its own group (``groups = arange(n)``) this is
    plain shuffled k-fold, the same folds as ``KFold(shuffle=True)`` with the same state.

    Returns:
        ``n_folds`` pairs ``(train_rows, test_rows)`` of sorted int indices.
    Raises:
        ValueError: fewer distinct groups than folds, or ``n_folds < 2``.
    """
    from sklearn.model_selection import GroupKFold  # lazy: scikit-learn is slow to import

    labels = np.asarray(groups).ravel()
    distinct = np.unique(labels).size
    if n_folds < 2 or distinct < n_folds:
        raise ValueError(
            f"Grouped {n_folds}-fold CV needs n_folds ≥ 2 and at least n_folds distinct groups; "
            f"got {distinct} group(s). Use fewer folds or more data."
        )
    splitter = GroupKFold(n_splits=n_folds, shuffle=True, random_state=seeds(seed, 1)[0])
    return list(splitter.split(np.zeros((labels.size, 1)), groups=labels))


GRAM_MIN_ALPHA = 1e-6
"""Smallest relative α that :func:`ridge_path` solves through the Gram matrix's eigenvalues."""


def _spectrum(
    centred: np.ndarray, targets: np.ndarray, *, exact: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s², V, Vᵀ X_cᵀ Y_c)`` for the centred rows ``X_c = U diag(s) Vᵀ`` and centred targets.

    numpy's decompositions throughout, not scipy's LAPACK wrappers: numpy releases the GIL while
    LAPACK runs, and a heavy probe runs on a server thread beside every other session (scipy's
    ``lstsq(lapack_driver="gelsy")``, faster here, held the GIL and froze other sessions for up
    to 17 s; ``bench/bench_heavy_probes.py``).
    """
    n, d = centred.shape
    if n > d and not exact:
        # eigh of the (d, d) Gram matrix: about 3× cheaper than the QR + SVD below on tall data.
        # Squaring loses precision only at eigenvalues below about ε·s_max², far under every
        # penalty ≥ GRAM_MIN_ALPHA·mean(s²), so ridge answers do not move.
        s2, v = np.linalg.eigh(centred.T @ centred)
        return np.clip(s2, 0.0, None), v, v.T @ (centred.T @ targets)
    if n > d:
        # R of [X_c | Y_c]: its top-left block is X_c's R, its top-right block Q_xᵀ Y_c; then
        # the SVD of the small R. LAPACK's least-squares solver (gelsd) works the same way.
        r = np.linalg.qr(np.hstack((centred, targets)), mode="r")
        u, s, vt = np.linalg.svd(r[:d, :d])
        uty = u.T @ r[:d, d:]
    else:
        u, s, vt = np.linalg.svd(centred, full_matrices=False)
        uty = u.T @ targets
    return s**2, vt.T, s[:, None] * uty


def _as_xy(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    ya = ya[:, None] if ya.ndim == 1 else ya
    if xa.ndim != 2 or ya.ndim != 2 or ya.shape[0] != xa.shape[0]:
        raise ValueError(
            f"X must be (n, d) and y (n,) or (n, t) with the same n; got {xa.shape} and {ya.shape}."
        )
    return xa, ya


def ridge_path(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alphas: Sequence[float]
) -> np.ndarray:
    """Ridge (with intercept) test predictions for every relative α, from one decomposition of
    the training rows: the one linear solver of posviz's probes.

    ``β(α) = V diag(1 / (s² + α·mean(s²))) Vᵀ X_cᵀ (y − ȳ)`` on the centred ``X_c = U S Vᵀ``
    (the normal equations ``(X_cᵀX_c + λI) β = X_cᵀ(y − ȳ)`` in the eigenbasis of ``X_cᵀX_c``;
    Hoerl & Kennard 1970), intercept ``ȳ − x̄·β`` (not penalised). The penalty is relative,
    ``λ = α·mean(s²)`` with ``mean(s²) = ‖X_c‖_F² / min(n, d)``, so ``x × c`` gives the same
    predictions for the same α. ``α = 0`` is ordinary least squares, the minimum-norm solution
    when ``d ≥ n``: singular values below ``ε·max(n, d)·s_max`` count as zero, numpy's
    ``lstsq`` cut-off (what ``sklearn.linear_model.LinearRegression`` returns).

    Tall data with every ``α ≥`` :data:`GRAM_MIN_ALPHA` is decomposed through its Gram matrix;
    otherwise by an SVD (after a QR when tall), exact enough for ``α = 0``.

    Returns:
        ``(len(alphas), n_test, n_targets)`` (a 1-D ``y_train`` is one target).
    Raises:
        ValueError: mismatched shapes, no α, or a negative α.
    """
    xa, ya = _as_xy(x_train, y_train)
    if len(alphas) == 0 or min(alphas) < 0:
        raise ValueError(f"ridge_path needs relative penalties α ≥ 0; got {list(alphas)}.")
    x_mean, y_mean = xa.mean(axis=0), ya.mean(axis=0)
    centred = xa - x_mean
    n, d = centred.shape
    s2, v, xty = _spectrum(centred, ya - y_mean, exact=min(alphas) < GRAM_MIN_ALPHA)
    proj = (np.asarray(x_test, dtype=np.float64) - x_mean) @ v  # (n_test, k)
    scale = float(np.sum(centred**2)) / min(n, d) or 1.0
    rank_floor = (np.finfo(np.float64).eps * max(n, d)) ** 2 * float(s2.max(initial=0.0))
    out = np.empty((len(alphas), proj.shape[0], ya.shape[1]))
    for i, alpha in enumerate(alphas):
        if alpha > 0:
            shrink = 1.0 / (s2 + alpha * scale)
        else:
            shrink = np.divide(1.0, s2, out=np.zeros_like(s2), where=s2 > rank_floor)
        out[i] = proj @ (shrink[:, None] * xty) + y_mean
    return out


def _cv_errors(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float],
    *,
    n_folds: int,
    seed: int,
) -> np.ndarray:
    """Held-out mean squared error of ridge, ``(len(alphas), n_targets)``, over grouped folds."""
    errors = np.zeros((len(alphas), y.shape[1]))
    for train, test in grouped_kfold(groups, n_folds, seed=seed):
        pred = ridge_path(x[train], y[train], x[test], alphas)
        errors += ((pred - y[test][None]) ** 2).sum(axis=1)
    return errors / y.shape[0]


def choose_ridge_alphas(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    n_folds: int = 5,
    seed: int = 0,
) -> list[float]:
    """The relative ridge penalty with the lowest grouped-CV error, one per column of ``y``.

    Folds are grouped (rows of one group — one window block, one text, one position — are never
    split), so near-duplicate rows cannot reward a tiny penalty, which leave-one-row-out does
    when rows overlap. α is relative to ``mean(s²)`` of the centred ``x``, so ``x × c`` chooses the
    same α. Ties go to the larger penalty. Every target is scored on the same folds, from the
    same decompositions of ``x``.

    Args:
        y: ``(n,)`` (one target: a list of one α) or ``(n, t)``.
    """
    xa, ya = _as_xy(x, y)
    errors = _cv_errors(xa, ya, groups, alphas, n_folds=n_folds, seed=seed)
    chosen = []
    for column in errors.T:
        best = float(column.min())
        # Largest α within floating noise of the best error: prefer the simpler model.
        near = [a for a, e in zip(alphas, column, strict=True) if e <= best * (1 + 1e-9)]
        chosen.append(float(max(near)))
    return chosen


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

    Args:
        y: ``(n,)``, one target.
    Returns:
        ``(predictions (n,), [test_rows per fold], [α per fold])``.
    """
    xa, ya = _as_xy(x, y)
    if ya.shape[1] != 1:
        raise ValueError(
            f"nested_ridge_predictions takes one target y of shape (n,); got {ya.shape}."
        )
    labels = np.asarray(groups).ravel()
    pred = np.empty(ya.shape[0])
    folds, chosen = [], []
    for k, (train, test) in enumerate(grouped_kfold(labels, n_folds, seed=seed)):
        inner = min(n_folds, np.unique(labels[train]).size)
        (alpha,) = choose_ridge_alphas(
            xa[train], ya[train], labels[train], alphas, n_folds=inner, seed=seed + k + 1
        )
        pred[test] = ridge_path(xa[train], ya[train], xa[test], [alpha])[0, :, 0]
        folds.append(test)
        chosen.append(alpha)
    return pred, folds, chosen
