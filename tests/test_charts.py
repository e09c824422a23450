"""Chart builders: Vega-Lite specs via ``to_dict()``, payload sizes, honest level-of-detail."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

import posviz
from posviz.analysis.stats import dimension_variance, shift_similarity
from posviz.charts.circle import unit_circle_chart
from posviz.charts.heatmap import (
    PAYLOAD_BUDGET,
    heatmap_chart,
    heatmap_image,
    lod_factors,
    payload_bytes,
    reduce_blocks,
)
from posviz.charts.lines import (
    dimensions_chart,
    shift_band_chart,
    variance_bars_chart,
)
from posviz.encodings.sinusoidal import pair_columns, sinusoidal
from posviz.notebook import shift_similarity_chart, variance_chart

RNG = np.random.default_rng(1)


def _layers(chart) -> list[dict]:
    return chart.to_dict()["layer"]


def _dataset(spec: dict, layer: dict) -> list[dict]:
    data = layer.get("data") or spec["data"]  # Altair hoists data shared by all layers
    return spec["datasets"][data["name"]]


def _decode_png(image_layer_rows: list[dict]) -> Image.Image:
    url = image_layer_rows[0]["url"]
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


#: Streamlit's page backgrounds: its light theme's white, its dark theme's (``gray100``) and the
#: dark that Streamlit 1.67 also paints (its ``bgColor`` #171614, which the ramp test measured)
WHITE, DARK, DARK_AS_DRAWN = "#ffffff", "#0e1117", "#171614"

#: Colour-vision deficiency as a 3×3 map of linear RGB, severity 1.0 (dichromacy): Machado,
#: Oliveira & Fernandes, "A Physiologically-based Model for Simulation of Color Vision
#: Deficiency", IEEE TVCG 15(6), 2009, Table 1. Each row sums to 1, so a grey stays itself.
DEUTERANOPIA = np.array(
    [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ]
)
PROTANOPIA = np.array(
    [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ]
)


def _linear_rgb(hex_color: str) -> np.ndarray:
    """sRGB ``#rrggbb`` → linear RGB in [0, 1] (IEC 61966-2-1; WCAG 2.1 writes the threshold
    0.03928 for 0.04045, which changes no 8-bit value)."""
    srgb = np.array([int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _luminance(hex_color: str) -> float:
    """WCAG 2.1 relative luminance: 0.2126 R + 0.7152 G + 0.0722 B of linear RGB."""
    return float(np.dot([0.2126, 0.7152, 0.0722], _linear_rgb(hex_color)))


def _contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio (L_lighter + 0.05) / (L_darker + 0.05), from 1 to 21."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _lab(hex_color: str, vision: np.ndarray | None = None) -> np.ndarray:
    """CIELAB (D65 white) of an sRGB colour, as seen with ``vision`` (a matrix above) if given.

    L* = 116 f(Y/Yn) − 16, a* = 500 (f(X/Xn) − f(Y/Yn)), b* = 200 (f(Y/Yn) − f(Z/Zn)), with
    f(t) = t^(1/3) above (6/29)³ and linear below (CIE 15:2004); XYZ from linear sRGB by the
    IEC 61966-2-1 matrix.
    """
    to_xyz = np.array(
        [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
         [0.0193339, 0.1191920, 0.9503041]]
    )  # fmt: skip
    rgb = _linear_rgb(hex_color)
    if vision is not None:
        rgb = np.clip(vision @ rgb, 0, 1)
    t = to_xyz @ rgb / to_xyz.sum(axis=1)  # the white's XYZ is each row's sum
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _delta_e(a: str, b: str, vision: np.ndarray | None = None) -> float:
    """CIE 1976 colour difference ΔE*ab: the distance of two colours in CIELAB."""
    return float(np.linalg.norm(_lab(a, vision) - _lab(b, vision)))


@pytest.fixture(scope="module")
def big_table() -> np.ndarray:
    return sinusoidal(8192, 8192, dtype=np.float32)


def test_heatmap_is_one_png_image_layer_drawn_one_to_one():
    m = sinusoidal(128, 512)
    spec = heatmap_chart(m).to_dict()
    image = spec["layer"][0]
    assert image["mark"]["type"] == "image" and image["mark"]["smooth"] is False
    png = _decode_png(_dataset(spec, image))
    assert png.size == (512, 128) and png.mode == "P"  # every cell its own pixel
    assert "1:1" in spec["title"]["subtitle"][0]
    assert image["encoding"]["x"]["scale"]["domain"] == [0, 512]
    assert image["encoding"]["y"]["scale"]["reverse"] is True


def test_heatmap_pixels_encode_the_values_on_a_zero_centred_scale():
    m = np.array([[-2.0, 0.0, 2.0], [1.0, -1.0, 0.5]])
    img = heatmap_image(m)
    indices = np.asarray(Image.open(io.BytesIO(img.png)))
    assert img.vmax == 2.0 and img.levels == 255
    np.testing.assert_array_equal(indices, np.round((m / 2 + 1) / 2 * 254))
    assert indices[0, 1] == 127  # zero sits exactly on the middle colour


def test_heatmap_legend_is_diverging_and_centred_on_zero():
    spec = heatmap_chart(RNG.normal(size=(20, 30))).to_dict()
    assert len(spec["layer"]) == 2  # image + tooltip grid (which carries the legend)
    color = spec["layer"][1]["encoding"]["color"]
    assert spec["layer"][1]["mark"]["fillOpacity"] == 0.0  # the grid itself stays invisible
    domain = color["scale"]["domain"]
    assert domain[0] == pytest.approx(-domain[-1])
    assert domain[len(domain) // 2] == pytest.approx(0.0)
    assert color["scale"]["range"][0] != color["scale"]["range"][-1]


def test_heatmap_tooltips_are_blocks_then_exact_cells():
    m = RNG.normal(size=(300, 200))
    spec = heatmap_chart(m).to_dict()
    hover = spec["layer"][1]
    titles = [t["title"] for t in hover["encoding"]["tooltip"]]
    assert "mean of block" in titles and "max of block" in titles
    assert len(_dataset(spec, hover)) <= 16 * 16
    small = heatmap_chart(m, window=(10, 20, 5, 9)).to_dict()
    rows = _dataset(small, small["layer"][1])
    assert len(rows) == 10 * 4
    cell = next(r for r in rows if r["row0"] == 12 and r["col0"] == 7)
    assert cell["mean"] == pytest.approx(m[12, 7], abs=1e-6)
    assert [t["title"] for t in small["layer"][1]["encoding"]["tooltip"]][-1] == "value"


def test_lod_factors_and_block_reduction():
    assert lod_factors((1024, 1024)) == (1, 1)
    assert lod_factors((8192, 8192)) == (8, 8)
    assert lod_factors((1025, 300)) == (2, 1)
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(reduce_blocks(m, 2, 2), [[2.5, 4.5], [8.5, 10.5]])
    signed = np.array([[0.1, -0.9], [0.5, 0.2]])
    assert reduce_blocks(signed, 2, 2, "absmax")[0, 0] == -0.9


@pytest.mark.parametrize(("n", "d"), [(512, 768), (1024, 1024)])
def test_heatmap_payload_up_to_1024_is_one_to_one_and_under_1mb(n, d):
    for table in (sinusoidal(n, d), RNG.normal(size=(n, d))):
        chart = heatmap_chart(table)
        assert payload_bytes(chart) <= PAYLOAD_BUDGET
        assert "1:1" in chart.to_dict()["title"]["subtitle"][0]


def test_heatmap_8192_overview_says_it_is_reduced_and_fits_budget(big_table):
    chart = heatmap_chart(big_table)
    spec = chart.to_dict()
    assert payload_bytes(chart) <= PAYLOAD_BUDGET
    assert "1 pixel = 8×8 cells (mean)" in spec["title"]["subtitle"][0]
    assert _decode_png(_dataset(spec, spec["layer"][0])).size == (1024, 1024)


def test_heatmap_8192_zoom_window_is_one_to_one(big_table):
    chart = heatmap_chart(big_table, window=(7000, 8024, 100, 1124), reduce="absmax")
    spec = chart.to_dict()
    assert payload_bytes(chart) <= PAYLOAD_BUDGET
    assert "1:1" in spec["title"]["subtitle"][0]
    assert "positions 7000…8023" in spec["title"]["text"]
    png = _decode_png(_dataset(spec, spec["layer"][0]))
    assert png.size == (1024, 1024)


def test_incompressible_table_falls_back_to_fewer_levels_and_says_so():
    img = heatmap_image(RNG.normal(size=(1024, 1024)))
    assert img.levels < 255
    assert f"{img.levels} levels" in img.describe()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"matrix": np.zeros(5)}, "2-D"),
        ({"matrix": np.zeros((9000, 2))}, "at most 8192"),
        ({"matrix": np.array([[np.nan]])}, "NaN"),
        ({"matrix": np.zeros((4, 4)), "window": (2, 9, 0, 4)}, "does not fit"),
        ({"matrix": np.zeros((4, 4)), "reduce": "median", "window": None}, None),
    ],
)
def test_heatmap_bad_input(kwargs, match):
    if match is None:  # a 1:1 view never reduces, so the option is not consulted
        heatmap_chart(**kwargs)
        return
    with pytest.raises(ValueError, match=match):
        heatmap_chart(**kwargs)


def test_dimensions_chart_lines_and_bucketing():
    spec = dimensions_chart(sinusoidal(100, 16), [0, 5], current=7).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["line", "rule"]
    assert len(_dataset(spec, spec["layer"][0])) == 200
    long = dimensions_chart(sinusoidal(8192, 8), [0]).to_dict()
    assert [layer["mark"]["type"] for layer in long["layer"]] == ["area", "line"]
    assert "buckets of 4" in long["title"]["subtitle"][0]
    with pytest.raises(ValueError, match="columns 0 … 15"):
        dimensions_chart(sinusoidal(10, 16), [16])


def test_variance_chart_counts_active_dimensions():
    pe = sinusoidal(128, 512)
    spec = variance_bars_chart(dimension_variance(pe), threshold=1e-3).to_dict()
    expected = int((pe.var(axis=0) > 1e-3).sum())
    assert spec["title"]["text"].startswith(f"{expected} of 512 dimensions are active")
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
    assert spec["layer"][1]["mark"]["type"] == "rule"
    with pytest.raises(ValueError, match="positive"):
        variance_bars_chart(dimension_variance(pe), threshold=0)
    with pytest.raises(ValueError, match=r"\(d_model,\)"):
        variance_bars_chart(pe)  # a table, not its variance


def test_shift_similarity_chart_reports_zero_spread_for_sinusoids():
    r = shift_similarity(sinusoidal(200, 64), 50)
    spec = shift_band_chart(r.shifts, r.mean, r.min, r.max, std=r.std, count=r.count).to_dict()
    assert "widest spread" in " ".join(spec["title"]["subtitle"])
    rows = _dataset(spec, spec["layer"][0])
    assert len(rows) == 51
    assert max(r["max"] - r["min"] for r in rows) < 1e-9


def test_notebook_table_charts_draw_the_same_charts():
    """The notebook's table-taking charts draw exactly what the array-taking builders draw."""
    pe = sinusoidal(64, 32)
    assert (
        variance_chart(pe, 1e-3).to_dict()
        == variance_bars_chart(dimension_variance(pe), threshold=1e-3).to_dict()
    )
    r = shift_similarity(pe, 10, metric="dot")
    assert (
        shift_similarity_chart(pe, 10, metric="dot").to_dict()
        == shift_band_chart(
            r.shifts, r.mean, r.min, r.max, std=r.std, count=r.count, metric="dot"
        ).to_dict()
    )


