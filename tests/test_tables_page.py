"""The learned-tables page and the shared ``pick_table`` picker, through Streamlit's AppTest."""

from __future__ import annotations

import json
import re
import socket

import numpy as np
import pytest
from conftest import app_test, assert_no_exception
from hub_server import FakeHub, HubServer

PAGE = "pages/learned.py"


def _page(query: dict[str, str] | None = None, **options):
    """The learned-tables page run once at ``query`` (a link's parameters), with no exception."""
    at = app_test(PAGE, query=query, **options)
    assert_no_exception(at)
    return at


def _chart_elements(node, *, in_hero: bool = False):
    """Every chart under ``node`` in page order, each with whether it sits in the answer's hero
    box (the container keyed ``hero``: Streamlit ids it ``$$ID-<hash>-hero``)."""
    key = getattr(getattr(node, "proto", None), "id", "")
    in_hero = in_hero or (isinstance(key, str) and key.endswith("-hero"))
    if getattr(node, "type", "") == "vega_lite_chart":
        yield node, in_hero
    for child in getattr(node, "children", {}).values():
        yield from _chart_elements(child, in_hero=in_hero)


def _view_charts(at) -> list:
    """The charts of the chosen view (both tables' sides), not the linked hero above them."""
    return [chart for chart, in_hero in _chart_elements(at.main) if not in_hero]


def _hero_specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart, hero in _chart_elements(at.main) if hero]


def _specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in _view_charts(at)]


def _subtitle(spec: dict) -> str:
    """The subtitle's lines as one line (the heatmap splits "a; b" into short lines)."""
    return "; ".join(spec["title"].get("subtitle", []))


def _assert_linked_hero(at) -> None:
    """The learned hero: one linked spec drawn side by side (wide) and one stacked (tall)."""
    shapes = [next(k for k in ("hconcat", "vconcat") if k in s) for s in _hero_specs(at)]
    assert shapes == ["hconcat", "vconcat"], shapes


def _marks(spec: dict) -> list[str]:
    layers = spec.get("layer", [spec])
    return [lay["mark"]["type"] if isinstance(lay["mark"], dict) else lay["mark"] for lay in layers]


def test_default_shows_minilm_next_to_a_sinusoid_of_the_same_width():
    at = _page()
    assert not at.error
    captions = " ".join(c.value for c in at.caption)
    assert "bundled (512×384)" in captions and "sinusoidal:512x384" in captions
    assert "embeddings.position_embeddings.weight" in captions
    _assert_linked_hero(at)
    charts = _view_charts(at)
    # MiniLM with saturated colours first (two outliers at position 0 make the true scale nearly
    # white), then MiniLM on its true scale, then the sinusoid (no outliers: one chart)
    assert len(charts) == 3
    for chart in charts:  # the shared 1:1 image heatmap, not a strided rect heatmap
        spec = json.loads(chart.proto.spec)
        assert _marks(spec)[0] == "image"
        assert "1:1; each of the 512×384 cells is one pixel" in _subtitle(spec)
        assert chart.proto.ByteSize() < 300_000  # spec + inlined PNG; the goal is ≤ 1 MB
    contrast, true, sinusoid = (json.loads(chart.proto.spec) for chart in charts)
    assert "colour ±1.87 " in _subtitle(true) and "colour ±1 " in _subtitle(sinusoid)
    assert "more contrast" in contrast["title"]["text"]
    assert "colours saturated at ±0.0648" in _subtitle(contrast)
    assert "more contrast" not in true["title"]["text"] + sinusoid["title"]["text"]
    assert at.toggle(key="lrn_a_hm_contrast").value
    at.toggle(key="lrn_a_hm_contrast").set_value(False).run()
    assert len(_view_charts(at)) == 2 and at.query_params["lrn_a_hm_contrast"]
    assert not any("more contrast" in spec["title"]["text"] for spec in _specs(at))


@pytest.mark.parametrize(
    "view",
    ["heatmap", "pair", "dims", "variance", "similarity", "shift", "pca2", "pca3", "norms"],
)
def test_every_view_draws_both_tables(view):
    at = _page({"lrn_view": view})
    assert not at.error
    _assert_linked_hero(at)  # above every view
    assert len(_view_charts(at)) == (3 if view == "heatmap" else 2)


def test_similarity_of_minilm_is_drawn_one_to_one():
    at = _page({"lrn_view": "similarity", "lrn_cmp": "false"})
    (chart,) = _view_charts(at)
    spec = json.loads(chart.proto.spec)
    assert _marks(spec)[0] == "image"
    assert spec["title"]["text"] == "cos(PE(p), PE(q)), 512×512"
    assert "1:1; each of the 512×512 cells is one pixel; colour ±1" in _subtitle(spec)
    assert chart.proto.ByteSize() < 600_000


