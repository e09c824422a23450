"""Linked views: the table pages' heroes are one Vega-Lite spec whose views share one position
(``pos``) and one ▶ play switch, checked on the spec, on the Vega it compiles to, and on what
vl-convert (Vega's own renderer) draws. The browser behaviour is in tests/test_browser.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import vl_convert

from posviz import export
from posviz.analysis.headlines import find_seam, similarity_summary
from posviz.analysis.table_numbers import principal_pair
from posviz.charts.circle import unit_circle_chart
from posviz.charts.heatmap import heatmap_chart
from posviz.charts.heroes import (
    TALL_LRN,
    TALL_SIN,
    WIDE_HERO_MIN,
    WIDE_LRN,
    WIDE_SIN,
    similarity_linked,
    sinusoid_linked,
)
from posviz.charts.linked import (
    PLAY_PARAM,
    POINTING,
    POSITION_PARAM,
    LinkedChart,
    linked_chart,
    next_position,
    position_params,
    view_size,
)
from posviz.encodings.sinusoidal import sinusoidal

N, D, START = 64, 32, 5


@pytest.fixture(scope="module")
def heroes() -> dict[str, dict]:
    """The four linked heroes' specs (data inlined), by name: sin/lrn × wide/tall."""
    table = sinusoidal(N, D)
    sin = sinusoid_linked(table, base=10000.0, layout="interleaved", current=START)
    rng = np.random.default_rng(0)
    learned = np.cumsum(rng.normal(size=(N, D)), axis=0)  # a random walk: neighbours look alike
    learned[40:] += 8 * rng.normal(size=D)  # a jump: a seam between positions 39 and 40
    seam = find_seam(learned)
    assert seam is not None, "the test table needs its seam"
    pca = principal_pair(learned)
    lrn = similarity_linked(
        similarity_summary(learned),
        pca.scores,
        n_positions=N,
        seam=(seam.first, seam.last),
        explained=pca.explained_variance_ratio,
        current=seam.last,
    )
    charts = {
        "sin_wide": sin.wide,
        "sin_tall": sin.tall,
        "lrn_wide": lrn.wide,
        "lrn_tall": lrn.tall,
    }
    return {name: export.chart_spec(figure.chart) for name, figure in charts.items()}


def _views(spec: dict) -> list[dict]:
    return spec.get("hconcat") or spec["vconcat"]


def _strings(node) -> list[str]:
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return [node] if isinstance(node, str) else []


def _reads(node, name: str) -> bool:
    """Whether an expression in ``node`` (filter, calculate, datum expr) names the signal."""
    return any(re.search(rf"(?<![\w.]){name}(?!\w)", s) for s in _strings(node))


HEROES = ("sin_wide", "sin_tall", "lrn_wide", "lrn_tall")


@pytest.mark.parametrize("name", HEROES)
def test_every_view_reads_the_one_shared_position(heroes, name):
    spec = heroes[name]
    params = [p["name"] for p in spec["params"]]
    assert sorted(params) == sorted([PLAY_PARAM, POINTING, POSITION_PARAM])  # once, at the top
    pos = spec["params"][params.index(POSITION_PARAM)]
    assert "bind" not in pos  # no in-chart slider: the page's (the link's) is the one control
    views = _views(spec)
    assert len(views) == 2
    for view in views:
        assert "params" not in view  # no view keeps a position of its own
        assert _reads(view, POSITION_PARAM), f"{view['name']} does not show the position"
    timer = spec["params"][params.index(POSITION_PARAM)]["on"][0]
    assert timer["events"]["type"] == "timer" and PLAY_PARAM in timer["update"]


@pytest.mark.parametrize("name", HEROES)
def test_what_the_position_listens_to_exists_in_the_compiled_vega(heroes, name):
    """The pointer's row comes from a mark and a scale named in an expression: both must exist
    in the Vega that Vega-Lite compiles, and every size signal a round/square view reads too."""
    vega = vl_convert.vegalite_to_vega(heroes[name], vl_version="5.20")
    signals = {s["name"] for s in vega["signals"]} | {"width", "height"}
    scales = {s["name"] for s in vega["scales"]}

    def marks(node) -> set[str]:
        return {m["name"] for m in node.get("marks", [])} | {
            n for m in node.get("marks", []) for n in marks(m)
        }

    names = marks(vega)
    handlers = next(s for s in vega["signals"] if s["name"] == POSITION_PARAM)["on"]
    sources = [h["events"] for h in handlers if isinstance(h["events"], str) and "@" in h["events"]]
    assert len(sources) == 1  # the heatmap's rows
    for stream in sources[0].split(","):
        assert stream.strip().split(":")[0][1:] in names
    for scale in re.findall(r"invert\('(\w+)'", json.dumps(handlers)):
        assert scale in scales
    for scale in vega["scales"]:
        for key in ("domainMin", "domainMax"):
            expression = (
                scale.get(key, {}).get("signal", "") if isinstance(scale.get(key), dict) else ""
            )
            for signal in re.findall(r"[a-z_]+(?:_height|_width)|\bwidth\b|\bheight\b", expression):
                assert signal in signals, f"{scale['name']} reads {signal}, which is not defined"


