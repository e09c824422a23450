"""posviz.encodings.sinusoidal: identities, published constants, reference implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posviz
from posviz.analysis.stats import dimension_variance
from posviz.encodings.sinusoidal import (
    SINUSOID_LAYOUTS,
    column_pair,
    pair_columns,
    sinusoid_frequencies,
    sinusoid_wavelengths,
    sinusoidal,
)


@pytest.mark.parametrize("layout", SINUSOID_LAYOUTS)
def test_shape_and_first_row(layout):
    pe = sinusoidal(7, 12, layout=layout)
    assert pe.shape == (7, 12) and pe.dtype == np.float64
    sin_cols, cos_cols = pair_columns(12, layout=layout)
    np.testing.assert_array_equal(pe[0, sin_cols], 0.0)  # sin(0)
    np.testing.assert_array_equal(pe[0, cos_cols], 1.0)  # cos(0)


def test_interleaved_is_the_papers_formula():
    n, d, base = 50, 16, 10000.0
    pe = sinusoidal(n, d)
    for p in (0, 1, 17, 49):
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            assert pe[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
            assert pe[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


@pytest.mark.parametrize("layout", SINUSOID_LAYOUTS)
def test_every_pair_lies_on_the_unit_circle(layout):
    pe = sinusoidal(300, 64, layout=layout, base=500.0)
    sin_cols, cos_cols = pair_columns(64, layout=layout)
    np.testing.assert_allclose(pe[:, sin_cols] ** 2 + pe[:, cos_cols] ** 2, 1.0, atol=1e-12)


@pytest.mark.parametrize("layout", SINUSOID_LAYOUTS)
def test_norm_squared_is_half_d(layout):
    pe = sinusoidal(200, 96, layout=layout)
    np.testing.assert_allclose((pe**2).sum(axis=1), 48.0, rtol=1e-12)


@pytest.mark.parametrize("layout", SINUSOID_LAYOUTS)
def test_dot_product_depends_only_on_offset(layout):
    """PE(p)·PE(p+k) = Σ_i cos(ω_i k) for every p (Vaswani et al. 2017, §3.5)."""
    n, d = 256, 64
    pe = sinusoidal(n, d, layout=layout)
    omega = sinusoid_frequencies(d, layout=layout)
    for k in (0, 1, 5, 40, 200):
        dots = np.einsum("pd,pd->p", pe[: n - k], pe[k:])
        np.testing.assert_allclose(dots, np.cos(omega * k).sum(), atol=1e-9)


def test_shift_is_a_rotation_of_each_pair():
    """PE(p+k) is a linear (rotation) function of PE(p): the property the paper cites."""
    d, k = 32, 9
    pe = sinusoidal(100, d)
    omega = sinusoid_frequencies(d)
    s, c = pe[:, 0::2], pe[:, 1::2]
    rotated_sin = s * np.cos(omega * k) + c * np.sin(omega * k)
    rotated_cos = c * np.cos(omega * k) - s * np.sin(omega * k)
    np.testing.assert_allclose(pe[k:, 0::2], rotated_sin[:-k], atol=1e-12)
    np.testing.assert_allclose(pe[k:, 1::2], rotated_cos[:-k], atol=1e-12)


def test_interleaved_and_split_are_column_permutations():
    inter = sinusoidal(64, 20)
    split = sinusoidal(64, 20, layout="split")
    perm = np.concatenate(pair_columns(20, layout="interleaved"))  # sin cols then cos cols
    np.testing.assert_array_equal(split, inter[:, perm])
    assert not np.array_equal(split, inter)


def test_tensor2tensor_is_not_a_permutation_of_the_paper():
    paper = sinusoidal(64, 20, layout="split")
    t2t = sinusoidal(64, 20, layout="tensor2tensor")
    assert not np.allclose(np.sort(paper, axis=1), np.sort(t2t, axis=1))


@pytest.mark.parametrize(("d", "base"), [(512, 10000.0), (64, 100.0), (4, 7.5)])
def test_tensor2tensor_timescales_run_from_exactly_one_to_base(d, base):
    timescales = 1.0 / sinusoid_frequencies(d, base=base, layout="tensor2tensor")
    assert timescales[0] == 1.0
    assert timescales[-1] == pytest.approx(base, rel=1e-12)
    ratios = timescales[1:] / timescales[:-1]
    np.testing.assert_allclose(ratios, base ** (1 / (d // 2 - 1)), rtol=1e-12)  # geometric


def test_paper_wavelengths_run_from_two_pi_towards_two_pi_base():
    wl = sinusoid_wavelengths(512)
    assert wl[0] == pytest.approx(2 * math.pi)
    assert wl[-1] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert wl[-1] < 2 * math.pi * 10000


def test_column_pair_round_trips_pair_columns():
    for layout in SINUSOID_LAYOUTS:
        sin_cols, cos_cols = pair_columns(10, layout=layout)
        for i in range(5):
            assert column_pair(10, int(sin_cols[i]), layout=layout) == (i, "sin")
            assert column_pair(10, int(cos_cols[i]), layout=layout) == (i, "cos")


def test_float32_matches_float64():
    big = sinusoidal(1500, 64, dtype=np.float32)  # crosses the row-block boundary
    assert big.dtype == np.float32
    np.testing.assert_allclose(big, sinusoidal(1500, 64), atol=1e-6)


def test_t2t_1591_comment_last_dimensions_barely_move():
    """tensor2tensor #1591's comment: d=512, 128 positions — the last dimensions move only ≈0.007.

    Interleaved: the slowest sines (columns 504…510) move 0.0065…0.0074 from position 0 to
    position 64, the last cosines less than 1e-4; the first pairs sweep all of [−1, 1].
    In the split layout the same slow sines are columns 252…255 (tensor2tensor's: 251…254).
    """
    pe = sinusoidal(128, 512)
    moved = np.abs(pe[64] - pe[0])
    for column in (504, 506, 508, 510):
        assert 0.0065 <= moved[column] <= 0.0075
    assert moved[511] < 1e-4
    np.testing.assert_allclose(moved[504:512:2].mean(), 0.007, atol=0.0003)
    assert np.ptp(pe[:, 0]) > 1.9
    var = dimension_variance(pe)
    assert var[-16:].max() < 1e-4 < var[:16].min()
    split = sinusoidal(128, 512, layout="split")
    assert 0.0065 <= abs(split[64, 255] - split[0, 255]) <= 0.0075
    assert 0.0065 <= abs(split[64, 252] - split[0, 252]) <= 0.0075


def test_public_api_is_exported():
    assert posviz.sinusoidal is sinusoidal
    assert posviz.SINUSOID_LAYOUTS == SINUSOID_LAYOUTS
    assert posviz.sinusoid_frequencies is sinusoid_frequencies


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_positions": 0, "d_model": 8}, "allowed 1 … 8192"),
        ({"n_positions": 99_999_999, "d_model": 8}, "allowed 1 … 8192"),
        ({"n_positions": -5, "d_model": 8}, "allowed 1 … 8192"),
        ({"n_positions": 2.5, "d_model": 8}, "whole number"),
        ({"n_positions": True, "d_model": 8}, "whole number"),
        ({"n_positions": 4, "d_model": 7}, "odd.*use d_model=6 or 8"),
        ({"n_positions": 4, "d_model": 0}, "allowed 2 … 8192"),
        ({"n_positions": 4, "d_model": 16384}, "allowed 2 … 8192"),
        ({"n_positions": 4, "d_model": "abc"}, "whole number"),
        ({"n_positions": 4, "d_model": 8, "base": 1.0}, "1 < base"),
        ({"n_positions": 4, "d_model": 8, "base": float("inf")}, "finite"),
        ({"n_positions": 4, "d_model": 8, "base": float("nan")}, "finite"),
        ({"n_positions": 4, "d_model": 8, "base": "x"}, "not a number"),
        ({"n_positions": 4, "d_model": 8, "layout": "rope"}, "choose one of"),
    ],
)
def test_bad_arguments_raise_actionable_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sinusoidal(**kwargs)


# --- against the implementations in transformers (torch imported here only) ---------------------


def test_matches_hf_create_sinusoidal_embeddings():
    torch = pytest.importorskip("torch")
    from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings

    out = torch.empty(64, 48)
    _create_sinusoidal_embeddings(64, 48, out)
    np.testing.assert_allclose(out.numpy(), sinusoidal(64, 48), atol=1e-6)


def test_matches_marian_split_layout():
    pytest.importorskip("torch")
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    table = MarianSinusoidalPositionalEmbedding(64, 48).create_weight()
    np.testing.assert_allclose(table.numpy(), sinusoidal(64, 48, layout="split"), atol=1e-6)


def test_matches_whisper_sinusoids_tensor2tensor_schedule():
    pytest.importorskip("torch")
    from transformers.models.whisper.modeling_whisper import sinusoids

    table = sinusoids(64, 48).numpy()
    np.testing.assert_allclose(table, sinusoidal(64, 48, layout="tensor2tensor"), atol=1e-5)


# --- the page, through Streamlit's AppTest ---------------------------------------------

PAGE = "pages/sinusoidal.py"


def _page(query: dict[str, str] | None = None):
    from conftest import app_test, assert_no_exception

    at = app_test(PAGE, query=query)
    assert_no_exception(at)
    return at


def _specs(at) -> list[dict]:
    import json

    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def _title(spec: dict) -> str:
    title = spec.get("title")
    return title if isinstance(title, str) else (title or {}).get("text", "")


def _table_view(at) -> dict:
    """The "whole table" heatmap (below the linked hero and the why-sin-and-cos panel)."""
    return next(
        spec for spec in _specs(at) if _title(spec).endswith(" table") or "table —" in _title(spec)
    )


def test_page_shows_all_five_views_and_publishes_the_url():
    at = _page()
    specs = _specs(at)
    titles = [_title(spec) for spec in specs]
    # the linked hero (wide and narrow arrangements), the why-panel's two charts, five views,
    # then Whisper's real encoder table: the table, its difference to the formula, two schemes
    assert len(specs) == 12 and sum(1 for t in titles if t) == 7
    assert sum("Whisper" in spec.get("description", "") for spec in specs[-3:]) >= 1
    assert sum("Sine" in t for t in titles) == 2
    table = _table_view(at)
    assert "128×512 table" in table["title"]["text"]
    assert "1:1" in table["title"]["subtitle"][0]
    assert not at.error and not at.warning
    assert at.query_params["sin_n"] == "128" and at.query_params["sin_d"] == "512"
    assert at.query_params["sin_layout"] == "interleaved"
    headers = " ".join(h.value for h in at.subheader)
    for view in ("whole table", "Dimensions", "Clock hands", "carry position", "distance"):
        assert view in headers


def test_page_sliders_change_the_views_and_the_url():
    at = _page()
    at.slider(key="sin_n").set_value(256).run()
    at.radio(key="sin_layout").set_value("tensor2tensor").run()
    at.slider(key="sin_pos").set_value(200).run()
    assert not at.exception and not at.error
    specs = _specs(at)
    assert "256×512 table" in _table_view(at)["title"]["text"]
    assert any(_title(spec) == "Position 200 on the circle" for spec in specs)
    assert at.query_params["sin_n"] == "256"
    assert at.query_params["sin_layout"] == "tensor2tensor"


def test_page_reproduces_the_t2t_1591_comment():
    at = _page({"sin_n": "128", "sin_d": "512", "sin_layout": "interleaved"})
    table = at.dataframe[0].value
    moved = dict(zip(table["column"], table["|PE[64] − PE[0]|"], strict=True))
    assert moved[506] == pytest.approx(0.00713, abs=5e-5)
    assert moved[511] < 1e-4
    assert "0.007" in " ".join(m.value for m in at.markdown)


def test_page_link_reproduces_a_view():
    at = _page(
        {
            "sin_n": "64",
            "sin_d": "32",
            "sin_base": "100",
            "sin_layout": "split",
            "sin_pair": "3",
            "sin_pos": "5",
            "sin_hm_zoom": "true",
            "sin_hm_rows": "16",
        }
    )
    assert at.slider(key="sin_n").value == 64 and at.slider(key="sin_d").value == 32
    assert at.number_input(key="sin_base").value == 100.0
    spec = _table_view(at)
    assert "64×32 table — positions 0…15" in spec["title"]["text"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"sin_n": "-5"}, "outside 1…8192; using 1"),
        ({"sin_n": "99999999"}, "outside 1…8192; using 8192"),
        ({"sin_d": "abc"}, "not a number"),
        ({"sin_base": "1e400"}, "not a finite number"),
        ({"sin_base": "0"}, "outside 1.01"),
        ({"sin_layout": "rope"}, "not one of"),
        ({"sin_dims": "1,x,99999"}, "Ignored x, 99999"),  # escaped, unquoted (ui.state)
    ],
)
def test_page_hostile_link_parameters_give_clear_messages(query, message):
    at = _page(query)
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(_specs(at)) >= 4


def test_page_odd_width_from_a_link_says_why():
    at = _page({"sin_d": "513"})
    assert any("odd" in e.value and "512 or 514" in e.value for e in at.error)


@pytest.mark.slow
def test_page_a_table_past_the_pixels_is_an_honest_overview():
    """Past 1024×1024 cells the heatmap pools and says so (the largest table, 8192×8192, is
    rendered by tests/test_bad_inputs.py's extremes sweep)."""
    at = _page({"sin_n": "2048", "sin_d": "2048"})
    spec = _table_view(at)
    assert "1 pixel = 2×2 cells (mean)" in spec["title"]["subtitle"][0]
    assert any("larger than 1024×1024" in i.value for i in at.info)


@pytest.mark.parametrize("layout", ["interleaved", "split", "tensor2tensor"])
def test_float32_table_matches_float64_within_1e6_even_at_8192_positions(layout):
    exact = posviz.sinusoidal(8192, 64, layout=layout)
    fast = posviz.sinusoidal(8192, 64, layout=layout, dtype=np.float32)
    assert fast.dtype == np.float32
    assert np.abs(fast.astype(np.float64) - exact).max() < 1e-6