def test_unit_circle_chart_points_hand_and_ring():
    pe = sinusoidal(50, 16)
    sin_cols, cos_cols = pair_columns(16)
    chart = unit_circle_chart(
        pe, (sin_cols[1], cos_cols[1]), current=7, extra_pairs=[(sin_cols[3], cos_cols[3])]
    )
    spec = chart.to_dict()
    points, hand = spec["layer"][1:3]
    assert len(_dataset(spec, points)) == 100  # 50 positions × 2 hands
    hands = _dataset(spec, hand)
    assert [h["position"] for h in hands] == [7, 7]
    assert hands[0]["x2"] == pytest.approx(pe[7, sin_cols[1]])
    assert hands[0]["x2"] ** 2 + hands[0]["y2"] ** 2 == pytest.approx(1.0)
    assert spec["width"] == spec["height"]
    with pytest.raises(ValueError, match="choose a position 0 … 49"):
        unit_circle_chart(pe, (0, 1), current=50)


@pytest.mark.parametrize(("n", "note"), [(4097, "every 3rd of 4097"), (8192, "every 4th of 8192")])
def test_a_thinned_circle_says_its_stride_and_where_the_chosen_position_went(n, note):
    import posviz.charts.circle as circle

    pe = np.zeros((n, 2))
    pe[:, 0] = np.arange(n)  # each position's x is its index
    spec = circle.unit_circle_chart(pe, (0, 1), current=10).to_dict()
    hand = _dataset(spec, spec["layer"][2])
    drawn = 10 - 10 % int(note.split()[1][:-2])
    assert [h["position"] for h in hand] == [drawn] and hand[0]["x2"] == drawn
    subtitle = " ".join(spec["title"]["subtitle"])
    assert f"{note} positions drawn" in subtitle
    assert f"position 10 is drawn as {drawn}" in subtitle
    on_grid = circle.unit_circle_chart(pe, (0, 1), current=drawn).to_dict()
    assert "is drawn as" not in " ".join(on_grid["title"]["subtitle"])


