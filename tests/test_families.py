"""Compare analyses (similarity, margins, extrapolation, NoPE) and the family pages in AppTest."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import app_test, assert_no_exception
from hf_support import tiny_model

import posviz
from posviz.analysis import families as fam
from posviz.encodings.sinusoidal import sinusoid_frequencies, sinusoidal


def test_sinusoid_table_similarity_equals_the_closed_form_kernel():
    table = sinusoidal(300, 64)
    measured = fam.table_similarity(table, 200)
    expected = posviz.rope_inv_freq(64)  # same frequencies as the sinusoid of width 64
    np.testing.assert_allclose(sinusoid_frequencies(64), expected)
    from posviz.encodings.rope import rope_kernel

    np.testing.assert_allclose(measured, rope_kernel(np.arange(200), expected), atol=1e-12)


def test_table_similarity_is_nan_past_the_table():
    out = fam.table_similarity(np.random.default_rng(0).normal(size=(10, 4)), 20)
    assert out[0] == pytest.approx(1.0) and np.isnan(out[10:]).all() and np.isfinite(out[:10]).all()


def test_alibi_similarity_is_one_at_zero_and_decreasing():
    sim = fam.alibi_similarity(100, posviz.alibi_slopes(8))
    assert sim[0] == pytest.approx(1.0)
    assert np.all(np.diff(sim) < 0)
    assert sim[1] == pytest.approx(np.mean(np.exp(-posviz.alibi_slopes(8))))


def test_t5_similarity_follows_the_bias_table():
    table = np.zeros((32, 2))
    table[1] = np.log(0.5)  # bucket of distance 1 (causal, looking back) halves the weight
    sim = fam.t5_similarity(10, table, bidirectional=False)
    assert sim[0] == 1.0 and sim[1] == pytest.approx(0.5) and sim[2] == 1.0


def test_bucket_margins_are_zero_inside_shared_buckets_and_one_for_exact_ones():
    margin = fam.nearest_margin(fam.bucket_signal(200, bidirectional=False))
    np.testing.assert_allclose(margin[:16], 1.0)  # 16 exact buckets looking back
    assert np.all(margin[100:] == 0.0)


def test_linear_interpolation_keeps_every_angle_inside_training():
    inv = posviz.rope_inv_freq(64)
    scaled = posviz.rope_inv_freq(64, scaling={"rope_type": "linear", "factor": 4.0})
    trained = 512
    plain = fam.unseen_angle_fraction(4 * trained, inv, trained_length=trained)
    interpolated = fam.unseen_angle_fraction(
        4 * trained, scaled, trained_length=trained, trained_inv_freq=inv
    )
    assert np.all(plain[:trained] == 0) and plain[trained] > 0.3
    assert np.all(interpolated[: 4 * (trained - 1) + 1] == 0)


def test_unseen_buckets_only_before_max_distance():
    assert not fam.unseen_bucket_fraction(1000, trained_length=512).any()
    short = fam.unseen_bucket_fraction(300, trained_length=20, bidirectional=False)
    assert short[:20].sum() == 0 and short[200] == 1


def test_nope_norms_follow_one_over_sqrt_position():
    measured, theory = fam.causal_average_norms(64, 256, n_samples=64, seed=1)
    np.testing.assert_allclose(measured, theory, rtol=0.05)
    positions = fam.position_from_norm(theory, 256)
    np.testing.assert_allclose(positions, np.arange(64), atol=1e-9)


def test_nope_demo_curves_are_the_norms_and_their_inversion():
    demo = fam.nope_demo(32, 64, n_samples=8, seed=2)
    measured, theory = fam.causal_average_norms(32, 64, n_samples=8, seed=2)
    norms = list(demo.norms.values())
    np.testing.assert_array_equal(norms[0], measured)
    np.testing.assert_array_equal(norms[1], theory)
    np.testing.assert_array_equal(norms[2], np.full(32, measured[-1]))  # no mask: mean of all
    readout = list(demo.readout.values())
    np.testing.assert_allclose(readout[1], 64 / measured**2 - 1)
    np.testing.assert_array_equal(readout[2], np.arange(32))


# --- analysis.comparison ----------------------------------------------------------------------


def _comparison(chosen, **settings):
    from posviz.analysis.comparison import CompareSettings, compare_families

    return compare_families(chosen, settings=CompareSettings(**settings))


def test_comparison_sinusoid_rows_equal_the_measured_shift_similarity():
    from posviz.analysis.stats import shift_similarity

    result = _comparison(["sinusoidal"], n_distances=200, sinusoid_width=64, trained_length=64)
    measured = shift_similarity(sinusoidal(400, 64), 199).mean  # mean over p of cos(PE_p, PE_p+k)
    np.testing.assert_allclose(result.similarity["Sinusoid"], measured, atol=1e-9)
    np.testing.assert_allclose(
        result.margin["Sinusoid"], fam.nearest_margin(sinusoidal(200, 64)), atol=1e-9
    )
    row = result.summary.iloc[0]
    assert row["family"] == "Sinusoid"
    assert row["similarity at L=64"] == pytest.approx(measured[64])
    assert row["unseen at k=128"] == result.unseen["Sinusoid"][128]


def test_comparison_rope_without_scaling_is_the_sinusoid_kernel_and_alibi_its_mean_factor():
    result = _comparison(
        ["rope", "alibi"],
        n_distances=300,
        rope_head_dim=64,
        rope_scaling="linear",
        rope_factor=2.0,
        trained_length=100,
    )
    from posviz.encodings.rope import rope_kernel

    np.testing.assert_allclose(
        result.similarity["RoPE"], rope_kernel(np.arange(300), sinusoid_frequencies(64))
    )
    # linear ×2 halves every θ: the scaled kernel at 2k equals the unscaled one at k
    np.testing.assert_allclose(
        result.similarity["RoPE + linear ×2"][::2], result.similarity["RoPE"][:150], atol=1e-12
    )
    alibi = result.similarity["ALiBi (8 heads)"]
    assert alibi[3] == pytest.approx(np.mean(np.exp(-3 * posviz.alibi_slopes(8))))
    assert result.unseen["ALiBi (8 heads)"].tolist() == [0.0] * 100 + [1.0] * 200
    assert list(result.summary["family"]) == ["RoPE", "RoPE + linear ×2", "ALiBi (8 heads)"]
    unscaled = _comparison(["rope"], n_distances=300, rope_scaling="none")
    assert list(unscaled.similarity) == ["RoPE"]


def test_comparison_reports_a_bad_family_and_keeps_the_others():
    result = _comparison(["alibi", "t5", "sinusoidal"], alibi_heads=0, t5_max_distance=5)
    assert "n_heads=0" in result.errors["ALiBi"]
    assert "max_distance=5" in result.errors["T5 buckets"]
    assert list(result.similarity) == ["Sinusoid"]
    with pytest.raises(ValueError, match="unknown families"):
        _comparison(["Fourier"])
    with pytest.raises(ValueError, match="unknown families"):
        _comparison(["nope"])  # registered, but with no signal to compare
    with pytest.raises(ValueError, match="rope_scaling='ntk'"):
        _comparison(["rope"], rope_scaling="ntk")


def test_comparison_with_a_learned_table_pads_its_margin_past_the_end():
    from posviz.analysis.comparison import CompareSettings, LearnedTable, compare_families

    table = np.random.default_rng(0).normal(size=(50, 8))
    learned = LearnedTable("Learned (MiniLM)", table, fam.nearest_margin(table))
    result = compare_families(
        ["learned"], settings=CompareSettings(n_distances=80), learned=learned
    )
    margin = result.margin["Learned (MiniLM)"]
    assert margin.shape == (80,) and np.isnan(margin[50:]).all()
    np.testing.assert_array_equal(margin[:50], learned.margin)
    assert result.unseen["Learned (MiniLM)"][49] == 0 and result.unseen["Learned (MiniLM)"][50] == 1


def test_lines_figure_exports_exactly_what_it_draws():
    from posviz.charts.families import lines_figure

    x = np.arange(5)
    series = {"a": x * 2.0, "b": np.array([1.0, np.nan, 3, 4, 5])}
    figure = lines_figure(x, series, name="demo", x_title="x", y_title="y")
    np.testing.assert_array_equal(figure.data, np.column_stack([x, x * 2.0, series["b"]]))
    spec = figure.chart.to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 9  # the NaN point is not drawn
    assert figure.name == "demo"


def test_vit_display_tiles_stride_keeps_at_most_sixteen_per_side():
    from posviz.analysis.vit import display_tiles

    grid = np.zeros((40, 20, 40, 20))
    tiles, stride = display_tiles(grid)
    assert stride == 3 and tiles.shape == (14, 7, 40, 20)
    tiles, stride = display_tiles(np.zeros((14, 14, 14, 14)))
    assert stride == 1 and tiles.shape == (14, 14, 14, 14)


@pytest.mark.parametrize(
    "call",
    [
        lambda: fam.table_similarity(np.ones((4, 2)), 1),
        lambda: fam.nearest_margin(np.ones(5)),
        lambda: fam.causal_average_norms(10, 0),
        lambda: fam.unseen_angle_fraction(10, np.ones(2), trained_length=0),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- pages -------------------------------------------------------------------------------------


def _specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_rope_page_default_is_llama31_with_llama3_scaling():
    at = app_test("pages/rope.py")
    assert_no_exception(at)
    assert not _errors(at)
    assert len(at.get("vega_lite_chart")) == 4
    caption = " ".join(c.value for c in at.caption)
    assert "head_dim 128" in caption and "llama3" in caption and "500,000" in caption


def test_rope_page_shows_an_odd_head_dim_as_a_message_naming_it():
    at = app_test("pages/rope.py", query={"rope_src": "manual", "rope_hd": "63"})
    assert_no_exception(at)
    assert any("head_dim=63" in e and "even" in e for e in _errors(at)), _errors(at)


def _number_range(at, key: str) -> tuple[float, float]:
    proto = at.number_input(key=key).proto
    return proto.min, proto.max


@pytest.mark.parametrize(
    ("page", "query", "key", "module", "low", "high"),
    [
        ("rope", {"rope_src": "manual"}, "rope_hd", "rope", "MIN_HEAD_DIM", "MAX_HEAD_DIM"),
        ("alibi", {"alb_src": "manual"}, "alb_heads", "alibi", "MIN_HEADS", "MAX_HEADS"),
        ("t5_buckets", {"t5_src": "manual"}, "t5_nb", "t5", "MIN_BUCKETS", "MAX_BUCKETS"),
        ("t5_buckets", {"t5_src": "manual"}, "t5_md", "t5", "MIN_MAX_DISTANCE", "MAX_DISTANCE"),
        ("compare", {}, "cmp_heads", "alibi", "MIN_HEADS", "MAX_HEADS"),
        ("compare", {}, "cmp_nb", "t5", "MIN_BUCKETS", "MAX_BUCKETS"),
        ("compare", {}, "cmp_md", "t5", "MIN_MAX_DISTANCE", "MAX_DISTANCE"),
    ],
)
def test_widget_ranges_are_the_library_limits(page, query, key, module, low, high):
    """A widget offers exactly what the library accepts (one constant for both)."""
    import importlib

    encodings = importlib.import_module(f"posviz.encodings.{module}")
    at = app_test(f"pages/{page}.py", query=query)
    assert_no_exception(at)
    assert _number_range(at, key) == (getattr(encodings, low), getattr(encodings, high))


@pytest.mark.parametrize(
    ("page", "query", "key", "used"),
    [
        ("rope", {"rope_src": "manual", "rope_hd": "0"}, "rope_hd", 2),
        ("rope", {"rope_src": "manual", "rope_hd": "10000"}, "rope_hd", 4096),
        ("alibi", {"alb_src": "manual", "alb_heads": "0"}, "alb_heads", 1),
        ("alibi", {"alb_src": "manual", "alb_heads": "10000"}, "alb_heads", 1024),
        ("t5_buckets", {"t5_src": "manual", "t5_nb": "0"}, "t5_nb", 2),
        ("t5_buckets", {"t5_src": "manual", "t5_md": "0"}, "t5_md", 2),
    ],
)
def test_out_of_range_link_values_are_clamped_with_a_message_naming_the_setting(
    page, query, key, used
):
    at = app_test(f"pages/{page}.py", query=query)
    assert_no_exception(at)
    assert any(key in w.value and f"using {used}" in w.value for w in at.warning), [
        w.value for w in at.warning
    ]
    assert at.number_input(key=key).value == used


def _rope_page_on_config(folder, config: dict):
    """The RoPE page run on a directory holding only ``config`` as its config.json, with no
    exception."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    at = app_test("pages/rope.py", query={"rope_src": "hub", "rope_hub": str(folder)})
    assert_no_exception(at)
    return at


