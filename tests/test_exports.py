"""Exports: every format reads back to what was exported; the menu renders nothing until clicked."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from posviz import export

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _line_chart(n: int = 10, *, width: int | str = 300) -> alt.Chart:
    frame = pd.DataFrame({"position": np.arange(n), "value": np.sin(np.arange(n) / 3)})
    return (
        alt.Chart(frame)
        .mark_line()
        .encode(x="position:Q", y="value:Q")
        .properties(width=width, height=120)
    )


def _image_heatmap(rows: int = 256, cols: int = 384) -> tuple[alt.Chart, str]:
    """A heatmap drawn the way posviz draws big tables: one data-URL PNG image mark."""
    pixels = (np.add.outer(np.arange(rows), np.arange(cols)) % 256).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    chart = (
        alt.Chart(pd.DataFrame({"x": [0], "y": [0], "url": [url]}))
        .mark_image(width=cols, height=rows, align="left", baseline="top")
        .encode(
            x=alt.X("x:Q").scale(domain=[0, cols]),
            y=alt.Y("y:Q").scale(domain=[0, rows], reverse=True),
            url="url:N",
        )
        .properties(width=cols, height=rows)
    )
    return chart, url


def test_png_is_rendered_at_the_requested_scale():
    png = export.chart_png(_line_chart(), scale=2)
    assert png.startswith(PNG_MAGIC)
    width, height = Image.open(io.BytesIO(png)).size
    # 300 px of plot plus axes, doubled.
    assert 600 < width < 800 and 240 < height < 400


def test_png_and_svg_of_a_chart_with_a_big_embedded_image():
    chart, url = _image_heatmap()
    png = export.chart_png(chart, scale=1)
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    # The embedded gradient made it into the picture (not a blank or broken image).
    assert image.shape[1] >= 384 and image.std() > 40
    svg = export.chart_svg(chart).decode()
    assert svg.lstrip().startswith("<svg") and url[:200] in svg


@pytest.mark.slow
def test_vega_lite_json_round_trips_and_keeps_every_row():
    chart = _line_chart(6000)  # above Altair's 5 000-row guard
    spec = json.loads(export.chart_json(chart))
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")
    (values,) = spec["datasets"].values()
    assert len(values) == 6000
    assert alt.Chart.from_json(json.dumps(spec)).to_dict()["mark"]["type"] == "line"
    with pytest.raises(alt.MaxRowsError):  # the guard is back for everyone else
        chart.to_dict()


def test_container_width_gets_a_fixed_export_width():
    spec = export.chart_spec(_line_chart(width="container"))
    assert spec["width"] == export.EXPORT_WIDTH
    png = export.chart_png(_line_chart(width="container"), scale=1)
    assert Image.open(io.BytesIO(png)).size[0] > export.EXPORT_WIDTH


def test_png_scale_is_bounded():
    with pytest.raises(ValueError, match="scale"):
        export.chart_png(_line_chart(), scale=0)


def test_csv_reads_back_with_a_position_column():
    matrix = np.random.default_rng(0).standard_normal((7, 5)).astype(np.float32)
    text = export.matrix_csv(matrix).decode()
    assert text.splitlines()[0] == "position,dim_0,dim_1,dim_2,dim_3,dim_4"
    back = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1)
    np.testing.assert_array_equal(back[:, 0], np.arange(7))
    np.testing.assert_allclose(back[:, 1:], matrix, rtol=1e-6)


def test_a_vector_exports_as_one_column():
    text = export.matrix_csv(np.array([0.5, 1.5])).decode()
    assert text.splitlines() == ["position,dim_0", "0,0.5", "1,1.5"]


def test_npy_round_trips_exactly_without_pickle():
    matrix = np.random.default_rng(1).standard_normal((4, 3, 2))
    back = np.load(io.BytesIO(export.matrix_npy(matrix)), allow_pickle=False)
    assert back.dtype == matrix.dtype
    np.testing.assert_array_equal(back, matrix)
    with pytest.raises(ValueError, match="numeric"):
        export.matrix_npy(np.array([{"a": 1}], dtype=object))


def test_projector_files_match_row_for_row():
    matrix = np.arange(30, dtype=np.float32).reshape(10, 3)
    vectors, metadata = export.projector_tsv(matrix, bins=4)
    rows = vectors.decode().splitlines()
    assert len(rows) == 10 and rows[1].split("\t") == ["3", "4", "5"]
    meta = metadata.decode().splitlines()
    assert meta[0] == "position\tsegment" and len(meta) == 11
    assert meta[1] == "0\t0-2" and meta[10] == "9\t9-9"
    segments = {line.split("\t")[1] for line in meta[1:]}
    assert segments == {"0-2", "3-5", "6-8", "9-9"}


def test_text_exports_refuse_huge_and_odd_arrays_with_a_reason():
    huge = np.broadcast_to(np.float32(0), (8192, 8192))  # no memory behind it
    problem = export.text_export_problem(huge)
    assert problem and ".npy" in problem and "8192×8192" in problem
    with pytest.raises(ValueError, match="cells"):
        export.matrix_csv(huge)
    assert "dimensions" in export.text_export_problem(np.zeros((2, 2, 2)))
    assert "numeric" in export.text_export_problem(np.array(["a", "b"]))
    assert export.text_export_problem(np.zeros((3, 3))) is None


def test_size_limits_can_be_set_or_lifted_for_files_written_from_the_shell():
    matrix = np.arange(12, dtype=np.float32).reshape(4, 3)
    with pytest.raises(ValueError, match="12 cells is more than the 11"):
        export.matrix_csv(matrix, max_cells=11)
    with pytest.raises(ValueError, match="more than the"):
        export.projector_vectors(matrix, max_cells=11)
    with pytest.raises(ValueError, match="MiB offered"):
        export.matrix_npy(matrix, max_bytes=47)
    assert export.matrix_csv(matrix, max_cells=None) == export.matrix_csv(matrix)
    assert export.projector_vectors(matrix, max_cells=12) == export.projector_vectors(matrix)
    back = np.load(io.BytesIO(export.matrix_npy(matrix, max_bytes=None)), allow_pickle=False)
    np.testing.assert_array_equal(back, matrix)


def test_heatmap_chart_of_posviz_exports():
    """The real heatmap builder (embedded image or rects, whichever it chose) renders to PNG/SVG."""
    import posviz

    try:
        heatmap_chart = posviz.heatmap_chart
    except (AttributeError, ImportError):
        pytest.skip("posviz.heatmap_chart has not landed yet")
    chart = heatmap_chart(posviz.sinusoidal(64, 32))
    assert export.chart_png(chart, scale=1).startswith(PNG_MAGIC)
    assert b"<svg" in export.chart_svg(chart)[:200]


def test_safe_stem_keeps_file_names_harmless():
    from posviz.export import safe_stem

    assert safe_stem("../../etc/passwd") == "etc_passwd"
    assert safe_stem("bert-base (512×768)") == "bert-base_512_768"
    assert safe_stem("") == "chart"
    assert len(safe_stem("x" * 500)) == 80


def test_menu_builds_every_file_only_when_asked(monkeypatch):
    """The menu registers callables, calls none of them; each callable yields a valid file."""
    from posviz.ui import exports

    buttons = {}

    def fake_download_button(label, *, data, file_name, key, disabled, **_):
        buttons[key] = (data, file_name, disabled)

    calls = []
    real_png = export.chart_png
    monkeypatch.setattr(exports.st, "download_button", fake_download_button)
    monkeypatch.setattr(
        export, "chart_png", lambda *a, **k: calls.append("png") or real_png(*a, **k)
    )
    matrix = np.random.default_rng(2).standard_normal((16, 4))
    exports.export_menu(_line_chart(), key="t_chart", data=matrix, name="t chart")
    assert calls == [], "PNG rendered before anyone asked"
    assert set(buttons) == {
        f"t_chart__exp_{kind}" for kind in ("png", "svg", "json", "csv", "npy", "tsv", "meta")
    }
    files = {name: make() for make, name, disabled in buttons.values() if not disabled}
    assert calls == ["png"]
    assert files["t_chart.png"].startswith(PNG_MAGIC)
    assert files["t_chart.svg"].lstrip().startswith(b"<svg")
    assert json.loads(files["t_chart.vl.json"])["mark"]["type"] == "line"
    assert files["t_chart.csv"].startswith(b"position,dim_0")
    np.testing.assert_array_equal(np.load(io.BytesIO(files["t_chart.npy"])), matrix)
    assert len(files["t_chart.vectors.tsv"].splitlines()) == 16
    assert len(files["t_chart.metadata.tsv"].splitlines()) == 17


def test_menu_disables_text_exports_of_a_huge_matrix(monkeypatch):
    from posviz.ui import exports

    buttons = {}
    monkeypatch.setattr(
        exports.st,
        "download_button",
        lambda label, *, key, disabled, help, **_: buttons.update({key: (disabled, help)}),
    )
    huge = np.broadcast_to(np.float32(0), (4096, 2048))
    exports.export_menu(_line_chart(), key="h", data=huge, name="h")
    assert buttons["h__exp_csv"][0] and ".npy" in buttons["h__exp_csv"][1]
    assert not buttons["h__exp_npy"][0]


def test_show_chart_puts_an_export_menu_under_the_chart_in_a_running_app():
    from streamlit.testing.v1 import AppTest

    source = """
