"""What a model that cannot tell positions apart can score: each task's position-blind ceiling.

An encoder without positions is permutation-equivariant: its output at position ``t`` is a
function of its own token ``x_t`` and of the multiset ``M`` of the sequence's tokens, nothing else
(bidirectional attention has no mask to count predecessors with: Haviv et al. 2022, §6). The best
such model predicts, for each pair ``(own token a, multiset M)``, the target ``y`` that occurs most
often there. With tokens drawn i.i.d. uniformly from ``V`` (the synthetic tasks), given ``M`` every
arrangement of the sequence is equally likely, so the expected number of counted positions with
own token ``a`` and target ``y`` follows from the counts ``c`` of ``M`` alone::

    reverse, y_t = x_{n−1−t}, n even:  N(a, y) = c_a (c_y − [a = y]) / (n − 1)
    reverse, n odd (the middle slot is its own target):  N(a, y) = c_a c_y / n
    kback,  y_t = x_{t−k}, t ≥ k:      N(a, y) = (n − k) c_a (c_y − [a = y]) / (n (n − 1))

Summing ``max_y N(a, y)`` over ``a`` needs only ``m₁ = max_y c_y`` and whether one token alone
holds it (``U = 1``) or several tie (``U = 0``): the best target for the top token is another
top token if there is a tie, else itself with ``m₁ − 1``; every other token's is a top token. So::

    ceiling(reverse, n even) = ceiling(kback) = E[m₁ (n − U)] / (n (n − 1))
    ceiling(reverse, n odd)  = E[m₁] / n

``E[m₁]`` and ``E[m₁ U]`` for ``M ~ Multinomial(n, 1/V)`` come from a dynamic programme over the
``V`` tokens (``P(all counts ≤ k)``, token by token with binomial splits), exact up to float64
rounding; ``tests/test_lab_bounds.py`` checks it against brute-force enumeration of every
sequence on tiny ``V`` and ``n``, and against :func:`simulate_position_blind` on the lab's own task
generator. Reverse with ``V = 16``, ``n = 12``: 0.2230 (the reviewer's ≈ 0.223).

``count`` needs no position (the target is a function of ``a`` and ``M``): ceiling 1. ``mlm``: every
masked slot holds the same input, the mask token, so a position-blind encoder gives all masked
slots of one sequence the same prediction; at best that is the sequence's most frequent masked
character. That ceiling is computed on the very held-out windows the lab evaluates (an upper
bound: the blind model does not know which character that is).

A causal decoder has no position-blind ceiling: position ``t`` attends to exactly ``t + 1`` tokens,
so it can count its predecessors and learn absolute position with no encoding at all (Haviv et
al. 2022); :func:`position_blind_ceiling` says so instead of returning a number.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from posviz.lab.engine.config import CAUSAL_TASKS, KINDS, LabConfig
from posviz.lab.engine.tasks import (
    TEXT_TASKS,
    eval_rng,
    induction_batch,
    make_batch,
    vocab_sizes,
)

Method = Literal["exact", "simulated", "held-out set", "none"]

#: Tail mass left out of the max-count sums (union bound); far below float64 resolution of a mean.
TAIL = 1e-18
NO_BOUND_DECODER = (
    "no position-blind ceiling: a causal decoder is not permutation-equivariant — position t "
    "attends to exactly t + 1 tokens, so it can count its predecessors and learn absolute "
    "position without any encoding (Haviv et al. 2022). Its no-position arm is no control."
)


@dataclass(frozen=True)
class Bound:
    """A bound on accuracy at one evaluation length, and how it was obtained.

    Attributes:
        value: the bound, or ``None`` where none applies (the causal decoder).
        method: ``"exact"`` (closed form, float64), ``"simulated"`` (Monte Carlo; ``error`` is
            its standard error), ``"held-out set"`` (computed on the lab's own held-out
            sequences; ``error`` is the standard error over those sequences) or ``"none"``.
        error: standard error of ``value``; 0.0 for exact values.
        length: the evaluation length it holds for.
        explanation: one or two sentences: what bounds what, and how it was computed.
    """

    value: float | None
    method: Method
    error: float
    length: int
    explanation: str

    def text(self, digits: int = 3) -> str:
        """``"0.223 (exact)"``, ``"0.41 ± 0.01 (simulated, ± 1 s.e.)"`` or the reason for none."""
        if self.value is None:
            return self.explanation
        if self.error > 0:
            return f"{self.value:.{digits}f} ± {self.error:.{digits}f} ({self.method}, ± 1 s.e.)"
        return f"{self.value:.{digits}f} ({self.method})"


def _checked(config: LabConfig, kind: str, length: int | None) -> int:
    """The evaluation length, after checking the task/attention pair the lab can train."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is unknown; choose one of {', '.join(KINDS)}.")
    if kind == "encoder" and config.task == "lm":
        raise ValueError(
            "task='lm' needs kind='decoder': an encoder would see the character it predicts."
        )
    if kind == "encoder" and config.task == "induction":
        raise ValueError(
            "task='induction' needs kind='decoder': an encoder would see the token it predicts."
        )
    if kind == "decoder" and config.task not in CAUSAL_TASKS:
        raise ValueError(
            f"task={config.task!r} needs the whole sequence, which a causal decoder cannot see; "
            f"use kind='encoder' (decoder tasks: {', '.join(CAUSAL_TASKS)})."
        )
    n = config.eval_lengths[0] if length is None else length
    if isinstance(n, bool) or not isinstance(n, int) or n < max(2, config.k + 1):
        raise ValueError(
            f"length={n!r} must be a whole number ≥ {max(2, config.k + 1)} (an evaluation length)."
        )
    return n


