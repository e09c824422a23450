"""Every page opens with a plain first line and folds its evidence under it (issue 37 item 1).

For each page of the registry (:func:`posviz.navigation.all_pages`), its verdict is built the way
its page model builds it, on the page's default inputs where that is cheap and on small inputs
of the same kind otherwise (each verdict branch the page can reach), and must:

* open with a first line of at most :data:`FIRST_SENTENCE_WORDS` words, with no formula
  character (:data:`FORMULA_CHARS`);
* hold in its first line and evidence every number the whole paragraph (``Verdict.sentence``,
  what the page showed before) quotes, and no clause twice.

Pages whose text others own are left out by :data:`OWNED_ELSEWHERE`, each with the reason; a new
page of the registry fails :func:`test_every_page_of_the_registry_is_checked_or_left_out_by_name`
until it is added to one or the other.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from posviz.analysis.add_concat import concat_hypothesis
from posviz.analysis.evidence import evidence
from posviz.analysis.families import nope_demo
from posviz.analysis.family_inputs import synthetic_vit_table
from posviz.analysis.headlines import (
    FIRST_SENTENCE_WORDS,
    FORMULA_CHARS,
    Verdict,
    compare_verdict,
    concat_verdict,
    layers_verdict,
    learned_verdict,
    lookup_verdict,
    permutation_verdict,
    probe_verdict,
    vit_verdict,
)
from posviz.analysis.permutation import PermutationResult
from posviz.analysis.probes import ProbeReport
from posviz.encodings import sinusoidal as sinusoid_module
from posviz.navigation import all_pages

#: Pages this test leaves out, by key, with who owns their answer's text (issue 37 item 1 is
#: split: the lab's verdicts are generated from its judged findings and fixed at that generator;
#: the inside-models and sibling pages have their own owner).
OWNED_ELSEWHERE: dict[str, str] = {
    "pages/home.py": "no verdict: the home page shows the other pages' answers on its cards",
    "pages/lab.py": "lab page: its text is generated in posviz/lab, checked there by "
    "tests/test_lab_first_lines.py",
    "pages/lab_papers.py": "lab page: its cards' text is generated in posviz/lab, checked there "
    "by tests/test_lab_first_lines.py",
    "pages/inside_models.py": "inside-models page: owned by the inside-models helper",
    "pages/sibling_diff.py": "sibling page: owned by the inside-models/sibling helper",
}


def _is_lab_question(key: str) -> bool:
    """A generated lab question's page (``lab_<study>``): checked at its generator by
    tests/test_lab_first_lines.py, as the lab pages above."""
    return any(spec.key == key and spec.study for spec in all_pages())


# --------------------------------------------------------------------------- verdicts by page


def _probe_report(values, control) -> ProbeReport:
    mae = evidence("MAE", values, control, control_label="random table", higher_is_better=False)
    return ProbeReport(result=None, control=None, mae=mae)  # type: ignore[arg-type]


def _probing() -> list[Verdict]:
    """The three branches: better than, worse than, and no different from the random table."""
    return [
        probe_verdict("MiniLM", _probe_report([20, 22, 21, 23, 19], [180, 190, 170, 185, 175])),
        probe_verdict("X", _probe_report([180, 190, 170, 185, 175], [20, 22, 21, 23, 19])),
        probe_verdict("Y", _probe_report([20, 30, 25, 22, 28], [21, 29, 26, 24, 27])),
    ]


def _add_vs_concat() -> list[Verdict]:
    """Separate, shared and no-different subspaces, and a report without random draws."""
    rng = np.random.default_rng(0)
    words = rng.normal(size=(300, 32)) * np.r_[np.full(8, 5.0), np.ones(24)]
    apart = np.zeros((64, 32))
    apart[:, 8:] = sinusoid_module.sinusoidal(64, 24)
    shared = np.zeros((64, 32))
    shared[:, :8] = sinusoid_module.sinusoidal(64, 8)
    reports = [concat_hypothesis(t, words) for t in (apart, shared, rng.normal(size=(64, 32)))]
    verdicts = [concat_verdict(r, name="MiniLM", n_positions=64) for r in reports]
    chance = dataclasses.replace(reports[0], pe_in_random=None)
    return [*verdicts, concat_verdict(chance, name="MiniLM", n_positions=64)]


def _permutation() -> list[Verdict]:
    """Through the page model, whose verdict states what its hero plots (per-token distances)."""
    from posviz.page_models.permutation import permutation_page

    tokens_a = ("[CLS]", "the", "dog", "bit", "the", "man", "[SEP]")
    tokens_b = ("[CLS]", "the", "man", "bit", "the", "dog", "[SEP]")
    result = PermutationResult(
        tokens_a=tokens_a,
        tokens_b=tokens_b,
        permutation=np.array([0, 4, 5, 3, 1, 2, 6]),
        max_diff_without=4.7e-7,
        max_diff_with=0.92,
        per_token=pd.DataFrame(
            {
                "token": list(tokens_b),
                "position_a": [0, 4, 5, 3, 1, 2, 6],
                "position_b": list(range(7)),
                "distance_without_positions": [1e-7] * 7,
                "distance_with_positions": [0.0, 9.7, 8.1, 3.0, 9.9, 7.2, 0.5],
            }
        ),
        pooled_diff_without=0.0,
        pooled_diff_with=0.3,
        similarity_without=np.eye(7),
        similarity_with=np.eye(7),
        rounding_scale=1.19e-7,
    )
    return [permutation_verdict(result), permutation_page(result).verdict]


def _layers() -> list[Verdict]:
    scores = pd.DataFrame(
        {
            "layer": [0, 6],
            "r2": [0.98, 0.46],
            "r2_std": [0.01, 0.07],
            "control_r2": [0.0, -0.01],
            "control_r2_std": [0.01, 0.01],
        }
    )
    faded = scores.assign(r2=[0.98, 0.01])
    return [layers_verdict(scores), layers_verdict(faded)]


def _embedding_lookup() -> list[Verdict]:
    changes = pd.DataFrame(
        {"used": [True, True, True, False, False], "learned_change": [0.31, 0.2, 0.05, 0.0, 0.0]}
    )
    return [lookup_verdict(0.0, changes), lookup_verdict(2.4e-7, changes)]


def _compare() -> list[Verdict]:
    """Some familiar and some not, all familiar, none familiar."""
    column = "unseen at k=2L"
    frame = pd.DataFrame(
        {
            "family": ["Sinusoid", "RoPE", "Learned (MiniLM)", "ALiBi"],
            column: [0.0, 0.01, 0.62, 0.3],
        }
    )
    return [
        compare_verdict(frame, trained=128),
        compare_verdict(frame.iloc[:2], trained=128),
        compare_verdict(frame.iloc[2:], trained=512),
    ]


def _family_models() -> dict[str, Callable[[], list]]:
    """The family pages' models on their default (or as cheap) inputs, as test_page_models."""
    from posviz.encodings.p_rope import PRopeConfig
    from posviz.encodings.rope import rope_frequencies
    from posviz.page_models import alibi, nope, p_rope, rope, t5_buckets, vit_grid
    from posviz.page_models.learned import table_name
    from posviz.page_models.sinusoidal import sinusoid_page
    from posviz.tables import PositionTable, load_table

    def configs(fraction):
        return PRopeConfig(model_type="manual", head_dim=64, fraction=fraction, base=1e4)

    noise = np.random.default_rng(0).normal(size=(64, 16))
    return {
        "pages/sinusoidal.py": lambda: [
            sinusoid_page(sinusoid_module.sinusoidal(128, 64), base=10000.0, layout="interleaved")
        ],
        "pages/learned.py": lambda: [  # its model's verdict line, without its views (2 s)
            learned_verdict(t.matrix, name=table_name(t))
            for t in (load_table("bundled"), PositionTable(noise, source="noise"))
        ],
        "pages/rope.py": lambda: [rope.rope_page(rope_frequencies(64), name="a head")],
        "pages/p_rope.py": lambda: [
            p_rope.p_rope_page(configs(f), max_distance=256) for f in (0.0, 0.25, 1.0)
        ],
        "pages/alibi.py": lambda: [alibi.alibi_page(alibi.alibi_slopes(12))],
        "pages/t5_buckets.py": lambda: [t5_buckets.t5_page(32, max_distance=128, span=64)],
        "pages/nope.py": lambda: [nope.nope_page(nope_demo(16, 8, n_samples=2, seed=0))],
        "pages/vit_grid.py": lambda: [
            vit_grid.vit_page(synthetic_vit_table(4, 5, 64), name="ViT-B/16"),
            vit_verdict(np.random.default_rng(1).normal(size=(4, 5, 4, 5)), name="noise"),
        ],
    }


