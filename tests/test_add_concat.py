"""Add vs concatenate: subspace overlap on constructed cases, the t2t #1591 table, real tables."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

import posviz
from posviz.analysis.add_concat import (
    components_for,
    concat_hypothesis,
    dimension_magnitudes,
    last_dimensions_table,
    principal_axes,
    word_position_cloud,
)

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def one_blas_thread():
    """SVD-heavy tests run with one BLAS thread: on the shared 2-core machine two OpenBLAS threads
    made them 3-4x slower (a 5000 × 384 SVD 0.23 s -> 13.7 s). Results do not depend on it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def test_principal_axes_orthonormal_and_sum_to_one():
    for shape in [(50, 8), (500, 8)]:  # wide-ish (SVD) and tall (covariance) paths
        axes, explained = principal_axes(RNG.normal(size=shape) * np.arange(1, 9))
        np.testing.assert_allclose(axes.T @ axes, np.eye(axes.shape[1]), atol=1e-10)
        assert explained.sum() == pytest.approx(1.0)
        assert np.all(np.diff(explained) <= 1e-12)
    assert components_for(np.array([0.5, 0.3, 0.2]), 0.8) == 2
    assert components_for(np.array([0.5, 0.3, 0.2]), 1.0) == 3
    with pytest.raises(ValueError, match="no variance"):
        principal_axes(np.ones((5, 3)))


def _in_dims(n, d, dims):
    out = np.zeros((n, d))
    out[:, dims] = RNG.normal(size=(n, len(dims)))
    return out


def test_separate_subspaces_look_like_a_concatenation():
    d = 32
    pe, we = _in_dims(200, d, [0, 1, 2, 3]), _in_dims(2000, d, list(range(4, d)))
    report = concat_hypothesis(pe, we, fraction=0.99)
    assert report.k_pe <= 4 and report.pe_in_we < 1e-12 and report.we_in_pe < 1e-12
    assert report.angles_deg.min() == pytest.approx(90.0, abs=1e-6)


def test_shared_subspace_overlaps_fully():
    d = 32
    pe, we = _in_dims(200, d, [0, 1, 2]), _in_dims(2000, d, [0, 1, 2])
    report = concat_hypothesis(pe, we, fraction=0.99)
    assert report.pe_in_we == pytest.approx(1.0) and report.angles_deg.max() < 1e-3


def test_random_tables_land_on_the_baseline():
    report = concat_hypothesis(RNG.normal(size=(4000, 64)), RNG.normal(size=(4000, 64)))
    assert report.pe_in_we == pytest.approx(report.pe_in_we_chance, abs=0.05)
    frame = report.frame()
    assert list(frame.columns) == ["quantity", "value"] and len(frame) == 6


def test_width_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="same width"):
        concat_hypothesis(np.ones((10, 4)), np.ones((10, 5)))


def test_cloud_is_word_plus_position():
    pe = posviz.sinusoidal(16, 8)
    word = np.arange(8.0)
    frame = word_position_cloud(word, pe, view="dims", dims=(0, 1))
    assert len(frame) == 17 and frame.position.iloc[-1] == -1
    np.testing.assert_allclose(frame.x[:16], word[0] + pe[:, 0])
    # sin/cos pair 0: every point on the unit circle around the word (the cnblogs post's picture)
    radius = np.hypot(frame.x[:16] - word[0], frame.y[:16] - word[1])
    np.testing.assert_allclose(radius, 1.0)
    pca = word_position_cloud(word, pe, view="pca")
    assert np.isfinite(pca[["x", "y"]].to_numpy()).all()
    with pytest.raises(ValueError, match="dims"):
        word_position_cloud(word, pe, dims=(0, 0))
    with pytest.raises(ValueError, match="view"):
        word_position_cloud(word, pe, view="tsne")


def test_magnitudes_per_dimension():
    frame = dimension_magnitudes(posviz.sinusoidal(64, 8), np.ones((5, 8)), np.full(8, -2.0))
    assert (frame.we_std == 0).all() and (frame.word_abs == 2).all()
    assert frame.pe_range.iloc[0] == pytest.approx(2.0, abs=0.01)  # fastest sine spans [-1, 1]


def test_t2t_1591_last_dimensions_barely_move():
    table = last_dimensions_table(posviz.sinusoidal(128, 512), dims=(-1, -2, -16))
    last = table.set_index("dimension")
    # dim 511: cos(p / 10000^(510/512)) stays ~1; dim 510: sin(127 / 10000^(510/512)) ~ 0.013
    assert last.loc[511, "max change"] < 1e-3
    assert last.loc[510, "PE[127]"] == pytest.approx(np.sin(127 / 10000 ** (510 / 512)))
    assert last.loc[496, "max change"] < 0.02
    with pytest.raises(ValueError, match="positions"):
        last_dimensions_table(posviz.sinusoidal(16, 8))


@pytest.mark.slow
def test_minilm_positions_avoid_the_word_subspace():
    from posviz.models import bundled_position_embeddings, bundled_word_embeddings

    report = concat_hypothesis(bundled_position_embeddings(), bundled_word_embeddings())
    # measured: 11 of 384 components hold 90% of PE; 4.1% of PE's variance lies in the words'
    # 264-dim principal subspace, where random subspaces hold 68.7 ± 1.0%
    assert report.k_pe < 30 and report.k_we > 200
    assert report.pe_in_we < 0.25 * report.pe_in_we_chance
    assert np.median(report.angles_deg) > 80