def test_public_chart_builders_are_exported():
    assert posviz.heatmap_chart is heatmap_chart
    assert posviz.unit_circle_chart is unit_circle_chart
    assert posviz.variance_chart is variance_chart


@pytest.mark.parametrize(("rf", "cf"), [(1, 1), (2, 3), (5, 7), (37, 53), (8, 8)])
def test_block_reduction_matches_a_loop_including_ragged_edges(rf, cf):
    m = RNG.normal(size=(37, 53))
    for how, func in (("mean", np.mean), ("absmax", None)):
        got = reduce_blocks(m, rf, cf, how)
        for i in range(got.shape[0]):
            for j in range(got.shape[1]):
                block = m[i * rf : (i + 1) * rf, j * cf : (j + 1) * cf]
                want = func(block) if func else block.flat[np.abs(block).argmax()]
                assert got[i, j] == pytest.approx(want)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"window": (3, 13, 2, 9)}, {"reduce": "absmax", "renderer": "svg"}],
)
def test_prebuilt_heatmap_spec_is_valid_vega_lite(kwargs):
    m = RNG.normal(size=(1500, 40))  # > 1024 rows: a reduced overview unless windowed
    chart = heatmap_chart(m, **kwargs)
    spec = chart.to_dict(validate=True)  # raises if the hand-written spec breaks the schema
    assert spec["usermeta"]["embedOptions"]["renderer"] == kwargs.get("renderer", "canvas")
    assert chart.to_altair().to_dict(validate=True)["layer"][0]["mark"]["type"] == "image"
    assert "application/vnd.vegalite.v5+json" in chart._repr_mimebundle_()


