"""The counting task of CoPE, scaled to the lab: how many times was the asked variable
incremented since it was last set, when most statements are filler?

Golovneva, Wang, Lan, Weston & Sukhbaatar, "Contextual Position Encoding: Learning to Count
What's Important" (2024, https://arxiv.org/abs/2405.18719), §5.2 and Table 3; the data generator
is ``projects/cope/scripts/count_data_gen.py`` of the authors' repository
(https://github.com/facebookresearch/RAM, read at commit
e6f051f; re-written here, not copied). A sample is a program of statements, each drawn with
weights ``set : pass : increment = 1 : 50 : 7``:

* ``set``  — ``v = 0 ;`` for a variable ``v`` drawn uniformly from the task's ``n`` variables;
* ``pass`` — ``pass;``, filler that changes nothing;
* ``increment`` — ``v ++;`` for a variable drawn uniformly among those already set; a draw that
  finds no variable set, or would take its value past :data:`MAX_VALUE` (10), is rejected and
  the statement drawn again;

then a question ``print v`` for a variable drawn uniformly among those set (a program that set
none is drawn again), whose answer is ``v``'s value: the increments of ``v`` since its last
``set``. About 50 filler statements come per 7 increments, so a token's position says little
about the count — the paper's point: a position encoding that counts *tokens* must learn to
ignore most of them, where CoPE's gates count only what matters.

**In the lab** a statement is one or two tokens (:data:`SET` and :data:`INCREMENT` follow
their variable, ``pass`` is :data:`PASS` alone) and the question is :data:`PRINT` then the
variable, the answer read at that last token by a causal decoder (the paper trains on the answer
only, ``--train-on answer`` in ``projects/cope/run.sh``). The paper draws 3 … 512 statements per
program; the lab draws ``min_statements … max_statements`` (:class:`CountingConfig`: 4 … 32),
tens not hundreds, so that a tiny model trains in minutes. With so few statements the paper's
weights set a variable about once per program (the paper's set about nine times, 512/58), so
every increment would belong to the asked variable and 3 or 5 variables would hardly differ
from 1; the lab's :data:`LAB_WEIGHTS` keep the 7 increments, set twice as often and keep filler
at 20 of 29 statements (69 %, the paper's 86 %). What the weights do is measured, not assumed:
:func:`position_only_error` (position alone) and :func:`last_set_error` (counting every
increment, whatever its variable) on generated programs, in ``tests/test_lab_counting.py``.

Everything here is numpy and deterministic: a batch is a pure function of the config, the seed
and the stream (:func:`counting_rng`: training and held-out streams are disjoint).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import pairwise

import numpy as np

from posviz.lab.engine.tasks import Batch

#: The paper's variable counts (Table 3's columns).
VARIABLE_COUNTS: tuple[int, ...] = (1, 3, 5)
#: A variable's value never passes this (``MAX_VAL`` of the authors' generator).
MAX_VALUE = 10
#: ``(set, pass, increment)`` weights of a statement (``OP_WEIGHTS`` of the authors' generator).
PAPER_WEIGHTS: tuple[int, int, int] = (1, 50, 7)
#: The lab's weights (see the module docstring): the paper's 7 increments, filler cut from 50 to
#: 20 and sets from 1 to 2 — with tens of statements the paper's own weights set a variable
#: about once per program, so one variable's increments are every increment and the number of
#: variables hardly matters (measured on 3,000 held-out programs of 4 … 32 statements: counting
#: every ``++`` since the last set is wrong on 5.6 % / 6.6 % of 3- / 5-variable programs with
#: the paper's weights, on 23.5 % / 29.1 % with these), while position alone still misses 69 %
#: of answers (the commonest answer alone: 68–69 %).
LAB_WEIGHTS: tuple[int, int, int] = (2, 20, 7)
#: Draws of one statement before the program is given up (the authors' generator: 100).
MAX_TRIES = 100

# Tokens: the variables first (the largest task's 5, whatever the task's n), then the words.
MAX_VARIABLES = 5
SET, INCREMENT, PASS, PRINT, PAD = range(MAX_VARIABLES, MAX_VARIABLES + 5)
#: input tokens (padding included) and output classes (values 0 … MAX_VALUE)
N_IN, N_OUT = PAD + 1, MAX_VALUE + 1
WORDS = {SET: "=0", INCREMENT: "++", PASS: "pass", PRINT: "print", PAD: "·"}
_OPS = ("set", "pass", "increment")
TRAIN_STREAM, EVAL_STREAM = 0, 1


@dataclass(frozen=True)
class CountingConfig:
    """One counting task: ``variables`` names, programs of ``min_statements … max_statements``
    statements drawn uniformly, statement weights ``weights`` = ``(set, pass, increment)``.

    Raises:
        ValueError: a setting out of range (the message names it and the fix).
    """

    variables: int = 1
    min_statements: int = 4
    max_statements: int = 32
    weights: tuple[int, int, int] = LAB_WEIGHTS

    def __post_init__(self) -> None:
        if not (isinstance(self.variables, int) and 1 <= self.variables <= MAX_VARIABLES):
            raise ValueError(
                f"variables={self.variables!r} must be a whole number from 1 to {MAX_VARIABLES}."
            )
        lo, hi = self.min_statements, self.max_statements
        if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi <= 256):
            raise ValueError(
                f"statements {lo!r} … {hi!r} must be whole numbers with 1 ≤ min ≤ max ≤ 256."
            )
        w = self.weights
        if (
            not isinstance(w, tuple)
            or len(w) != 3
            or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in w)
            or w[0] == 0
        ):
            raise ValueError(
                f"weights={w!r} must be three whole numbers (set, pass, increment) ≥ 0 with set "
                f"> 0 (nothing can be incremented before it is set); the paper's are "
                f"{PAPER_WEIGHTS}."
            )

    @property
    def max_tokens(self) -> int:
        """The longest program in tokens: two per statement and the two of the question."""
        return 2 * self.max_statements + 2

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["weights"] = list(self.weights)
        return data


@dataclass(frozen=True)
class Program:
    """One sample: ``tokens`` (the program and its question), the ``answer``, and per statement
    its kind (``set``/``pass``/``increment``) and variable (−1 for ``pass``)."""

    tokens: tuple[int, ...]
    answer: int
    ops: tuple[str, ...]
    variables: tuple[int, ...]


def counting_rng(seed: int, stream: int = TRAIN_STREAM, variables: int = 1) -> np.random.Generator:
    """The data stream of one seed, stream (:data:`TRAIN_STREAM`, :data:`EVAL_STREAM`) and task."""
    return np.random.default_rng([int(seed), int(stream), int(variables), 0xC0])


def _statements(
    config: CountingConfig, rng: np.random.Generator, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``size`` programs drawn statement by statement, every row at once.

    Returns ``(ops, variables, counts, values)``: ``ops`` ``(size, S)`` 0 set / 1 pass / 2
    increment / −1 past the row's last statement, ``variables`` ``(size, S)`` (−1 for ``pass``),
    ``counts`` ``(size,)`` statements per row, ``values`` ``(size, n)`` each variable's value at
    the end (−1: never set). A draw that cannot apply is rejected and drawn again (module
    docstring), at most :data:`MAX_TRIES` times per statement.
    """
    n = config.variables
    p = np.asarray(config.weights, dtype=np.float64)
    p /= p.sum()
    counts = rng.integers(config.min_statements, config.max_statements + 1, size=size)
    s_max = int(counts.max())
    ops = np.full((size, s_max), -1, dtype=np.int64)
    variables = np.full((size, s_max), -1, dtype=np.int64)
    values = np.full((size, n), -1, dtype=np.int64)
    for s in range(s_max):
        pending = np.nonzero(counts > s)[0]
        for _ in range(MAX_TRIES):
            if pending.size == 0:
                break
            op = rng.choice(3, size=pending.size, p=p)
            pick = rng.random(pending.size)
            live = values[pending] >= 0  # (k, n) variables already set
            n_live = live.sum(1)
            # the ⌊pick·n_live⌋-th set variable (increment), or any of the n (set)
            rank = np.minimum((pick * np.maximum(n_live, 1)).astype(np.int64), n_live - 1)
            ordinal = np.cumsum(live, axis=1) - 1
            chosen = np.argmax(live & (ordinal == rank[:, None]), axis=1)
            var = np.where(op == 0, (pick * n).astype(np.int64), chosen)
            var = np.where(op == 1, -1, var)
            current = values[pending, np.maximum(var, 0)]
            bad = (op == 2) & ((n_live == 0) | (current + 1 > MAX_VALUE))
            ok, rows = ~bad, pending[~bad]
            ops[rows, s], variables[rows, s] = op[ok], var[ok]
            sets, incs = ok & (op == 0), ok & (op == 2)
            values[pending[sets], var[sets]] = 0
            values[pending[incs], var[incs]] += 1
            pending = pending[bad]
        if pending.size:
            raise ValueError(
                f"no statement could be drawn in {MAX_TRIES} tries with {config.weights}."
            )
    return ops, variables, counts, values


