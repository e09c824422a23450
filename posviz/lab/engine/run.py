"""The lab's one runner: a study (a question or a paper check) is claimed, loaded or trained,
built into its result and stored, by :func:`run_study`.

A study (:class:`Study`) says what it trains (:class:`Unit`: members of one task shape trained as
one batched model by :func:`posviz.lab.engine.train.train_arms`, with their held-out
checkpoints — or by the study's own trainer, :attr:`Unit.train`, for a task the engine does not
draw), how its run id is keyed (:func:`posviz.lab.engine.store.study_run_id`) and how the
trained outputs become its result; the runner does the rest the same way for every kind: the
stored result at once, else one training per run id across replicas sharing the store
(:func:`posviz.jobs.claim`), a job slot (:func:`posviz.jobs.job_slot`), the units balanced over
:data:`TRAIN_THREADS` threads, one progress count, the save before the claim is released. The
studies themselves live in :mod:`posviz.lab.studies` (questions, paper checks); this module
imports none of them.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from posviz.jobs import JobCancelled, claim, job_slot
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import (
    LabStopped,
    Progress,
)
from posviz.lab.engine.store import RunStore
from posviz.labfiles import CorruptEntry

#: held-out sequences whose hidden states the layer probe reads (per seed).
PROBE_SEQUENCES = 48
#: training threads of one run: its work units (a task's instances, or halves of them) train on
#: this many cores at once, one torch thread each (no intra-op barrier to stall on a busy box).
TRAIN_THREADS = 2
#: The one work model (:func:`step_cpu_s`, :func:`eval_cpu_s`, :attr:`Unit.cost`): CPU seconds of
#: one pass of ``sequences × length`` tokens through a model's ``layers`` blocks, on an idle core:
#: every token × layer costs :data:`CPU_S_TOKEN` per unit of width (at widths 16–64 the small
#: matrix products cost what their inputs' size does, not width²); every attention score (token ×
#: key × layer, the keys padded to a multiple of 16 as :data:`posviz.lab.engine.model.KEY_ALIGN`
#: pads them) costs :data:`CPU_S_KEY_WIDTH` per unit of width (the query-key and value products)
#: plus :data:`CPU_S_KEY_HEAD` per head (masking, biases and softmax act on every head's scores,
#: whatever the head size). A training step is one such pass (forward, backward, Adam); a held-out
#: evaluation at a checkpoint is a forward pass over ``eval_batch`` sequences at every evaluation
#: length, at :data:`EVAL_SHARE` of a training pass's cost per token. Fitted (least squares on
#: relative error) to the measured wall times of the 17 studies on 2 quiet cores and the ten runs
#: at load ≈ 4 (their pace a free factor): 0.88–1.19× and 0.94–1.11× of these estimates
#: (docs/benchmarks.md, "Estimates"). The model before counted training steps only, with
#: attention per unit of width: it put the studies that evaluate at long lengths (extrapolation,
#: the Press check's length ladder) at 0.72–0.77 of their time and, attention's cost not growing
#: with the heads, over-charged rare_rows (2 heads, length 32) against the 8-head studies.
#: Balancing and the pages' estimates share it.
CPU_S_TOKEN = 8.6e-8
CPU_S_KEY_WIDTH = 5.4e-10
CPU_S_KEY_HEAD = 8.7e-9
EVAL_SHARE = 0.2
#: attention keys are padded to a multiple of this (:data:`posviz.lab.engine.model.KEY_ALIGN`;
#: not imported: that module imports torch, and estimates need none).
KEY_ALIGN = 16
#: the parts of a study, in the order they are computed (``panel``: extra settings, later).
PARTS = ("default", "panel")


class Trainer(Protocol):
    """A study's own trainer (:attr:`Unit.train`), called as ``train_arms`` is: every member for
    ``steps``, evaluated at ``checkpoints``, ``on_step(done, total, losses)`` with ``done /
    total`` its share of the call's work, ``should_stop()`` polled before every step (then it
    raises :class:`~posviz.lab.engine.results.LabStopped`). Returns member id → an object with
    ``heldout`` (what the study's ``build`` reads). It must train each member alone (a member's
    numbers may not depend on which others share its call: :func:`balance` splits units), and
    be a module-level function (it is named in the run id, ``module:qualname``)."""

    def __call__(
        self,
        members: tuple[Any, ...],
        *,
        steps: int,
        checkpoints: list[int],
        on_step: Callable[[int, int, dict[str, float]], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> Any: ...


@dataclass(frozen=True)
class Unit:
    """One ``train_arms`` call: members of one task shape (same steps and checkpoints).

    ``members`` have ``id``, ``model`` and ``config`` (:class:`posviz.lab.engine.sweep.Planned`,
    :class:`posviz.lab.studies.papers.CardArm`); ``probe``: the member whose hidden states are read
    after training (its id, the sequence length), or None. ``train``: the study's own trainer
    (:class:`Trainer`) for a task the engine does not draw, called instead of ``train_arms``
    with the same progress and stop contract (no probe or head scores then); None: the engine's.
    A member's ``config`` needs ``seeds``, ``steps`` and what :func:`step_cpu_s` and
    :func:`eval_cpu_s` read; a member may also say it trains on shorter windows than its
    config's (``train_length``: tokens a sequence; 0: it trains nothing, another member's model
    is read for it). ``whole``: the members share their training (one call), so
    :func:`balance` never splits the unit.
    """

    group: str
    members: tuple[Any, ...]
    steps: int
    checkpoints: tuple[int, ...]
    probe: tuple[str, int] | None = None
    head_scores: tuple[tuple[str, str], ...] = ()  # (member id, label): prefix-matching scores
    train: Trainer | None = None
    whole: bool = False

    def __post_init__(self) -> None:
        if self.train is not None and (self.probe is not None or self.head_scores):
            raise ValueError(
                f"unit {self.group!r}: a study's own trainer reads no probe or head scores; "
                "leave them unset."
            )

    @property
    def cost(self) -> float:
        """The unit's work in CPU seconds on an idle core: every member's (:meth:`member_cost`)."""
        return float(sum(self.member_cost(m) for m in self.members))

    def member_cost(self, member: Any) -> float:
        """CPU seconds of one member's seeds in this unit: :attr:`steps` training steps
        (:func:`step_cpu_s`, or a pass at the member's own ``train_length``) and a held-out
        evaluation at every checkpoint (:func:`eval_cpu_s`)."""
        config = member.config
        length = getattr(member, "train_length", None)
        step = step_cpu_s(config) if length is None else pass_cpu_s(config, config.batch, length)
        return config.seeds * (self.steps * step + len(self.checkpoints) * eval_cpu_s(config))

    @property
    def model_steps(self) -> int:
        return sum(m.config.seeds * m.config.steps for m in self.members)


@dataclass(frozen=True)
class UnitOutput:
    """What one unit's training produced: the engine's outputs by member id, hidden states."""

    unit: Unit
    outputs: Any
    hidden: dict[str, list[np.ndarray]]
    head_scores: tuple[Any, ...] = ()


class Study(Protocol):
    """What the runner needs of a study (a question's part or a paper check)."""

    kind: str
    id: str
    part: str

    @property
    def run_id(self) -> str: ...

    def units(self) -> list[Unit]: ...

    def build(self, trained: list[UnitOutput], run_id: str, wall: float) -> Any: ...

    def load(self, store: RunStore, run_id: str) -> Any: ...


def run_study(
    study: Study,
    *,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
) -> Any:
    """Load a study's stored result, or train it once across every replica and store it.

    A corrupted stored entry is retrained and replaced (``on_corrupt`` hears of it first). While
    waiting for another replica's claim or a job slot ``on_progress`` gets
    ``Progress(queue_position=n)``.

    Raises:
        ValueError: an invalid study (the message names the setting).
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    store = store or RunStore()
    run_id = study.run_id
    try:
        stored = study.load(store, run_id)
    except CorruptEntry as error:
        stored = None  # retrained below; save() moves the bad entry aside
        if on_corrupt is not None:
            on_corrupt(error)
    if stored is not None:
        return stored
    units = study.units()  # validates every member's config before anything waits
    start = time.perf_counter()
    steps = max(u.steps for u in units)

    def waiting(position: int) -> None:
        if on_progress is not None:
            elapsed = time.perf_counter() - start
            on_progress(Progress(0, steps, {}, elapsed, math.nan, "", position))

    try:
        # One claim and one training per run id across replicas sharing the store: wait for
        # another's claim (shown as place 1 while it trains), then use what it stored without
        # claiming (posviz.jobs.claim's ``done``); claim and train only if nothing was stored.
        def stored_now() -> bool:
            return store.exists(run_id)

        done: Callable[[], bool] | None = stored_now
        while True:
            claimed = claim(store.root / ".claims", run_id, should_stop=should_stop,
                            on_wait=lambda place: waiting(max(place, 1)), done=done)  # fmt: skip
            with claimed as held:
                if (stored := _stored(study, store, run_id)) is not None:
                    return stored
                if held is None:  # stored but unreadable: claim it this time, and retrain
                    done = None
                    continue
                held.note("training")
                with job_slot("lab", on_wait=waiting, should_stop=should_stop):
                    train_module().use_one_thread()
                    trained = train_units(units, on_progress, should_stop)
                result = study.build(trained, run_id, time.perf_counter() - start)
                store.save(result)  # before the claim is released: its waiters find it
                return result
    except JobCancelled as stop:
        raise LabStopped(f"Lab run {run_id} ({study.id}) stopped before it finished.") from stop


def _stored(study: Study, store: RunStore, run_id: str) -> Any:
    """The stored run, or None (also when it is corrupted: it is then retrained and replaced)."""
    try:
        return study.load(store, run_id)
    except CorruptEntry:
        return None


def train_module() -> ModuleType:
    """:mod:`posviz.lab.engine.train`, imported on first use."""
    # Lazy: torch is heavy; loading and listing stored runs (every page's lab: sources) needs none.
    from posviz.lab.engine import train

    return train


def pass_cpu_s(config: LabConfig, sequences: int, length: int) -> float:
    """CPU seconds of one training pass of ``sequences × length`` tokens through a model of
    ``config``'s width, heads and layers on an idle core (:data:`CPU_S_TOKEN`,
    :data:`CPU_S_KEY_WIDTH`, :data:`CPU_S_KEY_HEAD`; keys padded to :data:`KEY_ALIGN`)."""
    keys = -(-length // KEY_ALIGN) * KEY_ALIGN
    per_key = CPU_S_KEY_WIDTH * config.width + CPU_S_KEY_HEAD * config.heads
    return sequences * length * config.layers * (CPU_S_TOKEN * config.width + keys * per_key)


def step_cpu_s(config: LabConfig) -> float:
    """CPU seconds of one model's training step under ``config`` on an idle core: a pass of
    ``batch`` sequences at the longest training length (:func:`pass_cpu_s`; a batch is padded
    to its longest sequence)."""
    return pass_cpu_s(config, config.batch, config.max_len)


def eval_cpu_s(config: LabConfig) -> float:
    """CPU seconds of one model's held-out evaluation at one checkpoint on an idle core: a
    forward pass of ``eval_batch`` sequences at every length of ``eval_lengths``, at
    :data:`EVAL_SHARE` of a training pass per token (:func:`pass_cpu_s`)."""
    return EVAL_SHARE * sum(pass_cpu_s(config, config.eval_batch, n) for n in config.eval_lengths)


def makespan(units: Sequence[Unit], *, threads: int) -> float:
    """The work of the busiest thread when ``units`` are handed out largest first, each to the
    thread that frees first (how :func:`train_units`' pool takes them)."""
    loads = [0.0] * threads
    for unit in sorted(units, key=lambda u: -u.cost):
        loads[loads.index(min(loads))] += unit.cost
    return max(loads)


def _halves(unit: Unit) -> tuple[Unit, Unit]:
    """``unit``'s members in two halves of about equal work (greedy, heaviest first); the probe
    and the head scores go with their member."""
    ordered = sorted(unit.members, key=lambda m: -unit.member_cost(m))
    halves: tuple[list[Any], list[Any]] = ([], [])
    for member in ordered:  # each member to the lighter half
        min(halves, key=lambda h: sum(unit.member_cost(m) for m in h)).append(member)
    out = []
    for half in halves:
        ids = {m.id for m in half}
        probe = unit.probe if unit.probe and unit.probe[0] in ids else None
        scored = tuple(s for s in unit.head_scores if s[0] in ids)
        out.append(dataclasses.replace(unit, members=tuple(half), probe=probe, head_scores=scored))
    return out[0], out[1]


def balance(units: Sequence[Unit], *, threads: int) -> list[Unit]:
    """The training calls of a run, largest first, split so that the threads finish together.

    While splitting the largest unit's members into two halves of about equal work shortens
    the busiest thread (:func:`makespan`), it is split: a run of one task gets two halves, and a
    run whose tasks differ in cost (the character LM's length 32 beside k-back's 16) no longer
    leaves one thread idle for half the run. Members are exactly independent (their own seeds,
    data and weights), so a split changes no number; a fixed split is deterministic. Splitting
    costs little: batching members into one model buys 1.0–1.17× (docs/benchmarks.md).
    """
    units = list(units)
    while True:
        largest = max(units, key=lambda u: u.cost)
        if len(largest.members) < 2 or largest.whole:
            break
        split = [u for u in units if u is not largest] + list(_halves(largest))
        if makespan(split, threads=threads) >= makespan(units, threads=threads):
            break
        units = split
    return sorted(units, key=lambda u: -u.cost)


def train_units(
    units: Sequence[Unit],
    on_progress: Callable[[Progress], None] | None,
    should_stop: Callable[[], bool] | None,
) -> list[UnitOutput]:
    """Train every unit on :data:`TRAIN_THREADS` threads (balanced), one progress count."""
    units = balance(units, threads=TRAIN_THREADS)
    progress = _Progress(on_progress, units)
    with ThreadPoolExecutor(max_workers=TRAIN_THREADS, thread_name_prefix="lab") as pool:
        futures = [pool.submit(_train_unit, u, progress, should_stop) for u in units]
        results = [f.result() for f in futures]  # re-raises a unit's error (LabStopped too)
    if should_stop is not None and should_stop():
        raise LabStopped("Stopped before every arm finished training.")
    return results


def _train_unit(
    unit: Unit, progress: _Progress, should_stop: Callable[[], bool] | None
) -> UnitOutput:
    """One ``train_arms`` call (in a worker thread), and the probed member's hidden states; or
    the study's own trainer (:attr:`Unit.train`), with the same progress and stop contract."""
    train = train_module()
    train.use_one_thread()
    if unit.train is not None:
        outputs = unit.train(
            unit.members,
            steps=unit.steps,
            checkpoints=list(unit.checkpoints),
            on_step=progress.reporter(unit),
            should_stop=should_stop,
        )
        return UnitOutput(unit, outputs, {})
    arms = [train.Arm(m.id, m.model, m.config) for m in unit.members]
    outputs = train.train_arms(
        arms,
        steps=unit.steps,
        checkpoints=list(unit.checkpoints),
        on_step=progress.reporter(unit),
        should_stop=should_stop,
    )
    hidden = {}
    if unit.probe is not None:
        probe_id, length = unit.probe
        states = outputs.hidden_states(probe_id, length, PROBE_SEQUENCES)
        hidden[probe_id] = [np.asarray(h, dtype=np.float64) for h in states]
    scores = ()
    if unit.head_scores:
        # Lazy: only the question that declares head scores needs the attention maps.
        from posviz.lab.engine import induction

        scores = tuple(
            induction.head_scores(outputs[i], label, steps=unit.steps)
            for i, label in unit.head_scores
        )
    return UnitOutput(unit, outputs, hidden, scores)


class _Progress:
    """The units' ``on_step(done, total, losses)`` reports, as one :class:`Progress` of the run:
    ``step`` of ``total_steps`` is the reporting unit's optimiser step (every model of the unit
    takes it together), and ``eta_s`` is this run's measured pace so far (model-steps of every
    unit per second) applied to the model-steps left, so a loaded machine's estimate grows with
    it; ``elapsed / (elapsed + eta)`` is the share of model-steps done."""

    def __init__(self, on_progress: Callable[[Progress], None] | None, units: list[Unit]) -> None:
        self.on_progress = on_progress
        self.start = time.perf_counter()
        self.done = dict.fromkeys(range(len(units)), 0)
        self.sizes = {i: u.model_steps for i, u in enumerate(units)}
        self.units = units
        self.losses: dict[str, float] = {}
        self.last = -1.0
        self.lock = threading.Lock()

    def reporter(self, unit: Unit) -> Callable[[int, int, dict[str, float]], None] | None:
        if self.on_progress is None:
            return None
        index = self.units.index(unit)
        what = f"{unit.group}: {len(unit.members)} arms × {unit.members[0].config.seeds} seeds"
        size, steps = self.sizes[index], unit.steps

        def report(done: int, total: int, losses: dict[str, float]) -> None:
            with self.lock:
                self.done[index] = round(size * done / total) if total else 0
                self.losses.update(losses)
                elapsed = time.perf_counter() - self.start
                if done < total and elapsed - self.last < 0.2:
                    return  # a few reports a second are plenty
                self.last = elapsed
                finished, whole = sum(self.done.values()), sum(self.sizes.values())
                eta = elapsed / finished * (whole - finished) if finished else math.nan
                step = round(steps * done / total) if total else 0
                update = Progress(step, steps, dict(self.losses), elapsed, eta, what)
            self.on_progress(update)

        return report
