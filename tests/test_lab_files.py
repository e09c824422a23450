"""posviz.labfiles: the store's layout, SHA-256 manifest and verified reads (no training here)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from labstore_support import RUN, write_lab_entry

from posviz import labfiles
from posviz.labfiles import CorruptEntry, NoEntry


def test_round_trip_and_manifest_lists_every_file(tmp_path: Path) -> None:
    meta, arrays = write_lab_entry(tmp_path)
    back_meta, back_arrays = labfiles.read_entry(tmp_path, RUN)
    assert back_meta == meta
    assert back_arrays.keys() == arrays.keys()
    for name, array in arrays.items():
        np.testing.assert_array_equal(back_arrays[name], array)
    manifest = json.loads((tmp_path / RUN / labfiles.MANIFEST).read_text())
    files = {p.name for p in (tmp_path / RUN).iterdir()} - {labfiles.MANIFEST}
    assert set(manifest["sha256"]) == files and manifest["format"] == labfiles.FORMAT


def test_an_edited_number_is_a_corrupted_entry_named_without_a_path(tmp_path: Path) -> None:
    write_lab_entry(tmp_path)
    path = tmp_path / RUN / labfiles.RESULT
    path.write_text(path.read_text().replace("0.75", "0.95"), encoding="utf-8")
    with pytest.raises(CorruptEntry, match=r"result\.json does not match its SHA-256") as caught:
        labfiles.read_entry(tmp_path, RUN)
    assert RUN in str(caught.value) and str(tmp_path) not in str(caught.value)
    assert caught.value.run_id == RUN


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda d: np.save(d / "snapshot_steps.npy", np.array([0, 10, 21])), "snapshot_steps.npy"),
        (lambda d: (d / "snapshot_steps.npy").unlink(), "snapshot_steps.npy is missing"),
        (lambda d: np.save(d / "extra.npy", np.zeros(2)), "extra.npy is not in manifest"),
        (lambda d: (d / labfiles.MANIFEST).unlink(), "manifest.json is missing"),
        (lambda d: (d / labfiles.MANIFEST).write_text("{"), "manifest.json is not valid JSON"),
    ],
)
def test_every_kind_of_damage_is_refused(tmp_path: Path, damage, words: str) -> None:
    write_lab_entry(tmp_path)
    damage(tmp_path / RUN)
    with pytest.raises(CorruptEntry, match=words):
        labfiles.read_entry(tmp_path, RUN)


def test_write_once_and_a_corrupted_entry_is_moved_aside(tmp_path: Path) -> None:
    meta, arrays = write_lab_entry(tmp_path)
    labfiles.write_entry(tmp_path, RUN, {**meta, "question_id": "other"}, arrays)
    assert labfiles.read_entry(tmp_path, RUN)[0]["question_id"] == "learned"  # kept
    (tmp_path / RUN / labfiles.RESULT).write_text("{}", encoding="utf-8")
    labfiles.write_entry(tmp_path, RUN, {**meta, "question_id": "other"}, arrays)
    assert labfiles.read_entry(tmp_path, RUN)[0]["question_id"] == "other"
    assert len(list((tmp_path / ".corrupt").iterdir())) == 1


def test_listing_shows_corrupted_entries_as_such(tmp_path: Path) -> None:
    other = "fedcba9876543210"
    write_lab_entry(tmp_path)
    write_lab_entry(tmp_path, other)
    (tmp_path / other / "snapshot_steps.npy").write_bytes(b"not an array")
    statuses = {s.run_id: s for s in labfiles.list_entries(tmp_path)}
    assert not statuses[RUN].corrupt and statuses[other].corrupt
    assert "snapshot_steps.npy" in statuses[other].why
    assert labfiles.list_tables(root=tmp_path) == [f"lab:{RUN}/learned"]


def test_missing_entry_and_bad_ids_and_names(tmp_path: Path) -> None:
    with pytest.raises(NoEntry, match="No stored lab run"):
        labfiles.read_entry(tmp_path, RUN)
    with pytest.raises(ValueError, match="is not a lab run id"):
        labfiles.entry_dir(tmp_path, "../etc")
    with pytest.raises(ValueError, match="must be letters"):
        labfiles.write_entry(tmp_path, RUN, {}, {"../x": np.zeros(1)})
    with pytest.raises(ValueError, match="not strict JSON"):
        labfiles.write_entry(tmp_path, RUN, {"x": float("nan")}, {})
    assert not (tmp_path / RUN).exists()


def test_read_table_defaults_and_explicit_parts(tmp_path: Path) -> None:
    _, arrays = write_lab_entry(tmp_path)
    table = labfiles.read_table(f"lab:{RUN}", root=tmp_path)
    assert table.source == f"lab:{RUN}/learned/0/20"
    np.testing.assert_array_equal(table.matrix, arrays["snapshots__learned"][0, -1])
    first = labfiles.read_table(f"lab:{RUN}/learned/1/10", root=tmp_path)
    np.testing.assert_array_equal(first.matrix, arrays["snapshots__learned"][1, 1])
    assert first.trained_rows == 4 and "step 10 of 20" in first.notes[0]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("bundled", "is not a lab table"),
        ("lab:zz", "is not a lab run id"),
        ("lab:fedcba9876543210", "No stored lab run"),
        ("lab:{run}/nope", "has no learned table 'nope'"),
        ("lab:{run}/learned/7", "seed 7 is out of range"),
        ("lab:{run}/learned/0/999", "step 999 has no snapshot"),
        ("lab:{run}/learned/x", "must be a whole number"),
        ("lab:{run}/a/0/0/0", "has 5 parts"),
    ],
)
def test_bad_specs_say_what_exists(tmp_path: Path, spec: str, words: str) -> None:
    write_lab_entry(tmp_path)
    with pytest.raises(ValueError, match=words):
        labfiles.read_table(spec.format(run=RUN), root=tmp_path)


# --------------------------------------------------------------------------- keyed manifests


def _rehash(root: Path, edit) -> None:
    """Edit result.json and recompute its SHA-256 in the manifest, as a forger would."""
    folder = root / RUN
    result = folder / labfiles.RESULT
    result.write_text(edit(result.read_text(encoding="utf-8")), encoding="utf-8")
    manifest = json.loads((folder / labfiles.MANIFEST).read_text())
    manifest["sha256"][labfiles.RESULT] = labfiles._sha256(result.read_bytes())
    (folder / labfiles.MANIFEST).write_text(json.dumps(manifest))


def test_an_edit_with_its_checksum_recomputed_is_refused(tmp_path: Path) -> None:
    write_lab_entry(tmp_path)
    _rehash(tmp_path, lambda text: text.replace("0.75", "0.95"))
    with pytest.raises(CorruptEntry, match="signature does not match this store's key") as caught:
        labfiles.read_entry(tmp_path, RUN)
    assert "retrained and replaced" in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_an_entry_copied_under_another_run_id_is_refused(tmp_path: Path) -> None:
    write_lab_entry(tmp_path)
    other = "fedcba9876543210"
    (tmp_path / RUN).rename(tmp_path / other)
    with pytest.raises(CorruptEntry, match="signature"):
        labfiles.read_entry(tmp_path, other)


def test_the_key_is_made_private_on_first_save_and_a_shared_key_is_refused(tmp_path: Path) -> None:
    write_lab_entry(tmp_path)
    key = tmp_path / labfiles.SECRET
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 64
    key.chmod(0o644)
    with pytest.raises(CorruptEntry, match="chmod 600"):
        labfiles.read_entry(tmp_path, RUN)


def test_another_key_cannot_read_it_and_the_environment_key_is_used(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv(labfiles.SECRET_ENV, "one server's secret")
    write_lab_entry(tmp_path)
    assert not (tmp_path / labfiles.SECRET).exists()
    assert labfiles.read_entry(tmp_path, RUN)[0]["run_id"] == RUN
    monkeypatch.setenv(labfiles.SECRET_ENV, "another secret")
    with pytest.raises(CorruptEntry, match="signature"):
        labfiles.read_entry(tmp_path, RUN)


def test_the_read_only_warm_store_is_read_with_its_own_key(tmp_path: Path, monkeypatch) -> None:
    warm = tmp_path / "warm"
    write_lab_entry(warm)  # built as the image builds it: a store of its own, key beside it
    warm.joinpath(labfiles.SECRET).chmod(0o444)  # the image makes it world-readable
    monkeypatch.setenv("POSVIZ_LAB_WARM_DIR", str(warm))
    monkeypatch.setenv(labfiles.SECRET_ENV, "the running server's own secret")
    root = labfiles.find_root(tmp_path / "data", RUN)
    assert root == warm and labfiles.read_entry(root, RUN)[0]["run_id"] == RUN
