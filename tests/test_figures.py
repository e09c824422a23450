"""What the experiment and family pages get from the library, tested without Streamlit: their
figures (``posviz.figures``), the family pages' inputs, queued probes and the Export menu's files.
The pages that show them run in ``tests/test_pages.py``."""

from __future__ import annotations

import io

import numpy as np
import pytest

import posviz
from posviz import export, figures
from posviz.analysis.add_concat import concat_hypothesis
from posviz.analysis.families import nearest_margin
from posviz.analysis.family_inputs import learned_comparison_table, synthetic_vit_table
from posviz.analysis.heavy_probes import queued_probe
from posviz.analysis.vit import sincos_2d_table

PNG_MAGIC = b"\x89PNG"


@pytest.fixture(scope="module")
def reports():
    options = {"train": "even", "test": "odd", "folds": 5, "alpha": 0.0, "seed": 0}
    return [
        ("sinusoid", queued_probe(posviz.sinusoidal(64, 16), hold_out=None, **options)),
        ("noise", queued_probe(np.random.default_rng(0).normal(size=(64, 16)), **options)),
    ]


def test_probe_figures_export_what_they_draw(reports) -> None:
    predictions, errors = figures.probe_figures(reports)
    assert predictions.name == "probe_predictions" and errors.name == "probe_errors"
    assert predictions.data.shape == errors.data.shape and predictions.data.shape[1] == 2
    drawn = predictions.chart.to_dict()["layer"][1]["encoding"]
    assert (drawn["x"]["field"], drawn["y"]["field"]) == ("position", "predicted")


def test_probe_hero_is_the_first_table_against_its_control(reports) -> None:
    verdict, hero = figures.probe_hero(reports)
    assert "sinusoid" in verdict.sentence
    assert list(hero.data.columns) == ["mean", "low", "high"]
    assert (hero.data["low"] <= hero.data["high"]).all()


def test_cloud_and_magnitude_figures() -> None:
    rng = np.random.default_rng(1)
    words, table = rng.normal(size=(200, 8)), posviz.sinusoidal(32, 8)
    cloud = figures.cloud_figure(words[0], table, view="dims", dims=(2, 3), piece="cat")
    assert cloud.data.shape[1] == 2 and cloud.name == "word_plus_position"
    np.testing.assert_allclose(cloud.data[0], words[0, 2:4] + table[0, 2:4])
    figure, pe_median, we_median = figures.magnitude_figure(words[0], table, words=words)
    assert figure.name == "magnitudes" and pe_median > 0 and we_median > 0


def test_concat_hero_states_the_learned_table_against_random_subspaces() -> None:
    rng = np.random.default_rng(2)
    words = rng.normal(size=(300, 16))
    learned = concat_hypothesis(rng.normal(size=(32, 16)) * 0.1, words, fraction=0.9)
    sinusoid = concat_hypothesis(posviz.sinusoidal(32, 16), words, fraction=0.9)
    verdict, hero = figures.concat_hero(learned, sinusoid, n_positions=32)
    assert "MiniLM" in verdict.sentence
    assert hero.name == "position_share_in_words" and len(hero.data) >= 2


def test_the_compare_pages_learned_table_carries_its_margin() -> None:
    matrix = posviz.sinusoidal(40, 8)
    learned = learned_comparison_table(matrix, n_items=16, label="L")
    assert learned.label == "L" and learned.matrix is matrix
    np.testing.assert_array_equal(learned.margin, nearest_margin(matrix[:16]))
    assert learned_comparison_table(matrix, n_items=999, label="L").margin.shape == (40,)


def test_the_synthetic_vit_table_says_it_is_synthetic() -> None:
    table = synthetic_vit_table(3, 4, 8)
    np.testing.assert_array_equal(table.matrix, sincos_2d_table(3, 4, 8))
    assert table.grid == (3, 4) and table.kind == "vit-2d"
    assert "synthetic" in table.source and "not a trained ViT" in table.notes[0]
    with pytest.raises(ValueError, match="multiple of 4"):
        synthetic_vit_table(3, 4, 6)


def test_export_files_are_made_only_when_asked_and_read_back() -> None:
    matrix = np.arange(12.0).reshape(4, 3)
    chart = figures.cloud_figure(matrix[0], matrix, view="dims", dims=(0, 1), piece="x").chart
    charts = export.chart_files(chart, stem="c")
    assert [f.kind for f in charts] == ["png", "svg", "json"]
    assert [f.mime for f in charts] == ["image/png", "image/svg+xml", "application/json"]
    files = {f.kind: f for f in export.data_files(matrix, stem="m")}
    assert [f.file_name for f in files.values()] == [
        "m.csv", "m.npy", "m.vectors.tsv", "m.metadata.tsv"
    ]  # fmt: skip
    assert not any(f.disabled for f in files.values())
    np.testing.assert_array_equal(np.load(io.BytesIO(files["npy"].make())), matrix)
    assert files["csv"].make().startswith(b"position,dim_0,dim_1,dim_2")