def test_heatmap_in_streamlit_ships_image_and_tooltips_as_arrow_datasets():
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

    spec = _convert_altair_to_vega_lite_spec(heatmap_chart(sinusoidal(64, 32)))
    names = [layer["data"]["name"] for layer in spec["layer"][:2]]
    assert all(isinstance(spec["datasets"][name], bytes) for name in names)  # Arrow IPC


def test_heatmap_rejects_unknown_renderer():
    with pytest.raises(ValueError, match="renderer"):
        heatmap_chart(np.ones((2, 2)), renderer="webgl")


def test_block_stats_of_a_float32_table_match_float64():
    m = RNG.normal(size=(64, 48)).astype(np.float32)
    for how in ("mean", "absmax"):
        fast = reduce_blocks(m, 8, 4, how)  # float32 read in place, float64 accumulation
        slow = reduce_blocks(m.astype(np.float64), 8, 4, how)
        assert fast.dtype == np.float64
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
    expected = m.astype(np.float64).reshape(8, 8, 12, 4).mean(axis=(1, 3))
    np.testing.assert_allclose(reduce_blocks(m, 8, 4), expected, rtol=0, atol=1e-12)


def test_tooltip_blocks_carry_their_ranges_and_labels_without_transforms():
    spec = heatmap_chart(RNG.normal(size=(40, 30))).to_dict()  # blocks of 3×2 cells, ragged edge
    hover = spec["layer"][1]
    assert "transform" not in hover  # the browser runs no per-repaint calculations
    rows = _dataset(spec, hover)
    first, last = rows[0], rows[-1]
    assert (first["row0"], first["row1"], first["positions"]) == (0, 3, "0–2")
    assert (first["col0"], first["col1"], first["dimensions"]) == (0, 2, "0–1")
    assert (last["row0"], last["row1"], last["positions"]) == (39, 40, "39")  # edge block
    exact = heatmap_chart(RNG.normal(size=(5, 5))).to_dict()
    assert _dataset(exact, exact["layer"][1])[7]["positions"] == "1"


