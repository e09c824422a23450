"""The sibling diff (``posviz.analysis.sibling``): the scale estimator against hand-made tables,
the controls that must not call unrelated tables siblings (and win when they do), the MiniLM
L6/L3 numbers read from the real files, and the page opened on its own."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

from posviz.analysis.headlines import FIRST_SENTENCE_WORDS, FORMULA_CHARS, first_sentence
from posviz.analysis.sibling import (
    COINCIDING_CONTROLS,
    MIN_SCALED_ROWS,
    ONLY_SCALED,
    Controls,
    best_scale,
    direction,
    fp16_exact,
    fp16_share,
    pair_stats,
    random_like,
    row_residual,
    scale_fit,
    shuffled_pairing,
    sibling_diff,
)
from posviz.encodings.sinusoidal import sinusoidal


def _made_siblings(scale: float = 0.9, boundary: int = 40, noise: float = 0.3):
    """B = scale·A on rows ≥ boundary, A plus noise of ``noise``·‖row‖ on the rows before it."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((100, 16))
    b = scale * a
    kick = rng.standard_normal((boundary, 16))
    kick *= (
        noise
        * np.linalg.norm(a[:boundary], axis=1, keepdims=True)
        / np.linalg.norm(kick, axis=1, keepdims=True)
    )
    b[:boundary] = a[:boundary] + kick
    return a, b


def test_best_scale_is_the_least_squares_solution():
    rng = np.random.default_rng(1)
    a, noise = rng.standard_normal((30, 5)), rng.standard_normal((30, 5))
    b = 1.7 * a + 0.1 * noise
    s, residual = best_scale(a, b)
    # the normal equation of one unknown, solved by numpy's general least-squares routine
    expected = np.linalg.lstsq(a.reshape(-1, 1), b.reshape(-1), rcond=None)[0][0]
    assert s == pytest.approx(expected, rel=1e-12)
    assert residual == pytest.approx(np.linalg.norm(b - expected * a) / np.linalg.norm(b))
    assert best_scale(a, 0.5 * a) == pytest.approx((0.5, 0.0), abs=1e-12)