def test_rope_page_reads_a_config_json_directory(tmp_path):
    llama = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8}
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    good = {**llama, "max_position_embeddings": 8192, "rope_theta": 10000.0, "rope_scaling": yarn}
    at = _rope_page_on_config(tmp_path / "good", good)
    assert not _errors(at)
    caption = " ".join(c.value for c in at.caption)
    assert "head_dim 64" in caption and "yarn" in caption and "attention factor 1.1386" in caption

    bad = {**llama, "rope_scaling": {"type": "mystery", "factor": 2.0}}
    at = _rope_page_on_config(tmp_path / "bad", bad)
    assert any("not supported" in e for e in _errors(at))


def test_rope_page_url_round_trip():
    at = app_test("pages/rope.py", query={"rope_pos": "77", "rope_pairing": "rotate_every_two"})
    assert at.slider(key="rope_pos").value == 77
    assert at.selectbox(key="rope_pairing").value == "rotate_every_two"
    at.slider(key="rope_pos").set_value(123).run()
    assert at.query_params["rope_pos"] in ("123", ["123"])


def test_alibi_page_twelve_heads_and_bad_counts():
    at = app_test("pages/alibi.py", query={"alb_src": "manual", "alb_heads": "12"})
    assert_no_exception(at)
    assert not _errors(at)
    slopes = at.dataframe[0].value["slope"].to_numpy()
    np.testing.assert_allclose(slopes, posviz.alibi_slopes(12))
    # out-of-range head counts: see test_out_of_range_link_values_are_clamped_...


