"""Where a page's numbers come from: badges made by the code that computed them."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis import provenance
from posviz.analysis.headlines import alibi_verdict, sinusoid_verdict
from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables.bundled import BUNDLED_WEIGHTS_SHA256, PACKAGED
from posviz.tables.table import PositionTable


def test_a_source_must_say_what_it_is():
    with pytest.raises(ValueError, match="one of"):
        provenance.Provenance("rumour", "somewhere")
    with pytest.raises(ValueError, match="name its"):
        provenance.Provenance("measured", " ")
    with pytest.raises(ValueError, match="SHA-256"):
        provenance.checkpoint("x", "not-a-hash")
    with pytest.raises(ValueError, match="table or figure"):
        provenance.published("haviv_2022", "")
    with pytest.raises(ValueError, match="unknown reference"):
        provenance.formula("nobody_1999")


def test_a_packaged_table_is_named_by_the_hash_its_file_was_checked_against():
    bundled = PositionTable(np.zeros((4, 2)), source="bundled")
    assert provenance.of_table(bundled).detail.endswith(f"SHA-256 {BUNDLED_WEIGHTS_SHA256[:8]}…")
    l3 = PositionTable(np.zeros((4, 2)), source="bundled:paraphrase-MiniLM-L3-v2")
    assert PACKAGED["paraphrase-MiniLM-L3-v2"].sha256[:8] in provenance.of_table(l3).badge


def test_any_other_table_is_named_by_its_rows_so_an_edit_shows():
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    first = provenance.of_table(PositionTable(rows, source="org/model"))
    edited = rows.copy()
    edited[2, 1] += 1e-3
    second = provenance.of_table(PositionTable(edited, source="org/model"))
    assert first.kind == second.kind == "checkpoint" and first != second
    assert first == provenance.of_table(PositionTable(rows.copy(), source="org/model"))


def test_formula_verdicts_cite_their_registry_entry_and_badges_come_in_one_order():
    sources = sinusoid_verdict(sinusoidal(16, 8)).sources + alibi_verdict(np.ones(2)).sources
    assert [s.kind for s in sources] == ["formula", "formula"]
    assert "Vaswani" in sources[0].detail and "Press" in sources[1].detail
    mixed = (provenance.measured("shuffled"), provenance.MINILM, sources[0], sources[0])
    assert [b.split(":")[0] for b in provenance.badges(mixed)] == [
        "exact formula", "read from a checkpoint", "measured here"
    ]  # fmt: skip
