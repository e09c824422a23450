"""Page models (issue 22 item 2): a page imports from its model and posviz.ui only, its model
computes each thing once (the sinusoid table is built once per render), and every model's
verdict opens with a plain sentence of at most 15 words (issue 23 item 3)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest
from imports_support import imported_modules

from posviz.analysis.families import nope_demo
from posviz.analysis.family_inputs import synthetic_vit_table
from posviz.analysis.headlines import FIRST_SENTENCE_WORDS, first_sentence
from posviz.encodings import sinusoidal as sinusoid_module
from posviz.page_models import alibi, nope, vit_grid
from posviz.page_models.learned import learned_page
from posviz.page_models.sinusoidal import sinusoid_hero, sinusoid_page
from posviz.tables import PositionTable, load_table

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "pages"
#: the two places a page may import from (besides streamlit and the standard library).
ALLOWED = {"posviz.page_models", "posviz.ui"}
#: pages not yet split into a model and its layout (each must still import from more than two
#: layers: remove a page from here when it is converted). Every page is converted.
NOT_YET_CONVERTED: set[str] = set()


def posviz_layers(path: Path) -> set[str]:
    """The top-level ``posviz.<layer>`` modules a page script imports from."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = (name for node in ast.walk(tree) for name in imported_modules(node))
    return {".".join(n.split(".")[:2]) for n in names if n.startswith("posviz")}


