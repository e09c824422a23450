"""The shared evidence toolkit: spreads that cover, folds that never split a group, baselines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posviz.analysis import evidence as ev


def test_spread_text_and_format() -> None:
    s = ev.spread([0.18, 0.20, 0.22])
    assert s.n == 3
    assert s.text() == "0.20 ± 0.02"
    assert f"{s}" == "0.20 ± 0.02"
    assert f"{s:.3}" == "0.200 ± 0.020"
    assert s.low < 0.20 < s.high


def test_spread_interval_is_student_t() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0])
    s = ev.spread(values)
    # t_{0.975, 3} = 3.182446305 (published table value).
    half = 3.182446305 * values.std(ddof=1) / 2.0
    assert s.low == pytest.approx(2.5 - half, rel=1e-8)
    assert s.high == pytest.approx(2.5 + half, rel=1e-8)


def test_spread_of_one_value_has_no_interval() -> None:
    s = ev.spread([0.5])
    assert (s.low, s.high) == (-math.inf, math.inf)
    assert s.text() == "0.50 (n=1)"


def test_spread_rejects_empty_and_nan() -> None:
    with pytest.raises(ValueError, match="no values"):
        ev.spread([])
    with pytest.raises(ValueError, match="non-finite"):
        ev.spread([1.0, float("nan")])


def test_95_interval_covers_the_true_mean_about_95_percent() -> None:
    generator = ev.rng(123)
    trials, hits = 2000, 0
    for _ in range(trials):
        s = ev.spread(generator.normal(3.0, 2.0, size=8))
        hits += s.low <= 3.0 <= s.high
    coverage = hits / trials
    # Binomial sd at p=0.95, n=2000 is 0.0049: ±3 sd.
    assert abs(coverage - 0.95) < 0.015


@pytest.mark.parametrize(
    ("metric", "values", "control", "label", "higher", "differs", "better", "says"),
    [
        ("probe", [0.19, 0.20, 0.21], [0.49, 0.50, 0.51], "random table", False, True, True,
         ("lower than random table", "better")),
        ("probe", [0.45, 0.50, 0.55], [0.47, 0.50, 0.53], "random table", True, False, None,
         ("no difference from random table within the spread",)),
        ("score", [0.1, 0.11, 0.12], [0.5, 0.51, 0.52], "chance", True, True, False, ("worse",)),
    ],
    ids=["better", "same", "worse"],
)  # fmt: skip
def test_evidence_verdicts(metric, values, control, label, higher, differs, better, says) -> None:
    """``better``: None where the values do not differ (better or worse is then not asked)."""
    found = ev.evidence(metric, values, control, control_label=label, higher_is_better=higher)
    assert found.differs() == differs
    if better is not None:
        assert found.better() == better
    for words in says:
        assert words in found.verdict()


def test_evidence_text() -> None:
    good = ev.evidence(
        "probe",
        [0.19, 0.20, 0.21],
        [0.49, 0.50, 0.51],
        control_label="random table",
        higher_is_better=False,
    )
    assert good.text() == "0.20 ± 0.01; random table 0.50 ± 0.01"


def test_compare_paired_and_welch() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    paired = ev.compare(a + 1.0, a, paired=True)
    assert paired.mean == pytest.approx(1.0) and paired.std == pytest.approx(0.0)
    welch = ev.compare(a + 10.0, a)
    assert welch.mean == pytest.approx(10.0)
    assert welch.std == pytest.approx(math.sqrt(2 * a.var(ddof=1) / 4))
    assert welch.low > 0
    with pytest.raises(ValueError, match="equal lengths"):
        ev.compare(a, a[:3], paired=True)


def test_seeds_and_rng_are_reproducible_and_distinct() -> None:
    assert ev.seeds(7, 5) == ev.seeds(7, 5)
    assert len(set(ev.seeds(7, 5))) == 5
    assert ev.seeds(7, 5) != ev.seeds(8, 5)
    assert np.array_equal(ev.rng(3).standard_normal(4), ev.rng(3).standard_normal(4))


def test_random_table_like_keeps_shape_and_column_scale() -> None:
    table = ev.rng(0).normal(0, 1, size=(2000, 3)) * np.array([0.01, 1.0, 40.0]) + 5.0
    control = ev.random_table_like(table, seed=1)
    assert control.shape == table.shape
    np.testing.assert_allclose(control.std(axis=0), table.std(axis=0), rtol=0.06)
    np.testing.assert_allclose(control.mean(axis=0), table.mean(axis=0), atol=2.0)
    assert np.array_equal(control, ev.random_table_like(table, seed=1))


def test_principal_angles_identities() -> None:
    basis = np.eye(5)
    np.testing.assert_allclose(ev.principal_angles(basis[:, :2], basis[:, :2]), [0, 0], atol=1e-6)
    np.testing.assert_allclose(ev.principal_angles(basis[:, :2], basis[:, 2:4]), [90, 90])
    diag = np.array([[1.0], [1.0], [0], [0], [0]])
    np.testing.assert_allclose(ev.principal_angles(basis[:, :1], diag), [45.0])


def test_principal_angles_are_the_singular_values_of_the_bases_product() -> None:
    # Björck & Golub (1973): cos θᵢ = σᵢ(Q_aᵀ Q_b) for orthonormal bases; ascending, in degrees.
    generator = ev.rng(11)
    a, b = generator.standard_normal((40, 6)), generator.standard_normal((40, 4))
    qa, qb = np.linalg.qr(a)[0], np.linalg.qr(b)[0]
    cosines = np.linalg.svd(qa.T @ qb, compute_uv=False)  # descending
    expected = np.degrees(np.arccos(np.clip(cosines, 0.0, 1.0)))
    np.testing.assert_allclose(ev.principal_angles(a, b), expected, atol=1e-9)
    assert np.all(np.diff(ev.principal_angles(a, b)) >= 0)


@pytest.mark.parametrize(("dim", "k1", "k2"), [(384, 11, 11), (64, 8, 4), (10, 3, 5)])
def test_random_subspace_angles_match_the_analytic_expectation(dim: int, k1: int, k2: int) -> None:
    angles = ev.random_subspace_angles(dim, k1, k2, seed=5, n=400)
    assert angles.shape == (400, min(k1, k2))
    total_cos2 = (np.cos(np.radians(angles)) ** 2).sum(axis=1)
    expected = k1 * k2 / dim  # E[trace(P1 P2)] for independent uniform projections
    se = total_cos2.std(ddof=1) / math.sqrt(total_cos2.size)
    assert abs(total_cos2.mean() - expected) < 4 * se


def test_random_11_dim_subspaces_of_r384_sit_near_82_degrees() -> None:
    # The often-quoted figure: two random 11-dim subspaces of R^384 already look "far apart".
    median = np.median(ev.random_subspace_angles(384, 11, 11, seed=0, n=200), axis=1)
    assert 80.0 < float(np.mean(median)) < 84.0


def test_grouped_kfold_never_splits_a_group_and_covers_every_row() -> None:
    groups = np.repeat(np.arange(23), 4)
    folds = ev.grouped_kfold(groups, 5, seed=2)
    assert len(folds) == 5
    seen = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(seen), np.arange(groups.size))
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        assert np.intersect1d(train, test).size == 0
    again = ev.grouped_kfold(groups, 5, seed=2)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again, strict=True))
    other = ev.grouped_kfold(groups, 5, seed=3)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other, strict=True))
    with pytest.raises(ValueError, match="distinct groups"):
        ev.grouped_kfold(np.zeros(10), 3, seed=0)


@pytest.mark.parametrize(("n", "k", "seed"), [(23, 5, 0), (512, 5, 7), (10, 10, 3)])
def test_rows_as_groups_is_plain_shuffled_kfold(n: int, k: int, seed: int) -> None:
    # The probes' ungrouped k-fold is grouped_kfold with every row its own group: the same
    # folds as scikit-learn's KFold(shuffle=True) with the same random state.
    from sklearn.model_selection import KFold

    state = ev.seeds(seed, 1)[0]
    plain = KFold(n_splits=k, shuffle=True, random_state=state).split(np.zeros((n, 1)))
    for (train, test), (ref_train, ref_test) in zip(
        ev.grouped_kfold(np.arange(n), k, seed=seed), plain, strict=True
    ):
        assert np.array_equal(test, np.sort(ref_test))
        assert np.array_equal(train, np.sort(ref_train))


def _overlapping_rows(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that come in near-identical groups of 4 (like overlapping windows); y is pure noise."""
    generator = ev.rng(seed)
    base_x = generator.standard_normal((40, 60))
    base_y = generator.standard_normal(40)
    x = np.repeat(base_x, 4, axis=0) + 1e-3 * generator.standard_normal((160, 60))
    y = np.repeat(base_y, 4) + 1e-3 * generator.standard_normal(160)
    return x, y, np.repeat(np.arange(40), 4)


