"""The Inside-real-models page model across window lengths, on small synthetic results: the
verdict holds a finding only where it holds at every length and otherwise names the dependence
with its numbers; the first-token class is read from the ablation and the moved control; the
charts say what their ends are; the downloads read back."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from posviz.analysis import inside_models
from posviz.analysis.headlines import FIRST_SENTENCE_WORDS, FORMULA_CHARS
from posviz.analysis.heads import CLASSES
from posviz.page_models.inside_models import _drawn_by, inside_page

SCORED = [c for c in CLASSES if c != "broad"]
HEADS = 4  # one layer of four heads
W = 2  # text windows


def _heads(model: str, window: int, sinks: int) -> dict[str, np.ndarray]:
    """``sinks`` first-token heads (kept under the ablation, following slot 0 when moved) and
    one previous-token head that the ablation removes."""
    c_n = len(inside_models.CONDITIONS)
    scores = np.zeros((c_n, len(SCORED), 1, HEADS, W))
    sink, prev = SCORED.index("first-token (sink)"), SCORED.index("previous-token")
    for c, condition in enumerate(inside_models.CONDITIONS):
        if condition != "untrained":
            scores[c, sink, 0, :sinks] = 0.8
        if condition in ("trained", "shuffled"):
            scores[c, prev, 0, HEADS - 1] = 0.7
    distances = np.arange(window) if model == "smollm2" else np.arange(-(window - 1), window)
    content = np.full((c_n, 1, HEADS, W, distances.size), 0.01)
    content[..., -1] = np.nan
    moved = np.zeros((2, 1, HEADS, W))
    moved[0, 0, :sinks] = 0.9
    return {"distances": distances, "by_distance": np.full((c_n, 1, HEADS, distances.size), 0.1),
            "scores": scores, "content": content, "moved": moved}  # fmt: skip


def _rope() -> dict[str, np.ndarray]:
    pairs = 8
    share = np.tile(np.linspace(0.5, 1.5, pairs) / pairs, (1, HEADS, 1))
    share /= share.sum(axis=-1, keepdims=True)
    flat = np.full((1, HEADS, pairs), 1 / pairs)
    d = np.arange(inside_models.DECAY_MAX + 1)
    return {"q_norms": share, "k_norms": share, "share": share,
            "inv_freq": 1e4 ** (-np.arange(pairs) / pairs), "threshold": np.float64(0.2 / pairs),
            "control_q_norms": flat, "control_k_norms": flat, "control_share": flat,
            "decay_distances": d, "decay_real": np.cos(d / 100.0)[None, None].repeat(HEADS, 1),
            "decay_ones": np.cos(d / 200.0), "decay_gauss_mean": np.zeros(d.size),
            "decay_gauss_std": np.full(d.size, 0.1)}  # fmt: skip


def _results(smol_sinks: list[int], mini_sinks: list[int]) -> tuple[dict, dict]:
    smol = {w: inside_models._result("smollm2", _heads("smollm2", w, n) | _rope())
            for w, n in zip(inside_models.WINDOWS, smol_sinks, strict=True)}  # fmt: skip
    mini = {w: inside_models._result("minilm", _heads("minilm", w, n))
            for w, n in zip(inside_models.WINDOWS, mini_sinks, strict=True)}  # fmt: skip
    return smol, mini


def _plain(line: str) -> None:
    assert len(line.split()) <= FIRST_SENTENCE_WORDS, line
    assert not set(line) & FORMULA_CHARS, line


def test_a_count_that_falls_with_the_window_is_named_with_its_numbers() -> None:
    page = inside_page(_results([3, 2, 1, 1], [2, 1, 0, 0]), window=64)
    line = page.verdict.first_line
    _plain(line)
    assert "fall with window length" in line
    evidence = dict(page.verdict.evidence)
    assert (
        "3, 2, 1, 1 of 4 at 32, 64, 128, 256 tokens (over half only at 32 tokens)"
        in (evidence["First-token heads, by window"])
    )
    assert "2, 1, 0, 0 of 4" in evidence["MiniLM-L6 on [CLS]"]
    # the previous-token head vanishes under the ablation at every length: said so
    assert (
        "0, 0, 0, 0 and 0, 0, 0, 0: they attend by position"
        in (evidence["Previous-token and self heads"])
    )
    assert page.window == 64 and "64 tokens" in page.distance[0].chart.to_dict()["title"]["text"]


def test_a_count_over_half_at_every_length_is_said_to_hold() -> None:
    page = inside_page(_results([3, 3, 3, 4], [0, 0, 0, 0]))
    _plain(page.verdict.first_line)
    assert "stay over half at every length" in page.verdict.first_line
    assert "over half only" not in page.verdict.sentence


def test_one_window_alone_names_its_length() -> None:
    smol, mini = _results([3, 2, 1, 1], [2, 1, 0, 0])
    page = inside_page((smol[128], mini[128]))
    _plain(page.verdict.first_line)
    assert page.verdict.first_line.endswith("1 of 4 at 128 tokens.")
    with pytest.raises(ValueError, match="No 64-token results; computed: 128 tokens"):
        inside_page((smol[128], mini[128]), window=64)


def test_the_reading_follows_the_ablation_and_the_moved_control() -> None:
    """SmolLM2's measured 32-token numbers (141 trained, 126 with RoPE off, 107 on slot 0 and 0
    on the window's first token after 16 other tokens) and the other outcomes the tests allow."""
    assert _drawn_by(141, 126, 107, 0, signal="RoPE") == (
        "RoPE is not needed; they follow the first slot, not the word there"
    )
    assert _drawn_by(15, 30, 5, 0, signal="the table").endswith(
        "the token draws them with no position added, not at another slot"
    )
    assert _drawn_by(20, 2, 0, 18, signal="RoPE") == "they need RoPE; they follow the token"
    assert _drawn_by(3, 3, 3, 0, signal="RoPE").startswith("too few")