def make_batch(config: CountingConfig, rng: np.random.Generator, size: int) -> Batch:
    """``size`` programs padded at the end with :data:`PAD` to the longest: the engine's
    :class:`~posviz.lab.engine.tasks.Batch`, whose one counted target per row is the answer at
    the row's last token (the question's variable). Programs that set no variable are drawn
    again (their question would have nothing to ask).

    Raises:
        ValueError: ``size`` < 1, or no program could be drawn (weights that never set).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size={size!r} must be a whole number ≥ 1.")
    parts = []
    need = size
    for _ in range(MAX_TRIES):
        ops, variables, counts, values = _statements(config, rng, need)
        keep = (values >= 0).any(1)
        parts.append((ops[keep], variables[keep], counts[keep], values[keep]))
        need -= int(keep.sum())
        if need <= 0:
            break
    else:
        raise ValueError(f"no program set a variable in {MAX_TRIES} draws; raise the set weight.")
    width = max(p[0].shape[1] for p in parts)
    ops = np.concatenate(
        [np.pad(p[0], ((0, 0), (0, width - p[0].shape[1])), constant_values=-1) for p in parts]
    )[:size]
    variables = np.concatenate(
        [np.pad(p[1], ((0, 0), (0, width - p[1].shape[1])), constant_values=-1) for p in parts]
    )[:size]
    values = np.concatenate([p[3] for p in parts])[:size]
    # the question: a variable drawn uniformly among those set
    live = values >= 0
    rank = (rng.random(size) * live.sum(1)).astype(np.int64)
    asked = np.argmax(live & (np.cumsum(live, axis=1) - 1 == rank[:, None]), axis=1)
    answers = values[np.arange(size), asked]
    # tokens: a statement is [PASS] or [variable, SET | INCREMENT]; then [PRINT, asked]
    widths = np.where(ops < 0, 0, np.where(ops == 1, 1, 2))
    lengths = widths.sum(1) + 2
    t = int(lengths.max())
    inputs = np.full((size, t), PAD, dtype=np.int64)
    ends = np.cumsum(widths, axis=1)
    rows, cols = np.nonzero(widths)
    first = ends[rows, cols] - widths[rows, cols]
    word = np.where(ops[rows, cols] == 0, SET, INCREMENT)
    two = widths[rows, cols] == 2
    inputs[rows, first] = np.where(two, variables[rows, cols], PASS)
    inputs[rows[two], first[two] + 1] = word[two]
    r = np.arange(size)
    inputs[r, lengths - 2] = PRINT
    inputs[r, lengths - 1] = asked
    targets = np.zeros((size, t), dtype=np.int64)
    mask = np.zeros((size, t), dtype=bool)
    targets[r, lengths - 1] = answers
    mask[r, lengths - 1] = True
    valid = np.arange(t)[None, :] < lengths[:, None]
    return Batch(inputs, targets, mask, valid)


def recount(tokens: np.ndarray) -> int:
    """The answer of one program read back from its tokens alone (an interpreter, independent
    of the generator's bookkeeping): the asked variable's increments since its last set.

    Raises:
        ValueError: tokens that are not a program ending in a question about a set variable.
    """
    seq = [int(x) for x in tokens if int(x) != PAD]
    if len(seq) < 2 or seq[-2] != PRINT or not 0 <= seq[-1] < MAX_VARIABLES:
        raise ValueError("a program ends with PRINT and a variable.")
    values: dict[int, int] = {}
    i = 0
    while i < len(seq) - 2:
        if seq[i] == PASS:
            i += 1
            continue
        var, word = seq[i], seq[i + 1]
        if word == SET:
            values[var] = 0
        elif word == INCREMENT and var in values:
            values[var] += 1
        else:
            raise ValueError(f"token {i}: {var} {word} is not a statement.")
        i += 2
    if seq[-1] not in values:
        raise ValueError(f"the question asks variable {seq[-1]}, which was never set.")
    return values[seq[-1]]


def render(tokens: np.ndarray) -> str:
    """A program in the paper's words: ``a =0 pass pass a ++ print a``."""
    names = "abcde"
    return " ".join(
        names[int(x)] if int(x) < MAX_VARIABLES else WORDS[int(x)] for x in tokens if x != PAD
    )


def position_only_error(
    fit: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray]
) -> float:
    """Test error of the best predictor that sees only where the answer is asked.

    ``fit`` and ``test`` are ``(positions, answers)`` of independent samples: for every
    position the predictor answers the most frequent answer at that position in ``fit`` (the
    Bayes rule for that feature, estimated), and at a position ``fit`` never saw, ``fit``'s most
    frequent answer overall. Returns its error rate on ``test``: how far position alone gets.
    """
    pos_fit, ans_fit = (np.asarray(a, dtype=np.int64) for a in fit)
    pos_test, ans_test = (np.asarray(a, dtype=np.int64) for a in test)
    if pos_fit.size == 0 or pos_test.size == 0:
        raise ValueError("position_only_error needs samples to fit and to test on.")
    overall = int(np.bincount(ans_fit).argmax())
    rule = {int(p): int(np.bincount(ans_fit[pos_fit == p]).argmax()) for p in np.unique(pos_fit)}
    guesses = np.array([rule.get(int(p), overall) for p in pos_test])
    return float(np.mean(guesses != ans_test))