BUILDERS: dict[str, Callable[[], list]] = {
    "pages/probing.py": _probing,
    "pages/add_vs_concat.py": _add_vs_concat,
    "pages/permutation.py": _permutation,
    "pages/layers.py": _layers,
    "pages/embedding_lookup.py": _embedding_lookup,
    "pages/compare.py": _compare,
}


def _verdicts(key: str) -> list[Verdict]:
    builder = BUILDERS.get(key) or _family_models()[key]
    out = []
    for item in builder():
        verdict = getattr(item, "verdict", item)  # a page model, or a verdict
        out.append(verdict if isinstance(verdict, Verdict) else Verdict.fold(verdict))
    return out


def _checked_pages() -> list[str]:
    return [
        spec.key
        for spec in all_pages()
        if spec.key not in OWNED_ELSEWHERE and not _is_lab_question(spec.key)
    ]


# --------------------------------------------------------------------------- the checks

#: A number as the verdicts write it: 6.28, 1,024, 45.3%, 2.0e-07, 1e-13 (not the 6 of "L6").
NUMBER = re.compile(r"(?<![A-Za-z0-9.])[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?%?")


def numbers_in(text: str) -> set[str]:
    """The numbers written in ``text``, as written."""
    return {m.group().rstrip(",") for m in NUMBER.finditer(text)}


