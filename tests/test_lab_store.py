"""The run store: round trip, write-once, a corrupted entry retrained without losing others."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from posviz.lab import QUESTIONS, RunStore, list_lab_tables, load_lab_table, run_question
from posviz.labfiles import CorruptEntry


def _tiny(question_id: str, **changes: int):
    base = QUESTIONS[question_id].default
    return replace(base, steps=4, width=16, batch=8, eval_batch=16, seeds=2, **changes)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory):
    store = RunStore(tmp_path_factory.mktemp("lab"))
    result = run_question("concat", config=_tiny("concat"), store=store)
    return store, result


def _encoded(result) -> tuple[dict, dict]:
    from posviz.lab.engine.store import _entry

    return _entry(result)


def test_round_trip_gives_back_every_number_and_array(stored) -> None:
    store, result = stored
    loaded = store.load(result.run_id)
    assert loaded is not None
    meta, arrays = _encoded(result)
    back_meta, back_arrays = _encoded(loaded)
    assert back_meta == meta  # every field, every cell, every finding
    assert arrays.keys() == back_arrays.keys() and len(arrays) > 10
    for name, array in arrays.items():
        np.testing.assert_array_equal(back_arrays[name], array)
    assert loaded.cells == result.cells and loaded.findings == result.findings
    assert not list(store.path(result.run_id).glob("*.pkl"))


def test_a_stored_run_is_returned_without_training(stored) -> None:
    store, result = stored

    def never(_progress) -> None:
        raise AssertionError("a stored run must not train again")

    again = run_question("concat", config=result.config, store=store, on_progress=never)
    assert again.run_id == result.run_id and again.wall_s == result.wall_s


def test_run_id_changes_with_any_setting(stored) -> None:
    store, result = stored
    concat, learned = QUESTIONS["concat"], QUESTIONS["learned"]
    assert store.run_id(concat, replace(result.config, lr=0.004)) != result.run_id
    assert store.run_id(learned, result.config) != result.run_id


@pytest.mark.slow
def test_corrupted_entry_is_named_retrained_and_nothing_else_is_lost(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    keep = run_question("every_layer", config=_tiny("every_layer"), store=store)
    broken = run_question("concat", config=_tiny("concat"), store=store)
    (store.path(broken.run_id) / "result.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(CorruptEntry, match=f"Stored lab run {broken.run_id} is corrupted"):
        store.load(broken.run_id)
    listed = {s.run_id: s for s in store.list()}  # listed as corrupted, the other one intact
    assert listed[broken.run_id].corrupt and not listed[keep.run_id].corrupt
    heard: list[CorruptEntry] = []
    again = run_question("concat", config=_tiny("concat"), store=store, on_corrupt=heard.append)
    assert [e.run_id for e in heard] == [broken.run_id]
    assert again.metrics == broken.metrics  # retrained, bit-identical on the CPU
    assert store.load(broken.run_id) is not None
    assert store.load(keep.run_id).metrics == keep.metrics
    assert len(list((tmp_path / ".corrupt").iterdir())) == 1  # the bad entry is kept aside


def test_a_tampered_number_is_refused(stored, tmp_path: Path) -> None:
    _, result = stored
    copy = RunStore(tmp_path)
    copy.save(result)
    path = copy.path(result.run_id) / "result.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["wall_s"] = data["wall_s"] + 1.0
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(CorruptEntry, match=r"result\.json does not match its SHA-256"):
        copy.load(result.run_id)


def test_array_with_wrong_contents_counts_as_corrupted(stored, tmp_path: Path) -> None:
    _, result = stored
    copy = RunStore(tmp_path)
    copy.save(result)
    name = next(p.name for p in copy.path(result.run_id).glob("instances__*__losses.npy"))
    np.save(copy.path(result.run_id) / name, np.zeros(3))
    with pytest.raises(CorruptEntry, match=f"{name} does not match its SHA-256"):
        copy.load(result.run_id)


@pytest.mark.slow
def test_editing_a_family_formula_module_changes_run_ids(tmp_path: Path) -> None:
    """A fresh process on a copy of the package, with one formula module edited by a comment:
    the ids of the studies that train ALiBi change, the others' do not."""
    import posviz

    package = Path(posviz.__file__).parent
    copies = {}
    for tag, edit in (("same", False), ("edited", True)):
        root = tmp_path / tag
        shutil.copytree(package, root / "posviz", ignore=shutil.ignore_patterns("__pycache__"))
        if edit:
            with open(root / "posviz" / "encodings" / "alibi.py", "a", encoding="utf-8") as f:
                f.write("\n# an edit\n")
        code = (
            "from posviz.lab import RunStore, QUESTIONS; "
            "print(*(RunStore().run_id(QUESTIONS[q], QUESTIONS[q].default) "
            "for q in ('learned', 'extrapolation')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            capture_output=True,
            text=True,
            check=True,
        )
        copies[tag] = out.stdout.split()
    pair = ("learned", "extrapolation")
    here = [RunStore().run_id(QUESTIONS[q], QUESTIONS[q].default) for q in pair]
    assert copies["same"] == here
    assert copies["edited"][0] == here[0]  # no ALiBi arm
    assert copies["edited"][1] != here[1]  # ALiBi is one of its arms


