"""Per-layer position probe: a layer with a position code scores high and its shuffled control
does not, noise scores at the control, units do not matter, and folds never split a sequence."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.evidence import nested_ridge_predictions
from posviz.encodings.sinusoidal import sinusoidal
from posviz.lab.engine.emergence import position_probe_by_layer, probe_layer, shuffled_positions

E, B, T, D = 3, 20, 16, 12


def _noise(seed: int, shape: tuple[int, ...] = (E, B, T, D)) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _coded(seed: int) -> np.ndarray:
    """Hidden states that carry position: a sinusoid row per position plus noise."""
    return sinusoidal(T, D)[None, None] + 0.3 * _noise(seed)


def test_a_layer_with_a_position_code_scores_high_and_its_control_does_not() -> None:
    probe = probe_layer(_coded(0))
    assert probe.r2_per_seed.shape == (E,) and (probe.r2_per_seed > 0.8).all()
    assert (probe.control_r2_per_seed < 0.05).all()
    assert probe.mae.mean < 2.0 < probe.control_mae.mean  # positions, of 0 … 15
    assert probe.evidence().better()


def test_noise_scores_at_the_control() -> None:
    probe = probe_layer(_noise(1))
    assert (np.abs(probe.r2_per_seed) < 0.05).all()
    assert (np.abs(probe.control_r2_per_seed) < 0.05).all()
    assert not probe.evidence().better()
    # Predicting the mean position everywhere: MAE = mean |t − 7.5| = 4 for T = 16.
    assert probe.mae.mean == pytest.approx(4.0, abs=0.3)


def test_units_do_not_matter() -> None:
    states = _coded(2)
    base, scaled = probe_layer(states), probe_layer(states * 1e4)
    np.testing.assert_allclose(scaled.r2_per_seed, base.r2_per_seed, rtol=1e-8)
    np.testing.assert_allclose(scaled.mae_per_seed, base.mae_per_seed, rtol=1e-8)
    np.testing.assert_allclose(scaled.control_r2_per_seed, base.control_r2_per_seed, rtol=1e-8)


@pytest.mark.slow
def test_folds_grouped_by_sequence_leave_no_leak_that_row_folds_would() -> None:
    # Each sequence its own random walk: a state is its predecessor plus a fresh step, so rows of
    # one sequence reveal each other's positions, while no code is shared across sequences.
    b, t, d = 8, 10, 100
    walk = np.cumsum(_noise(3, (1, b, t, d)), axis=2)
    grouped = probe_layer(walk)
    assert grouped.r2_per_seed[0] < 0.1
    x, y = walk[0].reshape(b * t, d), np.tile(np.arange(t), b).astype(float)
    by_row, _, _ = nested_ridge_predictions(x, y, np.arange(b * t), n_folds=5, seed=0)
    leaked = 1 - np.sum((by_row - y) ** 2) / np.sum((y - y.mean()) ** 2)
    assert leaked > 0.5  # the same probe with folds that split sequences: a leak, not a code


@pytest.mark.slow
def test_a_code_held_in_magnitudes_needs_the_quadratic_features() -> None:
    # Position only in the spread of the state (∝ 1/√(t+1), as an average over t + 1 values):
    # invisible to a linear probe, read through the squares; the control stays at 0 either way.
    spread_code = _noise(9, (E, B, T, 32)) / np.sqrt(np.arange(T) + 1)[None, None, :, None] + 0.5
    linear = probe_layer(spread_code)
    quadratic = probe_layer(spread_code, features="quadratic")
    assert linear.r2.mean < 0.05 and not linear.evidence().better()
    assert quadratic.r2.mean > 0.3 and quadratic.evidence().better()
    assert (np.abs(quadratic.control_r2_per_seed) < 0.05).all()
    rescaled = probe_layer(spread_code * 1e3 + 7, features="quadratic")
    np.testing.assert_allclose(rescaled.r2_per_seed, quadratic.r2_per_seed, rtol=1e-8)
    assert position_probe_by_layer([spread_code], features="quadratic").features == "quadratic"
    with pytest.raises(ValueError, match="features='cubic' is unknown"):
        probe_layer(spread_code, features="cubic")


def test_every_layer_is_probed_the_same_way() -> None:
    result = position_probe_by_layer([_noise(4), _coded(5)])
    assert (result.length, result.n_sequences, result.n_folds) == (T, B, 5)
    assert [p.layer for p in result.layers] == [0, 1]
    assert result.layers[1].r2.mean > 0.8 > result.layers[0].r2.mean
    frame = result.frame()
    assert len(frame) == 4 and set(frame["metric"]) == {"r2", "mae"}
    assert (frame["seeds"] == E).all()


def test_control_labels_are_each_sequences_positions_reordered() -> None:
    labels = shuffled_positions(50, 9, seed=0)
    assert (np.sort(labels, axis=1) == np.arange(9)).all()
    assert (labels != np.arange(9)).any(axis=1).mean() > 0.9
    np.testing.assert_array_equal(labels, shuffled_positions(50, 9, seed=0))


def test_bad_inputs_name_the_fix() -> None:
    with pytest.raises(ValueError, match="seeds, sequences, positions, width"):
        probe_layer(np.zeros((B, T, D)))
    with pytest.raises(ValueError, match="at least 5 sequences"):
        probe_layer(_noise(6, (1, 3, T, D)))
    with pytest.raises(ValueError, match="same \\(seeds, sequences, positions\\)"):
        position_probe_by_layer([_noise(7), _noise(8, (E, B, T + 1, D))])
    with pytest.raises(ValueError, match="non-finite"):
        probe_layer(np.full((1, B, T, D), np.nan))
    with pytest.raises(ValueError, match="no layers"):
        position_probe_by_layer([])
