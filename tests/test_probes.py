"""Position probes: known answers (sinusoid read back exactly, random tables not), protocols."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

import posviz
from posviz.analysis.probes import (
    fit_linear,
    probe_positions,
    probe_relative_order,
    probe_summary,
    r2_score,
    with_set_aside_rows,
)
from posviz.tables.table import SetAside


@pytest.mark.parametrize("n, d", [(512, 768), (512, 384), (128, 512), (64, 16)])
def test_sinusoid_even_to_odd_is_read_back_exactly(n, d):
    result = posviz.probe_positions(posviz.sinusoidal(n, d))
    assert result.protocol == "even→odd"
    assert result.n_test == n // 2 and result.n_train == n - n // 2
    assert result.mae < 1e-5
    assert result.r2 == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_array_equal(result.positions, np.arange(1, n, 2))


@pytest.mark.parametrize("train, test", [("all", "all"), ("odd", "even"), ("kfold", "all")])
def test_sinusoid_every_protocol(train, test):
    result = probe_positions(posviz.sinusoidal(256, 128), train=train, test=test)
    assert result.mae < 1e-5
    if train == "kfold":  # Wang & Chen: rounded predictions, every row predicted once
        assert result.rounded and result.mae == 0.0
        np.testing.assert_array_equal(np.sort(result.positions), np.arange(256))


def test_random_table_is_not_read_back_but_fits_itself():
    noise = np.random.default_rng(0).normal(size=(512, 384))
    held_out = probe_positions(noise)
    assert held_out.r2 < 0.0 and held_out.mae > 100  # nothing to interpolate
    fitted = probe_positions(noise, train="all", test="all")
    assert fitted.r2 > 0.5  # 512 rows, 385 free parameters: a fit, not knowledge


def test_ols_matches_sklearn_min_norm_both_regimes():
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(1)
    for n, d in [(50, 10), (20, 60)]:
        x, y = rng.normal(size=(n, d)), rng.normal(size=n)
        w, b = fit_linear(x, y)
        reference = LinearRegression().fit(x, y)
        np.testing.assert_allclose(w, reference.coef_, atol=1e-8)
        assert b == pytest.approx(reference.intercept_, abs=1e-8)


def test_ridge_shrinks_and_equals_closed_form():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(40, 5)), rng.normal(size=40)
    w, _ = fit_linear(x, y, alpha=3.0)
    xc, yc = x - x.mean(0), y - y.mean()
    np.testing.assert_allclose(w, np.linalg.solve(xc.T @ xc + 3.0 * np.eye(5), xc.T @ yc))


def test_r2_identities():
    y = np.arange(10.0)
    assert r2_score(y, y) == 1.0
    assert r2_score(y, np.full(10, y.mean())) == 0.0


def test_labels_for_offset_rows():
    pe = posviz.sinusoidal(64, 32)
    result = probe_positions(pe, train="all", test="all", positions=np.arange(64) + 2)
    assert result.mae < 1e-6 and result.positions[0] == 2


def test_set_aside_rows_restore_stored_order():
    table = np.arange(12.0).reshape(6, 2)
    aside = (SetAside(rows=(0, 1), reason="offset 2", values=np.array([[-1, -1], [-2, -2]])),)
    stored, labels = with_set_aside_rows(table, aside)
    np.testing.assert_array_equal(labels, np.arange(8))
    np.testing.assert_array_equal(stored[:2], [[-1, -1], [-2, -2]])
    np.testing.assert_array_equal(stored[2:], table)
    _, plain = with_set_aside_rows(table, (SetAside(rows=(0,), reason="no values"),))
    np.testing.assert_array_equal(plain, np.arange(6))


@pytest.mark.parametrize(
    "matrix, kwargs, message",
    [
        (np.zeros(10), {}, "2-D"),
        (np.zeros((5, 4)), {}, "at least 8"),
        (np.full((10, 4), np.nan), {}, "NaN"),
        (np.zeros((10, 4)), {"train": "first"}, "not one of"),
        (np.zeros((10, 4)), {"test": "last"}, "not one of"),
        (np.zeros((10, 4)), {"train": "kfold", "folds": 1}, "folds=1"),
        (np.zeros((10, 4)), {"alpha": -1.0}, "alpha"),
        (np.zeros((10, 4)), {"positions": np.arange(3)}, "one label per row"),
    ],
)
def test_bad_input_raises_clear_value_error(matrix, kwargs, message):
    with pytest.raises(ValueError, match=message):
        probe_positions(matrix, **kwargs)


def test_relative_probe_sinusoid_vs_random():
    sinusoid = probe_relative_order(posviz.sinusoidal(512, 768))
    noise = probe_relative_order(np.random.default_rng(0).normal(size=(512, 768)))
    assert sinusoid.n_pairs == 512 and len(sinusoid.fold_error_rates) == 5
    assert sinusoid.error_rate < 0.12  # Wang & Chen's protocol; order is linearly readable
    assert 0.3 < noise.error_rate < 0.7  # chance is 0.5
    with pytest.raises(ValueError, match="n_pairs"):
        probe_relative_order(posviz.sinusoidal(16, 8), n_pairs=1000)


def test_summary_has_one_row_per_table():
    frame = probe_summary(
        {"a": posviz.sinusoidal(64, 32), "b": posviz.sinusoidal(32, 16)}, relative=False
    )
    assert list(frame.table) == ["a", "b"]
    assert frame["MAE (this run)"].max() < 1e-5
    assert "order error rate (this run)" not in frame


def test_bundled_table_numbers():
    from posviz.models import bundled_position_embeddings

    table = bundled_position_embeddings()
    even_odd = probe_positions(table)
    assert 10 < even_odd.mae < 40 and even_odd.r2 > 0.9  # measured: MAE 21.5, R² 0.961
    # 409 training rows for 385 parameters: OLS sits at its interpolation threshold; ridge helps
    kfold = probe_positions(table, train="kfold")
    assert probe_positions(table, train="kfold", alpha=1.0).mae < kfold.mae


def test_probing_page_runs_protocols_and_compares():
    at = app_test(
        "pages/probing.py", query={"prb_proto": "shuffled k-fold CV, rounded (Wang & Chen 2020)"}
    )
    assert_no_exception(at)
    assert not at.error
    results = at.dataframe[0].value
    assert len(results) == 3  # bundled + sinusoid + random (the default comparison)
    sinusoid = results[results.table.str.startswith("sinusoid")].iloc[0]
    assert sinusoid["MAE (this run)"] == 0.0
    assert len(at.get("vega_lite_chart")) >= 2
    at.multiselect(key="prb_cmp").set_value([]).run()
    assert len(at.dataframe[0].value) == 1


def test_probing_page_short_table_and_bad_link():
    at = app_test("pages/probing.py", query={"prb_t_src": "sinusoid", "prb_t_n": "4"})
    assert_no_exception(at)
    assert len(at.error) == 1 and "at least 8" in at.error[0].value
    at = app_test("pages/probing.py", query={"prb_proto": "bogus", "prb_folds": "99"})
    assert_no_exception(at)
    assert any("prb_proto" in w.value for w in at.warning)
    assert at.slider(key="prb_folds").value == 10


def test_roberta_style_offset_rows_in_stored_order():
    table = posviz.sinusoidal(30, 8)
    aside = (
        SetAside(rows=(0,), reason="never used", values=np.full((1, 8), 7.0)),
        SetAside(rows=(1,), reason="padding_idx", values=np.zeros((1, 8))),
    )
    stored, labels = with_set_aside_rows(table, aside)
    np.testing.assert_array_equal(labels, np.arange(32))
    np.testing.assert_array_equal(stored[2:], table)
    assert probe_positions(stored, positions=labels).n_test == 16  # odd stored rows 1, 3, …, 31


def test_probe_chart_specs():
    from posviz.charts.experiments import predicted_vs_actual_chart, probe_error_chart

    frame = probe_positions(posviz.sinusoidal(64, 16)).frame()
    frame["table"] = "sinusoid"
    spec = predicted_vs_actual_chart(frame).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "circle"]
    assert spec["layer"][1]["encoding"]["x"]["field"] == "position"
    error = probe_error_chart(frame).to_dict()
    assert error["layer"][0]["encoding"]["y"]["field"] == "abs_error"