def test_save_is_write_once(stored, tmp_path: Path) -> None:
    _, result = stored
    copy = RunStore(tmp_path)
    copy.save(result)
    changed = replace(result, answer="something else")
    copy.save(changed)
    assert copy.load(result.run_id).answer == result.answer


def test_the_warm_root_is_read_after_the_writable_one(stored, tmp_path: Path, monkeypatch) -> None:
    _, result = stored
    RunStore(tmp_path / "warm").save(result)
    monkeypatch.setenv("POSVIZ_LAB_WARM_DIR", str(tmp_path / "warm"))
    fresh = RunStore(tmp_path / "empty")
    assert fresh.exists(result.run_id) and fresh.load(result.run_id).answer == result.answer
    assert [s.run_id for s in fresh.list()] == [result.run_id]
    again = run_question("concat", config=result.config, store=fresh)  # no training: it is there
    assert again.wall_s == result.wall_s and not (tmp_path / "empty").exists()
    assert load_lab_table(f"lab:{result.run_id}", store=fresh).matrix.shape[0] == 12


def test_lab_tables_are_position_tables(stored) -> None:
    store, result = stored
    specs = list_lab_tables(store=store)
    # the preset cell's tables first, by bare arm id; the other cells' by instance id
    assert specs[:2] == [f"lab:{result.run_id}/add", f"lab:{result.run_id}/concat"]
    assert f"lab:{result.run_id}/add.kback.matched" in specs
    table = load_lab_table(f"lab:{result.run_id}", store=store)
    steps = result.snapshot_steps_by_task["reverse"]
    assert table.source == f"lab:{result.run_id}/add/0/{steps[-1]}"
    np.testing.assert_array_equal(table.matrix, result.instances["add"].snapshots[0, -1])
    first = load_lab_table(f"lab:{result.run_id}/concat/1/0", store=store)
    assert first.matrix.shape == (result.config.max_len, result.config.width // 2)
    np.testing.assert_array_equal(first.matrix, result.instances["concat"].snapshots[1, 0])
    assert result.snapshot_steps[-1] == result.default_cell.steps  # the preset cell's budget


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("bundled", "is not a lab table"),
        ("lab:zz", "is not a lab run id"),
        ("lab:0123456789abcdef", "No stored lab run"),
        ("lab:{run}/nope", "has no learned table 'nope'"),
        ("lab:{run}/nope.kback", "has no learned table 'nope.kback'"),
        ("lab:{run}/add/7", "seed 7 is out of range"),
        ("lab:{run}/add/0/999", "step 999 has no snapshot"),
        ("lab:{run}/add/x", "must be a whole number"),
    ],
)
def test_bad_lab_specs_say_what_exists(stored, spec: str, words: str) -> None:
    store, result = stored
    with pytest.raises(ValueError, match=words):
        load_lab_table(spec.format(run=result.run_id), store=store)