def _row_outline_y(svg: str, view: str) -> float:
    group = re.search(rf'<g class="mark-rect role-mark {view}_row_marks"[^>]*>(.*?)</g>', svg, re.S)
    assert group, f"no outlined row in {view}"
    return float(re.search(r'd="M[-\d.]+,([-\d.]+)h', group.group(1)).group(1))


@pytest.mark.parametrize(
    ("name", "height"), [("sin_wide", WIDE_SIN[0][1]), ("sin_tall", TALL_SIN[0][1])]
)
def test_the_table_outlines_the_start_position_and_the_hands_show_it(heroes, name, height):
    svg = vl_convert.vegalite_to_svg(heroes[name], vl_version="5.20")
    assert _row_outline_y(svg, "table") == pytest.approx(START * height / N, abs=0.01)
    assert f">position {START}<" in svg  # the clock's label


@pytest.mark.parametrize("name", ["lrn_wide", "lrn_tall"])
def test_the_matrix_crosses_the_start_row_and_column_and_the_path_rings_it(heroes, name):
    spec = heroes[name]
    start = next(p["value"] for p in spec["params"] if p["name"] == POSITION_PARAM)
    svg = vl_convert.vegalite_to_svg(spec, vl_version="5.20")
    assert re.search(r"matrix_column_marks", svg)
    image = re.search(r'<image[^>]*width="([\d.]+)"[^>]*height="([\d.]+)"', svg)
    side = float(image.group(2))
    assert _row_outline_y(svg, "matrix") == pytest.approx(start * side / N, abs=0.01)
    assert f">position {start}<" in svg  # the path's ring label


def _ring_extent(svg: str) -> tuple[float, float]:
    path = re.search(r'd="(M[^"]+)"[^>]*stroke-dasharray="3,3"', svg)
    assert path, "no ring drawn"
    numbers = np.array([float(v) for v in re.findall(r"-?\d+\.?\d*", path.group(1))])
    return float(np.ptp(numbers[0::2])), float(np.ptp(numbers[1::2]))


@pytest.mark.parametrize("width", [300, 560, 1100])
def test_stacked_views_stay_round_and_square_at_any_page_width(heroes, width):
    """Streamlit sets every stacked view to the page's width: the ring and the matrix keep their
    shape at a phone's, a tablet's and a desktop's."""
    for name in ("sin_tall", "lrn_tall"):
        spec = json.loads(json.dumps(heroes[name]))
        for view in spec["vconcat"]:
            view["width"] = width
        svg = vl_convert.vegalite_to_svg(spec, vl_version="5.20")
        if name == "sin_tall":
            wide, tall = _ring_extent(svg)
            assert wide == pytest.approx(tall, rel=0.02)
        else:
            image = re.search(r'<image[^>]*width="([\d.]+)"[^>]*height="([\d.]+)"', svg)
            assert float(image.group(1)) == pytest.approx(float(image.group(2)), rel=0.02)


def test_side_by_side_views_are_round_and_square_and_fit_the_wide_page(heroes):
    svg = vl_convert.vegalite_to_svg(heroes["sin_wide"], vl_version="5.20")
    wide, tall = _ring_extent(svg)
    assert wide == pytest.approx(tall, rel=0.02)
    assert float(re.search(r'<svg[^>]*width="([\d.]+)"', svg).group(1)) <= WIDE_HERO_MIN
    svg = vl_convert.vegalite_to_svg(heroes["lrn_wide"], vl_version="5.20")
    image = re.search(r'<image[^>]*width="([\d.]+)"[^>]*height="([\d.]+)"', svg)
    assert float(image.group(1)) == pytest.approx(float(image.group(2)), rel=0.02)
    assert float(re.search(r'<svg[^>]*width="([\d.]+)"', svg).group(1)) <= WIDE_HERO_MIN
    assert WIDE_LRN[0][0] == WIDE_LRN[0][1]  # the matrix's plot is square by itself
    assert TALL_LRN[0][1] != TALL_LRN[1][1] and TALL_SIN[0][1] != TALL_SIN[1][1]