import altair as alt
import numpy as np
import pandas as pd
from posviz.ui import show_chart

frame = pd.DataFrame({"x": np.arange(5), "y": np.arange(5) ** 2})
chart = alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q")
show_chart(chart, key="demo_chart", data=frame["y"].to_numpy(), name="demo")
"""
    at = AppTest.from_string(source, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("vega_lite_chart")) == 1
    assert at.get("popover"), "no Export popover under the chart"


_DEMO_APP = """
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from posviz.ui import show_chart

st.title("export demo")
frame = pd.DataFrame({"x": np.arange(20), "y": np.sin(np.arange(20) / 3)})
chart = alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q").properties(width=300, height=150)
show_chart(chart, key="demo", data=frame["y"].to_numpy(), name="demo chart")
"""


@pytest.mark.browser
@pytest.mark.slow
def test_downloads_arrive_in_a_real_browser(tmp_path):
    """Open the Export menu in Chromium, click each button, get the files (made on click)."""
    from browser_support import browser_page, start_streamlit_server, stop_process, wait_for_app
    from conftest import ROOT

    script = tmp_path / "demo.py"
    script.write_text(_DEMO_APP)
    url, server = start_streamlit_server(script, env={"PYTHONPATH": str(ROOT)})
    try:
        with browser_page(accept_downloads=True) as page:
            page.goto(f"{url}/")
            wait_for_app(page)
            page.get_by_role("button", name="Export").click()
            got = {}
            for label in ("PNG", "SVG", "Vega-Lite JSON", "CSV", ".npy", "Projector vectors"):
                with page.expect_download(timeout=60_000) as info:
                    page.get_by_role("button", name=label, exact=True).click()
                download = info.value
                got[download.suggested_filename] = Path(download.path()).read_bytes()
    finally:
        stop_process(server)
    assert got["demo_chart.png"].startswith(PNG_MAGIC)
    assert got["demo_chart.svg"].lstrip().startswith(b"<svg")
    assert json.loads(got["demo_chart.vl.json"])["mark"]["type"] == "line"
    assert got["demo_chart.csv"].splitlines()[0] == b"position,dim_0"
    np.testing.assert_allclose(np.load(io.BytesIO(got["demo_chart.npy"])),
                               np.sin(np.arange(20) / 3))  # fmt: skip
    assert len(got["demo_chart.vectors.tsv"].splitlines()) == 20


def test_altair_method_setters_do_not_share_state_between_callers():
    """Two encodings whose ``.legend`` is looked up before either is called keep their own field.

    Unpatched Altair 5 returns the *second* encoding from the first setter (shared descriptor);
    under Streamlit's one-thread-per-session model that swaps encodings between sessions.
    """
    import posviz.ui.exports  # noqa: F401  (applies the fix on import)

    first = alt.Color("first:N", sort=["a"]).legend
    second = alt.Color("second:N", sort=["b"]).legend
    assert first(orient="bottom").to_dict()["field"] == "first"
    assert second(orient="right").to_dict()["field"] == "second"
    assert alt.X("x:Q").scale(type="log").to_dict() == {
        "field": "x", "type": "quantitative", "scale": {"type": "log"}
    }  # fmt: skip


@pytest.mark.slow
def test_every_chart_of_every_page_exports():
    """What each page hands to the Export menu (its shared first render, ``page_support``) exports:
    every chart to SVG and Vega-Lite JSON and every enabled data file, a page's first chart to PNG
    too (vl-convert draws the PNG from the same scene as the SVG; an embedded image's PNG has its
    own test above)."""
    from page_support import rendered_page

    from posviz.ui import all_pages

    checked = 0
    for spec in all_pages():
        for index, (key, chart, data, name) in enumerate(rendered_page(spec.key).offered):
            checked += 1
            assert export.safe_stem(name), key
            if index == 0:
                assert export.chart_png(chart, scale=1).startswith(PNG_MAGIC), key
            assert export.chart_svg(chart).lstrip().startswith(b"<svg"), key
            assert json.loads(export.chart_json(chart)), key
            if data is None:
                continue
            files = {f.kind: f for f in export.data_files(data, stem="x")}
            offered_files = [f for f in files.values() if not f.disabled]
            assert offered_files, f"{key}: the data behind the chart cannot be downloaded at all"
            for f in offered_files:  # every enabled button gives its file, as a click would
                assert f.make(), (key, f.kind)
            if not files["npy"].disabled:
                npy = files["npy"].make()
                assert np.load(io.BytesIO(npy)).shape == np.shape(data), key
            if not files["csv"].disabled and export.text_export_problem(data) is None:
                assert files["csv"].make().startswith(b"position,"), key
    assert checked >= 10, checked


def test_csv_header_names_the_real_dimensions_of_a_figure():
    """The dimensions chart of columns 0, 64, 128, 256, 510 exports those indices, not dim_0…4."""
    import pandas as pd

    frame = pd.DataFrame(np.eye(3), columns=["dim 0", "dim 64", "dim 510"])
    assert export.matrix_csv(frame).decode().splitlines()[0] == "position,dim 0,dim 64,dim 510"
    names = export.column_names(frame)
    again = export.matrix_csv(np.asarray(frame), columns=names).decode()
    assert again.splitlines()[0] == "position,dim 0,dim 64,dim 510"  # what the menu does
    with pytest.raises(ValueError, match="2 column names for 3 columns"):
        export.matrix_csv(np.eye(3), columns=["a", "b"])


def test_a_tidy_table_with_text_columns_exports_its_own_csv_not_a_broken_npy():
    """A chart's rows (series names beside numbers): the CSV keeps every column; the matrix
    formats are offered disabled with the reason, never as a button that fails when clicked."""
    import pandas as pd

    frame = pd.DataFrame({"x": [1.0, 2.0], "series": ["trained", "control"], "value": [0.5, 0.25]})
    files = {f.kind: f for f in export.data_files(frame, stem="usage")}
    assert files["csv"].make().decode().splitlines() == [
        "x,series,value",
        "1,trained,0.5",
        "2,control,0.25",
    ]
    assert all(files[k].disabled and "text" in files[k].help for k in ("npy", "tsv", "meta"))


def test_csv_header_keeps_names_outside_latin_1():
    """A column named with a symbol such as ‖q‖ (numpy's default header encoding is latin-1)."""
    import pandas as pd

    frame = pd.DataFrame(np.eye(2), columns=["‖q‖ slow", "θ·i"])
    assert export.matrix_csv(frame).decode("utf-8").splitlines()[0] == "position,‖q‖ slow,θ·i"