def test_unit_circle_without_circle_fits_small_data():
    small = np.random.default_rng(0).normal(scale=0.1, size=(64, 4))
    spec_no_ring = unit_circle_chart(small, (0, 1), circle=False).to_dict()
    spec_ring = unit_circle_chart(small, (0, 1), circle=True).to_dict()

    def reach(spec) -> float:
        """The x domain's half-width: ``domainMax = "<reach> * max(1, width / height)"``."""
        scale = spec["layer"][-1]["encoding"]["x"]["scale"]
        return float(scale["domainMax"]["expr"].split(" * ")[0])

    data_reach = np.abs(small[:, :2]).max()
    assert data_reach < reach(spec_no_ring) < 2 * data_reach < 1.0
    assert reach(spec_ring) >= 1.0


@pytest.mark.parametrize("width", [220, 440, 900])
def test_unit_circle_stays_round_at_any_width(width):
    """The ring's rendered bounding box is as wide as it is tall, whatever width the page gives."""
    import re

    import vl_convert

    from posviz import export

    pe = sinusoidal(64, 8)
    spec = export.chart_spec(unit_circle_chart(pe, (0, 1), current=3, animate=True))
    spec["width"] = width
    svg = vl_convert.vegalite_to_svg(spec, vl_version="5.20")
    # the ring is the only dashed line mark; its path's extent in pixels, both ways
    path = re.search(r'd="(M[^"]+)"[^>]*stroke-dasharray="3,3"', svg)
    assert path, "no ring drawn"
    numbers = np.array([float(v) for v in re.findall(r"-?\d+\.?\d*", path.group(1))])
    xs, ys = numbers[0::2], numbers[1::2]
    assert np.ptp(xs) == pytest.approx(np.ptp(ys), rel=0.02)


def test_animated_circle_carries_its_own_slider_and_play_switch():
    spec = unit_circle_chart(sinusoidal(40, 8), (0, 1), current=7, animate=True).to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["play"]["bind"]["input"] == "checkbox" and params["play"]["value"] is False
    pos = params["pos"]
    assert pos["value"] == 7 and pos["bind"] == {
        "input": "range",
        "min": 0,
        "max": 39,
        "step": 1,
        "name": "position ",
    }
    timer = pos["on"][0]
    assert timer["events"]["type"] == "timer"  # the browser advances it: no server round trip
    assert "pos + 1 > 39 ? 0" in timer["update"]


def test_square_heatmap_keeps_cells_square_at_any_width():
    """A position × position matrix draws as a square image whatever the chart's width."""
    import re

    import vl_convert

    from posviz import export
    from posviz.charts.heatmap import Annotation

    chart = heatmap_chart(
        RNG.normal(size=(64, 64)),
        square=True,
        renderer="svg",
        height=300,
        annotations=[Annotation("seam", x=20, y=0, x2=20, y2=64), Annotation("band", y=40)],
    )
    chart.to_dict(validate=True)
    for width in (200, 300, 700):
        spec = export.chart_spec(chart)
        spec["width"] = width
        svg = vl_convert.vegalite_to_svg(spec, vl_version="5.20")
        image = re.search(r'<image [^>]*width="([\d.]+)" height="([\d.]+)"', svg)
        assert image, "no image mark"
        assert float(image.group(1)) == pytest.approx(float(image.group(2)), rel=0.01)
    assert "Square cells." in chart.to_dict()["description"]


def test_annotations_draw_rules_and_haloed_labels_on_the_heatmap_scales():
    from posviz.charts.heatmap import Annotation

    spec = heatmap_chart(
        sinusoidal(32, 16),
        annotations=[
            Annotation("fast pairs", x=2),
            Annotation("", y=5),
            Annotation("note", label_at=(8, 20)),
        ],
    ).to_dict()
    layers = spec["layer"][2:]
    marks = [layer["mark"]["type"] for layer in layers]
    assert marks == ["rule", "text", "text", "rule", "text", "text"]
    assert layers[0]["data"]["values"] == [{"ax": 2.0}]  # a vertical rule: x only
    assert layers[0]["encoding"]["x"]["scale"] == spec["layer"][0]["encoding"]["x"]["scale"]
    assert layers[1]["mark"]["stroke"] == "#ffffff"  # the halo under the label
    with pytest.raises(ValueError, match="x2 and y2"):
        Annotation("bad", x=1, y=1, x2=3)


