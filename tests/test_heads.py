"""Attention by relative distance and head classes on synthetic attention maps
(posviz.analysis.heads)."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.heads import (
    attention_by_distance,
    class_counts,
    classify_heads,
    head_scores,
    positional_heads,
    threshold_counts,
)

T = 6


def previous_map() -> np.ndarray:
    a = np.zeros((T, T))
    a[0, 0] = 1.0
    a[np.arange(1, T), np.arange(T - 1)] = 1.0
    return a


def sink_map() -> np.ndarray:
    a = np.zeros((T, T))
    a[:, 0] = 1.0
    return a


def uniform_causal_map() -> np.ndarray:
    a = np.tril(np.ones((T, T)))
    return a / a.sum(axis=1, keepdims=True)


def next_map() -> np.ndarray:
    a = np.zeros((T, T))
    a[np.arange(T - 1), np.arange(1, T)] = 1.0
    a[T - 1, T - 1] = 1.0
    return a


def test_each_pure_head_gets_its_class() -> None:
    maps = np.stack([previous_map(), sink_map(), np.eye(T), uniform_causal_map()])
    assert classify_heads(maps, causal=True).tolist() == [
        "previous-token",
        "first-token (sink)",
        "self",
        "broad",
    ]
    assert classify_heads(next_map(), causal=False).tolist() == "next-token"
    assert classify_heads(sink_map()[:, ::-1], causal=False).tolist() == "last-token"
    # a causal model has no next-token class (its maps cannot have one; the rule is not applied)
    assert classify_heads(next_map(), causal=True).tolist() == "broad"


def test_uniform_causal_scores_are_hand_computed() -> None:
    """Query i spreads 1/(i+1) over its keys: the first-token score is the mean of 1/(i+1) over
    i = 1 … T−1, and so are the previous-token and self scores."""
    expected = np.mean([1 / (i + 1) for i in range(1, T)])
    scores = head_scores(uniform_causal_map())
    for name in ("first-token (sink)", "previous-token", "self"):
        assert scores[name] == pytest.approx(expected)


def test_causal_counts_leave_out_the_look_ahead_classes() -> None:
    assert set(threshold_counts(sink_map(), causal=True)) == {
        "previous-token",
        "first-token (sink)",
        "self",
    }
    assert "last-token" in threshold_counts(sink_map(), causal=False)


def test_by_distance_puts_the_mass_where_the_head_looks() -> None:
    distances, mass = attention_by_distance(previous_map(), causal=True)
    assert distances.tolist() == list(range(T))
    assert mass[1] == 1.0 and mass[0] == pytest.approx(1 / T)  # only query 0 looks at itself
    distances, mass = attention_by_distance(next_map(), causal=False)
    assert distances[0] == -(T - 1) and mass[distances.tolist().index(-1)] == 1.0


def test_threshold_counts_overlap_but_classes_do_not() -> None:
    """A head with 0.45 on the previous token and 0.55 on the first passes both thresholds;
    its class is the one passed by the larger margin (0.45/0.4 > 0.55/0.5)."""
    a = np.zeros((T, T))
    a[0, 0] = 1.0
    for i in range(1, T):
        a[i, 0] += 0.55
        a[i, i - 1] += 0.45
    a[1] = 0.0
    a[1, 0] = 1.0  # query 1's previous token is the first token
    maps = np.stack([a, sink_map()])
    scores = head_scores(a)
    assert scores["previous-token"] > 0.4 and scores["first-token (sink)"] > 0.5
    assert threshold_counts(maps, causal=True) == {
        "previous-token": 1,  # the sink head's query 1 has the first token as its previous
        "first-token (sink)": 2,
        "self": 0,
    }
    labels = classify_heads(maps, causal=True)
    assert class_counts(labels)["first-token (sink)"] == 1
    assert sum(class_counts(labels).values()) == 2


def test_bad_maps_are_refused() -> None:
    with pytest.raises(ValueError, match="T ≥ 2"):
        head_scores(np.ones((3, 4)))


def test_leaving_the_sink_key_out_removes_the_rise_at_the_last_distance() -> None:
    """A pure sink head's profile is 1/(T − Δ) per distance, rising to 1 at Δ = T−1, which is
    the single cell A[T−1, 0]; with key 0 left out that point has no query (NaN) and the rest
    is 0 (the head puts nothing anywhere else)."""
    _, mass = attention_by_distance(sink_map(), causal=True)
    assert mass[-1] == 1.0 and mass[0] == pytest.approx(1 / T)
    _, content = attention_by_distance(sink_map(), causal=True, skip_keys=(0,))
    assert np.isnan(content[-1]) and np.nansum(content) == 0.0
    # a uniform causal head: at Δ = 0 the mean of 1/(i+1) over the queries 1 … T−1
    _, uniform = attention_by_distance(uniform_causal_map(), causal=True, skip_keys=(0,))
    assert uniform[0] == pytest.approx(np.mean([1 / (i + 1) for i in range(1, T)]))


def test_a_positional_head_keeps_its_distance_on_every_prompt() -> None:
    """Profiles ``(heads, prompts, D)``: head 0 puts 0.6 at Δ = 1 on every text and shuffled
    prompt (positional); head 1 does on the texts but moves to Δ = 3 when shuffled (its pattern
    follows the words); head 2 is uniform (about 1/D everywhere: the untrained control)."""
    d, prompts = 5, 3
    text = np.full((3, prompts, d), 0.1)
    text[0, :, 1] = text[1, :, 1] = 0.6
    other = text.copy()
    other[1, :, 1], other[1, :, 3] = 0.1, 0.6
    text[2], other[2] = 1 / d, 1 / d
    positional, peak = positional_heads(text, other)
    assert positional.tolist() == [True, False, False]
    assert peak[0] == 1
    other[0, 1, 1] = 0.29  # one prompt under the threshold is enough to fail
    assert not positional_heads(text, other)[0][0]
    with pytest.raises(ValueError, match="must match"):
        positional_heads(text, other[..., :-1])