def test_grouped_alpha_choice_is_not_fooled_by_near_duplicate_rows() -> None:
    x, y, groups = _overlapping_rows(0)
    alphas = ev.DEFAULT_ALPHAS
    # Rows as their own groups: every test row has a near-copy in training, so a tiny penalty
    # "wins" although y is noise: at the grid's bottom the CV error sits at the copies' noise
    # floor (≈ 4e-6, flat to 1% over α = 1e-6 … 1e-5; the grouped error is ≈ 0.8 at best).
    # Grouped folds see through it.
    (leaky,) = ev.choose_ridge_alphas(x, y, np.arange(y.size), alphas)
    (honest,) = ev.choose_ridge_alphas(x, y, groups, alphas)
    assert leaky <= 1e-5  # the grid's three smallest penalties
    assert honest >= 1.0  # shrinks to (nearly) the mean: y is noise


def test_ridge_alpha_choice_is_scale_invariant() -> None:
    generator = ev.rng(1)
    x = generator.standard_normal((120, 10))
    y = x @ generator.standard_normal(10) + generator.standard_normal(120)
    groups = np.arange(120) // 6
    a1 = ev.choose_ridge_alphas(x, y, groups)
    a2 = ev.choose_ridge_alphas(40.0 * x, y, groups)
    assert a1 == a2
    for alphas in ([0.0], a1):  # OLS and the chosen ridge
        p1 = ev.ridge_path(x[:100], y[:100], x[100:], alphas)
        p2 = ev.ridge_path(0.025 * x[:100], y[:100], 0.025 * x[100:], alphas)
        np.testing.assert_allclose(p1, p2, rtol=1e-8, atol=1e-10)