def test_subtitles_pick_their_colour_from_the_page_background():
    """Light grey on a dark page, dark grey on a light one (Vega's `background` signal)."""
    import re

    import vl_convert

    from posviz import export
    from posviz.charts.style import ADAPTIVE_TEXT_COLORS

    spec = export.chart_spec(dimensions_chart(sinusoidal(30, 8), [0, 1]))
    on_light, on_dark = ADAPTIVE_TEXT_COLORS
    for background, expected in (("#ffffff", on_light), ("#0e1117", on_dark)):
        svg = vl_convert.vegalite_to_svg(
            {**spec, "config": {"background": background}}, vl_version="5.20"
        )
        subtitle = re.search(r'role-title-subtitle.*?fill="(#[0-9a-f]+)"', svg, flags=re.S)
        assert subtitle and subtitle.group(1) == expected


def test_series_colours_are_distinct_stable_per_entity_and_bounded():
    from posviz.charts.style import CONTROL_COLOR, PALETTE, series_colors

    colours = series_colors(["sinusoid (512×384)", "MiniLM (bundled)", "random table"])
    assert colours == [PALETTE[1], PALETTE[0], CONTROL_COLOR]
    assert series_colors(["MiniLM"]) == series_colors(["MiniLM", "x"])[:1]  # same on every chart
    many = series_colors([f"head {h}" for h in range(10)])
    assert len(set(many)) == 10
    with pytest.raises(ValueError, match="sequential scheme"):
        series_colors([f"head {h}" for h in range(11)])


def test_dimensions_figure_names_its_export_columns_by_real_index():
    from posviz import export
    from posviz.charts.lines import dimensions_figure

    pe = sinusoidal(10, 512)
    figure = dimensions_figure(pe, [0, 64, 128, 256, 510])
    header = export.matrix_csv(figure.data).decode().splitlines()[0]
    assert header == "position,dim 0,dim 64,dim 128,dim 256,dim 510"
    np.testing.assert_array_equal(figure.data.to_numpy(), pe[:, [0, 64, 128, 256, 510]])


def test_pca_trajectory_with_a_current_position_highlights_it_in_the_browser():
    from posviz.charts.trajectory import pca_trajectory_chart

    scores = np.random.default_rng(2).normal(size=(50, 2))
    spec = pca_trajectory_chart(scores, current=12).to_dict()
    assert {p["name"] for p in spec["params"]} == {"pos", "play"}
    filters = [t.get("filter") for layer in spec["layer"] for t in layer.get("transform", [])]
    assert "datum.position == pos" in filters
    assert "params" not in pca_trajectory_chart(scores).to_dict()  # no current: a plain chart


def test_many_ordered_series_take_a_ramp_and_overlapping_lines_their_own_dash():
    from posviz.charts.families import alibi_decay_figure, lines_chart, readable_ramp
    from posviz.charts.style import sequential_colors

    assert sequential_colors(16)[0] == "#440154" and sequential_colors(16)[-1] == "#fde725"
    ramp = readable_ramp(16)  # the stretch of viridis that reads on white and on dark
    slopes = np.array([2.0 ** -(h + 1) for h in range(16)])
    distances = np.arange(10)
    factors = np.exp(-np.outer(distances, slopes))
    spec = alibi_decay_figure(distances, factors, slopes, list(range(16))).chart.to_dict()
    color = spec["layer"][0]["encoding"]["color"]
    assert color["scale"]["range"] == ramp  # 16 heads: one colour each, steep (dark) first
    same = {"sinusoid": np.ones(5), "RoPE": np.ones(5)}  # the same curve twice
    dashed = lines_chart(np.arange(5), same, x_title="k", y_title="v", dashed=True).to_dict()
    dashes = dashed["layer"][0]["encoding"]["strokeDash"]["scale"]["range"]
    assert dashes[0] != dashes[1]


# --- what a screen reader and both themes get (posviz.charts.figure.accessible_spec) ----------


def test_a_chart_is_described_by_its_title_its_axes_or_what_the_page_says():
    import altair as alt
    import pandas as pd

    from posviz.charts.figure import Accessible, accessible_spec
    from posviz.charts.style import ADAPTIVE_TEXT, chart_title

    frame = pd.DataFrame({"h": [0, 1], "m": [0.5, 0.25]})
    plain = alt.Chart(frame).mark_line().encode(x=alt.X("h:Q", title="head"), y="m:Q")
    titled = plain.properties(title=chart_title("Slopes halve", "one per head"))
    assert Accessible(titled).to_dict()["description"] == "Slopes halve. one per head."
    assert Accessible(alt.layer(plain)).to_dict()["description"] == "m against head."
    assert Accessible(titled, "The verdict.").to_dict()["description"] == "The verdict."
    # a description the spec had (the heatmap's "Square cells.") follows, once
    kept = accessible_spec({"title": "Cosines", "description": "Square cells."})
    assert kept["description"] == "Cosines. Square cells."
    spec = Accessible(titled).to_dict()
    for part in ("axis", "legend", "header"):
        assert spec["config"][part]["labelColor"] == ADAPTIVE_TEXT
    own = accessible_spec({"config": {"axis": {"labelColor": "#123456"}}})
    assert own["config"]["axis"]["labelColor"] == "#123456"  # a chart's own colour stays


