"""load_table offline: the bundled MiniLM against transformers, local files, uploads, bad files."""

from __future__ import annotations

import json
import pickle
import struct

import numpy as np
import pytest
from labstore_support import RUN, write_lab_entry
from tables_support import ISSUE_FAMILIES

from posviz import load_table
from posviz.tables import registry, table_from_upload


@pytest.mark.slow
def test_bundled_equals_transformers_automodel():
    import torch
    from transformers import AutoModel

    from posviz.tables.bundled import bundled_model_dir

    table = load_table("bundled")
    model = AutoModel.from_pretrained(bundled_model_dir())
    with torch.no_grad():
        weight = model.embeddings.position_embeddings.weight.numpy()
    np.testing.assert_array_equal(table.matrix, weight)
    assert table.matrix.shape == (512, 384)
    assert table.model_type == "bert" and table.set_aside == ()
    assert table.tensor_name == "embeddings.position_embeddings.weight"
    # config + 8-byte length + header + the one tensor; the weights file is ~90 MB
    assert weight.nbytes < table.bytes_read < weight.nbytes + 64 * 1024


def test_bundled_refuses_weights_with_another_sha(monkeypatch):
    from posviz.tables import bundled

    monkeypatch.setattr(bundled, "BUNDLED_WEIGHTS_SHA256", "0" * 64)
    monkeypatch.setattr(bundled, "_verified", set())
    with pytest.raises(ValueError, match="corrupt or was replaced"):
        load_table("bundled")


def test_bundled_verification_is_remembered_until_the_file_changes(monkeypatch, tmp_path):
    from posviz.tables import bundled

    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setattr(bundled, "_verified", set())
    path = bundled.verified_bundled_weights()  # hashes, then writes the stamp
    assert (tmp_path / "posviz" / "verified-bundled.json").is_file()

    def no_hashing(_path):
        raise AssertionError("hashed again although the file is unchanged")

    monkeypatch.setattr(bundled, "_verified", set())
    monkeypatch.setattr(bundled, "sha256_of", no_hashing)
    assert bundled.verified_bundled_weights() == path
    # a different file identity (e.g. the file was rewritten) must be hashed again
    stamp = tmp_path / "posviz" / "verified-bundled.json"
    record = json.loads(stamp.read_text())
    record["stat"][2] += 1  # ctime
    stamp.write_text(json.dumps(record))
    monkeypatch.setattr(bundled, "_verified", set())
    with pytest.raises(AssertionError, match="hashed again"):
        bundled.verified_bundled_weights()


def test_sinusoid_source_matches_the_formula():
    from posviz.encodings.sinusoidal import sinusoidal

    table = load_table("sinusoidal:64x16")
    np.testing.assert_allclose(table.matrix, sinusoidal(64, 16), atol=1e-6)
    assert table.kind == "sinusoidal" and table.bytes_read == 0
    with pytest.raises(ValueError, match="sinusoidal:NxD"):
        load_table("sinusoidal:big")


def _safetensors_file(path, tensors: dict[str, np.ndarray], dtype: str = "F32") -> None:
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        if dtype == "BF16":
            raw = (np.asarray(array, np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            raw = np.asarray(array, {"F32": "<f4", "F16": "<f2"}[dtype]).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    raw_header = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw_header)) + raw_header + b"".join(blobs))


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_safetensors_dtypes_match_torch_conversion(tmp_path, dtype):
    import torch
    from safetensors.torch import load_file

    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(10, 6)).astype(np.float32)
    path = tmp_path / "table.safetensors"
    _safetensors_file(path, {"wpe.weight": matrix, "other": matrix[:2]}, dtype)
    table = load_table(str(path))
    reference = load_file(path)["wpe.weight"].to(torch.float32).numpy()
    np.testing.assert_array_equal(table.matrix, reference)
    assert table.tensor_name == "wpe.weight" and "no config.json" in table.notes[0]


def test_local_model_directory_applies_the_registry(tmp_path):
    stored = np.arange(6 * 4, dtype=np.float32).reshape(6, 4)
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "roberta", "max_position_embeddings": 6, "hidden_size": 4})
    )
    _safetensors_file(
        tmp_path / "model.safetensors", {"roberta.embeddings.position_embeddings.weight": stored}
    )
    table = load_table(str(tmp_path))
    np.testing.assert_array_equal(table.matrix, stored[2:])
    assert [s.rows for s in table.set_aside] == [(0,), (1,)]
    assert "padding" in table.set_aside[1].reason


def test_npy_file_and_upload(tmp_path):
    matrix = np.random.default_rng(1).normal(size=(12, 8))
    path = tmp_path / "t.npy"
    np.save(path, matrix)
    np.testing.assert_allclose(load_table(str(path)).matrix, matrix.astype(np.float32))
    uploaded = table_from_upload(path.read_bytes(), filename="t.npy")
    assert uploaded.matrix.shape == (12, 8) and uploaded.source == "t.npy"


def _npy_bytes(array) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