def test_layer_check_sees_each_kind_of_import(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text(
        "import posviz.tables\nfrom posviz.ui.answer import x\nfrom posviz import figures\n"
        "import streamlit as st\n"
    )
    assert posviz_layers(page) == {"posviz.tables", "posviz.ui", "posviz"}


@pytest.mark.parametrize("path", sorted(PAGES.glob("*.py")), ids=lambda p: p.name)
def test_a_page_imports_only_its_model_and_posviz_ui(path: Path) -> None:
    layers = posviz_layers(path)
    if path.name in NOT_YET_CONVERTED:
        assert not layers <= ALLOWED, f"{path.name} is converted: remove it from the list"
    else:
        assert layers <= ALLOWED, f"{path.name} imports {sorted(layers - ALLOWED)}"


# --------------------------------------------------------------------------- computed once


def _count_sinusoid_builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Replace :func:`posviz.encodings.sinusoidal.sinusoidal` wherever a module holds it by a
    wrapper that records each table's shape; returns the (growing) list of shapes."""
    original = sinusoid_module.sinusoidal
    built: list[tuple[int, int]] = []

    def counting(n_positions, d_model, **kwargs):
        built.append((int(n_positions), int(d_model)))
        return original(n_positions, d_model, **kwargs)

    for module in list(sys.modules.values()):
        for name, value in list(vars(module).items()) if module is not None else []:
            if value is original:
                monkeypatch.setattr(module, name, counting)
    return built


@pytest.mark.slow
def test_a_sinusoid_page_render_builds_its_table_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import app_test, assert_no_exception

    from posviz.ui.cache import clear_caches

    at = app_test()
    clear_caches()  # a cold render: nothing left from the home page's cards
    built = _count_sinusoid_builds(monkeypatch)
    at.switch_page("pages/sinusoidal.py").run()
    assert_no_exception(at)
    assert len(at.get("vega_lite_chart")) >= 9  # the page really drew its hero and views
    assert built == [(128, 512)]
    at.slider(key="sin_pos").set_value(77).run()  # moving the position rebuilds nothing
    assert built == [(128, 512)]


def test_the_sinusoid_model_reads_the_table_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    table = sinusoid_module.sinusoidal(64, 16, layout="split")
    built = _count_sinusoid_builds(monkeypatch)
    page = sinusoid_page(table, base=10000.0, layout="split")
    hero = sinusoid_hero(table, base=10000.0, layout="split", position=77)
    assert built == []
    pos = next(p for p in hero.wide.chart.to_dict()["params"] if p["name"] == "pos")
    assert pos["value"] == 63  # clamped to the table
    assert page.panel.sines.shape == (64,)


def test_a_tiny_sinusoid_is_extended_for_the_checks_only() -> None:
    """Two rows cannot show a collision or a rotation: the checks read 7 rows (built once), the
    hero and the slow columns the 2 shown."""
    page = sinusoid_page(sinusoid_module.sinusoidal(2, 8), base=10000.0, layout="interleaved")
    assert page.n == 2 and "PE[1]" in page.slow_columns.columns  # the 2 rows shown
    assert page.panel.check.pair_error < 1e-12


# --------------------------------------------------------------------------- plain first lines


def _models() -> dict[str, object]:
    """Each page model built on a small input, named by its page's URL segment (the learned
    page's on the bundled MiniLM and on a table whose neighbours are not alike, so both of its
    openings are checked)."""
    from posviz.encodings.p_rope import PRopeConfig
    from posviz.encodings.rope import rope_frequencies
    from posviz.page_models import p_rope, rope, t5_buckets

    sinusoid = sinusoid_module.sinusoidal(32, 16)
    noise = np.random.default_rng(0).normal(size=(64, 16))
    p_rope_config = PRopeConfig(model_type="manual", head_dim=64, fraction=0.25, base=1e4)
    return {
        "sinusoidal": sinusoid_page(sinusoid, base=10000.0, layout="interleaved"),
        "learned": learned_page(load_table("bundled")),
        "learned unlike": learned_page(PositionTable(noise, source="noise")),
        "nope": nope.nope_page(nope_demo(16, 8, n_samples=2, seed=0)),
        "alibi": alibi.alibi_page(alibi.alibi_slopes(12)),
        "rope": rope.rope_page(rope_frequencies(64), name="a head"),
        "p_rope": p_rope.p_rope_page(p_rope_config, max_distance=256),
        "t5_buckets": t5_buckets.t5_page(32, max_distance=128, span=64),
        "vit_grid": vit_grid.vit_page(synthetic_vit_table(4, 5, 64), name="a grid"),
    }


def test_every_family_page_of_the_registry_has_its_model_checked() -> None:
    """Read from the family registry: a new family's page model is in the sweep below, or this
    fails naming it."""
    from posviz.encodings.families import family_pages

    checked = {name.split()[0] for name in _models()}
    for spec in (*family_pages("Encodings"), *family_pages("Beyond")):
        if spec.url_path is not None:
            assert spec.url_path in checked, f"{spec.url_path}: add its page model to _models"


@pytest.mark.parametrize(("name", "model"), sorted(_models().items()))
def test_every_page_models_verdict_opens_with_a_plain_sentence(name: str, model) -> None:
    verdict = model.verdict  # a Verdict, or (p-RoPE's answer) its sentence alone
    first = first_sentence(verdict) if isinstance(verdict, str) else verdict.first_sentence
    assert first.endswith(".") and len(first.split()) <= FIRST_SENTENCE_WORDS, first
    assert not set(first) & set("²‖σ"), f"{name}: notation belongs after the first sentence"
    assert np.isfinite(list(getattr(verdict, "numbers", {}).values())).all()


@pytest.mark.slow
def test_the_learned_hero_moves_to_the_position_and_starts_at_the_seam() -> None:
    page = learned_page(load_table("bundled"))
    assert page.start_position == (page.summary.edges[1] if page.summary.edges else 0)
    spec = page.hero_at(77).wide.chart.to_dict()
    pos = next(p for p in spec["params"] if p["name"] == "pos")
    assert pos["value"] == 77
    clamped = page.hero_at(10**6).wide.chart.to_dict()
    assert next(p for p in clamped["params"] if p["name"] == "pos")["value"] == page.n - 1


# --------------------------------------------------------------------------- one position


def _hero_position(at) -> int:
    """Where the page's linked hero starts (its shared ``pos`` parameter)."""
    import json

    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    return next(p for p in spec["params"] if p["name"] == "pos")["value"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "key", "circle_view"),
    [("pages/sinusoidal.py", "sin_pos", {}), ("pages/learned.py", "lrn_pos", {"lrn_view": "pair"})],
)
def test_one_position_drives_the_page_and_lives_in_the_link(page, key, circle_view) -> None:
    """Set the position, share the link, open it: the same position in the hero and the clock
    or coordinates view (issue 23: set 77, shared, came back as 10)."""
    import json

    from conftest import app_test, assert_no_exception

    at = app_test(page, query=circle_view)
    assert len(at.slider(key=key).label) and _hero_position(at) != 77
    at.slider(key=key).set_value(77).run()
    assert_no_exception(at)
    link = {k: at.query_params[k] for k in at.query_params}
    assert link[key] == "77"
    shared = app_test(page, query=link)
    assert_no_exception(shared)
    assert shared.slider(key=key).value == 77 and _hero_position(shared) == 77
    titles = [json.loads(c.proto.spec).get("title") for c in shared.get("vega_lite_chart")]
    assert any("77" in json.dumps(t) for t in titles[2:]), "the circle view follows"
    assert [s.key for s in shared.slider if s.key.endswith("pos")] == [key]  # one control