def test_stored_json_has_no_nan_tokens(stored) -> None:
    store, result = stored
    text = (store.path(result.run_id) / "result.json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON {name}"))


def _all_run_ids() -> dict[tuple[str, str], str]:
    """Every study's run ids: each question's default and panel part, each paper check."""
    from posviz.lab.studies.cards import card_run_id
    from posviz.lab.studies.papers import PAPER_CHECKS

    ids = {}
    for q in QUESTIONS.values():
        for part in ("default", "panel"):
            ids[(q.id, part)] = RunStore().run_id(q, q.default, part=part)
    for check in PAPER_CHECKS.values():
        ids[(check.id, "default")] = card_run_id(check)
    return ids


def _run_ids_with(monkeypatch, edited: str | None) -> dict[tuple[str, str], str]:
    """Every study's run ids when the source the hash reads of the file named ``edited``
    (None: nothing) has one more line."""
    from posviz.lab.engine import store as store_module

    real = store_module.read_source

    def read(file: Path) -> bytes:
        text = real(file)
        return text + b"\n# an edit\n" if edited and file.name == edited else text

    monkeypatch.setattr(store_module, "read_source", read)
    store_module.clear_code_caches()
    try:
        return _all_run_ids()
    finally:
        store_module.clear_code_caches()


def _studies_training(scheme: str) -> set[tuple[str, str]]:
    from posviz.lab.studies.papers import PAPER_CHECKS

    parts = ("default", "panel")
    out = {(q.id, p) for q in QUESTIONS.values() if scheme in q.schemes for p in parts}
    return out | {(c.id, "default") for c in PAPER_CHECKS.values() if scheme in c.schemes}


def test_run_ids_keep_through_words_views_and_judging_edits(monkeypatch) -> None:
    """The run id hashes what changes a run's numbers, not the CLI, the views, the judging
    (judged again on every load), the study catalogues' words or the family registry's."""
    before = _run_ids_with(monkeypatch, None)
    kept = ("cli.py", "answer.py", "summarise.py", "metrics.py", "frames.py", "runs.py",
            "presets.py", "papers.py", "families.py", "cards.py")  # fmt: skip
    for name in kept:
        assert _run_ids_with(monkeypatch, name) == before, name


@pytest.mark.parametrize("engine_file", ["tasks.py", "train.py", "lab_text.py", "card_inputs.py"])
def test_an_engine_edit_changes_every_run_id(monkeypatch, engine_file: str) -> None:
    before = _run_ids_with(monkeypatch, None)
    after = _run_ids_with(monkeypatch, engine_file)
    assert all(after[key] != before[key] for key in before), engine_file


@pytest.mark.parametrize(("formula", "scheme"), [("alibi.py", "alibi"), ("rope.py", "rope")])
def test_a_formula_edit_changes_the_ids_of_the_studies_that_train_it_and_no_others(
    monkeypatch, formula: str, scheme: str
) -> None:
    before = _run_ids_with(monkeypatch, None)
    after = _run_ids_with(monkeypatch, formula)
    changed = {key for key in before if after[key] != before[key]}
    assert changed == _studies_training(scheme)
    assert ("learned", "default") not in changed and 0 < len(changed) < len(before)


