"""What determines a lab run: the model (:class:`ModelConfig`) and the run (:class:`LabConfig`).

Both are frozen dataclasses that validate themselves on construction, so a bad setting is a
``ValueError`` naming the setting, the limit and the fix before any training starts. Caps come from
:func:`posviz.settings.settings` (``lab_max_steps``, ``lab_max_width``, ``lab_max_len``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from posviz.encodings.families import lab_mechanism, lab_schemes
from posviz.settings import settings

ModelKind = Literal["encoder", "decoder"]
Scheme = str  # a family id of posviz.encodings.families with a lab mechanism
Injection = Literal["input", "concat", "every_layer"]
TaskName = Literal["reverse", "kback", "count", "lm", "mlm", "induction"]
LengthDist = Literal["uniform", "short"]

KINDS: tuple[str, ...] = ("encoder", "decoder")


def schemes() -> tuple[str, ...]:
    """The family ids the lab trains with (:func:`posviz.encodings.families.lab_schemes`), read
    at call time: a family registered later is one too."""
    return lab_schemes()


def absolute_schemes() -> tuple[str, ...]:
    """The schemes whose positions are vectors at the input (they can be concatenated or
    re-added), read at call time."""
    return tuple(s for s in lab_schemes() if lab_mechanism(s).absolute)


#: N(0, 0.02²): BERT's and GPT-2's ``initializer_range`` for their position tables.
SMALL_INIT_STD = 0.02
MAX_INIT_STD = 4.0
INJECTIONS: tuple[str, ...] = ("input", "concat", "every_layer")
TASKS: tuple[str, ...] = ("reverse", "kback", "count", "lm", "mlm", "induction")
LENGTH_DISTS: tuple[str, ...] = ("uniform", "short")
CAUSAL_TASKS: tuple[str, ...] = ("kback", "lm", "induction")  # answerable from the past alone
BIDIRECTIONAL_TASKS: tuple[str, ...] = ("reverse", "count", "kback", "mlm")  # need/allow the future
MAX_SEEDS = 16
MAX_BATCH = 512
MAX_VOCAB = 256


def _whole(name: str, value: object, lo: int, hi: int, fix: str) -> int:
    """``value`` as an int in ``[lo, hi]``, or a ValueError naming the setting and the fix."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}={value!r} must be a whole number from {lo} to {hi}. {fix}")
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value} is out of range; allowed {lo} … {hi}. {fix}")
    return value


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is unknown; choose one of {', '.join(choices)}.")
    return str(value)


