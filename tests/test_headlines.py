"""Each page's verdict sentence is computed from the numbers it quotes, and says only what they
support."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posviz.analysis.evidence import evidence
from posviz.analysis.headlines import (
    FIRST_SENTENCE_WORDS,
    Verdict,
    find_seam,
    first_sentence,
    layers_verdict,
    learned_verdict,
    lookup_verdict,
    neighbour_cosines,
    plain_table,
    probe_verdict,
    shown_table,
    sinusoid_verdict,
    verdict_rows,
)
from posviz.analysis.probes import ProbeReport
from posviz.encodings.sinusoidal import MAX_POSITIONS, sinusoidal


def test_sinusoid_verdict_quotes_its_measured_wavelengths_and_rotation_error():
    verdict = sinusoid_verdict(sinusoidal(128, 512))
    assert verdict.numbers["pairs"] == 256
    assert verdict.numbers["fastest_wavelength"] == pytest.approx(2 * np.pi)
    assert verdict.numbers["rotation_error"] < 1e-12
    assert verdict.numbers["similarity_spread_over_p"] < 1e-12
    assert "256 sin/cos pairs" in verdict.sentence and "6.28" in verdict.sentence


@pytest.mark.parametrize("n", [2, 3, MAX_POSITIONS])
def test_sinusoid_verdict_works_from_the_smallest_to_the_largest_table_allowed(n):
    """The rotation check stays inside the table the page may show (a clamped link once asked
    it for MAX_POSITIONS + 1 rows and raised)."""
    verdict = sinusoid_verdict(sinusoidal(verdict_rows(n), 8), n_positions=n)
    assert verdict.numbers["rotation_error"] < 1e-9


def test_sinusoid_verdict_says_why_sin_and_cos_after_a_plain_first_sentence():
    verdict = sinusoid_verdict(sinusoidal(64, 16))
    assert len(verdict.first_sentence.split()) <= FIRST_SENTENCE_WORDS
    assert "a sine alone is ambiguous" in verdict.sentence


def test_first_sentence_ends_at_a_full_stop_not_a_decimal_point():
    assert first_sentence("Turns every 6.28 positions. Then 0.5.") == "Turns every 6.28 positions."
    assert first_sentence("No stop at all") == "No stop at all"


def test_a_verdict_defines_the_terms_it_uses_and_only_those():
    terms = Verdict("Fits well. R² = 0.9, MAE 3 positions.").terms
    assert len(terms) == 2 and terms[0].startswith("R²") and terms[1].startswith("MAE")
    assert Verdict("Plain words only.").terms == []


def _seamed_table(n: int = 256, seam: int = 100, d: int = 32) -> np.ndarray:
    """A smooth table with one jump: the rows from ``seam`` on are turned by 90° in 2 dims."""
    table = sinusoidal(n, d, base=1e6) + 2.0  # slow, all-positive: neighbours very alike
    table[seam:, :2] = table[seam:, :2] @ np.array([[0.0, -1.0], [1.0, 0.0]]) - 4.0
    return table


def test_a_seam_is_found_where_the_neighbour_cosine_drops_and_nowhere_in_a_sinusoid():
    seam = find_seam(_seamed_table())
    assert seam is not None and seam.first <= 99 and seam.last >= 100
    assert seam.lowest == pytest.approx(neighbour_cosines(_seamed_table())[99])
    assert find_seam(sinusoidal(512, 384)) is None


def test_learned_verdict_names_the_seam_and_the_outlier_row():
    table = _seamed_table()
    table[0, 3] = 100.0  # one huge value, as MiniLM's row 0
    verdict = learned_verdict(table, name="Test")
    assert verdict.numbers["outlier_row"] == 0
    assert "seam runs between positions 99 and 100" in verdict.sentence
    assert "row 0" in verdict.sentence


def _report(values, control) -> ProbeReport:
    mae = evidence("MAE", values, control, control_label="random table", higher_is_better=False)
    return ProbeReport(result=None, control=None, mae=mae)  # type: ignore[arg-type]


def test_probe_verdict_follows_the_evidence_not_the_wording():
    better = probe_verdict("MiniLM", _report([20, 22, 21, 23, 19], [180, 190, 170, 185, 175]))
    assert better.sentence.startswith("Yes for MiniLM")
    assert better.numbers["mae"] == pytest.approx(21.0)
    same = probe_verdict("X", _report([20, 30, 25, 22, 28], [21, 29, 26, 24, 27]))
    assert same.sentence.startswith("Not measurably") and "no difference" in same.sentence


def test_layers_verdict_compares_the_last_layer_with_its_shuffled_control():
    scores = pd.DataFrame(
        {
            "layer": [0, 6],
            "r2": [0.98, 0.46],
            "r2_std": [0.01, 0.07],
            "control_r2": [0.0, -0.01],
            "control_r2_std": [0.01, 0.01],
        }
    )
    verdict = layers_verdict(scores)
    assert verdict.sentence.startswith("Yes") and "0.46 ± 0.07 after layer 6" in verdict.sentence
    scores.loc[1, "r2"] = 0.01
    assert layers_verdict(scores).sentence.startswith("Not measurably")


def test_lookup_verdict_counts_moved_and_untouched_rows():
    changes = pd.DataFrame(
        {"used": [True, True, False, False], "learned_change": [0.3, 0.2, 0.0, 0.0]}
    )
    verdict = lookup_verdict(0.0, changes)
    assert "bit for bit" in verdict.sentence and "2 rows moved" in verdict.sentence
    assert verdict.numbers["unused_max"] == 0.0


def test_family_verdicts_quote_their_own_numbers():
    from posviz.analysis import t5_numbers
    from posviz.analysis.headlines import (
        alibi_verdict,
        bucket_index_matrix,
        compare_verdict,
        t5_verdict,
        vit_verdict,
    )
    from posviz.analysis.vit import patch_similarity_grid, sincos_2d_table
    from posviz.encodings.alibi import alibi_slopes
    from posviz.encodings.t5 import t5_relative_bucket

    alibi = alibi_verdict(alibi_slopes(8))
    assert alibi.numbers["steepest"] == 0.5 and alibi.numbers["gentlest"] == 2**-8
    assert alibi.numbers["half_near"] == pytest.approx(np.log(2) / 0.5)
    relative, curves = t5_numbers.bucket_curves(200, num_buckets=32, max_distance=128)
    t5 = t5_verdict(relative, curves["causal (decoder)"], max_distance=128)
    assert t5.numbers["exact_up_to"] == 15  # T5's causal half: 16 exact buckets, then log
    index = bucket_index_matrix(6, bidirectional=True, num_buckets=32, max_distance=128)
    assert index[2, 5] == t5_relative_bucket(np.array([3]), num_buckets=32)[0]
    grid = patch_similarity_grid(sincos_2d_table(6, 6, 64), (6, 6))
    vit = vit_verdict(grid, name="a 2-D table")
    assert vit.sentence.startswith("Yes") and vit.numbers["same_row_or_column"] > 0.5
    summary = pd.DataFrame({"family": ["ALiBi", "learned"], "unseen at k=1024": [0.0, 1.0]})
    verdict = compare_verdict(summary, trained=512)
    assert "ALiBi stay within" in verdict.sentence and "learned 100%" in verdict.sentence


def test_a_shown_table_keeps_numbers_typed_formats_them_and_puts_verdicts_first():
    """/compare's summary once mixed "—" into number columns: Arrow failed and Streamlit showed
    16-digit text. Missing numbers stay NaN underneath and read "—"."""
    frame = pd.DataFrame(
        {"family": ["a", "b"], "mean_margin": [0.123456789, np.nan], "beyond L": ["ok", "ends"]}
    )
    plain = plain_table(frame, first=("family", "beyond L"))
    assert list(plain.columns) == ["family", "beyond L", "mean margin"]
    assert plain["mean margin"].dtype == np.float64
    html = shown_table(frame, first=("family", "beyond L")).to_html()
    assert ">0.123<" in html and ">—<" in html and "0.123456789" not in html
    import pyarrow as pa

    pa.Table.from_pandas(plain)  # Arrow converts every column as it is


def _every_verdict() -> dict[str, str]:
    """Each page's verdict (or answer) from small inputs, every branch of its opening."""
    from types import SimpleNamespace

    from posviz.analysis import p_rope_numbers, t5_numbers
    from posviz.analysis.evidence import Spread
    from posviz.analysis.headlines import (
        alibi_verdict,
        compare_verdict,
        concat_verdict,
        nope_verdict,
        permutation_verdict,
        rope_verdict,
        t5_verdict,
        vit_verdict,
    )
    from posviz.analysis.vit import patch_similarity_grid, sincos_2d_table
    from posviz.encodings.alibi import alibi_slopes
    from posviz.encodings.p_rope import PRopeConfig
    from posviz.encodings.rope import rope_frequencies

    out = {}
    for name, values, control in [
        ("better", [20, 22, 21], [180, 190, 170]),
        ("worse", [180, 190, 170], [20, 22, 21]),
        ("same", [20, 30, 25], [21, 29, 26]),
    ]:
        out[f"probing {name}"] = probe_verdict("MiniLM-L6 (bundled)", _report(values, control))
    scores = pd.DataFrame({"layer": [0, 6], "r2": [0.98, 0.46], "r2_std": [0.01, 0.07],
                           "control_r2": [0.0, 0.0], "control_r2_std": [0.01, 0.01]})  # fmt: skip
    out["layers yes"] = layers_verdict(scores)
    out["layers no"] = layers_verdict(scores.assign(r2=[0.98, 0.0]))
    changes = pd.DataFrame({"used": [True, False], "learned_change": [0.3, 0.0]})
    out["embedding_lookup"] = lookup_verdict(0.0, changes)
    for inside in (0.01, 0.5, 0.9):
        spread = Spread(mean=0.5, std=0.05, n=8, low=0.4, high=0.6)
        report = SimpleNamespace(pe_in_we=inside, k_we=10, k_pe=5, pe_in_we_chance=0.1,
                                 pe_in_random=spread)  # fmt: skip
        out[f"add_vs_concat {inside}"] = concat_verdict(report, name="MiniLM", n_positions=512)
    out["add_vs_concat chance"] = concat_verdict(
        SimpleNamespace(pe_in_we=0.2, k_we=10, k_pe=5, pe_in_we_chance=0.1, pe_in_random=None),
        name="MiniLM",
        n_positions=512,
    )
    tokens = ["[CLS]", "the", "cat", "[SEP]"]
    permuted = SimpleNamespace(tokens_a=tokens, tokens_b=tokens[::-1], max_diff_without=1e-6,
                               max_diff_with=0.5, rounding_scale=1e-7)  # fmt: skip
    out["permutation"] = permutation_verdict(permuted)
    out["rope"] = rope_verdict(rope_frequencies(64), name="Llama")
    out["alibi"] = alibi_verdict(alibi_slopes(8))
    relative, curves = t5_numbers.bucket_curves(200, num_buckets=32, max_distance=128)
    out["t5_buckets"] = t5_verdict(relative, curves["causal (decoder)"], max_distance=128)
    positions = np.arange(8)
    out["nope"] = nope_verdict(positions, {"causal: measured": 1 / np.sqrt(positions + 1)})
    grid = patch_similarity_grid(sincos_2d_table(6, 6, 64), (6, 6))
    out["vit_grid yes"] = vit_verdict(grid, name="a 2-D table")
    out["vit_grid no"] = vit_verdict(np.zeros_like(grid), name="zeros")
    for unseen in ([0.0, 1.0], [0.0, 0.0], [1.0, 1.0]):
        summary = pd.DataFrame({"family": ["ALiBi", "learned"], "unseen at k=1024": unseen})
        out[f"compare {unseen}"] = compare_verdict(summary, trained=512)
    for fraction in (1.0, 0.0, 0.25):
        config = PRopeConfig(model_type="manual", head_dim=64, fraction=fraction, base=1e4)
        out[f"p_rope {fraction}"] = p_rope_numbers.answer(config)
    out["sinusoidal"] = sinusoid_verdict(sinusoidal(64, 16))
    out["learned"] = learned_verdict(_seamed_table(), name="Test")
    return {k: v if isinstance(v, str) else v.sentence for k, v in out.items()}