def _binomial_pmf(n: int, p: float, k_max: int) -> np.ndarray:
    """``(n + 1, k_max + 1)``: ``P(Binomial(r, p) = j)`` for ``r = 0 … n``, ``j = 0 … k_max``."""
    # Lazy: scipy is heavy and only needed when a bound is computed.
    from scipy.stats import binom

    r = np.arange(n + 1)[:, None]
    j = np.arange(k_max + 1)[None, :]
    return binom.pmf(j, r, p)


def _tail_cut(vocab: int, length: int) -> int:
    """Smallest ``K`` with ``P(max count > K) ≤ V · P(Binomial(n, 1/V) > K) < TAIL``."""
    from scipy.stats import binom  # lazy, as in _binomial_pmf

    survival = vocab * binom.sf(np.arange(length + 1), length, 1 / vocab)
    below = np.nonzero(survival < TAIL)[0]
    return int(below[0]) if below.size else length


def max_count_moments(vocab: int, length: int) -> tuple[float, float]:
    """``(E[m₁], E[m₁·U])`` for ``length`` tokens drawn i.i.d. uniformly from ``vocab``.

    ``m₁`` is the largest token count, ``U = 1`` when a single token holds it. With ``Q_i^(k)(r)``
    the probability that ``r`` tokens spread uniformly over ``i`` symbols leave every count ``≤ k``,
    ``Q_i^(k)(r) = Σ_{j≤k} Binom(j; r, 1/i) · Q_{i−1}^(k)(r − j)`` (symbol ``i`` takes ``j`` of
    them), so ``P(m₁ ≤ k) = Q_V^(k)(n)`` and
    ``P(m₁ = k, U = 1) = V · Binom(k; n, 1/V) · Q_{V−1}^(k−1)(n − k)``. Counts above the union-bound
    cut (:data:`TAIL`) are left out.

    Raises:
        ValueError: ``vocab < 2`` or ``length < 1``.
    """
    if vocab < 2 or length < 1:
        raise ValueError(
            f"max_count_moments needs vocab ≥ 2 and length ≥ 1; got {vocab}, {length}."
        )
    n = length
    k_max = min(_tail_cut(vocab, n), n)
    q = np.zeros((k_max + 1, n + 1))  # q[k, r] = Q_i^(k)(r), starting from i = 0 symbols
    q[:, 0] = 1.0
    below_top = q
    for i in range(1, vocab + 1):
        pmf = _binomial_pmf(n, 1 / i, k_max)
        new = np.zeros_like(q)
        for j in range(k_max + 1):  # symbol i takes j tokens; allowed for every cap k ≥ j
            new[j:, j:] += pmf[j:, j][None, :] * q[j:, : n + 1 - j]
        if i == vocab - 1:
            below_top = new
        q = new
    at_most = q[:, n]  # P(m₁ ≤ k), k = 0 … k_max
    mean_max = float(np.sum(1.0 - at_most[: min(k_max + 1, n)]))
    ks = np.arange(1, min(k_max + 1, n) + 1)
    top = _binomial_pmf(n, 1 / vocab, int(ks[-1]))[n, ks]
    unique = vocab * top * below_top[ks - 1, n - ks]
    return mean_max, float(np.sum(ks * unique))