def test_ridge_matches_the_normal_equations() -> None:
    generator = ev.rng(4)
    x = generator.standard_normal((50, 6))
    y = generator.standard_normal((50, 2))
    alpha = 0.3
    xc, yc = x - x.mean(0), y - y.mean(0)
    s = np.linalg.svd(xc, compute_uv=False)
    lam = alpha * np.mean(s**2)
    beta = np.linalg.solve(xc.T @ xc + lam * np.eye(6), xc.T @ yc)
    expected = (x - x.mean(0)) @ beta + y.mean(0)
    np.testing.assert_allclose(ev.ridge_path(x, y, x, [alpha])[0], expected, atol=1e-10)


@pytest.mark.parametrize(("n", "d"), [(50, 10), (20, 60), (60, 60)])
def test_alpha_zero_is_least_squares_with_minimum_norm(n: int, d: int) -> None:
    # Tall, wide and square: α = 0 is ordinary least squares with an intercept, the
    # minimum-norm solution when it is not unique, as scikit-learn's LinearRegression gives.
    from sklearn.linear_model import LinearRegression

    generator = ev.rng(1)
    x, y = generator.standard_normal((n, d)), generator.standard_normal(n)
    x_new = generator.standard_normal((7, d))
    reference = LinearRegression().fit(x, y).predict(x_new)
    np.testing.assert_allclose(ev.ridge_path(x, y, x_new, [0.0])[0, :, 0], reference, atol=1e-8)