@pytest.mark.slow
def test_the_verdict_defines_its_terms_on_hover() -> None:
    """/learned's evidence quotes cos(PE(p), PE(p+1)): the answer's line above it (the evidence
    is folded under it) says in its hover help what a cosine is."""
    from conftest import app_test, assert_no_exception

    at = app_test("pages/learned.py")
    assert_no_exception(at)
    line, evidence = at.markdown[0], at.markdown[1]
    assert "median cos(PE(p)" in evidence.value and "cos(" not in line.value
    assert "cosine similarity" in line.proto.help


# --------------------------------------------------------------------------- moved out of posviz/ui


def test_a_lab_link_names_a_cell_or_gets_the_presets_with_why(monkeypatch) -> None:
    """posviz.page_models.lab (was ui/lab_views.pick_cell): a cell not in the run falls back to
    the preset's, and the warning quotes the link's value escaped."""
    from posviz.page_models import lab

    monkeypatch.setattr(lab.answer, "cell_ids", lambda result: ("preset", "other"))
    monkeypatch.setattr(lab.answer, "answer_cell", lambda result: "preset")  # the line's cell
    assert lab.linked_cell(object(), None, "lab_x_cell") == ("preset", "")
    assert lab.linked_cell(object(), "other", "lab_x_cell") == ("other", "")
    cell, warning = lab.linked_cell(object(), "[x](https://evil.example)", "lab_x_cell")
    assert cell == "preset" and "lab_x_cell" in warning and "Cells: preset, other" in warning
    assert "](https://" not in warning  # the value cannot draw a link


def test_a_linked_run_of_another_question_is_not_shown() -> None:
    from types import SimpleNamespace

    from posviz.page_models import lab

    question = SimpleNamespace(id="learned")
    assert lab.linked_outcome(question, "abc", None)[:2] == (None, "info")
    other = SimpleNamespace(question_id="nope")
    result, level, message = lab.linked_outcome(question, "abc", other)
    assert (result, level) == (None, "warning") and "nope" in message
    mine = SimpleNamespace(question_id="learned")
    assert lab.linked_outcome(question, "abc", mine) == (mine, "", "")


def test_the_warm_up_line_reruns_only_when_what_the_page_shows_is_stored() -> None:
    from types import SimpleNamespace

    from posviz.page_models import lab

    view = SimpleNamespace(pending=("r1",), stored=3, panels_stored=1)
    assert lab.warmup_watch(view, None) == (None, 4)  # /lab: any new answer
    assert lab.warmup_watch(view, "r1") == ("r1", -1)  # its own answer, pending
    assert lab.warmup_watch(view, "mine") == (None, -1)  # settings of one's own: never
    assert not lab.warmup_changed(view, "r1", -1) and not lab.warmup_changed(view, None, 4)
    done = SimpleNamespace(pending=(), stored=4, panels_stored=1)
    assert lab.warmup_changed(done, "r1", -1) and lab.warmup_changed(done, None, 4)
    assert not lab.warmup_changed(done, None, -1)


def test_compare_reports_an_unreadable_input_and_compares_the_rest() -> None:
    from posviz.page_models import compare

    def offline(_: object) -> None:
        raise ValueError("offline")

    settings = compare.CompareSettings()
    learned, bias, errors = compare.comparison_inputs(
        ["learned", "t5"], settings, "", learned=offline, t5_bias=offline
    )
    assert (learned, bias) == (None, None) and errors == {compare.LEARNED_LABEL: "offline"}
    _, bias, errors = compare.comparison_inputs(
        ["t5"], settings, "org/t5", learned=offline, t5_bias=lambda model: np.ones((32, 8))
    )
    assert bias[0] == "org/t5" and bias[1].shape == (32, 8) and errors == {}


def test_the_shared_views_choices_stay_in_their_limits() -> None:
    from posviz.charts.heatmap import MAX_SIDE_1TO1
    from posviz.page_models import table_views

    first, shown, _, cols = table_views.zoom_fields(5000, 3)
    assert shown.hi == MAX_SIDE_1TO1 and cols.hi == 3 and first.hi == 4999
    assert table_views.pca_options("pca2", [1, 3]) == {"x": 0, "y": 2}  # 1-based PCs shown
    assert table_views.pca_fields("heatmap") == []
    assert [f.default for f in table_views.pair_fields(1)] == [0, 0]  # one column: both dim 0
