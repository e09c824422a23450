"""ViT patch-grid similarity and the synthetic 2-D sin-cos table; the ViT page in AppTest."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test, assert_no_exception
from hf_support import tiny_model

from posviz.analysis.stats import cosine_similarity_matrix
from posviz.analysis.vit import patch_similarity_grid, sincos_2d_table
from posviz.charts.families import patch_grid_chart


def test_grid_is_the_cosine_matrix_reshaped_row_major():
    table = np.random.default_rng(0).normal(size=(12, 8))
    grid = patch_similarity_grid(table, (3, 4))
    assert grid.shape == (3, 4, 3, 4)
    full = cosine_similarity_matrix(table)
    assert grid[1, 2, 2, 3] == pytest.approx(full[1 * 4 + 2, 2 * 4 + 3])
    np.testing.assert_allclose([grid[r, c, r, c] for r in range(3) for c in range(4)], 1.0)


def test_sincos_2d_rows_depend_on_row_and_column_separately():
    h, w, d = 5, 7, 32
    table = sincos_2d_table(h, w, d)
    assert table.shape == (h * w, d)
    np.testing.assert_allclose(np.linalg.norm(table, axis=1), np.sqrt(d / 2))  # d/4 pairs per axis
    # first half encodes the row: equal for patches in the same row
    np.testing.assert_allclose(table[0, : d // 2], table[w - 1, : d // 2])
    np.testing.assert_allclose(table[0, d // 2 :], table[w, d // 2 :])  # same column, next row
    grid = patch_similarity_grid(table, (h, w))
    # similarity falls off with grid distance from the patch itself
    assert grid[2, 3, 2, 3] > grid[2, 3, 2, 4] > grid[2, 3, 2, 6]


@pytest.mark.parametrize(
    ("grid", "message"), [((3, 3), "rows"), ((0, 5), "out of range"), (None, "no 2-D")]
)
def test_bad_grids_raise(grid, message):
    with pytest.raises(ValueError, match=message):
        patch_similarity_grid(np.ones((10, 4)), grid)


def test_patch_grid_chart_tiles_every_patch():
    sim = patch_similarity_grid(sincos_2d_table(4, 4, 16), (4, 4))
    spec = patch_grid_chart(sim).to_dict()
    assert spec["mark"]["type"] == "rect"
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 4**4
    assert max(r["X"] for r in rows) == 3 * 5 + 3  # 4 tiles of 4 columns + 1-column gaps


def test_vit_page_synthetic_default():
    at = app_test("pages/vit_grid.py", query={"vit_h": "6", "vit_w": "8"})
    assert_no_exception(at)
    assert not at.error
    assert len(at.get("vega_lite_chart")) == 2
    assert any("Synthetic" in i.value for i in at.info)


def test_vit_page_explains_a_table_without_grid():
    at = app_test("pages/vit_grid.py", query={"vit_src": "model", "vit_t_src": "bundled"})
    assert_no_exception(at)
    assert any("no 2-D patch grid" in e.value for e in at.error)


@pytest.mark.slow
def test_vit_page_on_a_real_vit_checkpoint(tmp_path):
    pytest.importorskip("torch")
    vit = tiny_model("ViT", image_size=32, patch_size=8, hidden_size=16, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=32)  # fmt: skip
    vit.save_pretrained(tmp_path)
    at = app_test(
        "pages/vit_grid.py",
        query={"vit_src": "model", "vit_t_src": "path", "vit_t_path": str(tmp_path)},
    )
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("vega_lite_chart")) == 2
    assert any("4×4" in c.value for c in at.caption)