#: explorer pages whose verdict needs real weights, checked by a test of their own.
VERDICTS_ELSEWHERE = {
    "sibling_diff": "tests/test_sibling.py::test_the_page_leads_with_the_verdict",
    "inside_models": "tests/test_gguf_cache.py::test_the_page_models_verdict_is_computed_and_plain",
}


def test_every_explorer_page_of_the_registry_has_its_verdict_checked(root):
    """Read from the page registry (a new family's page included): each page that computes its
    answer has a case above (named by its URL segment) or a named test elsewhere that exists."""
    from posviz.navigation import explorer_pages

    checked = {name.split()[0] for name in _every_verdict()}
    for spec in explorer_pages():
        if spec.url_path in VERDICTS_ELSEWHERE:
            path, _, test = VERDICTS_ELSEWHERE[spec.url_path].partition("::")
            assert f"def {test}(" in (root / path).read_text(), VERDICTS_ELSEWHERE[spec.url_path]
        else:
            assert spec.url_path in checked, f"{spec.url_path}: add its verdict to _every_verdict"
    assert not checked - {spec.url_path for spec in explorer_pages()}, "a case names no page"


@pytest.mark.parametrize(("name", "sentence"), sorted(_every_verdict().items()))
def test_every_verdict_opens_with_a_plain_sentence_of_at_most_15_words(name, sentence):
    first = first_sentence(sentence)
    assert first != sentence, f"{name}: the numbers follow in their own sentences"
    assert first.endswith(".") and len(first.split()) <= FIRST_SENTENCE_WORDS, first
    assert not set(first) & set("²‖σ±"), f"{name}: notation belongs after the first sentence"
