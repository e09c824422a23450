"""Position-blind ceilings: the closed form against brute-force enumeration of every sequence,
against a simulation on the lab's own task generator, and the cases with no ceiling."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

from posviz.lab.engine import bounds
from posviz.lab.engine.bounds import (
    chance_level,
    chance_loss,
    max_count_moments,
    position_blind_ceiling,
    position_blind_ceilings,
    simulate_position_blind,
)
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.tasks import eval_rng, make_batch


def _config(task: str, vocab: int, n: int, k: int = 1) -> LabConfig:
    return LabConfig(task=task, vocab=vocab, k=k, min_len=n, max_len=n, eval_lengths=(n,))


def _brute_force_ceiling(task: str, vocab: int, n: int, k: int) -> float:
    """Enumerate all vocab^n sequences: for each (multiset, own token) take the best target."""
    tally: dict[tuple, np.ndarray] = defaultdict(lambda: np.zeros(vocab))
    counted = 0
    for x in itertools.product(range(vocab), repeat=n):
        multiset = tuple(sorted(x))
        for t in range(n):
            if task == "kback" and t < k:
                continue
            target = x[n - 1 - t] if task == "reverse" else x[t - k]
            tally[(multiset, x[t])][target] += 1
            counted += 1
    return sum(v.max() for v in tally.values()) / counted


@pytest.mark.parametrize(
    ("task", "vocab", "n", "k"),
    [
        ("reverse", 3, 4, 1),
        ("reverse", 3, 5, 1),  # odd: the middle slot is its own target
        ("reverse", 2, 7, 1),
        ("reverse", 4, 6, 1),
        ("kback", 3, 5, 2),
        ("kback", 2, 6, 1),
        ("kback", 4, 5, 3),
    ],
)
def test_ceiling_equals_brute_force_enumeration(task: str, vocab: int, n: int, k: int) -> None:
    bound = position_blind_ceiling(_config(task, vocab, n, k))
    assert bound.method == "exact" and bound.error == 0.0 and bound.length == n
    assert bound.value == pytest.approx(_brute_force_ceiling(task, vocab, n, k), abs=1e-12)


@pytest.mark.parametrize(("vocab", "n"), [(2, 5), (3, 4), (4, 6), (5, 3)])
def test_max_count_moments_equal_enumeration(vocab: int, n: int) -> None:
    top, top_unique = [], []
    for x in itertools.product(range(vocab), repeat=n):
        counts = np.bincount(x, minlength=vocab)
        m1 = counts.max()
        top.append(m1)
        top_unique.append(m1 * ((counts == m1).sum() == 1))
    mean_max, mean_max_unique = max_count_moments(vocab, n)
    assert mean_max == pytest.approx(np.mean(top), abs=1e-12)
    assert mean_max_unique == pytest.approx(np.mean(top_unique), abs=1e-12)


def test_tail_cut_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = max_count_moments(16, 40)
    monkeypatch.setattr(bounds, "TAIL", 0.0)  # no cut: every count 0 … n
    assert max_count_moments(16, 40) == pytest.approx(cut, rel=1e-13)


@pytest.mark.parametrize(("task", "n"), [("reverse", 12), ("reverse", 13), ("kback", 32)])
def test_simulation_on_the_lab_generator_agrees_with_the_closed_form(task: str, n: int) -> None:
    config = _config(task, 16, n, 2)
    exact = position_blind_ceiling(config)
    simulated = simulate_position_blind(config, n_sequences=20_000, seed=1)
    assert simulated.method == "simulated" and 0 < simulated.error < 0.002
    assert abs(simulated.value - exact.value) < 4 * simulated.error


def test_reverse_preset_ceiling_is_0_223() -> None:
    # The learned-vs-sinusoid preset (vocab 16, length 12): stated in the module docstring and
    # by the reviewer as ≈ 0.223; the NoPE encoder measured 0.218 ± 0.003 under it.
    bound = position_blind_ceiling(_config("reverse", 16, 12))
    assert bound.value == pytest.approx(0.2230, abs=5e-5)
    assert bound.text() == "0.223 (exact)"
    assert chance_level(_config("reverse", 16, 12)).value == 1 / 16


def test_count_needs_no_positions() -> None:
    config = _config("count", 16, 12)
    assert position_blind_ceiling(config).value == 1.0
    assert simulate_position_blind(config, n_sequences=2000).value == 1.0


def test_count_chance_is_the_most_likely_count() -> None:
    config = _config("count", 3, 4)
    tally = np.zeros(5)
    for x in itertools.product(range(3), repeat=4):
        for t in range(4):
            tally[x.count(x[t])] += 1
    assert chance_level(config).value == pytest.approx(tally.max() / tally.sum(), abs=1e-12)


def test_a_causal_decoder_has_no_position_blind_ceiling() -> None:
    lm = LabConfig(task="lm", min_len=32, max_len=32, eval_lengths=(32, 64))
    bound = position_blind_ceiling(lm, kind="decoder")
    assert bound.value is None and bound.method == "none"
    assert "Haviv et al. 2022" in bound.text() and "no control" in bound.text()
    assert set(position_blind_ceilings(lm, kind="decoder")) == {32, 64}
    kback = _config("kback", 16, 12, 2)
    assert position_blind_ceiling(kback, kind="decoder").value is None
    assert position_blind_ceiling(kback, kind="encoder").value == pytest.approx(0.2230, abs=5e-5)


def test_refuses_pairs_the_lab_cannot_train() -> None:
    lm = LabConfig(task="lm", min_len=32, max_len=32, eval_lengths=(32,))
    with pytest.raises(ValueError, match="task='lm' needs kind='decoder'"):
        position_blind_ceiling(lm, kind="encoder")
    with pytest.raises(ValueError, match="use kind='encoder'"):
        position_blind_ceiling(_config("reverse", 16, 12), kind="decoder")
    with pytest.raises(ValueError, match="kind='bidirectional' is unknown"):
        position_blind_ceiling(_config("reverse", 16, 12), kind="bidirectional")
    with pytest.raises(ValueError, match="length=1"):
        position_blind_ceiling(_config("reverse", 16, 12), length=1)
    with pytest.raises(ValueError, match="synthetic tasks"):
        simulate_position_blind(LabConfig(task="mlm", min_len=32, max_len=32, eval_lengths=(32,)))


def test_mlm_ceiling_bounds_every_blind_rule_on_the_held_out_windows() -> None:
    config = LabConfig(task="mlm", min_len=48, max_len=48, eval_lengths=(48,), eval_batch=128)
    bound = position_blind_ceiling(config)
    chance = chance_level(config)
    assert bound.method == chance.method == "held-out set" and bound.error > 0
    assert chance.value <= bound.value < 1
    # A blind rule that uses the multiset: guess the sequence's most frequent visible character.
    hits = slots = 0
    for seed in range(config.seeds):
        batch = make_batch(config, eval_rng(seed, 48), np.full(128, 48), held_out=True)
        for inputs, targets, mask in zip(batch.inputs, batch.targets, batch.mask, strict=True):
            guess = np.bincount(inputs[~mask]).argmax()
            hits += int((targets[mask] == guess).sum())
            slots += int(mask.sum())
    assert hits / slots <= bound.value


def test_chance_loss_is_the_best_input_free_cross_entropy() -> None:
    assert chance_loss(_config("reverse", 16, 12)).value == pytest.approx(np.log(16))
    count = _config("count", 3, 4)
    tally = np.zeros(5)
    for x in itertools.product(range(3), repeat=4):
        for t in range(4):
            tally[x.count(x[t])] += 1
    p = tally[tally > 0] / tally.sum()
    assert chance_loss(count).value == pytest.approx(-(p * np.log(p)).sum(), abs=1e-12)
    # Text: predicting the held-out character frequencies everywhere scores exactly this loss,
    # and any other fixed distribution (here uniform) scores more.
    config = LabConfig(task="lm", min_len=32, max_len=32, eval_lengths=(32,), eval_batch=64)
    bound = chance_loss(config)
    targets = np.concatenate(
        [
            make_batch(config, eval_rng(s, 32), np.full(64, 32), held_out=True).targets.ravel()
            for s in range(config.seeds)
        ]
    )
    freq = np.bincount(targets) / targets.size
    assert bound.method == "held-out set"
    assert np.mean(-np.log(freq[targets])) == pytest.approx(bound.value, rel=1e-12)
    assert bound.value < np.log(freq.size)


def test_the_no_composition_ceiling_is_the_tasks_own_with_a_fixed_period() -> None:
    """Random periods (4–8, the task as built): a one-layer rule without composition stays far
    under 1; a fixed period (k = n/2) lets one fixed offset copy the answer: ceiling 1."""
    from dataclasses import replace as _replace

    from posviz.lab.engine.bounds import no_composition_ceiling
    from posviz.lab.studies.presets import QUESTIONS

    config = QUESTIONS["induction"].default
    random_period = no_composition_ceiling(config, heads=2)
    assert 0.3 < random_period.value < 0.9
    assert no_composition_ceiling(config, heads=8).value > random_period.value  # more offsets
    fixed = no_composition_ceiling(_replace(config, k=config.min_len // 2), heads=1)
    assert fixed.value == 1.0
    with pytest.raises(ValueError, match="induction"):
        no_composition_ceiling(_replace(config, task="reverse"), heads=2)