class _Boom:
    def __reduce__(self):
        return (print, ("unpickled!",))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_npy_bytes(np.zeros((2, 3, 4))), "2-D"),
        (_npy_bytes(np.zeros(5)), "2-D"),
        (_npy_bytes(np.array([[np.nan, 1.0]])), "NaN/inf"),
        (_npy_bytes(np.array([[np.inf, 1.0]])), "NaN/inf"),
        (_npy_bytes(np.array([[{"a": 1}]], dtype=object)), "pickled objects are refused"),
        (pickle.dumps(_Boom()), "pickled objects are refused"),
        (b"not an array at all", "not a plain .npy"),
    ],
    ids=["3d", "1d", "nan", "inf", "object", "pickle", "garbage"],
)
def test_bad_npy_is_refused_clearly(data, message, capsys):
    with pytest.raises(ValueError, match=message):
        table_from_upload(data, filename="bad.npy")
    assert "unpickled!" not in capsys.readouterr().out
    assert load_table("bundled").n_positions == 512


def test_bad_paths_and_uploads():
    with pytest.raises(ValueError, match="does not exist"):
        load_table("/no/such/table.npy")
    with pytest.raises(ValueError, match=r"\.npy or \.safetensors"):
        table_from_upload(b"x", filename="weights.bin")
    with pytest.raises(ValueError, match="Empty source"):
        load_table("  ")


def test_registry_families_point_at_existing_pages():
    from posviz.encodings.families import FAMILIES
    from posviz.navigation import all_pages

    pages = {spec.url_path for spec in all_pages()}
    computed = {t: spec for spec in FAMILIES.values() for t in spec.model_types}
    assert {"llama", "bloom", "t5", "marian", "gemma4"} <= set(computed)
    assert not set(computed) & set(registry.REGISTRY)  # a model type is a table or a family
    for model_type, family in computed.items():
        assert family.url_path in pages, model_type
        with pytest.raises(ValueError, match=f"uses {family.label}.*'{family.url_path}'"):
            registry.specs_for(model_type)
        with pytest.raises(ValueError, match="no learned position table"):
            registry.plan_for({"model_type": model_type})


def test_registry_covers_the_issue_and_predicts_shapes():
    assert set(ISSUE_FAMILIES) <= set(registry.REGISTRY)
    assert registry.spec_for("roberta").offset == 2 and registry.spec_for("opt").offset == 2
    assert registry.spec_for("bart", "decoder").suffixes == ("decoder.embed_positions.weight",)
    vit = {"image_size": 224, "patch_size": 16, "hidden_size": 768}
    assert registry.spec_for("vit").expected_shape(vit) == (197, 768)
    gpt2 = {"n_positions": 1024, "n_embd": 768}
    assert registry.spec_for("gpt2").expected_shape(gpt2) == (1024, 768)
    assert registry.key_matches(
        "bert.embeddings.position_embeddings.weight", "embeddings.position_embeddings.weight"
    )
    assert not registry.key_matches("xwpe.weight", "wpe.weight")


def test_npy_header_promising_more_than_the_file_is_refused_before_allocating():
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}
    )
    with pytest.raises(ValueError, match="promises shape"):
        table_from_upload(buffer.getvalue() + b"\0" * 64, filename="forged.npy")


@pytest.mark.parametrize("typed", ["/etc/passwd", "../x.npy", "table.safetensors", "~/m"])
def test_paths_are_refused_where_local_paths_are_off(typed, monkeypatch):
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "0")
    with pytest.raises(ValueError, match="POSVIZ_ALLOW_LOCAL_PATHS"):
        load_table(typed)
    assert load_table("bundled").n_positions == 512


def test_synthetic_source_keeps_the_sinusoid_pickers_limits():
    from posviz.tables import SYNTHETIC_MAX_POSITIONS, SYNTHETIC_MAX_WIDTH

    assert (SYNTHETIC_MAX_POSITIONS, SYNTHETIC_MAX_WIDTH) == (8192, 2048)
    assert load_table(f"sinusoidal:{SYNTHETIC_MAX_POSITIONS}x2").n_positions == 8192
    assert load_table(f"sinusoidal:2x{SYNTHETIC_MAX_WIDTH}").d_model == 2048
    assert load_table("sinusoidal:4x8:tensor2tensor").source == "sinusoidal:4x8:tensor2tensor"
    with pytest.raises(ValueError, match=r"8193 positions is outside 1 … 8192"):
        load_table("sinusoidal:8193x8")
    with pytest.raises(ValueError, match=r"width 8192 is outside 2 … 2048"):
        load_table("sinusoidal:8192x8192")
    with pytest.raises(ValueError, match=r"outside 1 … 8192"):
        load_table("sinusoidal:0x8")