def test_alibi_page_causal_bias_is_masked_above_the_diagonal():
    at = app_test("pages/alibi.py", query={"alb_n": "8", "alb_var": "causal"})
    assert_no_exception(at)
    heatmap = next(s for s in _specs(at) if s.get("mark", {}).get("type") == "rect")
    assert heatmap["encoding"]["x"]["title"] == "key position j"


def test_t5_page_offline_defaults_and_bad_settings():
    at = app_test("pages/t5_buckets.py")
    assert_no_exception(at)
    # the buckets and the bucket of every (i, j); then MPNet's shipped bias: heatmap, profiles,
    # which buckets any position reaches
    charts = [json.loads(c.proto.spec).get("description", "") for c in at.get("vega_lite_chart")]
    assert len(charts) == 5 and sum("all-mpnet-base-v2" in d for d in charts) == 1
    assert any("No T5 checkpoint is read yet" in i.value for i in at.info)
    at = app_test("pages/t5_buckets.py", query={"t5_src": "manual", "t5_nb": "2"})
    assert_no_exception(at)
    assert any("too small" in e for e in _errors(at))


@pytest.mark.slow
def test_t5_page_reads_the_learned_bias_of_a_local_model(tmp_path):
    pytest.importorskip("torch")
    model = tiny_model("T5", d_model=16, d_kv=4, d_ff=32, num_layers=1, num_decoder_layers=1,
                       num_heads=3, vocab_size=50)  # fmt: skip
    model.save_pretrained(tmp_path)
    expected = model.encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight
    at = app_test("pages/t5_buckets.py", query={"t5_src": "hub", "t5_hub": str(tmp_path)})
    assert_no_exception(at)
    assert not _errors(at)
    assert len(at.get("vega_lite_chart")) == 3
    from posviz.ui.families import T5_BIAS_KEYS, cached_t5_bias

    read = cached_t5_bias(str(tmp_path), "encoder")  # what the page drew
    assert T5_BIAS_KEYS["encoder"].startswith("encoder.block.0.")
    np.testing.assert_allclose(read, expected.detach().numpy(), rtol=1e-6)