def test_alpha_zero_on_rank_deficient_rows_matches_lstsq() -> None:
    # Repeated columns and more rows than columns: the Gram matrix is singular, so α = 0 must
    # take the SVD route and drop the zero singular values (numpy lstsq's cut-off).
    generator = ev.rng(2)
    base = generator.standard_normal((80, 5))
    x = np.hstack([base, base[:, :3], 2.0 * base[:, :2]])  # rank 5 of 10 columns
    y = base @ np.array([1.0, -1.0, 0.5, 2.0, 0.0]) + 0.01 * generator.standard_normal(80)
    xc, yc = x - x.mean(0), y - y.mean()
    w = np.linalg.lstsq(xc, yc, rcond=None)[0]
    np.testing.assert_allclose(
        ev.ridge_path(x, y, x[:9], [0.0])[0, :, 0], (x[:9] - x.mean(0)) @ w + y.mean(), atol=1e-9
    )


def test_gram_and_svd_routes_agree_on_ridge_penalties() -> None:
    # Tall data goes through the Gram matrix when every α ≥ GRAM_MIN_ALPHA and through QR + SVD
    # when α = 0 is on the path; the ridge answers must not depend on which route ran.
    generator = ev.rng(3)
    x = generator.standard_normal((300, 40)) * np.logspace(0, -3, 40)  # badly scaled columns
    y = generator.standard_normal((300, 2))
    alphas = [ev.GRAM_MIN_ALPHA, 1e-3, 1.0]
    gram = ev.ridge_path(x, y, x[:20], alphas)
    exact = ev.ridge_path(x, y, x[:20], [0.0, *alphas])[1:]
    np.testing.assert_allclose(gram, exact, rtol=1e-7, atol=1e-9)


def test_ridge_path_rejects_bad_input() -> None:
    x, y = np.ones((10, 3)), np.arange(10.0)
    with pytest.raises(ValueError, match="α ≥ 0"):
        ev.ridge_path(x, y, x, [-1.0])
    with pytest.raises(ValueError, match="same n"):
        ev.ridge_path(x, y[:5], x, [1.0])
    with pytest.raises(ValueError, match="one target"):
        ev.nested_ridge_predictions(x, np.ones((10, 2)), np.arange(10))


def test_nested_predictions_recover_a_linear_signal_out_of_fold() -> None:
    generator = ev.rng(9)
    x = generator.standard_normal((200, 5))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.1 * generator.standard_normal(200)
    pred, folds, chosen = ev.nested_ridge_predictions(x, y, np.arange(200) // 5, n_folds=5)
    assert len(folds) == len(chosen) == 5
    assert np.sqrt(np.mean((pred - y) ** 2)) < 0.2


def test_per_target_alphas_equal_one_call_per_target():
    # choose_ridge_alphas shares each fold's decomposition across targets; the answer must be
    # what it gives for each target alone (both the Gram and the SVD branch).
    from posviz.analysis.evidence import choose_ridge_alphas, ridge_path

    generator = np.random.default_rng(7)
    for n, d in ((120, 10), (30, 50)):
        x = generator.normal(size=(n, d))
        y = np.stack([x[:, 0] + 0.1 * generator.normal(size=n), generator.normal(size=n)], 1)
        groups = np.arange(n) // 6
        together = choose_ridge_alphas(x, y, groups, n_folds=4)
        alone = [choose_ridge_alphas(x, y[:, k], groups, n_folds=4)[0] for k in range(2)]
        assert together == alone
        assert together[0] < together[1]  # signal wants less shrinkage than noise
        # the path equals the closed form (X_cᵀX_c + λI)⁻¹ X_cᵀ(y − ȳ), λ = α·‖X_c‖²_F / min(n, d)
        xc = x - x.mean(0)
        lam = 0.1 * float((xc**2).sum()) / min(n, d)
        beta = np.linalg.solve(xc.T @ xc + lam * np.eye(d), xc.T @ (y - y.mean(0)))
        expected = (x[:5] - x.mean(0)) @ beta + y.mean(0)
        np.testing.assert_allclose(ridge_path(x, y, x[:5], [0.1])[0], expected, atol=1e-9)