def test_the_distance_charts_say_what_their_ends_are_and_the_downloads_read_back() -> None:
    page = inside_page(_results([3, 2, 1, 1], [2, 1, 0, 0]), window=32)
    smol_note, mini_note = page.distance_notes
    assert "A[31, 0] alone, the last query on the sink, not distance" in smol_note
    assert "[SEP] attending to [CLS]" in mini_note and "Δ = ±31" in mini_note
    frame = page.distance[0].data
    assert frame["x"].max() == 30  # Δ = 31 is the sink's one cell: left out of the chart
    names = [name for name, _data, _mime in page.downloads]
    assert names == ["inside_findings.json", "smollm2_inside_32.npz", "minilm_inside_32.npz"]
    found = json.loads(page.downloads[0][1])
    assert found["smollm2"]["64"]["trained"]["pooled"]["first-token (sink)"] == 2
    with np.load(io.BytesIO(page.downloads[1][1]), allow_pickle=False) as arrays:
        assert arrays["scores"].shape == (4, len(SCORED), 1, HEADS, W)
        assert list(arrays["conditions"]) == list(inside_models.CONDITIONS)
    table = page.ablations.set_index(["model", "window", "class"])
    assert table.loc[("SmolLM2", 32, "previous-token"), "ablated"] == "0"
    assert table.loc[("SmolLM2", 32, "first-token (sink)"), "ablated"] == "3"
    assert (
        "3 heads on slot 0, 0 on the window's first token"
        in (table.loc[("SmolLM2", 32, "moved: 16 tokens of other text first"), "note"])
    )


def test_every_length_is_computed_in_turn_and_says_where_it_is(tmp_path, monkeypatch) -> None:
    """The page's one heavy job: each missing length computed in turn (each cached when done,
    so a second call computes nothing), its progress naming the length and its place."""
    monkeypatch.delenv("POSVIZ_LAB_SECRET", raising=False)
    computed: list[int] = []

    def compute(progress, *, window, **_wait):
        computed.append(window)
        progress(0.5, "running")
        return _heads("minilm", window, 1)

    monkeypatch.setitem(inside_models._COMPUTE, "minilm", compute)
    said: list[tuple[float, str]] = []
    found = inside_models.inside_all_windows(
        "minilm", root=tmp_path, progress=lambda f, what: said.append((f, what))
    )
    assert sorted(found) == list(inside_models.WINDOWS) == computed
    assert (0.375, "64-token windows (2 of 4): running") in said
    assert set(inside_models.cached_windows("minilm", root=tmp_path)) == set(found)
    inside_models.inside_all_windows("minilm", root=tmp_path)
    assert computed == list(inside_models.WINDOWS)  # the second time, all from the cache