def test_text_exports_of_a_huge_matrix_are_offered_disabled_saying_why() -> None:
    huge = np.broadcast_to(np.float32(0), (4096, 2048))
    files = {f.kind: f for f in export.data_files(huge, stem="h")}
    assert files["csv"].disabled and ".npy" in files["csv"].help
    assert not files["npy"].disabled


def test_a_thumbnail_is_small_untitled_and_leaves_the_spec_alone(monkeypatch) -> None:
    chart = figures.cloud_figure(np.zeros(2), np.eye(2), view="dims", dims=(0, 1), piece="x").chart
    spec = export.chart_spec(chart)
    before = dict(spec)
    png = export.thumbnail_png(spec, width=120, height=60, scale=1.0)
    full = export.spec_png(spec, scale=1.0)
    assert png.startswith(PNG_MAGIC)
    for field in (slice(16, 20), slice(20, 24)):  # the PNG header's width and height, in pixels
        assert int.from_bytes(png[field], "big") < int.from_bytes(full[field], "big")
    assert spec == before and "title" in spec
    drawn = []
    monkeypatch.setattr(export, "spec_png", lambda small, scale: drawn.append(small) or b"")
    export.thumbnail_png(spec, width=120, height=60)
    assert "title" not in drawn[0] and (drawn[0]["width"], drawn[0]["height"]) == (120, 60)


def _count_figures(monkeypatch) -> list[object]:
    """Every :class:`posviz.charts.figure.Figure` built from now on, in order."""
    from posviz.charts.figure import Figure

    built: list[object] = []
    original = Figure.__init__

    def counted(self, *args, **kwargs):
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "__init__", counted)
    return built


@pytest.mark.parametrize("page", ["pages/sinusoidal.py", "pages/learned.py"])
def test_a_home_card_builds_the_one_figure_it_shows(page, monkeypatch):
    """A computed home card's words build no figure and its picture exactly one (the card shows
    one chart: no hero pair built to throw half away), and a second visit builds none."""
    from posviz.ui import home_cards

    monkeypatch.setattr(export, "thumbnail_png", lambda spec, **_: b"png")
    home_cards.card_thumbnail.clear()
    built = _count_figures(monkeypatch)
    try:
        assert len(home_cards.card_answer(page)) > 40
        assert built == []
        assert home_cards.card_thumbnail(page) == b"png"
        assert len(built) == 1
        home_cards.card_thumbnail(page)
        assert len(built) == 1
    finally:
        home_cards.card_thumbnail.clear()


@pytest.mark.parametrize(
    ("page", "square"), [("pages/sinusoidal.py", False), ("pages/learned.py", True)]
)
def test_a_square_card_picture_is_drawn_square_not_widened(page, square, monkeypatch):
    """The learned table's similarity matrix keeps its cells square by widening its domain to the
    box: drawn in the wide card box it left empty grid beside the matrix. Its picture is now a
    square plot (the legend beside it, as long as the plot) centred on a strip as wide as the
    other cards' pictures; the sinusoid's fills the wide box as before."""
    import io

    from PIL import Image

    from posviz.page_models import home
    from posviz.ui import home_cards

    def drawn_png(spec, **_):
        drawn.append(spec)
        out = io.BytesIO()
        Image.new("RGBA", (300, 200), (255, 0, 0, 255)).save(out, format="PNG")
        return out.getvalue()

    drawn = []
    monkeypatch.setattr(export, "spec_png", drawn_png)
    home_cards.card_thumbnail.clear()
    try:
        png = home_cards.card_thumbnail(page)
    finally:
        home_cards.card_thumbnail.clear()
    (spec,) = drawn
    image = Image.open(io.BytesIO(png))
    if square:  # the plot's own size: the domain's max(1, width / height) is 1
        assert spec["width"] == spec["height"] == home.THUMB_HEIGHT
        assert spec["autosize"] == {"type": "pad"}
        assert image.size == (2 * home.THUMB_WIDTH, 200)  # centred: transparent either side
        assert image.getpixel((0, 0))[3] == 0 and image.getpixel((home.THUMB_WIDTH, 100))[3] == 255
    else:
        assert (spec["width"], spec["height"]) == (home.THUMB_WIDTH, home.THUMB_HEIGHT)
        assert spec["autosize"]["type"] == "fit-x" and image.size == (300, 200)
