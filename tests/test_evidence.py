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


def test_evidence_text_and_verdicts() -> None:
    good = ev.evidence(
        "probe",
        [0.19, 0.20, 0.21],
        [0.49, 0.50, 0.51],
        control_label="random table",
        higher_is_better=False,
    )
    assert good.text() == "0.20 ± 0.01; random table 0.50 ± 0.01"
    assert good.differs() and good.better()
    assert "lower than random table" in good.verdict()
    assert "better" in good.verdict()
    same = ev.evidence(
        "probe",
        [0.45, 0.50, 0.55],
        [0.47, 0.50, 0.53],
        control_label="random table",
        higher_is_better=True,
    )
    assert not same.differs()
    assert "no difference from random table within the spread" in same.verdict()
    worse = ev.evidence(
        "score",
        [0.1, 0.11, 0.12],
        [0.5, 0.51, 0.52],
        control_label="chance",
        higher_is_better=True,
    )
    assert worse.differs() and not worse.better()
    assert "worse" in worse.verdict()


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


@pytest.mark.parametrize(("dim", "k1", "k2"), [(384, 11, 11), (64, 8, 4), (10, 3, 5)])
def test_random_subspace_angles_match_the_analytic_expectation(dim: int, k1: int, k2: int) -> None:
    angles = ev.random_subspace_angles(dim, k1, k2, seed=5, n=400)
    assert angles.shape == (400, min(k1, k2))
    total_cos2 = (np.cos(np.radians(angles)) ** 2).sum(axis=1)
    expected = k1 * k2 / dim  # E[trace(P1 P2)] for independent uniform projections
    se = total_cos2.std(ddof=1) / math.sqrt(total_cos2.size)
    assert abs(total_cos2.mean() - expected) < 4 * se


def test_random_11_dim_subspaces_of_r384_sit_near_82_degrees() -> None:
    # The figure quoted in issue #9: two random 11-dim subspaces of R^384 already look "far apart".
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
    with pytest.raises(ValueError, match="distinct groups"):
        ev.grouped_kfold(np.zeros(10), 3, seed=0)


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
    # Rows as their own groups: every test row has a near-copy in training, so the tiniest
    # penalty "wins" although y is noise. Grouped folds see through it.
    leaky = ev.choose_ridge_alpha(x, y, np.arange(y.size), alphas)
    honest = ev.choose_ridge_alpha(x, y, groups, alphas)
    assert leaky == min(alphas)
    assert honest >= 1.0  # shrinks to (nearly) the mean: y is noise


def test_ridge_alpha_choice_is_scale_invariant() -> None:
    generator = ev.rng(1)
    x = generator.standard_normal((120, 10))
    y = x @ generator.standard_normal(10) + generator.standard_normal(120)
    groups = np.arange(120) // 6
    a1 = ev.choose_ridge_alpha(x, y, groups)
    a2 = ev.choose_ridge_alpha(40.0 * x, y, groups)
    assert a1 == a2
    p1 = ev.ridge_predict(x[:100], y[:100], x[100:], alpha=a1)
    p2 = ev.ridge_predict(0.025 * x[:100], y[:100], 0.025 * x[100:], alpha=a1)
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
    np.testing.assert_allclose(ev.ridge_predict(x, y, x, alpha=alpha), expected, atol=1e-10)


def test_nested_predictions_recover_a_linear_signal_out_of_fold() -> None:
    generator = ev.rng(9)
    x = generator.standard_normal((200, 5))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.1 * generator.standard_normal(200)
    pred, folds, chosen = ev.nested_ridge_predictions(x, y, np.arange(200) // 5, n_folds=5)
    assert len(folds) == len(chosen) == 5
    assert np.sqrt(np.mean((pred - y) ** 2)) < 0.2


def test_per_target_alphas_equal_one_call_per_target():
    # choose_ridge_alphas shares each fold's decomposition across targets; the answer must be
    # what choose_ridge_alpha gives for each target alone (both the Gram and the SVD branch).
    from posviz.analysis.evidence import choose_ridge_alpha, choose_ridge_alphas, ridge_path

    generator = np.random.default_rng(7)
    for n, d in ((120, 10), (30, 50)):
        x = generator.normal(size=(n, d))
        y = np.stack([x[:, 0] + 0.1 * generator.normal(size=n), generator.normal(size=n)], 1)
        groups = np.arange(n) // 6
        together = choose_ridge_alphas(x, y, groups, n_folds=4)
        alone = [choose_ridge_alpha(x, y[:, k], groups, n_folds=4) for k in range(2)]
        assert together == alone
        assert together[0] < together[1]  # signal wants less shrinkage than noise
        # the path equals the closed form (X_cᵀX_c + λI)⁻¹ X_cᵀ(y − ȳ), λ = α·‖X_c‖²_F / min(n, d)
        xc = x - x.mean(0)
        lam = 0.1 * float((xc**2).sum()) / min(n, d)
        beta = np.linalg.solve(xc.T @ xc + lam * np.eye(d), xc.T @ (y - y.mean(0)))
        expected = (x[:5] - x.mean(0)) @ beta + y.mean(0)
        np.testing.assert_allclose(ridge_path(x, y, x[:5], [0.1])[0], expected, atol=1e-9)
