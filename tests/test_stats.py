"""posviz.analysis.stats: variance, similarity, PCA, norms — against identities and numpy."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.stats import (
    cosine_similarity_matrix,
    dimension_variance,
    dot_product_matrix,
    pca,
    position_norms,
    shift_similarity,
)

RNG = np.random.default_rng(0)


def _pe(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Reference sinusoid written straight from Vaswani et al. 2017, independent of posviz."""
    pos = np.arange(n)[:, None]
    i = np.arange(d // 2)[None, :]
    angle = pos / base ** (2 * i / d)
    out = np.empty((n, d))
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out


def test_dimension_variance_matches_numpy_population_variance():
    m = RNG.normal(size=(50, 7))
    np.testing.assert_allclose(dimension_variance(m), m.var(axis=0, ddof=0))
    assert dimension_variance(m).shape == (7,)


def test_constant_dimension_has_zero_variance():
    m = RNG.normal(size=(10, 3))
    m[:, 1] = 4.2
    assert dimension_variance(m)[1] == pytest.approx(0.0, abs=1e-20)


def test_position_norms_of_sinusoid_are_sqrt_half_d():
    np.testing.assert_allclose(position_norms(_pe(64, 32)), np.sqrt(16.0), rtol=1e-12)


def test_dot_and_cosine_matrices():
    m = RNG.normal(size=(9, 5))
    dot = dot_product_matrix(m)
    np.testing.assert_allclose(dot, m @ m.T)
    cos = cosine_similarity_matrix(m)
    assert cos.shape == (9, 9)
    np.testing.assert_allclose(np.diag(cos), 1.0)
    np.testing.assert_allclose(cos, cos.T)
    norms = np.linalg.norm(m, axis=1)
    np.testing.assert_allclose(cos, dot / np.outer(norms, norms))


def test_cosine_of_zero_row_is_zero_not_nan():
    m = np.array([[0.0, 0.0], [1.0, 0.0]])
    cos = cosine_similarity_matrix(m)
    assert np.isfinite(cos).all()
    assert cos[0, 1] == 0.0


def test_shift_similarity_of_sinusoid_does_not_depend_on_position():
    d = 64
    pe = _pe(200, d)
    result = shift_similarity(pe, 50, metric="dot")
    k = result.shifts
    omega = 1.0 / 10000.0 ** (2 * np.arange(d // 2) / d)
    expected = np.cos(np.outer(k, omega)).sum(axis=1)  # Σ_i cos(ω_i k)
    np.testing.assert_allclose(result.mean, expected, atol=1e-9)
    assert result.std.max() < 1e-9
    np.testing.assert_array_equal(result.count, 200 - k)
    assert result.mean[0] == pytest.approx(d / 2)
    cos = shift_similarity(pe, 50)
    np.testing.assert_allclose(cos.mean, expected / (d / 2), atol=1e-9)


def test_shift_similarity_of_random_table_has_spread():
    result = shift_similarity(RNG.normal(size=(40, 16)), 5)
    assert result.std[1:].min() > 0.01
    assert result.min[0] == pytest.approx(1.0) and result.max[0] == pytest.approx(1.0)


def test_pca_matches_centred_svd_and_reconstructs():
    m = RNG.normal(size=(30, 6)) @ RNG.normal(size=(6, 6))
    result = pca(m, 6)
    assert result.scores.shape == (30, 6)
    assert result.components.shape == (6, 6)
    assert result.explained_variance_ratio.sum() == pytest.approx(1.0)
    assert np.all(np.diff(result.explained_variance_ratio) <= 1e-12)
    np.testing.assert_allclose(result.components @ result.components.T, np.eye(6), atol=1e-10)
    np.testing.assert_allclose(result.scores @ result.components + m.mean(axis=0), m, atol=1e-9)
    top = pca(m, 2)
    np.testing.assert_allclose(top.scores, result.scores[:, :2])


@pytest.mark.parametrize("shape", [(600, 300), (300, 600)])
def test_pca_of_a_big_table_by_its_gram_matrix_is_the_svd_one(monkeypatch, shape):
    """Big tables take their leading components from the smaller Gram matrix (0.19 s against a
    full SVD's 0.89 s on a 4096 × 1150 table): the same components, scores and shares as the SVD,
    tall or wide (a spectrum with distinct leading values: each component is defined)."""
    from posviz.analysis import stats

    n, d = shape
    weights = np.linspace(3.0, 0.1, min(n, d))  # distinct singular values
    left = np.linalg.qr(RNG.normal(size=(n, min(n, d))))[0]
    right = np.linalg.qr(RNG.normal(size=(d, min(n, d))))[0]
    m = (left * weights) @ right.T + 5.0  # a mean to take off
    gram = pca(m, 3)
    monkeypatch.setattr(stats, "GRAM_FROM", 10**9)  # the full SVD
    svd = pca(m, 3)
    np.testing.assert_allclose(gram.components, svd.components, atol=1e-8)
    np.testing.assert_allclose(gram.scores, svd.scores, atol=1e-8)
    np.testing.assert_allclose(
        gram.explained_variance_ratio, svd.explained_variance_ratio, rtol=1e-10
    )


def test_pca_of_rank_one_table():
    m = np.outer(np.arange(10.0), [1.0, 2.0, 0.0])
    result = pca(m, 2)
    assert result.explained_variance_ratio[0] == pytest.approx(1.0)
    np.testing.assert_allclose(result.components[0], np.array([1.0, 2.0, 0.0]) / np.sqrt(5))


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.zeros(5), "expected 2-D"),
        (np.zeros((2, 3, 4)), "expected 2-D"),
        (np.zeros((0, 3)), "at least"),
        (np.array([[1.0, np.nan]]), "NaN/inf"),
        (np.array([["a", "b"]]), "dtype"),
    ],
)
def test_bad_tables_raise_actionable_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        dimension_variance(bad)


def test_bad_options_raise_actionable_errors():
    m = RNG.normal(size=(5, 4))
    with pytest.raises(ValueError, match="choose 1 … 4"):
        shift_similarity(m, 5)
    with pytest.raises(ValueError, match="'cosine' or 'dot'"):
        shift_similarity(m, 2, metric="l2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="choose 1 … 4"):
        pca(m, 0)
    with pytest.raises(ValueError, match="at least 2"):
        pca(np.ones((1, 4)), 1)
