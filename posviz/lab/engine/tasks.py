"""Deterministic, offline tasks: every batch is a pure function of (task settings, seed, step).

Each task maps an input sequence to one target per position, with a mask of the positions that
count (padding and undefined targets do not):

* ``reverse`` — ``y[t] = x[n−1−t]``: needs absolute order (which position am I, how long is it).
* ``kback`` — ``y[t] = x[t−k]`` for ``t ≥ k``: needs a relative offset only.
* ``count`` — ``y[t] = #{s : x[s] = x[t]}``: a histogram, the same for any order of the tokens —
  the control where positions cannot help.
* ``lm`` — ``y[t] = c[t+1]``: next character of the lab's public-domain text (five narrative
  books of the King James Version, :mod:`posviz.data.lab_text`, 416,058 characters); training
  windows come from the first 90 %, held-out ones from the last 10 % (books never trained on).
* ``mlm`` — masked characters (for an encoder): in a window of the same texts (same 90 % / 10 %
  split), ``round(0.15·n)`` characters (at least one) are replaced by a mask token and only those
  count, ``y[t] = c[t]``. 15 % is BERT's rate (Devlin et al. 2019, §3.1); unlike BERT every chosen
  character becomes the mask token (no 80/10/10 split), so a masked slot carries no trace of its
  character and the position-blind ceiling (:mod:`posviz.lab.engine.bounds`) stays exact.
* ``induction`` — next token of a repeated random block (for a causal decoder): each sequence of
  length ``n`` draws its own period ``P`` uniformly from ``k … ⌊n/2⌋`` and a block of ``P``
  distinct tokens, then repeats it, ``x[t] = x[t − P]`` for ``t ≥ P``; the target is the next
  token, ``y[t] = x[t+1]``, counted only on the repeat (``P ≤ t ≤ n − 2``), where the current
  token occurred once before and the answer is the token that followed it there — the pattern
  an induction head completes (Olsson et al. 2022). The period is random because a fixed one is
  solved by a purely positional head (attend ``P − 1`` back). Distinct tokens make the earlier
  occurrence unique, so the ceiling is 1; chance is ``1/V``.

Lengths: ``"uniform"`` over ``[min_len, max_len]`` or ``"short"`` with ``P(n) ∝ 0.8^(n − min_len)``
(mostly short: the longest rows are rarely seen, as in Jexus 2020's reading of BERT). Padding
(token ``pad_id``) fills a batch to its longest sequence, at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from posviz.data.lab_text import lab_text
from posviz.lab.engine.config import LabConfig

SHORT_DECAY = 0.8
LM_HELD_OUT = 0.1
TEXT_TASKS: tuple[str, ...] = ("lm", "mlm")  # windows of the lab's text (posviz.data.lab_text)
#: Fraction of a window's characters that ``mlm`` masks (BERT's 15 %, Devlin et al. 2019 §3.1).
MLM_MASK_FRACTION = 0.15
#: The synthetic task whose tokens repeat: :func:`induction_batch`.
INDUCTION = "induction"
TRAIN_STREAM, EVAL_STREAM = 0, 1  # disjoint random streams: held-out data is never trained on


@dataclass(frozen=True)
class Batch:
    """``inputs``/``targets`` ``(B, T)`` int64; ``mask``: targets that count; ``valid``: not pad."""

    inputs: np.ndarray
    targets: np.ndarray
    mask: np.ndarray
    valid: np.ndarray


@lru_cache(maxsize=1)
def _alphabet() -> tuple[str, np.ndarray]:
    text = lab_text()
    chars = "".join(sorted(set(text)))
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    lookup = {ord(c): i for i, c in enumerate(chars)}
    return chars, np.array([lookup[int(c)] for c in codes], dtype=np.int64)


def vocab_sizes(config: LabConfig) -> tuple[int, int, int]:
    """``(n_in, n_out, pad_id)``: input tokens (padding included), output classes, padding token.

    ``mlm`` has one more input token than ``lm``, the mask (:func:`mask_id`), after padding.
    """
    if config.task in TEXT_TASKS:
        n = len(_alphabet()[0])
        return n + 1 + (config.task == "mlm"), n, n
    if config.task == "count":
        longest = max(config.max_len, *config.eval_lengths)
        return config.vocab + 1, longest + 1, config.vocab
    return config.vocab + 1, config.vocab, config.vocab


def sample_lengths(config: LabConfig, rng: np.random.Generator, batch: int) -> np.ndarray:
    """``(batch,)`` training lengths drawn from ``config.length_dist``."""
    lengths = np.arange(config.min_len, config.max_len + 1)
    if config.length_dist == "uniform":
        weights = np.ones(len(lengths))
    else:
        weights = SHORT_DECAY ** (lengths - config.min_len)
    return rng.choice(lengths, size=batch, p=weights / weights.sum())


def mask_id(config: LabConfig) -> int:
    """The mask token of ``mlm`` (the last input token, after padding).

    Raises:
        ValueError: ``config.task`` is not ``"mlm"``.
    """
    if config.task != "mlm":
        raise ValueError(f"task={config.task!r} has no mask token; only task='mlm' masks.")
    return vocab_sizes(config)[0] - 1


def masked_count(length: int) -> int:
    """Characters ``mlm`` masks in a window of ``length``: ``round(0.15·length)``, at least 1."""
    return max(1, round(MLM_MASK_FRACTION * length))


def length_probabilities(config: LabConfig) -> np.ndarray:
    """``(max_len + 1,)``: probability that a training sequence reaches position ``p`` (n > p)."""
    lengths = np.arange(config.min_len, config.max_len + 1)
    w = (
        np.ones(len(lengths))
        if config.length_dist == "uniform"
        else SHORT_DECAY ** (lengths - config.min_len)
    )
    w = w / w.sum()
    return np.array([w[lengths > p].sum() for p in range(config.max_len + 1)])


def reach_probability(config: LabConfig, position: int) -> float:
    """Probability that a training sequence reaches ``position`` (0-based), from
    :func:`length_probabilities` — the number a page states as "1 in N" (:func:`one_in`).

    Raises:
        ValueError: ``position`` outside ``0 … max_len − 1``.
    """
    if isinstance(position, bool) or not isinstance(position, int):
        raise ValueError(f"position={position!r} must be a whole number.")
    if not 0 <= position < config.max_len:
        raise ValueError(
            f"position={position} is outside the training positions 0 … {config.max_len - 1}."
        )
    return float(length_probabilities(config)[position])


def one_in(probability: float) -> str:
    """``"1 in 2,581"``: a probability as odds, ``N = round(1/p)`` with thousands separators.

    Computed, never typed, so a page's text follows the settings (the ``rare_rows`` question's
    "row 31 is reached by 1 in N training sequences" is ``one_in(reach_probability(config, 31))``).

    Raises:
        ValueError: ``probability`` not in ``(0, 1]``.
    """
    p = float(probability)
    if not 0 < p <= 1:
        raise ValueError(f"probability={probability!r} must be in (0, 1] to read as 1 in N.")
    return f"1 in {round(1 / p):,}"


def make_batch(
    config: LabConfig, rng: np.random.Generator, lengths: np.ndarray, *, held_out: bool = False
) -> Batch:
    """A batch of sequences of the given lengths (padded to the longest)."""
    b, t = len(lengths), int(lengths.max())
    pad = vocab_sizes(config)[2]
    valid = np.arange(t)[None, :] < lengths[:, None]
    if config.task == "lm":
        inputs, targets = _lm_windows(rng, lengths, t, held_out=held_out)
    elif config.task == "mlm":
        targets, _ = _lm_windows(rng, lengths, t, held_out=held_out)
        masked = _mask_positions(rng, lengths, t)
        inputs = np.where(masked, mask_id(config), targets)
    elif config.task == INDUCTION:
        inputs, targets, repeat, _ = induction_batch(config, rng, lengths)
    else:
        inputs = rng.integers(0, config.vocab, size=(b, t))
        targets = _targets(config.task, inputs, lengths, k=config.k)
    mask = valid.copy()
    if config.task == "kback":
        mask[:, : config.k] = False
    elif config.task == "mlm":
        mask &= masked
    elif config.task == INDUCTION:
        mask &= repeat
    inputs = np.where(valid, inputs, pad)
    targets = np.where(mask, targets, 0)
    return Batch(inputs.astype(np.int64), targets.astype(np.int64), mask, valid)


def check_induction(config: LabConfig, longest: int | None = None) -> tuple[int, int]:
    """The period range ``(k, ⌊n/2⌋)`` of the ``induction`` task at the shortest length, checked.

    Raises:
        ValueError: the shortest length leaves no repeat (``k > ⌊min_len/2⌋``), or the vocabulary
            is too small for a block of distinct tokens (``vocab < ⌊n/2⌋`` at the longest ``n``).
    """
    low, high = config.k, config.min_len // 2
    if low > high:
        raise ValueError(
            f"induction needs a shortest period k={low} ≤ min_len/2 = {high} (the block must "
            f"repeat at least once); use k ≤ {high} or min_len ≥ {2 * low}."
        )
    n = max(config.max_len, *config.eval_lengths) if longest is None else longest
    if config.vocab < n // 2:
        raise ValueError(
            f"induction draws a block of up to {n // 2} distinct tokens and vocab={config.vocab} "
            f"has fewer; use vocab ≥ {n // 2}."
        )
    return low, high


def induction_batch(
    config: LabConfig, rng: np.random.Generator, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(inputs, targets, repeat, periods)`` of the ``induction`` task (module docstring).

    ``inputs``/``targets`` ``(B, T)``, padded with 0 past each length; ``repeat``: the counted
    slots ``P ≤ t ≤ n − 2`` (the current token occurred once before); ``periods`` ``(B,)``.
    """
    check_induction(config, int(lengths.max()))
    b, t = len(lengths), int(lengths.max())
    periods = np.array([rng.integers(config.k, n // 2 + 1) for n in lengths])
    # each row's block: the first P of a random permutation of the vocabulary (distinct tokens)
    blocks = np.argsort(rng.random((b, config.vocab)), axis=1)
    cols = np.arange(t)[None, :]
    inputs = np.take_along_axis(blocks, cols % periods[:, None], axis=1)
    targets = np.take_along_axis(inputs, np.minimum(cols + 1, t - 1), axis=1)
    repeat = (cols >= periods[:, None]) & (cols <= lengths[:, None] - 2)
    return inputs, targets, repeat, periods


def _targets(task: str, x: np.ndarray, lengths: np.ndarray, *, k: int) -> np.ndarray:
    t = x.shape[1]
    cols = np.arange(t)[None, :]
    if task == "reverse":
        source = np.clip(lengths[:, None] - 1 - cols, 0, t - 1)
        return np.take_along_axis(x, source, axis=1)
    if task == "kback":
        return np.take_along_axis(x, np.clip(cols - k, 0, t - 1), axis=1)
    valid = cols < lengths[:, None]
    same = (x[:, :, None] == x[:, None, :]) & valid[:, None, :]
    return same.sum(-1)  # count: occurrences of x[t] among the sequence's tokens


def _mask_positions(rng: np.random.Generator, lengths: np.ndarray, t: int) -> np.ndarray:
    """``(B, T)`` bool: :func:`masked_count` positions of each sequence, uniformly without
    replacement among its own (unpadded) positions."""
    b = len(lengths)
    valid = np.arange(t)[None, :] < lengths[:, None]
    scores = np.where(valid, rng.random((b, t)), np.inf)  # padding is never chosen
    ranks = np.empty((b, t), dtype=np.int64)
    ranks[np.arange(b)[:, None], np.argsort(scores, axis=1, kind="stable")] = np.arange(t)
    counts = np.array([masked_count(int(n)) for n in lengths])
    return ranks < counts[:, None]


def _lm_windows(
    rng: np.random.Generator, lengths: np.ndarray, t: int, *, held_out: bool
) -> tuple[np.ndarray, np.ndarray]:
    codes = _alphabet()[1]
    cut = int(len(codes) * (1 - LM_HELD_OUT))
    part = codes[cut:] if held_out else codes[:cut]
    if len(part) <= t + 1:
        raise ValueError(
            f"sequences of {t} characters do not fit the held-out text ({len(part)} "
            f"characters); use max_len ≤ {len(part) - 2}."
        )
    starts = rng.integers(0, len(part) - t - 1, size=len(lengths))
    windows = part[starts[:, None] + np.arange(t + 1)[None, :]]
    return windows[:, :-1], windows[:, 1:]


def train_rng(seed: int) -> np.random.Generator:
    """The training data stream of one seed."""
    return np.random.default_rng([int(seed), TRAIN_STREAM])


def eval_rng(seed: int, length: int) -> np.random.Generator:
    """The held-out stream of one seed and evaluation length (disjoint from training)."""
    return np.random.default_rng([int(seed), EVAL_STREAM, int(length)])