def test_row_residual_is_the_sine_of_the_angle():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    b = np.array([[-3.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(row_residual(a, b), [0.0, np.sqrt(0.5), 0.0, 1.0], atol=1e-12)


def test_a_hand_made_sibling_recovers_its_scale_and_its_boundary():
    a, b = _made_siblings(scale=0.9, boundary=40)
    diff = sibling_diff(a, b, names=("A", "B"))
    assert diff.pair.scale == pytest.approx(0.9, rel=1e-12)
    assert diff.pair.scale_residual < 1e-12
    assert diff.seams == (40,)  # found in the data
    assert diff.pair.scaled_rows == 60 and diff.pair.kind == "siblings"
    assert diff.controls.passed
    sentence = diff.verdict.sentence
    assert sentence.startswith("Positions 0–39 moved; positions 40–99 only shrank together.")
    assert len(first_sentence(sentence).split()) <= FIRST_SENTENCE_WORDS


def test_rows_scaled_by_different_factors_are_not_called_siblings():
    a, b = _made_siblings(scale=0.9, boundary=40)
    b[40:70] *= 1.5  # same directions, two scales
    diff = sibling_diff(a, b)
    assert diff.pair.kind == "kept direction"
    assert "share no single scale" in diff.verdict.sentence


@pytest.mark.slow
def test_the_controls_do_not_call_minilm_and_unrelated_tables_siblings():
    from posviz import load_table

    minilm = load_table("bundled").matrix
    for other in (sinusoidal(512, 384), *random_like(minilm, draws=3)):
        stats = pair_stats(minilm, other)
        assert stats.kind == "unrelated" and stats.scaled_rows < MIN_SCALED_ROWS
    diff = sibling_diff(minilm, sinusoidal(512, 384), names=("MiniLM", "sinusoid"))
    assert diff.verdict.sentence.startswith("These are not siblings")


def test_a_control_that_passes_too_takes_the_claim_away():
    a, b = _made_siblings()
    fooled = Controls(sinusoid=pair_stats(a, 2.0 * a), random=())  # a "control" that is a copy
    diff = sibling_diff(a, b, controls=fooled)
    assert not diff.controls.passed
    assert diff.verdict.sentence.startswith("The controls pass this test too")


def test_a_scaled_copy_and_the_same_table_are_told_apart():
    a, _ = _made_siblings()
    assert sibling_diff(a, 0.5 * a).verdict.sentence.startswith(
        "The two tables are one table times 0.5000."
    )
    assert sibling_diff(a, a.copy()).verdict.sentence.startswith(
        "The two tables are the same table."
    )


def test_tables_of_two_shapes_are_refused():
    with pytest.raises(ValueError, match="one shape"):
        sibling_diff(np.ones((4, 2)), np.ones((5, 2)))


@pytest.mark.slow
def test_minilm_l3_is_minilm_l6_scaled_past_row_128():
    """The issue's measurement, recomputed from the two real files: rows 128–511 of L3 are
    0.98580 × L6 (relative residual 1.6e-4), rows 0–127 differ by a median 47 % of their norm.
    Tolerances: the scale to 5e-6 and the residual to 5e-6 (the two digits the issue quotes);
    the median change to half a percent."""
    from posviz import load_table

    l6 = load_table("bundled").matrix
    l3 = load_table("bundled:paraphrase-MiniLM-L3-v2").matrix
    diff = sibling_diff(l6, l3, names=("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2"))
    assert diff.seams == (128,) and diff.pair.scaled_rows == 384
    assert diff.pair.scale == pytest.approx(0.98580, abs=5e-6)
    assert diff.pair.scale_residual == pytest.approx(1.6e-4, abs=5e-6)
    assert diff.verdict.numbers["median_moved_change"] == pytest.approx(0.47, abs=0.005)
    assert diff.margin is not None and diff.margin[0] < ONLY_SCALED < diff.margin[1]
    assert diff.verdict.sentence.startswith(
        "Positions 0–127 moved; positions 128–511 only shrank together."
    )
    assert diff.controls.passed


@pytest.mark.slow
def test_the_page_leads_with_the_verdict():
    at = app_test("pages/sibling_diff.py", timeout=180)
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "What did fine-tuning change?"
    first = at.markdown[0].value
    assert "Positions 0–127 moved; positions 128–511 only shrank together." in first
    assert any("Why 128?" in m.value for m in at.markdown)
    lines = [m.value for m in at.markdown]
    assert any("One factor, 0.98580, scales L3" in m for m in lines), lines
    assert any("L3's rows shrank" in m for m in lines), lines
    assert len(at.dataframe) == 1
    links = {link.proto.page for link in at.main.get("page_link")}
    assert {"learned", "lab_rare_rows"} <= links  # the seam's page and the lab's question


def test_the_lab_rare_rows_question_links_here():
    from posviz.lab.present.answer import REAL_CHECKPOINTS
    from posviz.navigation import all_pages

    page, label = REAL_CHECKPOINTS["rare_rows"]
    assert page == "pages/sibling_diff.py" and page in {spec.path for spec in all_pages()}
    assert label.startswith("The same effect in real checkpoints")


@pytest.mark.slow
def test_the_page_says_what_to_do_with_tables_of_two_shapes():
    query = {"sib_b_src": "sinusoid", "sib_b_n": "64", "sib_b_d": "16"}
    at = app_test("pages/sibling_diff.py", query=query, timeout=180)
    assert_no_exception(at)
    assert any("of one shape" in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.slow
def test_the_learned_page_links_its_seam_here():
    at = app_test("pages/learned.py", timeout=180)
    assert_no_exception(at)
    links = {link.proto.page: link.proto.label for link in at.main.get("page_link")}
    assert links.get("sibling_diff", "").startswith("Why a seam?")  # MiniLM-L6 has a seam


def test_controls_that_lie_on_one_another_are_drawn_as_one_line_named_for_both():
    """Two grey lines at one height read as one (the hero's MiniLM controls both sit at ≈ 1):
    they are drawn once, the legend naming both; controls that differ keep a line each."""
    a, b = _made_siblings()
    rng = np.random.default_rng(3)
    other = rng.standard_normal(a.shape)
    same = Controls(sinusoid=pair_stats(a, other), random=(pair_stats(a, other),))
    series = list(dict.fromkeys(sibling_diff(a, b, controls=same).rows["series"]))
    assert series[2:] == [COINCIDING_CONTROLS]
    apart = Controls(sinusoid=pair_stats(a, other), random=(pair_stats(a, 2.0 * a),))
    assert len(set(sibling_diff(a, b, controls=apart).rows["series"])) == 4


# ------------------------------------------------- the global-scale explanation (issue 33 item 5)


def test_one_factor_fitted_on_another_matrix_and_its_shuffled_control():
    a, b = _made_siblings(scale=0.9, boundary=40)
    words = np.random.default_rng(5).standard_normal((50, 16))
    fit = scale_fit(words, 0.9 * words, name="words")
    assert fit.scaled_rows == 50 and fit.scale == pytest.approx(0.9, rel=1e-12)
    assert fit.same_factor(sibling_diff(a, b).pair.scale) and not fit.same_factor(0.95)
    assert fit.control_rows == 0  # shuffled rows of an unrelated Gaussian never line up
    # the control can fail: rows that are all one vector line up whatever the pairing
    same = np.tile(words[:1], (50, 1))
    assert scale_fit(same, 0.9 * same, name="copies").control_rows == 50
    one = scale_fit(words[0], 0.9 * words[0], name="a vector")  # a 1-D weight is one row
    assert (one.rows, one.scaled_rows, one.control_rows) == (1, 1, 0)


def test_the_shuffled_pairing_moves_every_row():
    b = np.arange(20.0)[:, None] * np.ones((1, 3))
    shuffled = shuffled_pairing(b)
    assert sorted(shuffled[:, 0]) == list(range(20)) and (shuffled[:, 0] != b[:, 0]).all()
    row = np.arange(6.0)[None]
    assert (shuffled_pairing(row) != row).all()


def test_fp16_exactness_and_which_side_was_multiplied():
    grid = np.float16(np.random.default_rng(0).standard_normal((64, 8))).astype(np.float32)
    assert fp16_exact(grid).all() and fp16_share(grid) == 1.0
    assert not fp16_exact(np.float32([1 + 2**-12, 1e6]))[0]
    assert not fp16_exact(np.float32([1e6]))[0]  # beyond float16's range (65504)
    scaled = np.ones(64, dtype=bool)
    moved = direction(grid, np.float32(0.9858) * grid, scaled, factor=0.9858, unrelated=grid)
    assert moved.a_scaled == 1.0 and moved.b_scaled < 0.01 and moved.shrunk == "B"
    back = direction(np.float32(0.9858) * grid, grid, scaled, factor=0.9858, unrelated=grid)
    assert back.shrunk == "A"
    # the premise can fail: a factor of 0.5 keeps float16 values on the grid, so it tells nothing
    half = direction(grid, grid * np.float32(0.5), scaled, factor=0.5, unrelated=grid)
    assert half.scaled_again == 1.0 and half.shrunk is None


def test_the_explanation_on_constructed_matrices():
    from posviz.page_models.sibling_diff import MATRICES, scale_explanation

    rng = np.random.default_rng(1)
    factor = np.float32(0.9858)
    l6 = {name: np.float16(rng.standard_normal((n, 16))).astype(np.float32)
          for (name, _), n in zip(MATRICES, (64, 200, 2, 1, 1), strict=True)}  # fmt: skip
    l3 = {name: m * factor for name, m in l6.items()}
    l3["positions"][:16] += rng.standard_normal((16, 16)).astype(np.float32)  # trained rows
    l3["LayerNorm weight"] = l6["LayerNorm weight"] + 0.5  # trained, not shrunk
    matrices = {name: (l6[name], l3[name]) for name, _ in MATRICES}
    matrices["unrelated"] = (rng.standard_normal((32, 32)).astype(np.float32), None)
    why = scale_explanation(matrices)
    assert why.factor == pytest.approx(0.9858, abs=1e-6)
    assert why.scale_verdict.first_line.startswith("One factor, 0.98580, scales L3")
    assert why.direction_verdict.first_line.startswith("L3's rows shrank")
    for verdict in (why.scale_verdict, why.direction_verdict):
        line = verdict.first_line
        assert len(line.split()) <= FIRST_SENTENCE_WORDS and not set(line) & FORMULA_CHARS
    fits = {f.name: f for f in why.fits}
    assert fits["positions"].scaled_rows == 48 and fits["LayerNorm weight"].scaled_rows == 0
    assert str(48) in why.scale_caption and "LayerNorm" in why.scale_caption
    l3["word embeddings"] = l6["word embeddings"] * np.float32(0.9)  # another factor
    matrices["word embeddings"] = (l6["word embeddings"], l3["word embeddings"])
    assert "does not carry over" in scale_explanation(matrices).scale_verdict.first_line


@pytest.mark.slow
def test_minilm_l3s_untouched_rows_shrank_by_one_factor():
    """The issue's measurement from the two real files: the positions' factor 0.98580 also
    scales 1,363 word rows and one token-type row; the embedding LayerNorm does not follow it;
    L6's only-scaled position rows are all float16 values (L3's none, L6's moved rows ~0.01 %)."""
    from posviz.page_models.sibling_diff import minilm_explanation

    why = minilm_explanation()
    fits = {f.name: f for f in why.fits}
    assert why.factor == pytest.approx(0.98580, abs=5e-6)
    assert fits["word embeddings"].scaled_rows == 1363 and fits["token type"].scaled_rows == 1
    assert all(fits[n].same_factor(why.factor) for n in ("word embeddings", "token type"))
    assert fits["LayerNorm weight"].scaled_rows == 0 and fits["LayerNorm bias"].scaled_rows == 0
    assert max(f.control_rows for f in why.fits) == 0
    assert why.positions.a_scaled == 1.0 and why.positions.b_scaled < 1e-3
    assert why.positions.a_moved < 1e-3 and why.positions.scaled_again < 0.01
    assert why.positions.shrunk == why.words.shrunk == "B"


def test_share_bars_start_at_the_log_floor_and_keep_labels_inside_the_chart():
    import pandas as pd

    from posviz.charts.sibling_scale import LOG_FLOOR, percent, share_bars_figure

    frame = pd.DataFrame({"item": ["on", "off"], "kind": ["evidence", "control"],
                          "share": [1.0, 0.0], "label": ["100 %", "0 %"]})  # fmt: skip
    spec = share_bars_figure(frame, title="t", x_title="x", name="n", log=True).chart.to_dict()
    bars, inside, after = spec["layer"]
    assert bars["encoding"]["x"]["scale"]["type"] == "log" and bars["encoding"]["x2"]["field"]
    assert inside["mark"]["align"] == "right" and after["mark"]["align"] == "left"
    assert "expr" in after["mark"]["color"]  # a label on the page's background reads in dark
    data = next(iter(spec["datasets"].values()))
    assert [row["base"] for row in data] == [LOG_FLOOR, LOG_FLOOR]
    assert [row["inside"] for row in data] == [True, False]  # a full bar carries its label
    assert percent(0) == "0 %" and percent(6e-6) == "0.0006 %" and percent(0.24) == "24.00 %"
