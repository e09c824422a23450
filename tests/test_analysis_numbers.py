"""The numbers the views show (posviz.analysis.*_views): each on a known answer or an identity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import posviz
from posviz.analysis import add_concat_numbers, layer_numbers, lookup_numbers, probe_numbers
from posviz.analysis import table_numbers as tv
from posviz.analysis.embedding_lookup import lookup_vs_onehot
from posviz.analysis.layers import LayerProbeResult
from posviz.analysis.probes import probe_with_control
from posviz.analysis.stats import cosine_similarity_matrix
from posviz.models import bundled_position_embeddings, bundled_word_embeddings

RNG = np.random.default_rng(0)


# --------------------------------------------------------------------------- table views


def test_value_spread_of_a_uniform_table_and_of_minilm():
    uniform = RNG.uniform(-1, 1, size=(200, 100))
    spread = tv.value_spread(uniform)
    assert spread.p99 == pytest.approx(0.99, abs=0.01)  # |U(-1, 1)| is U(0, 1)
    assert spread.beyond == pytest.approx(0.01, abs=1e-3)  # the share past the 99th percentile
    assert not spread.dominated_by_outliers
    minilm = tv.value_spread(bundled_position_embeddings())
    # the heatmap's contrast note: max |value| 1.87 at position 0, 99% of values within ±0.065
    assert (round(minilm.top, 2), round(minilm.p99, 3)) == (1.87, 0.065)
    assert minilm.dominated_by_outliers and minilm.ratio > tv.OUTLIER_RATIO


def test_active_dimensions_count_the_columns_that_move():
    n = 64
    steady = np.ones((n, 3))  # three constant columns: variance 0
    moving = np.arange(n)[:, None] * np.array([1e-3, 1.0])  # variances ≈ 3.4e-4 and 341
    matrix = np.hstack([steady, moving])
    assert tv.active_dimensions(matrix, log10_threshold=-8).active == 2
    assert tv.active_dimensions(matrix, log10_threshold=-2).active == 1
    result = tv.active_dimensions(matrix, log10_threshold=0)
    assert (result.active, result.threshold, result.column.shape) == (1, 1.0, (5, 1))
    assert tv.threshold_exponent(1e-3) == pytest.approx(-3.0)


def test_shift_rows_stay_within_the_budget():
    assert tv.shift_rows((100, 10), 5) == 100  # affordable: every row
    assert tv.shift_rows((100, 10), 5, budget=60) == 6  # never fewer than max_shift + 1
    assert tv.shift_rows((10_000, 100), 10, budget=100_000) == 100  # budget // (d·k)
    table = posviz.sinusoidal(300, 32)
    r = tv.leading_shift_similarity(table, 4, rows=50, metric="dot")
    assert r.count[0] == 50 and r.count[4] == 46  # only the first 50 positions
    assert np.max(r.std) < 1e-9  # a sinusoid's PE(p)·PE(p+k) does not depend on p


def test_similarity_window_is_a_block_of_the_full_matrix():
    table = RNG.normal(size=(40, 8))
    window = tv.similarity_window(table, 10, 25)
    assert window.dtype == np.float32 and window.shape == (15, 15)
    np.testing.assert_allclose(window, cosine_similarity_matrix(table)[10:25, 10:25], atol=1e-6)
    np.testing.assert_allclose(np.diag(window), 1.0, atol=1e-6)


def test_principal_pair_and_thinned_trajectory():
    with pytest.raises(ValueError, match="at least 2 positions and 2 dimensions"):
        tv.principal_pair(np.ones((5, 1)))
    assert tv.principal_pair(RNG.normal(size=(30, 6))).scores.shape == (30, 2)
    trajectory = tv.pca_trajectory(RNG.normal(size=(3000, 6)), 3, max_rows=1024)
    assert trajectory.step == 3  # the smallest step with at most 1024 rows
    np.testing.assert_array_equal(trajectory.positions, np.arange(0, 3000, 3))
    assert trajectory.pca.scores.shape == (1000, 3)
    assert tv.pca_trajectory(RNG.normal(size=(100, 6)), 2).step == 1


def test_norms_of_a_sinusoid_are_sqrt_half_the_width():
    summary = tv.norm_summary(posviz.sinusoidal(50, 64))
    assert summary.norms.shape == (50,)
    for value in (summary.low, summary.high, summary.mean):
        assert value == pytest.approx(np.sqrt(32))
    np.testing.assert_array_equal(
        tv.columns(np.arange(12).reshape(3, 4), [3, 0]), [[3, 0], [7, 4], [11, 8]]
    )


# --------------------------------------------------------------------------- probing page


def _reports(n: int, d: int) -> probe_numbers.Reports:
    report = probe_with_control(
        posviz.sinusoidal(n, d), train="even", test="odd", folds=5, alpha=0.0, seed=0
    )
    return [(f"sinusoid {n}×{d}", report)]


def test_probe_frames_thin_the_chart_and_keep_every_table():
    reports = _reports(512, 32) + _reports(64, 16)
    frame = probe_numbers.probe_chart_frame(reports, max_points=100)
    counts = frame.groupby("table").size().to_dict()
    assert counts == {"sinusoid 512×32": 100, "sinusoid 64×16": 32}  # 256 test rows thinned
    assert list(frame.columns) == ["position", "predicted", "abs_error", "table"]
    table = probe_numbers.probe_results_frame(reports)
    assert list(table["table"]) == ["sinusoid 512×32", "sinusoid 64×16"]
    assert table["MAE verdict"].str.contains("random table").all()


def test_interpolation_threshold_flags_ols_with_as_many_rows_as_columns():
    reports = _reports(64, 32) + _reports(64, 8)  # 32 training rows: 32 columns vs 8
    matrices = {name: (np.zeros((64, int(name.split("×")[1]))), None) for name, _ in reports}
    assert probe_numbers.interpolation_threshold(reports, matrices) == ["sinusoid 64×32"]


# --------------------------------------------------------------------------- the model pages


def test_add_concat_tables_and_their_sizes():
    words, learned = bundled_word_embeddings(), bundled_position_embeddings()
    first = add_concat_numbers.position_table("learned", 16, learned=learned)
    np.testing.assert_array_equal(first, learned[:16].astype(np.float64))
    sinusoid = add_concat_numbers.position_table("sinusoid", 16, learned=learned)
    np.testing.assert_array_equal(sinusoid, posviz.sinusoidal(16, 384))
    noise = add_concat_numbers.position_table("random", 512, learned=learned)
    assert noise.std() == pytest.approx(learned.std(), rel=0.01)  # the control's scale
    np.testing.assert_array_equal(
        noise, add_concat_numbers.position_table("random", 512, learned=learned)
    )
    with pytest.raises(ValueError, match="not one of learned, sinusoid, random"):
        add_concat_numbers.position_table("rope", 4, learned=learned)
    word, table = add_concat_numbers.concat_inputs(7, "sinusoid", 16, words=words, learned=learned)
    sizes = add_concat_numbers.concat_sizes(word, table, words)
    assert sizes["mean_position_norm"] == pytest.approx(np.sqrt(384 / 2))  # a sinusoid's norm
    assert sizes["word_norm"] == pytest.approx(np.linalg.norm(words[7]), rel=1e-6)
    magnitudes = add_concat_numbers.magnitudes(table, words, word)
    assert magnitudes.data.shape == (384, 4)  # pe_std, we_std, pe_range, word_abs
    assert magnitudes.pe_median == pytest.approx(float(np.median(table.std(axis=0))))


def test_side_by_side_keeps_the_quantities_and_names_each_column():
    a = pd.DataFrame({"quantity": ["k", "share"], "value": ["1", "2%"]})
    b = pd.DataFrame({"quantity": ["k", "share"], "value": ["3", "4%"]})
    merged = add_concat_numbers.side_by_side({"A": a, "B": b})
    assert merged.to_dict("list") == {
        "quantity": ["k", "share"],
        "A": ["1", "2%"],
        "B": ["3", "4%"],
    }


def test_last_dimensions_frame_has_both_layouts():
    frame = add_concat_numbers.last_dimensions_frame()
    assert frame.layout.tolist() == ["interleaved"] * 6 + ["tensor2tensor"] * 6
    interleaved = frame[frame.layout == "interleaved"].set_index("dimension")
    assert interleaved.loc[511, "max change"] < 1e-4  # the last cosine barely moves


def test_lookup_frame_reads_the_onehot_back():
    learned = bundled_position_embeddings()
    assert lookup_numbers.lookup_table("learned", learned=learned) is learned
    sinusoid = lookup_numbers.lookup_table("sinusoid", learned=learned)
    assert sinusoid.dtype == np.float32 and sinusoid.shape == (512, 384)
    frame = lookup_numbers.lookup_frame(lookup_vs_onehot(sinusoid, [0, 5, 511]), shown=2)
    assert frame["one-hot (nonzero column)"].tolist() == [0, 5, 511]
    assert frame["one-hot sum"].tolist() == [1, 1, 1]
    np.testing.assert_array_equal(frame["lookup[1]"], frame["product[1]"])


def test_layer_frames_label_runs_and_stack_the_ablation():
    scores = pd.DataFrame({"layer": [0, 1], "r2": [0.9, 0.5]})
    result = LayerProbeResult(scores=scores, n_train_tokens=100, n_test_tokens=30, window=16)
    labelled = layer_numbers.labelled_scores(result, model="m")
    assert labelled[["model", "train_tokens", "test_tokens"]].iloc[0].tolist() == ["m", 100, 30]
    assert "model" not in scores  # the result's own frame is left as it was
    both = layer_numbers.layer_frames(labelled, labelled.assign(model="m, zeroed"))
    assert both.model.tolist() == ["m", "m", "m, zeroed", "m, zeroed"]
    assert layer_numbers.layer_frames(labelled, None) is labelled