def _exact_ceiling(config: LabConfig, n: int) -> tuple[float, str]:
    mean_max, mean_max_unique = max_count_moments(config.vocab, n)
    if config.task == "reverse" and n % 2:
        return mean_max / n, (
            f"odd n = {n}: the middle slot is its own target, which makes the most frequent "
            "token the best guess everywhere: E[max count] / n"
        )
    pairs = (n * mean_max - mean_max_unique) / (n * (n - 1))
    return pairs, (
        "the target is another slot's token; the best guess for own token a is a most frequent "
        "token (itself only while it is the unique top one): E[m₁ (n − U)] / (n (n − 1))"
    )


def _held_out_blind_upper(config: LabConfig, n: int) -> tuple[float, float]:
    """``mlm``: the best one-guess-per-sequence accuracy on the held-out windows, ± s.e."""
    best, counted = [], []
    for seed in config.seed_ids:
        batch = make_batch(config, eval_rng(seed, n), np.full(config.eval_batch, n), held_out=True)
        n_out = vocab_sizes(config)[1]
        for targets, mask in zip(batch.targets, batch.mask, strict=True):
            best.append(np.bincount(targets[mask], minlength=n_out).max())
            counted.append(mask.sum())
    hits, slots = np.asarray(best, dtype=float), np.asarray(counted, dtype=float)
    per_sequence = hits / slots
    error = float(per_sequence.std(ddof=1) / math.sqrt(per_sequence.size))
    return float(hits.sum() / slots.sum()), error


def position_blind_ceiling(
    config: LabConfig, *, kind: str = "encoder", length: int | None = None
) -> Bound:
    """The best accuracy any model that cannot tell positions apart reaches on ``config``'s task.

    Args:
        config: the task settings (task, vocab, k; held-out windows and seeds for ``mlm``).
        kind: ``"encoder"`` (permutation-equivariant without positions: a ceiling exists) or
            ``"decoder"`` (causal: none exists, the returned bound says why).
        length: evaluation length; default the first of ``config.eval_lengths``.
    Raises:
        ValueError: an unknown kind, a task/attention pair the lab refuses, a bad length.
    """
    n = _checked(config, kind, length)
    if kind == "decoder":
        return Bound(None, "none", 0.0, n, NO_BOUND_DECODER)
    if config.task == "count":
        return Bound(
            1.0,
            "exact",
            0.0,
            n,
            "count's target (how often my token occurs) is a function of my token and the "
            "multiset: positions are not needed, so the ceiling is 1.",
        )
    if config.task == "mlm":
        value, error = _held_out_blind_upper(config, n)
        return Bound(
            value,
            "held-out set",
            error,
            n,
            "every masked slot holds the mask token, so a position-blind encoder gives all masked "
            "slots of a sequence one prediction; at best the sequence's most frequent masked "
            f"character (upper bound on the {config.seeds} × {config.eval_batch} held-out "
            "windows the lab evaluates).",
        )
    value, how = _exact_ceiling(config, n)
    return Bound(
        value,
        "exact",
        0.0,
        n,
        f"{config.task}, vocab {config.vocab}, length {n}: a position-blind encoder sees its own "
        f"token and the multiset of tokens; {how}.",
    )