def test_rewording_and_registering_keep_every_run_id(monkeypatch) -> None:
    """A blurb (every word of a family's page), a paper card's claim sentence, a study's title
    and explanation and its arms' labels, a judge, a new family and a new study: same ids."""
    from posviz.encodings import families
    from posviz.lab.studies import papers, presets
    from posviz.lab.studies.papers import NOT_JUDGED, CheckOutcome

    before = _all_run_ids()
    words = dict(label="ALiBi, reworded", question="Reworded?", blurb="A new blurb.",
                 colour="#000000", how="does something, in other words")  # fmt: skip
    monkeypatch.setitem(families.FAMILIES, "alibi", replace(families.FAMILIES["alibi"], **words))
    check = papers.PAPER_CHECKS["press_2022"]
    monkeypatch.setitem(
        papers.PAPER_CHECKS, check.id,
        replace(check, claim="Another sentence.", caveat="Another caveat.", criterion="Other.",
                judge=lambda values: CheckOutcome(NOT_JUDGED, reason="a new judge")),
    )  # fmt: skip
    q = presets.QUESTIONS["extrapolation"]
    arms = tuple(replace(v, label=v.label + " (renamed)") for v in q.variants)
    retitled = replace(q, title="A new title", explain="Explained again.", variants=arms)
    monkeypatch.setitem(presets.QUESTIONS, q.id, retitled)
    new_family = replace(families.FAMILIES["sinusoidal"], id="newformer", label="Newformer")
    monkeypatch.setitem(families.FAMILIES, "newformer", new_family)
    new_study = replace(presets.QUESTIONS["learned"], id="a_new_study")
    monkeypatch.setitem(presets.QUESTIONS, "a_new_study", new_study)
    after = _all_run_ids()
    del after[("a_new_study", "default")], after[("a_new_study", "panel")]
    assert after == before
    # what trains is in the key: another arm's model or another published number is a new run
    moved = replace(q, variants=(*q.variants[:-1], replace(q.variants[-1], layers=1)))
    assert RunStore().run_id(moved, q.default) != before[(q.id, "default")]


def test_questions_and_paper_checks_share_one_run_id_function(monkeypatch) -> None:
    """Both kinds of study get their run id from posviz.lab.engine.store.study_run_id (kind, id,
    part,
    settings): one key, one hash, one claim across replicas."""
    from posviz.lab.engine import store as store_module
    from posviz.lab.engine.store import study_run_id
    from posviz.lab.studies import cards
    from posviz.lab.studies.cards import CardStudy
    from posviz.lab.studies.papers import PAPER_CHECKS
    from posviz.lab.studies.questions import QuestionStudy

    calls = []

    def recorded(kind, study_id, settings, *, part="default", schemes=()):
        calls.append((kind, study_id, part))
        return study_run_id(kind, study_id, settings, part=part, schemes=schemes)

    monkeypatch.setattr(store_module, "study_run_id", recorded)
    monkeypatch.setattr(cards, "study_run_id", recorded)
    q, check = QUESTIONS["learned"], PAPER_CHECKS["press_2022"]
    assert QuestionStudy(q, q.default).run_id == RunStore().run_id(q, q.default)
    card_id = CardStudy(check).run_id
    panel_id = QuestionStudy(q, q.default, "panel").run_id
    assert calls == [
        ("question", "learned", "default"), ("question", "learned", "default"),
        ("paper_check", check.id, "default"), ("question", "learned", "panel"),
    ]  # fmt: skip
    assert len({card_id, panel_id, RunStore().run_id(q, q.default)}) == 3


def test_a_stored_run_is_judged_again_when_it_is_loaded(stored, tmp_path: Path) -> None:
    """The judging is not in the run id: the answer and verdicts come from the stored arrays."""
    _, result = stored
    from posviz.lab.studies import loading

    stale = RunStore(tmp_path)
    stale.save(replace(result, answer="stale words", findings=()))
    assert stale.load(result.run_id).answer == "stale words"  # the store judges nothing itself
    again = loading.load_judged(stale, result.run_id)
    assert again.answer == result.answer and again.findings == result.findings
    assert set(loading.REJUDGE) == {"question", "paper_check"}  # by the stored kind's name


@dataclass(frozen=True)
class _Entry:
    name: str
    added_later: str = "its default"


def test_a_field_added_later_with_a_default_reads_an_older_entry() -> None:
    from posviz.lab.engine.store import _decode

    assert _decode({"name": "old"}, _Entry, {}) == _Entry("old")
    assert _decode({"name": "new", "added_later": "kept"}, _Entry, {}) == _Entry("new", "kept")
    with pytest.raises(KeyError, match="name"):  # a field without a default is still required
        _decode({"added_later": "x"}, _Entry, {})
