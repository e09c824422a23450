"""Why sin and cos: the shift-as-rotation identity and the sine's ambiguity, checked numerically."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.sincos import (
    illustrative_pair,
    rotation_check,
    rotation_matrix,
    shift_by_rotation,
    sine_collision,
)
from posviz.encodings.sinusoidal import SINUSOID_LAYOUTS, sinusoid_wavelengths, sinusoidal


@pytest.mark.parametrize("layout", SINUSOID_LAYOUTS)
@pytest.mark.parametrize("shift", [1, 7, 100])
def test_a_shift_is_a_rotation_of_every_pair_at_every_position(layout, shift):
    """PE(p+k) = R(k)·PE(p) (Vaswani et al. 2017, §3.5), for all p, in every layout."""
    table = sinusoidal(200 + shift, 64, layout=layout)
    turned = shift_by_rotation(table[:200], shift, layout=layout)
    np.testing.assert_allclose(turned, table[shift:], atol=1e-12)
    check = rotation_check(200, 64, shift, layout=layout)
    assert check.pair_error < 1e-12
    # the sines alone have no such map: the best per-frequency scalar leaves errors of order 1
    assert check.sine_only_error > 0.5 and check.sine_only_relative > 0.1


def test_rotation_matrices_are_rotations_that_compose():
    omega = np.array([1.0, 0.3, 1e-3])
    r3, r4, r7 = (rotation_matrix(omega, k) for k in (3, 4, 7))
    np.testing.assert_allclose(r3 @ r4, r7, atol=1e-12)  # R(a)R(b) = R(a+b): shifts add
    np.testing.assert_allclose(np.linalg.det(r7), 1.0)
    identity = np.broadcast_to(np.eye(2), (3, 2, 2))
    np.testing.assert_allclose(r7 @ np.swapaxes(r7, 1, 2), identity, atol=1e-12)


def test_the_sine_alone_confuses_mirrored_positions_the_cosine_separates_them():
    hit = sine_collision(512, pair=0, n_positions=128)
    assert hit.first != hit.second
    assert abs(hit.sine_first - hit.sine_second) <= 0.01  # sin a = sin(π − a): the same value
    assert abs(hit.cosine_first - hit.cosine_second) > 1.9  # opposite sides of the circle
    table = sinusoidal(128, 512)
    assert table[hit.first, 0] == pytest.approx(hit.sine_first)
    assert table[hit.second, 1] == pytest.approx(hit.cosine_second)


def test_reading_in_row_blocks_gives_what_one_pass_over_the_whole_table_gives(monkeypatch):
    """The checks read a big table in row blocks (an 8192-row one whole took 26 s a call at
    load 10, 4.3 s in blocks): with blocks of a few rows the answers are the one-block ones —
    the same maximum errors, fit and first-found collision (its mirror pair and, when a pair is
    too slow to come back, its nearest sines)."""
    from posviz.analysis import sincos

    table = sinusoidal(405, 24, layout="split") + np.random.default_rng(0).normal(
        0, 0.05, (405, 24)
    )
    whole = sincos.rotation_check_of(table, 5, n_positions=400, layout="split")
    cases = ((0, 400), (2, 400), (4, 20))  # (pair, positions): pair 4 does not come back in 20
    hits = [sine_collision(24, pair=pair, n_positions=n) for pair, n in cases]
    monkeypatch.setattr(sincos, "BLOCK_ELEMENTS", 24 * 7)  # 7 rows a block: 58 blocks
    blocks = sincos.rotation_check_of(table, 5, n_positions=400, layout="split")
    assert blocks.pair_error == whole.pair_error and blocks.pair_error > 0.1
    assert blocks.sine_only_error == pytest.approx(whole.sine_only_error, rel=1e-12)
    assert blocks.sine_only_relative == pytest.approx(whole.sine_only_relative, rel=1e-12)
    assert [sine_collision(24, pair=pair, n_positions=n) for pair, n in cases] == hits
    assert abs(hits[0].sine_first - hits[0].sine_second) <= 0.01  # a mirror pair
    assert abs(hits[2].sine_first - hits[2].sine_second) > 0.01  # the nearest sines instead


def test_the_illustrative_pair_turns_about_three_times_over_the_table():
    pair = illustrative_pair(512, n_positions=128)
    wavelengths = sinusoid_wavelengths(512)
    assert abs(wavelengths[pair] - 128 / 3) == np.abs(wavelengths - 128 / 3).min()


def test_bad_inputs_name_the_limit():
    with pytest.raises(ValueError, match="pairs 0 … 255"):
        sine_collision(512, pair=256, n_positions=10)
    with pytest.raises(ValueError, match="shift ≥ 1"):
        rotation_check(10, 8, 0)


@pytest.mark.slow
def test_the_why_panel_works_on_the_largest_table_the_page_allows():
    """The panel's rotation check stays inside the table (it once asked for MAX_POSITIONS + 5
    rows, a traceback on a clamped link)."""
    from posviz.analysis.sincos import sincos_panel
    from posviz.encodings.sinusoidal import MAX_POSITIONS

    panel = sincos_panel(MAX_POSITIONS, 8)
    assert panel.sines.shape[0] == MAX_POSITIONS and panel.check.pair_error < 1e-9