@pytest.mark.parametrize("source", ["bundled", "sinusoidal:16x8", "local-npy", "local-dir"])
def test_a_revision_changes_nothing_where_there_are_no_revisions(source, tmp_path):
    from posviz.tables import source_revision

    if source == "local-npy":
        np.save(tmp_path / "t.npy", np.eye(3, dtype=np.float32))
        source = str(tmp_path / "t.npy")
    elif source == "local-dir":
        _safetensors_file(tmp_path / "model.safetensors", {"wpe.weight": np.eye(3)})
        source = str(tmp_path)
    import dataclasses

    plain = load_table(source)
    pinned = load_table(source, revision="v9-no-such-revision")
    np.testing.assert_array_equal(pinned.matrix, plain.matrix)
    for field in dataclasses.fields(plain):
        if field.name not in ("matrix", "set_aside", "bytes_read"):
            assert getattr(pinned, field.name) == getattr(plain, field.name), field.name
    assert source_revision(source, "v9-no-such-revision") is None
    upload = table_from_upload(_npy_bytes(np.eye(2)), filename="t.npy")
    assert upload.revision is None


def test_a_revision_is_kept_for_hub_ids():
    from posviz.tables import source_revision

    assert source_revision("openai-community/gpt2", " v1.0 ") == "v1.0"
    assert source_revision("openai-community/gpt2", "") is None


# --- the one source grammar --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("bundled", "bundled"),
        ("  bundled ", "bundled"),
        ("sinusoidal:16x8", "synthetic"),
        ("sinusoidal:nonsense", "synthetic"),
        ("lab:0123456789abcdef/learned/0", "lab"),
        ("lab:run/x", "lab"),
        ("/models/bert", "path"),
        ("./t.npy", "path"),
        ("~/m", "path"),
        ("table.safetensors", "path"),
        ("..", "path"),
        ("openai-community/gpt2", "hub"),
        ("bert-base-uncased", "hub"),
        ("", "empty"),
        (None, "empty"),
    ],
)
def test_source_kind_reads_the_text_only(text, kind):
    from posviz.tables import source_kind

    assert source_kind(text) == kind


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "Empty source: use bundled | sinusoidal:NxD"),
        ("two words", "not a source posviz reads; use bundled | sinusoidal:NxD"),
        ("org/name/extra", "not a source posviz reads"),
        ("sinusoidal:16by8", r"write it as sinusoidal:NxD\[:layout\]"),
        ("lab:not-a-run", r"not a lab run id.*lab:<run-id>\[/<table>"),
        ("lab:0123456789abcdef/a/b/c/d", "has 5 parts; use lab:<run-id>"),
        ("lab:0123456789abcdef/x/one", "seed 'one'.*must be a whole number"),
    ],
)
def test_bad_sources_are_refused_with_the_grammar(source, message):
    with pytest.raises(ValueError, match=message):
        load_table(source)


def test_synthetic_sources_are_parsed_in_one_place():
    from posviz.tables import SyntheticShape, parse_synthetic

    shape = parse_synthetic(" sinusoidal:12x34:split ")
    assert shape == SyntheticShape(12, 34, "split") and shape.source == "sinusoidal:12x34:split"
    assert load_table(shape.source).source == shape.source
    assert parse_synthetic("sinusoidal:9000x8").n_positions == 9000  # syntax only: no limits


def test_lab_sources_load_like_every_other_source(tmp_path, monkeypatch):
    from posviz.tables import lab_table, list_lab_sources

    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path))
    run_id = RUN
    snaps = write_lab_entry(tmp_path, run_id, trained_rows=3)[1]["snapshots__learned"]
    assert list_lab_sources() == [f"lab:{run_id}/learned"]
    table = load_table(f"lab:{run_id}")  # defaults: first table, seed 0, last snapshot
    np.testing.assert_array_equal(table.matrix, snaps[0, 2])
    assert table.source == f"lab:{run_id}/learned/0/20" and table.kind == "learned"
    assert any("rows from 3 on were never used" in note for note in table.notes)
    picked = load_table(f"lab:{run_id}/learned/1/10", revision="ignored")
    np.testing.assert_array_equal(picked.matrix, snaps[1, 1])
    other = tmp_path / "elsewhere"
    write_lab_entry(other, "fedcba9876543210", trained_rows=3)
    assert lab_table("lab:fedcba9876543210", root=other).n_positions == 5
    with pytest.raises(ValueError, match="seed 2 is out of range"):
        load_table(f"lab:{run_id}/learned/2")
    with pytest.raises(ValueError, match=r"step 5 has no snapshot.*\[0, 10, 20\]"):
        load_table(f"lab:{run_id}/learned/0/5")
    with pytest.raises(ValueError, match="no learned table 'concat'; choose learned"):
        load_table(f"lab:{run_id}/concat")
    with pytest.raises(ValueError, match="No stored lab run 'fedcba9876543210'"):
        load_table("lab:fedcba9876543210")


def test_a_corrupted_lab_run_is_refused_naming_the_run_not_the_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path))
    run_id = RUN
    write_lab_entry(tmp_path, run_id, trained_rows=3)
    npy = tmp_path / run_id / "snapshots__learned.npy"
    data = bytearray(npy.read_bytes())
    data[-1] ^= 0xFF  # one edited number
    npy.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"lab run {run_id} is corrupted") as caught:
        load_table(f"lab:{run_id}")
    assert str(tmp_path) not in str(caught.value)