@dataclass(frozen=True)
class ModelConfig:
    """One model variant: attention direction, position scheme and how positions are injected.

    Attributes:
        kind: ``"encoder"`` (bidirectional attention) or ``"decoder"`` (causal attention).
        scheme: a family id of :mod:`posviz.encodings.families` with a lab mechanism:
            ``"nope"`` (no positions), ``"learned"`` (an ``nn.Embedding`` table), ``"sinusoidal"``
            (Vaswani et al. 2017, fixed), ``"rope"`` (Su et al. 2021), ``"alibi"`` (Press et al.
            2022), ``"t5"`` (Raffel et al. 2020 relative buckets, a learned scalar per head) …
        injection: for learned/sinusoid tables only: ``"input"`` (add to the token embedding),
            ``"concat"`` (token embedding of width ``d − p`` concatenated with a ``p``-wide table,
            ``p = concat_width``), ``"every_layer"`` (the same table added before every block).
            Relative schemes act inside attention and take ``"input"``.
        concat_width: ``p`` for ``"concat"``; default ``width // 2``.
        table_rows: rows of the learned table; default the longest training length. Rows past the
            longest training sequence are never indexed, so they keep their initial values.
        pos_init_std: standard deviation of the learned table's N(0, std²) start (learned only).
            :data:`SMALL_INIT_STD` = 0.02 is BERT's/GPT-2's; the token embedding's own std makes
            the two tables start at the same scale (BERT and GPT-2 start both at 0.02: 1 : 1).
            A verdict must not hang on it: the lab sweeps it.
    """

    kind: ModelKind = "encoder"
    scheme: Scheme = "learned"
    injection: Injection = "input"
    concat_width: int | None = None
    table_rows: int | None = None
    pos_init_std: float = SMALL_INIT_STD

    def __post_init__(self) -> None:
        _choice("kind", self.kind, KINDS)
        _choice("scheme", self.scheme, lab_schemes())  # read now: a family added at run time
        _choice("injection", self.injection, INJECTIONS)
        absolute = tuple(s for s in lab_schemes() if lab_mechanism(s).absolute)
        if self.injection != "input" and self.scheme not in absolute:
            raise ValueError(
                f"injection={self.injection!r} needs a position table (scheme "
                f"{' or '.join(absolute)}); scheme={self.scheme!r} acts inside "
                "attention, use injection='input'."
            )
        if self.table_rows is not None:
            _whole("table_rows", self.table_rows, 1, settings().lab_max_len, "Use fewer rows.")
        std = self.pos_init_std
        if isinstance(std, bool) or not isinstance(std, int | float) or not 0 < std <= MAX_INIT_STD:
            raise ValueError(
                f"pos_init_std={std!r} must be a number in (0, {MAX_INIT_STD}] (e.g. 0.02, BERT's)."
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Inverse of :meth:`to_dict`; unknown keys are a ValueError naming them."""
        return cls(**_known(cls, data))


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__} data must be a JSON object, got {type(data).__name__}.")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{cls.__name__} has no setting(s) {', '.join(unknown)}.")
    return dict(data)


@dataclass(frozen=True)
class LabConfig:
    """Everything that determines a run besides the variants' models (see :class:`ModelConfig`).

    Attributes:
        task: ``"reverse"`` (absolute order), ``"kback"`` (token ``k`` back: relative offsets),
            ``"count"`` (how often the token occurs: order does not matter, the control) or
            ``"lm"`` (next character of the lab's public-domain text,
            :mod:`posviz.data.lab_text`; decoder only) or ``"mlm"`` (masked characters of the
            same text; encoder only) or ``"induction"`` (next token of a repeated random block,
            :mod:`posviz.lab.engine.tasks`; decoder only).
        vocab: content tokens of the synthetic tasks (ignored by ``lm``).
        k: the offset of ``kback``; the shortest period of ``induction`` (periods ``k … n/2``).
        min_len, max_len: training sequence lengths (inclusive).
        length_dist: ``"uniform"`` over ``[min_len, max_len]`` or ``"short"`` (P(n) ∝ 0.8^(n −
            min_len): mostly short, the longest rarely seen).
        eval_lengths: held-out evaluation lengths (fresh sequences); lengths above ``max_len``
            test extrapolation.
        width, heads, layers: model size (``heads`` must divide ``width``).
        steps, batch, lr: optimiser steps (Adam), sequences per step and seed, learning rate.
        seeds: independent models per variant (seeds ``first_seed … first_seed + seeds − 1``:
            init and data).
        first_seed: the first seed (0; a held-out panel uses a fresh set, e.g. 100).
        eval_batch: held-out sequences per seed and evaluation length.
        snapshots: learned-table snapshots kept per run (evenly spaced steps, first and last).
    """

    task: TaskName = "reverse"
    vocab: int = 16
    k: int = 2
    min_len: int = 16
    max_len: int = 16
    length_dist: LengthDist = "uniform"
    eval_lengths: tuple[int, ...] = (16,)
    width: int = 32
    heads: int = 2
    layers: int = 2
    steps: int = 300
    batch: int = 32
    lr: float = 3e-3
    seeds: int = 3
    first_seed: int = 0
    eval_batch: int = 256
    snapshots: int = 8
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # free labels, hashed too

    def __post_init__(self) -> None:
        caps = settings()
        _choice("task", self.task, TASKS)
        _choice("length_dist", self.length_dist, LENGTH_DISTS)
        _whole("vocab", self.vocab, 2, MAX_VOCAB, "Use e.g. 16 tokens.")
        cap_len = f"The server allows sequences up to POSVIZ_LAB_MAX_LEN={caps.lab_max_len}."
        _whole("max_len", self.max_len, 2, caps.lab_max_len, cap_len)
        _whole("min_len", self.min_len, 2, self.max_len, "min_len must not exceed max_len.")
        _whole("k", self.k, 1, self.min_len - 1, "k must be below min_len (k tokens back).")
        if not isinstance(self.eval_lengths, tuple) or not self.eval_lengths:
            raise ValueError("eval_lengths must be a non-empty tuple of lengths, e.g. (16, 32).")
        for n in self.eval_lengths:
            _whole("eval_lengths", n, max(2, self.k + 1), caps.lab_max_len, cap_len)
        cap_width = f"The server allows width up to POSVIZ_LAB_MAX_WIDTH={caps.lab_max_width}."
        _whole("width", self.width, 4, caps.lab_max_width, cap_width)
        _whole("heads", self.heads, 1, self.width, "Use e.g. 2 or 4 heads.")
        if self.width % self.heads:
            raise ValueError(
                f"heads={self.heads} does not divide width={self.width}; each head gets "
                f"width/heads dimensions. Use e.g. heads=2 or 4 with width={self.width}."
            )
        _whole("layers", self.layers, 1, 8, "Use 1 or 2 layers for a tiny model.")
        cap_steps = f"The server allows up to POSVIZ_LAB_MAX_STEPS={caps.lab_max_steps} steps."
        _whole("steps", self.steps, 1, caps.lab_max_steps, cap_steps)
        _whole("batch", self.batch, 1, MAX_BATCH, "Use e.g. 32 sequences per step.")
        _whole("seeds", self.seeds, 1, MAX_SEEDS, "Use 3 to 5 seeds.")
        _whole("first_seed", self.first_seed, 0, 10_000, "Use 0, or e.g. 100 for fresh seeds.")
        _whole("eval_batch", self.eval_batch, 1, 4096, "Use e.g. 256 held-out sequences.")
        _whole("snapshots", self.snapshots, 2, 64, "Use e.g. 8 snapshots.")
        if isinstance(self.lr, bool) or not isinstance(self.lr, int | float):
            raise ValueError(f"lr={self.lr!r} must be a number such as 0.003.")
        if not 0 < float(self.lr) <= 1:
            raise ValueError(f"lr={self.lr} is out of range; use 0 < lr ≤ 1 (e.g. 0.003).")

    @property
    def seed_ids(self) -> range:
        """The seeds a run trains: ``first_seed … first_seed + seeds − 1``."""
        return range(self.first_seed, self.first_seed + self.seeds)

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    def with_seeds(self, seeds: int) -> LabConfig:
        """The same run with another number of seeds (validated)."""
        return replace(self, seeds=seeds)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists); :meth:`from_dict` inverts it exactly."""
        data = asdict(self)
        data["eval_lengths"] = list(self.eval_lengths)
        data["extra"] = [list(pair) for pair in self.extra]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabConfig:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: unknown keys or invalid values (the message names the setting).
        """
        data = _known(cls, data)
        if "eval_lengths" in data:
            data["eval_lengths"] = tuple(data["eval_lengths"])
        if "extra" in data:
            data["extra"] = tuple(tuple(pair) for pair in data["extra"])
        return cls(**data)