def position_blind_ceilings(config: LabConfig, *, kind: str = "encoder") -> dict[int, Bound]:
    """:func:`position_blind_ceiling` at every evaluation length of ``config``."""
    return {n: position_blind_ceiling(config, kind=kind, length=n) for n in config.eval_lengths}


def _target_distribution(config: LabConfig, n: int) -> tuple[np.ndarray, Method, str]:
    """The distribution of a counted target at length ``n``, and where it comes from."""
    if config.task in ("reverse", "kback", "induction"):
        # induction: a block is a uniformly random ordered draw of distinct tokens, so every
        # counted target (a block token) is uniform over the vocabulary too
        return np.full(config.vocab, 1 / config.vocab), "exact", "uniform tokens"
    if config.task == "count":
        pmf = _binomial_pmf(n - 1, 1 / config.vocab, n - 1)[n - 1]
        return pmf, "exact", "the count is 1 + Binomial(n − 1, 1/V)"
    hits, total = np.zeros(vocab_sizes(config)[1]), 0
    for seed in config.seed_ids:
        batch = make_batch(config, eval_rng(seed, n), np.full(config.eval_batch, n), held_out=True)
        hits += np.bincount(batch.targets[batch.mask], minlength=hits.size)
        total += int(batch.mask.sum())
    return hits / total, "held-out set", "the target characters of the held-out windows"


def chance_level(config: LabConfig, *, length: int | None = None) -> Bound:
    """The best accuracy without looking at the input: one fixed guess for every slot.

    Synthetic tokens are uniform, so any guess is right ``1/V`` of the time (reverse, kback);
    count's target is ``1 + Binomial(n − 1, 1/V)``, best guessed by its mode; the text tasks'
    best guess is their most frequent target character in the held-out windows the lab
    evaluates.

    Raises:
        ValueError: a bad length.
    """
    kind = "decoder" if config.task in ("lm", "induction") else "encoder"
    n = _checked(config, kind, length)
    p, method, source = _target_distribution(config, n)
    return Bound(float(p.max()), method, 0.0, n, f"the most likely target ({source}).")


def chance_loss(config: LabConfig, *, length: int | None = None) -> Bound:
    """The lowest held-out loss without looking at the input, in nats per counted target.

    One fixed predicted distribution ``q`` for every slot scores the cross-entropy
    ``−Σ_c p_c log q_c``, lowest at ``q = p``, the targets' own distribution: so this is the
    entropy ``H(p)`` (``log V`` for uniform tokens; for the text tasks, of the target characters
    of the very held-out windows the lab evaluates). A model whose held-out loss is not below it
    has learned nothing that carries to held-out data (untrained, or overfit to the training
    text). Unlike :func:`chance_level` this is a bound on loss, so lower is better.

    Raises:
        ValueError: a bad length.
    """
    kind = "decoder" if config.task in ("lm", "induction") else "encoder"
    n = _checked(config, kind, length)
    p, method, source = _target_distribution(config, n)
    nonzero = p[p > 0]
    entropy = float(-(nonzero * np.log(nonzero)).sum())
    return Bound(entropy, method, 0.0, n, f"the entropy of {source} (nats).")