def test_nope_page_runs():
    at = app_test("pages/nope.py", query={"nope_n": "64", "nope_d": "32"})
    assert_no_exception(at)
    assert len(at.get("vega_lite_chart")) == 2


def test_compare_page_all_families_and_a_bad_head_count():
    at = app_test("pages/compare.py")
    assert_no_exception(at)
    assert not _errors(at)
    assert len(at.get("vega_lite_chart")) == 3
    families = at.dataframe[0].value["family"].tolist()
    assert families[:4] == ["Sinusoid", "Learned (MiniLM)", "RoPE", "RoPE + yarn ×4"]
    assert "p-RoPE (p = 0.25)" in families
    # a setting the library rejects is refused by the widget: the link is clamped and says so
    at = app_test("pages/compare.py", query={"cmp_heads": "0", "cmp_fam": "alibi,rope"})
    assert_no_exception(at)
    assert any("cmp_heads" in w.value and "1" in w.value for w in at.warning), at.warning
    assert at.number_input(key="cmp_heads").value == 1
    # a bad combination inside the ranges names the setting; the other families are still drawn
    at = app_test("pages/compare.py", query={"cmp_md": "5", "cmp_fam": "t5,rope"})
    assert_no_exception(at)
    assert any("max_distance=5 must exceed" in e.replace("\\", "") for e in _errors(at))
    assert len(at.get("vega_lite_chart")) == 3  # RoPE still drawn