def positions_and_answers(batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, answers)`` of a batch's counted targets (one per row)."""
    rows, cols = np.nonzero(batch.mask)
    return cols, batch.targets[rows, cols]


def last_set_error(batch: Batch) -> float:
    """Error of counting every increment since the last ``set`` of *any* variable: the answer
    when the program had one variable, wrong whenever another variable's statements came in
    between. How much the task needs the variables told apart (0 for one variable)."""
    errors = []
    for row, col in zip(*np.nonzero(batch.mask), strict=True):
        seq = batch.inputs[row, : col - 1]  # the program without its question
        count = 0
        for previous, token in pairwise(seq):
            if token == SET and previous < MAX_VARIABLES:
                count = 0
            elif token == INCREMENT and previous < MAX_VARIABLES:
                count += 1
        errors.append(min(count, MAX_VALUE) != batch.targets[row, col])
    return float(np.mean(errors))


def majority_error(answers: np.ndarray) -> float:
    """Error of always giving the most frequent answer (the floor any position encoding starts
    from)."""
    answers = np.asarray(answers, dtype=np.int64)
    return float(1 - np.bincount(answers).max() / answers.size)


@dataclass(frozen=True)
class CountingRun:
    """One training run: every scheme × seed on one counting task, at one model size."""

    task: CountingConfig
    schemes: tuple[str, ...] = ("learned", "t5", "rope", "nope")
    seeds: int = 3
    first_seed: int = 0
    width: int = 32
    heads: int = 4
    layers: int = 2
    batch: int = 64
    lr: float = 3e-3
    steps: int = 1000
    eval_size: int = 512
    checkpoints: int = 4  # held-out evaluations after training starts (the last at ``steps``)
    #: ``None``: fresh programs every step; else a fixed training set of this many programs per
    #: seed, each step a batch drawn from it without replacement (the paper trains 100 epochs
    #: over 10,000 programs: ``projects/cope/run.sh``)
    train_programs: int | None = None

    def __post_init__(self) -> None:
        if not self.schemes or len(set(self.schemes)) != len(self.schemes):
            raise ValueError(f"schemes={self.schemes!r} must be distinct family ids.")
        for name in ("seeds", "width", "heads", "layers", "batch", "steps", "eval_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number ≥ 1.")
        if self.width % self.heads or (self.width // self.heads) % 2:
            raise ValueError(
                f"width={self.width} and heads={self.heads} must give an even head size (RoPE "
                "rotates pairs)."
            )
        if not 1 <= self.checkpoints <= self.steps:
            raise ValueError(f"checkpoints={self.checkpoints!r} must be 1 … steps.")
        pool = self.train_programs
        if pool is not None and (
            isinstance(pool, bool) or not isinstance(pool, int) or pool < self.batch
        ):
            raise ValueError(
                f"train_programs={pool!r} must be None or a whole number ≥ batch ({self.batch})."
            )