def test_similarity_of_a_long_table_is_a_1to1_window():
    query = {
        "lrn_cmp": "false",
        "lrn_a_src": "sinusoid",
        "lrn_a_n": "2048",
        "lrn_a_d": "16",
        "lrn_view": "similarity",
        "lrn_a_sim_p0": "512",
    }
    at = _page(query)
    assert "1024 of them are compared 1:1" in at.info[0].value
    (spec,) = _specs(at)
    assert "positions 512…1535" in spec["title"]["text"]
    assert "1:1; each of the 1024×1024 cells" in _subtitle(spec)


def test_url_reproduces_both_tables_views():
    query = {
        "lrn_a_src": "sinusoid",
        "lrn_a_n": "64",
        "lrn_a_d": "32",
        "lrn_view": "heatmap",
        "lrn_a_hm_zoom": "true",
        "lrn_a_hm_r0": "8",
        "lrn_a_hm_rows": "4",
        "lrn_a_hm_c0": "2",
        "lrn_a_hm_cols": "3",
        "lrn_b_src": "bundled",
        "lrn_b_hm_zoom": "true",
        "lrn_b_hm_r0": "100",
        "lrn_b_hm_rows": "10",
        "lrn_b_hm_contrast": "false",
    }
    at = _page(query)
    assert not at.warning, [w.value for w in at.warning]
    first, second = _specs(at)
    assert "positions 8…11, dimensions 2…4" in first["title"]["text"]
    assert first["title"]["text"].startswith("64×32 table")
    assert "positions 100…109, dimensions 0…15" in second["title"]["text"]
    assert second["title"]["text"].startswith("512×384 table")
    assert at.toggle(key="lrn_b_hm_zoom").value and at.toggle(key="lrn_a_hm_zoom").value

    query = {"lrn_view": "dims", "lrn_a_dims": "3,5", "lrn_b_dims": "7"}
    at = _page(query)
    first, second = _specs(at)
    assert "dim 3" in json.dumps(first) and "dim 5" in json.dumps(first)
    assert "dim 7" in json.dumps(second) and "dim 3" not in json.dumps(second)


def test_bad_link_parameters_do_not_break_the_page():
    at = _page({"lrn_a_src": "nonsense", "lrn_view": "zzz", "lrn_a_n": "abc"})
    assert at.warning  # the user is told which link parameter was ignored
    assert len(_view_charts(at)) == 3  # the default view: contrast + true scale + sinusoid


#: a link's parameters for one table (no comparison) picked from the hub by the id typed under
#: "other…" (``lrn_a_id``)
HUB_PICK = {"lrn_cmp": "false", "lrn_a_src": "hub", "lrn_a_hub": "other…"}


@pytest.fixture(scope="module")
def tiny_hub(tmp_path_factory):
    import transformers as tf

    directory = tmp_path_factory.mktemp("gpt2")
    config = tf.GPT2Config(vocab_size=99, n_positions=48, n_embd=32, n_layer=1, n_head=2)
    model = tf.GPT2LMHeadModel(config)
    model.save_pretrained(directory)
    fake = FakeHub()
    fake.add_dir("tiny/gpt2", directory)
    llama = tmp_path_factory.mktemp("llama")
    (llama / "config.json").write_text(json.dumps({"model_type": "llama"}))
    fake.add_dir("tiny/llama", llama)
    expected = model.transformer.wpe.weight.detach().numpy().copy()
    with HubServer(fake) as server:
        yield server, expected


@pytest.mark.slow
def test_hub_model_through_the_picker(tiny_hub, monkeypatch, tmp_path):
    server, expected = tiny_hub
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    at = _page({**HUB_PICK, "lrn_a_id": "tiny/gpt2", "lrn_view": "norms"})
    assert not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "tiny/gpt2 (48×32)" in captions and "wpe.weight" in captions
    norms = np.linalg.norm(expected, axis=1)
    assert f"{norms.min():.3f}" in captions


@pytest.mark.slow
def test_hub_errors_are_shown_not_raised(tiny_hub, monkeypatch, tmp_path):
    server, _ = tiny_hub
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    at = _page({**HUB_PICK, "lrn_a_id": "tiny/llama"})
    assert "RoPE" in at.error[0].value and "rope" in at.error[0].value
    at = app_test(PAGE, query={**HUB_PICK, "lrn_a_id": "tiny/misspelled"})
    assert "not found on the hub" in at.error[0].value
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    at = app_test(PAGE, query={**HUB_PICK, "lrn_a_id": "tiny/elsewhere"})
    assert "Could not reach the hub" in at.error[0].value
    # the offline default still works in the same session
    at.selectbox(key="lrn_a_src").set_value("bundled").run()
    assert_no_exception(at)
    assert not at.error and len(_view_charts(at)) == 2  # true scale + contrast


def test_local_paths_are_offered_only_when_allowed(monkeypatch, tmp_path):
    path = tmp_path / "table.npy"
    np.save(path, np.random.default_rng(0).normal(size=(20, 6)))
    query = {"lrn_cmp": "false", "lrn_a_src": "path", "lrn_a_path": str(path)}
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "1")
    at = _page(query)
    assert "(20×6)" in " ".join(c.value for c in at.caption)
    assert any("path" in option for option in at.selectbox(key="lrn_a_src").options)
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "0")
    at = _page(query)
    assert not any("path" in option for option in at.selectbox(key="lrn_a_src").options)
    assert "(20×6)" not in " ".join(c.value for c in at.caption)
    assert at.warning  # the link's choice was ignored, and the user is told


