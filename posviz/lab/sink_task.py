"""A task whose heads must sometimes do nothing: the bigram-backcopy sequences of the sinks pilot.

Gu et al. ("When Attention Sink Emerges in Language Models: An Empirical View", ICLR 2025,
https://arxiv.org/abs/2410.10781) see the first-token sink in a 60M model after about a billion
tokens; the lab's character LMs at 2–4 layers never form one (``docs/benchmarks.md``, the sinks
pilot). Bondarenko, Nagel & Blankevoort ("Quantizable Transformers: Removing Outliers by Helping
Attention Heads Do Nothing", NeurIPS 2023, https://arxiv.org/abs/2306.12929, §3) trace sinks to
heads that are useful only for some tokens: for the others a softmax head must still spend all its
weight somewhere, and it learns to park it on a token whose value adds (almost) nothing. Guo et al.
("Active-Dormant Attention Heads: Mechanistically Demystifying Extreme-Token Phenomena in LLMs",
2024, https://arxiv.org/abs/2410.13835) build such a task, *Bigram-Backcopy*, and find the sink in
one- to three-layer transformers. This module is the lab's version of it (its own chain, sizes and
rules; not the authors' data):

* a fixed bigram chain over ``n_plain`` plain tokens (:func:`bigram_chain`): every plain token
  has ``successors`` possible next tokens with random weights;
* ``n_triggers`` *trigger* tokens: after a plain token the next one is a trigger with chance
  ``p_trigger`` (else the chain's draw), and **the token after a trigger copies the token before
  it** (:func:`backcopy_batch`): ``x_{t+1} = x_{t−1}`` when ``x_t`` is a trigger;
* a sequence starts with a BOS token (id ``n_plain + n_triggers``; ``bos=False``: a plain token
  drawn uniformly instead).

Predicting a copy needs attention to the previous token; every other next token depends on the
current token alone, so a head that copies is useful at the triggers only and must do nothing at
the other ≈ 90 % of the positions — the situation Bondarenko et al. and Guo et al. name as a sink's
cause. Triggers are inserted after plain tokens only, so the copied token is always plain and a
copy never chains; which token precedes a trigger is the chain's (nearly uniform) marginal, so the
trigger alone does not tell the copy — a model that cannot attend to the previous token is at
chance there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the chain is part of the task's definition, not of a run's seed: one fixed draw
CHAIN_SEED = 20241017


@dataclass(frozen=True)
class Chain:
    """A bigram chain over the plain tokens, with triggers inserted at random.

    Attributes:
        probs: ``(p, p)`` row-stochastic next-token probabilities among the plain tokens
            ``0 … p−1``.
        n_triggers: triggers, ids ``p … p + n_triggers − 1``.
        p_trigger: after a plain token, the chance that the next one is a trigger (uniform among
            them) instead of the chain's draw.
    """

    probs: np.ndarray
    n_triggers: int
    p_trigger: float

    @property
    def n_plain(self) -> int:
        return len(self.probs)

    @property
    def n_tokens(self) -> int:
        """Plain tokens and triggers (the outputs); the BOS is one more input."""
        return self.n_plain + self.n_triggers

    @property
    def bos(self) -> int:
        """The BOS token's id (one past the chain's tokens)."""
        return self.n_tokens

    def is_trigger(self, tokens: np.ndarray) -> np.ndarray:
        tokens = np.asarray(tokens)
        return (tokens >= self.n_plain) & (tokens < self.n_tokens)


def bigram_chain(
    n_plain: int = 29,
    n_triggers: int = 3,
    successors: int = 4,
    p_trigger: float = 0.1,
    seed: int = CHAIN_SEED,
) -> Chain:
    """The fixed chain: each plain token's ``successors`` next plain tokens drawn without
    replacement, with Dirichlet(1) weights.

    Raises:
        ValueError: sizes the chain cannot have (the message says which).
    """
    if n_plain < 2 or n_triggers < 1:
        raise ValueError(f"n_plain={n_plain} must be ≥ 2 and n_triggers={n_triggers} ≥ 1.")
    if not 1 <= successors <= n_plain:
        raise ValueError(f"successors={successors} must be in [1, n_plain={n_plain}].")
    if not 0 < p_trigger < 1:
        raise ValueError(f"p_trigger={p_trigger!r} must be in (0, 1).")
    rng = np.random.default_rng(seed)
    probs = np.zeros((n_plain, n_plain))
    for token in range(n_plain):
        picked = rng.choice(n_plain, size=successors, replace=False)
        probs[token, picked] = rng.dirichlet(np.ones(successors))
    return Chain(probs=probs, n_triggers=n_triggers, p_trigger=p_trigger)


@dataclass(frozen=True)
class Batch:
    """``inputs``/``targets`` ``(n, length)`` int64 (``targets`` the inputs shifted by one);
    ``copy`` ``(n, length)`` bool: the targets that are back-copies (the input is a trigger)."""

    inputs: np.ndarray
    targets: np.ndarray
    copy: np.ndarray


def backcopy_batch(
    chain: Chain, rng: np.random.Generator, n: int, length: int, *, bos: bool = True
) -> Batch:
    """``n`` sequences of ``length`` inputs (and their next tokens) of the bigram-backcopy task.

    With ``bos`` the first input is the BOS token and the second a plain token drawn uniformly;
    without, the first input is that plain token. After a plain token the next is a trigger with
    chance ``p_trigger``, else the chain's draw; a trigger's next token is the token before it.

    Raises:
        ValueError: ``length < 2`` or ``n < 1``.
    """
    if length < 2 or n < 1:
        raise ValueError(f"length={length} must be ≥ 2 and n={n} ≥ 1.")
    total = length + 1
    seq = np.empty((n, total), dtype=np.int64)
    start = 1 if bos else 0
    if bos:
        seq[:, 0] = chain.bos
    seq[:, start] = rng.integers(0, chain.n_plain, size=n)
    cumulative = np.cumsum(chain.probs, axis=1)
    cumulative[:, -1] = 1.0
    for t in range(start + 1, total):
        current = seq[:, t - 1]
        copies = chain.is_trigger(current)
        plain = np.where(copies, 0, current)
        drawn = (rng.random(n)[:, None] < cumulative[plain]).argmax(1)
        trigger = chain.n_plain + rng.integers(0, chain.n_triggers, size=n)
        drawn = np.where(rng.random(n) < chain.p_trigger, trigger, drawn)
        if t >= 2:
            drawn = np.where(copies, seq[:, t - 2], drawn)
        seq[:, t] = drawn
    inputs, targets = seq[:, :-1], seq[:, 1:]
    return Batch(inputs=inputs, targets=targets, copy=chain.is_trigger(inputs))