@pytest.mark.slow
def test_family_pages_do_not_import_torch(root):
    """The "Beyond" section (every family page there, the ViT grid, Compare), from the registry."""
    import subprocess
    import sys

    from posviz.navigation import sections

    pages = [spec.key for spec in sections()["Beyond"]]
    assert "pages/p_rope.py" in pages and "pages/compare.py" in pages
    script = (
        "import sys; sys.path.insert(0, 'tests'); from conftest import app_test\n"
        f"for page in {pages!r}:\n"
        "    at = app_test(page); assert not at.exception, page\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert out.stdout.strip().splitlines()[-1] == "False False"


def test_public_api_of_the_families_resolves():
    for name in (
        "rope_inv_freq",
        "rope_frequencies",
        "rope_attention_factor",
        "rope_rotate",
        "rope_scores",
        "rope_decay_bound",
        "alibi_slopes",
        "alibi_bias",
        "t5_relative_bucket",
        "t5_bias_matrix",
        "rope_config_from_dict",
        "patch_similarity_grid",
    ):
        assert callable(getattr(posviz, name)), name


def _arrow_rows(chart_element) -> list:
    import pyarrow as pa

    tables = [pa.ipc.open_stream(d.data.data).read_all() for d in chart_element.proto.datasets]
    return [table.num_rows for table in tables]


def test_alibi_page_ships_only_the_unmasked_cells():
    n = 8
    at = app_test("pages/alibi.py", query={"alb_n": str(n), "alb_var": "causal"})
    charts = at.get("vega_lite_chart")
    rect = next(c for c in charts if json.loads(c.proto.spec).get("mark", {}).get("type") == "rect")
    assert n * (n + 1) // 2 in _arrow_rows(rect)  # the future (−inf) cells are left out
    at = app_test("pages/alibi.py", query={"alb_n": str(n), "alb_var": "symmetric"})
    charts = at.get("vega_lite_chart")
    rect = next(c for c in charts if json.loads(c.proto.spec).get("mark", {}).get("type") == "rect")
    assert n * n in _arrow_rows(rect)


def test_wavelength_chart_marks_each_pair_with_its_regime():
    from posviz.charts.families import rope_wavelength_chart
    from posviz.encodings.families import parse_config
    from posviz.encodings.model_config import PRESETS

    freqs = parse_config(
        "rope", PRESETS["Llama-3.1-8B (llama3 scaling, config.json)"]
    ).frequencies()
    spec = rope_wavelength_chart(freqs).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 2 * 64
    scaled = [r for r in rows if r["which"].startswith("scaled")]
    assert {r["regime"] for r in scaled} == {"kept", "smoothed", "interpolated"}
    assert scaled[-1]["ratio"] == pytest.approx(1 / 8)


@pytest.mark.slow
def test_pages_read_hub_models_through_a_loopback_hub(tmp_path, monkeypatch):
    """The real huggingface_hub client against tests/hub_server.py: a config and one tensor."""
    pytest.importorskip("torch")
    from hub_server import FakeHub, HubServer

    t5_dir = tmp_path / "t5"
    model = tiny_model("T5", d_model=64, d_kv=8, d_ff=128, num_layers=2, num_decoder_layers=2,
                       num_heads=4, vocab_size=2000)  # fmt: skip
    model.save_pretrained(t5_dir)
    llama_dir = tmp_path / "llama"
    llama_dir.mkdir()
    (llama_dir / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 256,
                "num_attention_heads": 4,
                "max_position_embeddings": 16384,
                "rope_theta": 500000.0,
                "rope_scaling": {
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 2048,
                },
            }
        )
    )
    fake = FakeHub()
    fake.add_dir("tiny/t5", t5_dir)
    fake.add_dir("tiny/llama3", llama_dir)
    with HubServer(fake) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
        for name in ("HF_HUB_CACHE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
            monkeypatch.delenv(name, raising=False)

        at = app_test("pages/rope.py", query={"rope_src": "hub", "rope_hub": "tiny/llama3"})
        assert_no_exception(at)
        assert not _errors(at)
        caption = " ".join(c.value for c in at.caption)
        assert "tiny/llama3" in caption and "head_dim 64" in caption and "llama3" in caption

        at = app_test("pages/t5_buckets.py", query={"t5_src": "hub", "t5_hub": "tiny/t5"})
        assert_no_exception(at)
        assert not _errors(at)
        assert len(at.get("vega_lite_chart")) == 3
        weights = (t5_dir / "model.safetensors").stat().st_size
        served = fake.bytes_for("tiny/t5")
        assert served < weights / 4, (served, weights)  # one small tensor, not the checkpoint