@pytest.mark.parametrize("name", HEROES)
def test_a_linked_hero_exports_to_png(heroes, name):
    png = export.spec_png(heroes[name], scale=1.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width > 300  # not the zero-wide drawing a stack without one width gets


def test_the_pointer_sets_the_row_through_the_views_own_scale():
    params = position_params(current=3, last=63, step=2, rows_of=["table"])
    pos = next(p for p in params if p["name"] == POSITION_PARAM)
    row = next(h for h in pos["on"] if "@table_cells_marks:pointermove" in h["events"])
    assert "@table_cells_marks:pointerdown" in row["events"]  # a tap on a phone
    assert "invert('table_y', y(group()))" in row["update"]  # plot coordinates, not the block's
    assert "floor(" in row["update"] and "/ 2) * 2" in row["update"]  # whole, drawn positions
    assert "clamp(" in row["update"] and ", 0, 63)" in row["update"]
    assert row["update"].startswith(f"{PLAY_PARAM} ? {POSITION_PARAM} :")  # play wins
    assert pos["bind"] == {"input": "range", "min": 0, "max": 63, "step": 2, "name": "position "}


def test_a_linked_position_rests_at_the_page_position_after_a_preview_or_play():
    """Unbound (a linked hero), ``pos`` has no in-chart slider and returns to ``current`` (the
    page's slider, kept in the link) on each timer tick while ▶ play is off and no pointer is on
    the chart, and at once when the pointer leaves it; bound, the old in-chart slider stays."""
    unbound = {p["name"]: p for p in position_params(current=7, last=63, bound=False)}
    pos = unbound[POSITION_PARAM]
    assert "bind" not in pos and pos["value"] == 7
    timer, *others = pos["on"]
    advance = f"{PLAY_PARAM} ? ({POSITION_PARAM} + 1 > 63 ? 0 : {POSITION_PARAM} + 1)"
    assert timer["update"] == f"{advance} : {POINTING} ? {POSITION_PARAM} : 7"
    leave = next(h for h in others if h["events"] == "pointerleave")
    assert leave["update"] == f"{PLAY_PARAM} ? {POSITION_PARAM} : 7"
    pointing = {h["events"]: h["update"] for h in unbound[POINTING]["on"]}
    assert pointing == {"pointermove": "true", "pointerleave": "false"}
    bound = {p["name"]: p for p in position_params(current=7, last=63)}
    assert set(bound) == {PLAY_PARAM, POSITION_PARAM} and "bind" in bound[POSITION_PARAM]
    assert bound[POSITION_PARAM]["on"][0]["update"].endswith(f": {POSITION_PARAM}")


def test_linking_refuses_what_would_break_it():
    table = sinusoidal(20, 8)
    heat = heatmap_chart(table, linked_as="table", height=100)
    clock = unit_circle_chart(table, (0, 1), current=3, animate=True, size=100)
    with pytest.raises(ValueError, match="distinct heights"):
        linked_chart([("table", heat), ("clock", clock)]).to_dict()
    with pytest.raises(ValueError, match="no view has a position slider"):
        linked_chart([("table", heat)])
    with pytest.raises(ValueError, match="plain lower-case identifier"):
        LinkedChart([("my table", heat)], position_params(current=0, last=19))
    with pytest.raises(ValueError, match="distinct"):
        LinkedChart([("a", heat), ("a", clock)], position_params(current=0, last=19))
    with pytest.raises(ValueError, match="direction"):
        view_size("clock", direction="diagonal")
    with pytest.raises(ValueError, match="outside 0 … 19"):
        position_params(current=20, last=19)


def test_linked_views_keep_their_own_colours(heroes):
    """A heatmap's cosine scale and a path's position scale are both quantitative; merged they
    would paint the path in the heatmap's colours (and one legend would say both)."""
    vega = vl_convert.vegalite_to_vega(heroes["lrn_wide"], vl_version="5.20")
    assert {"matrix_color", "path_color"} <= {s["name"] for s in vega["scales"]}
    assert next(s for s in vega["scales"] if s["name"] == "path_color")["range"] == {
        "scheme": "viridis"
    }
    svg = vl_convert.vegalite_to_svg(heroes["lrn_wide"], vl_version="5.20")
    titles = re.findall(r'<text[^>]*class="role-legend-title"[^>]*>([^<]*)<', svg)
    titles = titles or re.findall(r"role-legend-title.*?>([^<]+)</text>", svg, re.S)
    assert {"cosine", "position"} <= set(titles), titles


def test_play_starts_still_and_a_step_moves_one_position_as_play_would(heroes) -> None:
    """Nothing moves until the reader asks (``prefers-reduced-motion``): every ▶ play switch,
    the heroes' and the lab's table-forming chart's, is off when drawn; the step button's move
    is play's tick (``step`` on, 0 after ``last``), and a linked hero knows its ``(last, step)``."""
    from posviz.charts.lab import table_forming_chart

    forming = table_forming_chart(np.zeros((3, 4, 2)), [0, 10, 20], title="t")
    for params in (*(spec["params"] for spec in heroes.values()), forming.params):
        play = next(p for p in params if p["name"] == PLAY_PARAM)
        assert play["value"] is False and play["bind"]["input"] == "checkbox"
    sin = sinusoid_linked(sinusoidal(N, D), base=10000.0, layout="interleaved", current=START)
    assert sin.wide.chart.stepping == sin.tall.chart.stepping == (N - 1, 1)
    assert LinkedChart([("a", sin.wide.chart.views[0][1])], []).stepping is None
    assert [next_position(p, last=5, step=2) for p in (0, 2, 3, 4, 5)] == [2, 4, 5, 0, 0]
    assert next_position(62, last=N - 1) == 63 and next_position(63, last=N - 1) == 0