def test_the_live_training_chart_is_described_like_the_others():
    """The live loss chart is drawn from a bare spec (st.vega_lite_chart, its data swapped in
    place), outside show_chart: its own description names what it shows and every arm."""
    from posviz.charts.lab import live_loss_spec
    from posviz.charts.style import ADAPTIVE_TEXT

    spec = live_loss_spec({"learned table": "#4c78a8", "no positions": "#8c908d"}, title="Loss")
    assert spec["description"].startswith("Loss: each arm's training loss")
    assert "learned table, no positions" in spec["description"]
    assert spec["config"]["axis"]["labelColor"] == ADAPTIVE_TEXT
    assert "data" not in spec and "datasets" not in spec  # the page's data is swapped in


def test_adaptive_text_reads_at_aa_contrast_on_both_themes():
    """WCAG 2.1 relative luminance (SC 1.4.3): ≥ 4.5:1 on Streamlit's white and dark grounds."""
    from posviz.charts.style import ADAPTIVE_TEXT_COLORS

    on_light, on_dark = ADAPTIVE_TEXT_COLORS
    assert _contrast(on_light, WHITE) >= 4.5
    assert _contrast(on_dark, DARK) >= 4.5


def test_colour_helpers_agree_with_published_values():
    """The definitions' own bounds and constants, so the palette tests below measure right."""
    assert _contrast("#000000", WHITE) == pytest.approx(21.0)  # WCAG 2.1's range is 1 to 21
    assert _contrast("#777777", "#777777") == pytest.approx(1.0)
    assert _lab(WHITE) == pytest.approx([100, 0, 0], abs=1e-3)
    # sRGB red in CIELAB (D65): L* 53.24, a* 80.09, b* 67.20 (Lindbloom's calculator, CIE 15)
    assert _lab("#ff0000") == pytest.approx([53.24, 80.09, 67.20], abs=0.01)
    for vision in (DEUTERANOPIA, PROTANOPIA):
        assert _delta_e("#808080", "#808080", vision) == pytest.approx(0, abs=0.01)
        assert _lab("#808080", vision) == pytest.approx(_lab("#808080"), abs=0.01)  # greys stay
    # Tableau 10's red and green (ALiBi's and RoPE's colours before): apart to a trichromat,
    # one colour to a deuteranope, the confusion the simulation exists to show
    assert _delta_e("#e45756", "#54a24b") > 80
    assert _delta_e("#e45756", "#54a24b", DEUTERANOPIA) < 3


def _chart_colours() -> dict[str, str]:
    """Every colour a chart gives a category: the palette's, each family's, the controls'."""
    from posviz.charts.style import CONTROL_COLOR, PALETTE
    from posviz.encodings.families import FAMILIES

    colours = {f"PALETTE[{k}]": colour for k, colour in enumerate(PALETTE)}
    colours |= {f"{spec.id} family": spec.colour for spec in FAMILIES.values() if spec.colour}
    return colours | {"CONTROL_COLOR": CONTROL_COLOR}


def test_every_category_colour_reads_at_3_to_1_on_white_and_on_dark():
    """WCAG 2.1 SC 1.4.11 (non-text contrast): a line, dot or legend swatch that tells series
    apart reads at ≥ 3:1 against the page, in the light theme and in the dark one."""
    low = [
        f"{name} {colour}: {_contrast(colour, ground):.2f}:1 on {ground}"
        for name, colour in _chart_colours().items()
        for ground in (WHITE, DARK, DARK_AS_DRAWN)
        if _contrast(colour, ground) < 3
    ]
    assert not low, "\n".join(low)


#: the smallest CIE 1976 ΔE*ab between two category colours: to a trichromat, and as simulated
#: for a deuteranope and a protanope. A just-noticeable difference is about 2.3 (Mahy, Van
#: Eycken & Oosterlinck, Color Res. Appl. 19(2), 1994); a thin line needs several. Colours that
#: read at 3:1 on white and on dark lie within 21 L* of each other (41–62), so hue and chroma do
#: the rest.
MIN_DELTA_E = {"trichromat": 15.0, "deuteranope": 8.0, "protanope": 8.0}