def test_a_server_cap_on_the_window_computes_and_shows_only_lengths_under_it(monkeypatch) -> None:
    from posviz.page_models.inside_models import shown_window
    from posviz.settings import settings

    monkeypatch.setenv("POSVIZ_INSIDE_MAX_WINDOW", "100")
    assert inside_models.windows_up_to(settings().inside_max_window) == (32, 64)
    assert inside_models.windows_up_to(8) == (32,)  # never none: the shortest is the page
    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    monkeypatch.delenv("POSVIZ_INSIDE_MAX_WINDOW")
    assert inside_models.windows_up_to(settings().inside_max_window)[-1] == 128
    assert shown_window(64, [32, 64]) == (64, None)
    window, note = shown_window(256, [32, 64])  # a link from a server that computes more
    assert window == 64 and "POSVIZ_INSIDE_MAX_WINDOW" in note and "32, 64 tokens" in note


def test_a_first_visit_draws_from_the_cached_length_then_computes_the_other_below(
    monkeypatch,
) -> None:
    """Two lengths wanted, only 32 tokens cached: the page draws its answer from 32 tokens with
    a line saying 64 is computed below, asks for 64 only once everything is drawn (a visitor
    who leaves then keeps the drawn page), and once 64 is done draws the page from both."""
    from conftest import app_test

    import posviz.ui.answer
    import posviz.ui.inside as glue
    from posviz.jobs import JobCancelled
    from posviz.ui.cache import clear_caches

    monkeypatch.setenv("POSVIZ_INSIDE_MAX_WINDOW", "64")
    results = dict(zip(("smollm2", "minilm"), _results([3, 2, 1, 1], [2, 1, 0, 0]), strict=True))
    cached = {"smollm2": {32}, "minilm": {32}}
    events: list[object] = []
    leaves = True

    def compute(model, *, windows, progress, **_wait):
        events.append((model, windows))
        progress(0.5, f"{windows[0]}-token windows (1 of 1): running")
        if leaves:
            raise JobCancelled("the visitor left")
        cached[model] |= set(windows)
        return {w: results[model][w] for w in windows}

    drawn = posviz.ui.answer.next_question
    monkeypatch.setattr(posviz.ui.answer, "next_question", lambda p: events.append(drawn(p)))
    monkeypatch.setattr(glue, "cached_windows", lambda m: {w: results[m][w] for w in cached[m]})
    monkeypatch.setattr(glue, "inside_all_windows", compute)
    monkeypatch.setattr(glue, "rope_activation", lambda window, what: None)  # not this test's

    clear_caches()  # a page model cached in this process by an earlier render of the real
    # results has the same key ("smollm2+minilm@32") and would be drawn instead of these
    at = app_test("pages/inside_models.py")
    assert not at.exception, [e.value for e in at.exception]
    assert events == [None, ("smollm2", (64,))]  # the page drawn, then 64 asked for
    alone = inside_page((results["smollm2"][32], results["minilm"][32]))
    assert alone.verdict.first_line.endswith("3 of 4 at 32 tokens.")
    assert any(alone.verdict.first_line in m.value for m in at.markdown)
    captions = [c.value for c in at.caption]
    assert alone.hero_note in captions
    assert any(
        "rests on windows of 32 tokens. Windows of 64 tokens are being computed at the bottom" in c
        for c in captions
    ), captions

    events.clear()
    leaves = False  # a visitor who stays: 64 computed, then the page from both lengths
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert events == [None, ("smollm2", (64,)), ("minilm", (64,)), None]
    both = inside_page((results["smollm2"], results["minilm"]))
    assert "fall with window length" in both.verdict.first_line
    assert any(both.verdict.first_line in m.value for m in at.markdown)
    assert not any("being computed" in c.value for c in at.caption)