def test_variance_threshold_starts_relative_to_each_tables_scale():
    from posviz.analysis.stats import relative_threshold

    table = np.random.default_rng(0).normal(size=(64, 8))  # mean variance ≈ 1
    assert relative_threshold(table) == pytest.approx(10**-2, rel=0.8)
    # scaling the table by 10 scales variances by 100: two whole decades on the slider
    assert relative_threshold(10 * table) == pytest.approx(100 * relative_threshold(table))
    assert relative_threshold(np.ones((4, 3))) == 1e-3  # constant: nothing to be relative to
    at = _page({"lrn_view": "variance", "lrn_b_thr": "-1.0"})
    bundled, sinusoid = (m.value for m in at.metric)
    assert bundled == "384 of 384"  # MiniLM: every dimension moves, on its own scale
    assert at.slider(key="lrn_b_thr").value == -1.0 and sinusoid != "324 of 384"


@pytest.mark.parametrize("address", ["", "0.0.0.0", "10.1.2.3"])
def test_exposed_server_keeps_local_paths_off_and_says_why(monkeypatch, tmp_path, address):
    """Reachable by others -> no path source, no path through the hub box either."""
    path = tmp_path / "table.npy"
    np.save(path, np.random.default_rng(0).normal(size=(20, 6)))
    # set (to "no") so that monkeypatch removes what the app writes there when the test ends
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "")
    query = {"lrn_cmp": "false", "lrn_a_src": "path", "lrn_a_path": str(path)}
    at = _page(query, server_address=address)
    assert not any("path" in option for option in at.selectbox(key="lrn_a_src").options)
    assert "(20×6)" not in " ".join(c.value for c in at.caption)
    assert any("others could read files" in i.value for i in at.info)
    # the same file typed into the hub box is refused too
    query = {"lrn_cmp": "false", "lrn_a_src": "hub", "lrn_a_hub": "other…", "lrn_a_id": str(path)}
    at = _page(query, server_address=address)
    assert "(20×6)" not in " ".join(c.value for c in at.caption) and at.error
    # explicitly allowed by the operator: offered again
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "1")
    query = {"lrn_cmp": "false", "lrn_a_src": "path", "lrn_a_path": str(path)}
    at = _page(query, server_address=address)
    assert "(20×6)" in " ".join(c.value for c in at.caption)


def test_comparison_sinusoid_matches_a_large_table_and_says_when_clamped(tmp_path):
    """OPT-2.7b's 2050×2560 table used to get a silent 8192×2 / 1×2 sinusoid."""
    from posviz.tables.picker import SINUSOID_MAX_WIDTH, sinusoid_shape

    n, d, note = sinusoid_shape("sinusoidal:2050x2560")
    assert (n, d) == (2050, min(2560, SINUSOID_MAX_WIDTH))
    assert (note is None) == (SINUSOID_MAX_WIDTH >= 2560)
    n, d, note = sinusoid_shape("sinusoidal:9000x385")
    assert (n, d) == (8192, 384) and "9000×385" in note and "8192" in note
    at = _page({"lrn_a_src": "sinusoid", "lrn_a_n": "2050", "lrn_a_d": "520"})
    assert (at.number_input(key="lrn_b_n").value, at.number_input(key="lrn_b_d").value) == (
        2050,
        520,
    )
    assert not at.info or not any("matching sinusoid" in i.value for i in at.info)
    path = tmp_path / "wide.npy"
    np.save(path, np.zeros((16, SINUSOID_MAX_WIDTH + 3), dtype=np.float32))
    at = _page({"lrn_a_src": "path", "lrn_a_path": str(path)})
    assert at.number_input(key="lrn_b_d").value == SINUSOID_MAX_WIDTH, [
        m.value for m in [*at.error, *at.warning, *at.info]
    ]
    assert at.number_input(key="lrn_b_n").value == 16
    assert any(f"16×{SINUSOID_MAX_WIDTH + 3}" in i.value for i in at.info)  # said, not silent


def test_lab_source_refuses_an_unknown_run_clearly(monkeypatch, tmp_path):
    """The "Lab run" source: an unknown run is a message naming it, not a traceback or a link."""
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path / "lab"))
    at = _page({"lrn_cmp": "false", "lrn_a_src": "lab"})
    assert any("No finished lab runs" in i.value for i in at.info)
    spec = "lab:nope-[x](https://evil.example)/learned/0"
    at = _page({"lrn_cmp": "false", "lrn_a_src": "lab", "lrn_a_lab": spec})
    assert len(at.error) == 1 and "nope" in at.error[0].value
    assert not re.search(r"(?<!\\)\]\(", at.error[0].value)  # escaped: shown literally