def test_category_colours_stay_apart_also_in_red_green_colour_blindness():
    """Every pair of palette colours and the control grey, as three kinds of eyes see them."""
    from posviz.charts.style import CONTROL_COLOR, PALETTE

    colours = [*PALETTE, CONTROL_COLOR]
    assert len(set(colours)) == len(colours)
    for eyes, vision in (("trichromat", None), ("deuteranope", DEUTERANOPIA),
                         ("protanope", PROTANOPIA)):  # fmt: skip
        closest = min(
            (_delta_e(a, b, vision), a, b) for i, a in enumerate(colours) for b in colours[i + 1 :]
        )
        assert closest[0] >= MIN_DELTA_E[eyes], (eyes, closest)


def test_lines_chart_counts_heads_in_whole_numbers_and_keeps_lines_off_the_border():
    from posviz.charts.families import alibi_slopes_figure, lines_chart

    slopes = alibi_slopes_figure(2.0 ** -np.arange(1, 17)).chart.to_dict()
    x_axis = slopes["layer"][0]["encoding"]["x"]["axis"]
    assert x_axis["format"] == "d" and x_axis["tickMinStep"] == 1
    flat = lines_chart(np.arange(5), {"stays at 1": np.ones(5)}, x_title="k", y_title="cos")
    y = flat.to_dict()["layer"][0]["encoding"]["y"]
    assert y["scale"]["padding"] > 0  # room above the line at the data's maximum
    assert y["axis"]["titleAngle"] == 0  # level above the axis, not cut to the plot's height
    fixed = lines_chart(np.arange(5), {"a": np.ones(5)}, x_title="k", y_title="u", y_domain=(0, 1))
    assert "padding" not in fixed.to_dict()["layer"][0]["encoding"]["y"]["scale"]


def test_a_bottom_legend_takes_as_many_columns_as_the_width_holds():
    from posviz.charts.families import _legend_columns

    def columns(names, width):
        expr = _legend_columns(names).to_dict()["expr"].replace("floor", "math.floor")
        return eval(expr, {"math": __import__("math"), "width": width})  # min, max: Python's

    heads = [f"head {h} (m=0.00391)" for h in range(16)]
    assert columns(heads, 1000) == 6 and columns(heads, 300) == 2  # desktop, phone
    assert columns(["a", "b"], 1000) == 2  # never more columns than entries
    assert columns(["RoPE: the pairs p-RoPE never rotates", "x"], 300) == 1


def test_rows_chart_gives_each_series_its_own_row_and_refuses_values_outside_0_1():
    from posviz.charts.families import rows_chart

    x = np.arange(4)
    spec = rows_chart(x, {"a": np.zeros(4), "b": np.zeros(4)}, x_title="k", y_title="u").to_dict()
    rows = [row for values in spec["datasets"].values() for row in values if "series" in row]
    levels = {row["series"]: row["level"] for row in rows}
    assert levels == {"a": 1.0, "b": 0.0}  # two zero lines, one row apart, the first on top
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        rows_chart(x, {"a": np.full(4, 1.5)}, x_title="k", y_title="u")


def test_ordered_series_colours_read_on_white_and_on_dark():
    """≥ 3:1 (WCAG 2.1 SC 1.4.11) against Streamlit's white and dark (#171614) backgrounds."""
    from posviz.charts.families import readable_ramp

    colors = readable_ramp(16)
    assert len(set(colors)) == 16  # one colour per head
    for color in colors:
        on_white, on_dark = _contrast(color, WHITE), _contrast(color, DARK_AS_DRAWN)
        assert on_white >= 3 and on_dark >= 3, (color, on_white, on_dark)
    assert _luminance(colors[0]) < _luminance(colors[-1])  # still dark (steep) to light (gentle)


def test_a_legend_has_only_the_columns_a_phone_fits():
    from posviz.charts.style import PHONE_LEGEND_ROOM, legend_columns

    assert legend_columns(["dim 0", "dim 1", "dim 2", "dim 3"]) == 4
    long = ["PE: std over positions", "WE: std over vocabulary", "|this word's WE|"]
    assert legend_columns(long) == 1
    assert legend_columns(["a" * 200]) == 1  # never zero columns
    two = ["x" * 15] * 3
    assert legend_columns(two) == 2 and PHONE_LEGEND_ROOM >= 2 * (15 * 6.6 + 30)