def simulate_position_blind(
    config: LabConfig, *, length: int | None = None, n_sequences: int = 20_000, seed: int = 0
) -> Bound:
    """Monte Carlo check of the synthetic tasks' ceiling on the lab's own task generator.

    Draws ``n_sequences`` sequences with :func:`posviz.lab.engine.tasks.make_batch` and scores the
    optimal position-blind rule (predict the ``y`` maximising ``N(a, y)`` of the module
    docstring from the sequence's own token counts) against the generator's targets. The value
    is an unbiased estimate of the ceiling; ``error`` is its standard error over sequences.

    Raises:
        ValueError: a task other than reverse/kback/count, or a bad length.
    """
    n = _checked(config, "encoder", length)
    if config.task in TEXT_TASKS:
        raise ValueError(
            f"simulate_position_blind covers the synthetic tasks (reverse, kback, count), not "
            f"task={config.task!r}; use position_blind_ceiling."
        )
    rng = np.random.default_rng([int(seed), 2, n])
    batch = make_batch(config, rng, np.full(n_sequences, n))
    x = batch.inputs  # (B, n), all valid
    counts = np.stack([np.bincount(row, minlength=config.vocab) for row in x])  # (B, V)
    if config.task == "count":
        guess = np.take_along_axis(counts, x, axis=1)
    else:
        score = np.repeat(counts[:, None, :], n, axis=1).astype(float)  # (B, n, V): c_y
        if not (config.task == "reverse" and n % 2):
            np.put_along_axis(
                score, x[..., None], np.take_along_axis(score, x[..., None], 2) - 1, 2
            )
        guess = score.argmax(axis=2)
    correct = (guess == batch.targets) & batch.mask
    per_sequence = correct.sum(1) / batch.mask.sum(1)
    error = float(per_sequence.std(ddof=1) / math.sqrt(n_sequences))
    return Bound(
        float(per_sequence.mean()),
        "simulated",
        error,
        n,
        f"the optimal position-blind rule scored on {n_sequences:,} sequences of the lab's "
        "own generator.",
    )


def no_composition_ceiling(
    config: LabConfig,
    *,
    heads: int,
    length: int | None = None,
    n_sequences: int = 2_000,
    seed: int = 0,
) -> Bound:
    """What a one-layer model can reach on ``induction`` without composing two attention steps.

    One attention layer picks where to look from the query's own token and position and each
    key's own token and position; the key of the answer's slot carries no trace of the token
    before it (that needs a first layer), so no head can find "the token after my earlier copy".
    What it can do without composition is look at fixed offsets: each of its ``heads`` attends to
    one offset ``d`` chosen from the position ``t`` alone and copies ``x[t + 1 − d]`` (right
    exactly when the sequence's period divides ``d``). The rule scored here is more generous than
    any such model: it also knows the period (the number of distinct tokens seen, an order-free
    count), takes the copy of whichever head is right, and otherwise guesses among the block's
    other tokens (``1/(P − 1)``). Per position it uses the best set of ``heads`` offsets, found
    by trying every set on ``n_sequences`` sequences of the lab's own generator
    (:func:`posviz.lab.engine.tasks.make_batch`); the value is their mean over counted slots.

    With the period random per sequence (the task as built) this stays well under 1; with a
    fixed period one offset is always right and the ceiling is 1: the positional shortcut that
    makes a one-layer "control" reach the task's ceiling (tested).

    Raises:
        ValueError: a task other than induction, a bad length or head count.
    """
    if config.task != "induction":
        raise ValueError(
            "no_composition_ceiling is the induction task's control bound, not "
            f"task={config.task!r}."
        )
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise ValueError(f"heads={heads!r} must be a whole number ≥ 1.")
    n = _checked(config, "decoder", length)
    rng = np.random.default_rng([int(seed), 3, n])
    inputs, targets, repeat, periods = induction_batch(config, rng, np.full(n_sequences, n))
    guess = np.where(periods > 1, 1.0 / np.maximum(periods - 1, 1), 0.0)  # (B,)
    hits = total = 0.0
    for t in range(n - 1):
        rows = repeat[:, t]
        if not rows.any():
            continue
        x, y, g = inputs[rows], targets[rows, t], guess[rows]
        offsets = range(1, t + 2)  # copy x[t + 1 − d], a slot at or before t
        right = {d: x[:, t + 1 - d] == y for d in offsets}
        best = 0.0
        for chosen in itertools.combinations(offsets, min(heads, len(offsets))):
            any_right = np.logical_or.reduce([right[d] for d in chosen])
            best = max(best, float(np.where(any_right, 1.0, g).sum()))
        hits += best
        total += float(rows.sum())
    value = hits / total
    return Bound(
        value,
        "simulated",
        0.0,
        n,
        f"induction, vocab {config.vocab}, length {n}, periods {config.k}–{n // 2}: the best "
        f"rule without composition ({heads} fixed offsets per position, the period known, "
        f"else a guess among the block) on {n_sequences:,} sequences of the lab's generator.",
    )