def _title(spec: dict) -> str:
    title = spec.get("title", "")
    return title if isinstance(title, str) else title.get("text", "")


def test_page_shows_subword_split_and_errors():
    at = app_test("pages/add_vs_concat.py", query={"avc_word": "posvizzy"})
    assert_no_exception(at)
    assert any("not one token" in info.value for info in at.info)
    assert at.selectbox(key="avc_piece").value == "po"  # the first piece, picked by default
    titles = [_title(json.loads(chart.proto.spec)) for chart in at.get("vega_lite_chart")]
    assert "'po' + PE[p], p = 0…127" in titles  # the cloud of the chosen piece
    assert "Magnitude per dimension" in titles
    # both tables: the subspace report (a static table, so its sentences wrap, never cut) with
    # MiniLM, the sinusoid and the random control side by side, and tensor2tensor #1591's table
    (report,) = (table.value for table in at.table)
    assert list(report.columns) == [
        "quantity",
        "MiniLM's learned position table",
        "sinusoid of the same width (384)",
        "random Gaussian (control)",
    ]
    assert len(report) == 6
    assert report.iloc[2, 0] == "share of PE variance inside WE's subspace"
    assert report.iloc[2, 1:].str.contains("random subspaces: ").all()
    (last,) = (frame.value for frame in at.dataframe)
    assert {"layout", "dimension", "max change"} <= set(last.columns)
    assert set(last.layout) == {"interleaved", "tensor2tensor"}
    at.text_input(key="avc_word").set_value("   ").run()
    assert_no_exception(at)
    assert any("Type a word" in e.value for e in at.error)
    at.text_input(key="avc_word").set_value("dog").run()
    at.selectbox(key="avc_view").set_value("PCA of the cloud").run()
    assert_no_exception(at)
    assert not at.error


@pytest.mark.slow
def test_principal_angles_come_with_their_random_baseline():
    # Two random 11-dim subspaces of R^384 already sit near 82°; the report shows
    # that baseline, and MiniLM's 89.2° median angle is above it by far more than its spread.
    from posviz.analysis.add_concat import concat_hypothesis
    from posviz.models import bundled_position_embeddings, bundled_word_embeddings

    report = concat_hypothesis(bundled_position_embeddings(), bundled_word_embeddings())
    assert (report.k_pe, report.k_we) == (11, 264)
    baseline = report.angle_baseline
    assert baseline is not None
    assert baseline.mean == pytest.approx(82.1, abs=baseline.std / 3)  # README: 82.1 ± 0.9°
    assert float(np.median(report.angles_deg)) == pytest.approx(89.2, abs=0.05)
    assert float(np.median(report.angles_deg)) > baseline.high + 3 * baseline.std
    assert "random subspaces: 82.1" in report.frame().value.iloc[4]
    assert report.pe_in_we == pytest.approx(0.041, abs=0.0005)
    # the shares come with their same-procedure control: random subspaces of the same size
    assert report.pe_in_random is not None and report.we_in_random is not None
    assert report.pe_in_random.mean == pytest.approx(0.687, abs=report.pe_in_random.std / 3)
    assert report.pe_in_we < report.pe_in_random.low - 3 * report.pe_in_random.std
    assert report.smallest_angle_baseline is not None
    assert report.angles_deg.min() > report.smallest_angle_baseline.high  # 79.5° vs 72.3 ± 1.6°


def test_random_subspace_share_control_is_k_over_d():
    # E[share of variance inside a random k-dim subspace of R^d] = k/d, for any table.
    from posviz.analysis.add_concat import _random_shares

    table = np.random.default_rng(5).normal(size=(200, 40)) * np.linspace(0.1, 3, 40)
    shares = _random_shares(table, 10, seed=0, n=400)
    assert shares.low <= 10 / 40 <= shares.high


def test_page_escapes_the_typed_word():
    # The word box reaches Markdown (the "not one token" note) only escaped.
    at = app_test("pages/add_vs_concat.py", query={"avc_word": "[x](https://e.example)zzq"})
    assert_no_exception(at)
    note = next(info.value for info in at.info if "not one token" in info.value)
    assert "[x](" not in note and "\\[x\\](" in note


def test_slow_sines_columns_in_each_layout():
    # tensor2tensor #1591: for d=512 the slowest sines move ≈0.007 between positions 0 and 64.
    # Interleaved columns 504…510 (even) hold them; the split layout holds the same sinusoids in
    # columns 252…255 (not 251…255); tensor2tensor's geometric timescales put its ≈0.007 movers
    # in columns 251…254.
    import posviz

    interleaved = posviz.sinusoidal(128, 512)
    split = posviz.sinusoidal(128, 512, layout="split")
    np.testing.assert_array_equal(split[:, 252:256], interleaved[:, 504:512:2])
    for layout, columns in (("split", range(252, 256)), ("tensor2tensor", range(251, 255))):
        pe = posviz.sinusoidal(128, 512, layout=layout)
        moved = np.abs(pe[64] - pe[0])[:256]  # the sine half
        slow = np.nonzero((moved > 0.0065) & (moved < 0.0075))[0]
        assert list(slow) == list(columns), layout