def test_numbers_in_reads_decimals_percentages_exponents_and_not_names():
    assert numbers_in("MiniLM-L6 turns every 6.28; 45.3% of 1,024 (to 1e-13, 2.0e-07).") == {
        "6.28",
        "45.3%",
        "1,024",
        "1e-13",
        "2.0e-07",
    }


def test_every_page_of_the_registry_is_checked_or_left_out_by_name():
    models = set(BUILDERS) | set(_family_models())
    for spec in all_pages():
        if spec.key in OWNED_ELSEWHERE or _is_lab_question(spec.key):
            continue
        assert spec.key in models, f"{spec.key}: add how its verdict is built to this test"
    assert set(OWNED_ELSEWHERE) <= {spec.key for spec in all_pages()}, "a left-out page is gone"


@pytest.mark.parametrize("key", _checked_pages())
def test_a_page_opens_with_a_plain_line_and_folds_every_number_into_its_evidence(key):
    for verdict in _verdicts(key):
        line = verdict.first_line
        assert line and len(line.split()) <= FIRST_SENTENCE_WORDS, f"{key}: {line!r}"
        assert not set(line) & FORMULA_CHARS, f"{key}: a formula in the first line {line!r}"
        folded = verdict.folded
        assert folded, f"{key}: no evidence under {line!r}"
        shown = " ".join([line, *(f"{label} {text}" for label, text in folded)])
        missing = numbers_in(verdict.sentence) - numbers_in(shown)
        assert not missing, f"{key}: {sorted(missing)} dropped from {verdict.sentence!r}"
        clauses = [line.rstrip("."), *(text for _, text in folded)]
        assert len(clauses) == len(set(clauses)), f"{key}: a clause twice in {clauses}"


def test_the_check_fails_a_verdict_that_drops_a_number():
    """The control: an evidence list that leaves a number out is caught."""
    verdict = _layers()[0]
    dropped = dataclasses.replace(verdict, evidence=verdict.evidence[1:])
    shown = " ".join([dropped.first_line, *(f"{a} {b}" for a, b in dropped.folded)])
    assert numbers_in(dropped.sentence) - numbers_in(shown) == {"0.98"}


def test_a_paragraph_without_evidence_folds_its_other_clauses_each_once():
    verdict = Verdict.fold(
        "Plain answer here. With p = 0.5 all 32 pairs keep: none rotate. Done; done."
    )
    assert verdict.first_line == "Plain answer here."
    assert [text for _, text in verdict.folded] == ["With p = 0.5 all 32 pairs keep", "none rotate",
                                                   "Done", "done"]  # fmt: skip


# --------------------------------------------------------------------------- as shown


def _show(verdict) -> None:
    from posviz.ui.answer import show_verdict

    show_verdict(verdict)


def test_a_page_shows_the_line_then_its_evidence_folded_and_a_plain_string_whole():
    from streamlit.testing.v1 import AppTest

    verdict = _layers()[0]
    at = AppTest.from_function(_show, args=(verdict,)).run(timeout=30)
    assert not at.exception
    badge = " :gray-badge[measured here: control, the same probe with the positions shuffled]"
    assert at.markdown[0].value == f"**{verdict.first_line}**{badge}"  # its source beside it
    (folded,) = at.expander
    assert folded.label == "Evidence"
    listed = folded.markdown[0].value.replace("\\", "")
    for label, text in verdict.folded:
        assert f"**{label}:** {text}" in listed
    at = AppTest.from_function(_show, args=("Lab answer. With 3 seeds.",)).run(timeout=30)
    assert at.markdown[0].value == "**Lab answer. With 3 seeds.**" and not at.expander
