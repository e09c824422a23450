"""The lab's one runner: a study (a question or a paper check) is claimed, loaded or trained,
built into its result and stored, by :func:`run_study`.

A study says what it trains (:class:`Unit`: members of one task shape trained as one batched
model by :func:`posviz.lab.train.train_arms`, with their held-out checkpoints), how its run id is
keyed (:func:`posviz.lab.store.study_run_id`: kind, id, part, settings) and how the trained
outputs become its result; the runner does the rest the same way for both kinds: the stored
result at once, else one training per run id across replicas sharing the store
(:func:`posviz.jobs.claim`), a job slot (:func:`posviz.jobs.job_slot`), the units balanced over
:data:`TRAIN_THREADS` threads, one progress count, the save before the claim is released.

A question (:class:`QuestionStudy`) trains every instance its :class:`~posviz.lab.sweep.Sweep`
needs for the longest budget; each cell then reads its arms at its budget's checkpoint, judges
convergence and the verdict (:mod:`posviz.lab.answer`), and the findings say which verdicts hold
across the sweep. A question's ``panel`` part (when its preset defines ``panel``, a second sweep
of held-out settings) is a run of its own, trained after every default. Paper checks are
:class:`posviz.lab.cards.CardStudy`.
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
from posviz.lab import answer as judge
from posviz.lab import bounds, sweep
from posviz.lab.config import LabConfig
from posviz.lab.measure import measure
from posviz.lab.presets import Question
from posviz.lab.presets import question as get_question
from posviz.lab.results import (
    ArmInfo,
    Bound,
    Cell,
    Instance,
    LabResult,
    LabStopped,
    LayerProbe,
    Progress,
)
from posviz.lab.store import RunStore, code_version, question_run_id, register_judge
from posviz.lab.summarise import findings_and_answer
from posviz.labfiles import CorruptEntry

#: held-out sequences whose hidden states the layer probe reads (per seed).
PROBE_SEQUENCES = 48
#: training threads of one run: its work units (a task's instances, or halves of them) train on
#: this many cores at once, one torch thread each (no intra-op barrier to stall on a busy box).
TRAIN_THREADS = 2
#: the parts of a study, in the order they are computed (``panel``: extra settings, later).
PARTS = ("default", "panel")


@dataclass(frozen=True)
class Unit:
    """One ``train_arms`` call: members of one task shape (same steps and checkpoints).

    ``members`` have ``id``, ``model`` and ``config`` (:class:`posviz.lab.sweep.Planned`,
    :class:`posviz.lab.papers.CardArm`); ``probe``: the member whose hidden states are read
    after training (its id, the sequence length), or None.
    """

    group: str
    members: tuple[Any, ...]
    steps: int
    checkpoints: tuple[int, ...]
    probe: tuple[str, int] | None = None
    head_scores: tuple[tuple[str, str], ...] = ()  # (member id, label): prefix-matching scores

    @property
    def cost(self) -> float:
        """The unit's training work: every member's seeds × steps × :func:`step_work`."""
        return float(
            sum(m.config.seeds * m.config.steps * step_work(m.config) for m in self.members)
        )

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
    """:mod:`posviz.lab.train`, imported on first use."""
    # Lazy: torch is heavy; loading and listing stored runs (every page's lab: sources) needs none.
    from posviz.lab import train

    return train


def step_work(config: LabConfig) -> int:
    """The work of one model's training step: batch × length × layers × (width + heads ×
    length), its matrix and attention work: how the threads' shares are balanced (the page's
    time estimates use :func:`posviz.lab.views.live.step_cpu_s`, fitted to measured runs)."""
    length = config.max_len
    return config.batch * length * config.layers * (config.width + config.heads * length)


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
    ordered = sorted(unit.members, key=lambda m: -m.config.seeds * step_work(m.config))
    halves: tuple[list[Any], list[Any]] = ([], [])
    for member in ordered:  # each member to the lighter half
        min(halves, key=lambda h: sum(m.config.seeds * step_work(m.config) for m in h)).append(
            member
        )
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
        if len(largest.members) < 2:
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
    """One ``train_arms`` call (in a worker thread), and the probed member's hidden states."""
    train = train_module()
    train.use_one_thread()
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
        from posviz.lab import induction

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


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class QuestionStudy:
    """A question's run with ``config``: its sweep (``part="default"``) or its panel."""

    question: Question
    config: LabConfig
    part: str = "default"
    kind: str = "question"

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def run_id(self) -> str:
        return question_run_id(self.question, self.config, part=self.part)

    @property
    def swept(self) -> Question:
        """The question with the sweep this part trains (its panel's for ``panel``)."""
        return question_part(self.question, self.part)

    def units(self) -> list[Unit]:
        q = self.swept
        groups = sweep.plan(q.arm_specs(), q.sweep, self.config)
        units = []
        for task, planned in groups.items():
            steps = planned[0].config.steps
            marks = tuple(sweep.checkpoints(steps // q.sweep.longest, q.sweep))
            probe = None
            if q.layer_probe and task == q.sweep.tasks[0].key:
                probe_id = sweep.instance_id(q.layer_probe, task, None, sweep=q.sweep)
                member = next((p for p in planned if p.id == probe_id), None)
                if member is not None:
                    probe = (probe_id, member.config.eval_lengths[0])
            scored = ()
            if self.part == "default" and task == q.sweep.tasks[0].key:
                own = {sweep.instance_id(a, task, None, sweep=q.sweep): a for a in q.head_scores}
                labels = {v.id: v.label for v in q.variants}
                scored = tuple((p.id, labels[own[p.id]]) for p in planned if p.id in own)
            units.append(Unit(task, tuple(planned), steps, marks, probe, scored))
        return units

    def build(self, trained: list[UnitOutput], run_id: str, wall: float) -> LabResult:
        q = self.swept
        groups = sweep.plan(q.arm_specs(), q.sweep, self.config)
        return build_result(q, self.config, groups, _collect(trained), run_id, wall, part=self.part)

    def load(self, store: RunStore, run_id: str) -> LabResult | None:
        return store.load(run_id)


def question_part(q: Question, part: str) -> Question:
    """``q`` itself for ``default``; for ``panel`` the question with its panel's sweep.

    Raises:
        ValueError: an unknown part, or a question without a panel.
    """
    if part == "default":
        return q
    if part != "panel":
        raise ValueError(f"unknown part {part!r} of a study; choose one of {', '.join(PARTS)}.")
    panel = getattr(q, "panel", None)
    if panel is None:
        raise ValueError(f"Question {q.id!r} has no panel of held-out settings.")
    return dataclasses.replace(q, sweep=panel)


def question_parts(q: Question) -> tuple[str, ...]:
    """The parts a question has: ``default``, and ``panel`` when its preset defines one."""
    return PARTS if getattr(q, "panel", None) is not None else PARTS[:1]


def run_question(
    question_id: str,
    *,
    config: LabConfig | None = None,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
    part: str = "default",
) -> LabResult:
    """Train every arm of a question over its sweep and seeds, evaluate held-out, judge, store
    (:func:`run_study`); the stored result at once when there is one.

    Raises:
        ValueError: unknown question or part, or invalid config (the message names the setting).
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    q = get_question(question_id)
    study = QuestionStudy(q, config or q.default, part)
    study.swept  # noqa: B018 -- validates the part before anything runs
    return run_study(
        study, store=store, on_progress=on_progress, should_stop=should_stop,
        on_corrupt=on_corrupt,
    )  # fmt: skip


class Trained:
    """What training produced, per task group: instances, steps, and the layer probe."""

    def __init__(self) -> None:
        self.instances: dict[str, Instance] = {}
        self.curve_steps: dict[str, np.ndarray] = {}
        self.checkpoint_steps: dict[str, np.ndarray] = {}
        self.snapshot_steps: dict[str, np.ndarray] = {}
        self.hidden: dict[str, list[np.ndarray]] = {}  # instance id → per-layer states
        self.head_scores: list[Any] = []  # prefix-matching scores (posviz.lab.induction)


def _collect(trained: list[UnitOutput]) -> Trained:
    out = Trained()
    for part in trained:
        unit, outputs = part.unit, part.outputs
        for p in unit.members:
            out.instances[p.id] = _instance(p, outputs[p.id])
        first = outputs[unit.members[0].id]
        out.curve_steps[unit.group] = np.asarray(first.curve_steps)
        out.checkpoint_steps[unit.group] = np.asarray(first.checkpoint_steps)
        snapped = [outputs[p.id] for p in unit.members if outputs[p.id].snapshots is not None]
        if snapped:
            out.snapshot_steps[unit.group] = np.asarray(snapped[0].snapshot_steps)
        out.snapshot_steps.setdefault(unit.group, np.zeros(0, dtype=np.int64))
        out.hidden.update(part.hidden)
        out.head_scores.extend(part.head_scores)
    return out


def _instance(p: sweep.Planned, out: Any) -> Instance:
    """An :class:`Instance` from the engine's output for one planned instance."""
    held = out.heldout
    undefined = {
        str(length): h.undefined or judge.NOT_DEFINED
        for length, h in held.items()
        if h.undefined or np.isnan(np.asarray(h.accuracy)).all()
    }
    return Instance(
        id=p.id,
        arm=p.arm,
        task=p.task,
        init=p.init,
        losses=np.asarray(out.losses, dtype=np.float64),
        heldout_accuracy={str(k): np.asarray(h.accuracy, np.float64) for k, h in held.items()},
        heldout_loss={str(k): np.asarray(h.loss, np.float64) for k, h in held.items()},
        per_position={str(k): np.asarray(h.per_position, np.float64) for k, h in held.items()},
        snapshots=None if out.snapshots is None else np.asarray(out.snapshots),
        diverged_at=tuple(int(x) for x in np.atleast_1d(out.diverged_at)),
        n_params=int(out.n_params),
        trained_rows=int(p.model.table_rows or p.config.max_len),
        undefined=undefined,
    )


# --------------------------------------------------------------------------- judging


def _bound(q: Question, config: LabConfig) -> Bound | None:
    """The control's position-blind ceiling on this task (encoder controls only)."""
    if not q.control:
        return None
    control = q.variant(q.control)
    task_config = control.config_for(config)
    if control.model.kind != "encoder":
        return None
    b = bounds.position_blind_ceiling(task_config, kind="encoder")
    if b.value is None:
        return None
    chance = bounds.chance_level(task_config).value or 0.0
    return Bound(task_config.task, "accuracy", float(b.value), b.method, b.text(3), chance)


def build_result(
    q: Question,
    config: LabConfig,
    groups: dict[str, list[sweep.Planned]],
    trained: Trained,
    run_id: str,
    wall: float,
    *,
    layer: LayerProbe | None = None,
    part: str = "default",
) -> LabResult:
    """Measure every cell, judge it, and assemble the :class:`LabResult` (``layer``: a layer
    probe already computed, else it is computed from ``trained.hidden``)."""
    labels = {v.id: v.label for v in q.variants}
    by_id = {p.id: p for planned in groups.values() for p in planned}
    task_configs = {t.key: t.config(config) for t in q.sweep.tasks}
    task_bounds = {t.key: _bound(q, task_configs[t.key]) for t in q.sweep.tasks}
    cells = []
    for plan in sweep.cells(q.arm_specs(), q.sweep, config):
        task = plan.settings[0].key
        cells.append(_cell(q, plan, task, trained, by_id, labels, task_bounds.get(task)))
    cells.sort(key=lambda c: not c.default)
    arms = tuple(_arm_info(q, v, config, trained) for v in q.variants)
    layer = layer or _layer_probe(q, trained, cells[0], labels)
    findings, answer = findings_and_answer(q, tuple(cells), labels, task_bounds, layer, config)
    return LabResult(
        run_id=run_id,
        question_id=q.id,
        config=config,
        code_version=code_version(),
        arms=arms,
        cells=tuple(cells),
        findings=findings,
        answer=answer,
        bounds=tuple(b for b in task_bounds.values() if b is not None),
        layer_probe=layer,
        curve_steps=trained.curve_steps,
        checkpoint_steps=trained.checkpoint_steps,
        snapshot_steps_by_task=trained.snapshot_steps,
        instances=trained.instances,
        notes=_notes(q, trained),
        wall_s=wall,
        part=part,
        head_scores=tuple(sorted(trained.head_scores, key=lambda s: q.head_scores.index(s.arm))),
    )


def rejudge(result: LabResult) -> LabResult:
    """Every cell, verdict, finding and the answer recomputed from a run's stored arrays, with
    the current code and no training: a stored answer is a function of its numbers only (the
    tests check that a stored run and its rejudged self agree)."""
    q = question_part(get_question(result.question_id), result.part)
    groups = sweep.plan(q.arm_specs(), q.sweep, result.config)
    trained = Trained()
    trained.instances = dict(result.instances)
    trained.curve_steps = dict(result.curve_steps)
    trained.checkpoint_steps = dict(result.checkpoint_steps)
    trained.snapshot_steps = dict(result.snapshot_steps_by_task)
    trained.head_scores = list(result.head_scores)
    return build_result(
        q, result.config, groups, trained, result.run_id, result.wall_s,
        layer=result.layer_probe, part=result.part,
    )  # fmt: skip


register_judge(LabResult, rejudge)  # every stored question run is judged on load


def _cell(
    q: Question,
    plan: sweep.CellPlan,
    task: str,
    trained: Trained,
    by_id: dict[str, sweep.Planned],
    labels: dict[str, str],
    bound: Bound | None,
) -> Cell:
    metrics, notes, converged, how, status = {}, {}, {}, {}, {}
    for arm, instance_id in plan.instances.items():
        inst, planned = trained.instances[instance_id], by_id[instance_id]
        measured = measure(
            q,
            inst,
            planned.config,
            curve_steps=trained.curve_steps[task],
            checkpoint_steps=trained.checkpoint_steps[task],
            snapshot_steps=trained.snapshot_steps[task],
            steps=plan.steps,
        )
        metrics[arm] = measured.values
        notes.update({f"{arm}/{k}": v for k, v in measured.notes.items()})
        converged[arm] = measured.convergence.converged
        how[arm] = measured.convergence.text
        status[arm] = measured.convergence.status
    task_setting = next(t for t in q.sweep.tasks if t.key == task)
    metric = task_setting.metric or q.metric
    inputs = judge.CellInput(
        q, task, metric, metrics, converged, labels, None if bound is None else bound.value, status
    )
    judged = judge.JUDGES[q.kind](inputs)
    order = [v.id for v in q.variants]
    return Cell(
        id=plan.id,
        settings=plan.settings,
        steps=plan.steps,
        default=plan.default,
        instances=plan.instances,
        metrics=metrics,
        summary=judge.summary_rows(order, labels, metrics, notes),
        converged=converged,
        convergence=how,
        comparisons=judged.comparisons,
        ranking=judged.ranking,
        verdict=judged.verdict,
        status=status,
    )


def _arm_info(q: Question, v: Any, config: LabConfig, trained: Trained) -> ArmInfo:
    own = v.config_for(q.sweep.tasks[0].config(config))
    lengths = (
        str(own.max_len)
        if own.min_len == own.max_len
        else f"{own.min_len}–{own.max_len} ({own.length_dist})"
    )
    instance = trained.instances[v.id]
    return ArmInfo(
        id=v.id,
        label=v.label,
        role=v.role,
        kind=v.model.kind,
        scheme=v.model.scheme,
        injection=v.model.injection,
        task=own.task,
        lengths=lengths,
        learned_table=v.model.scheme == "learned",
        n_params=instance.n_params,
    )


def _layer_probe(
    q: Question, trained: Trained, default: Cell, labels: dict[str, str]
) -> LayerProbe | None:
    """Per-layer position probe of the question's probed arm (default task, final budget)."""
    if not q.layer_probe or not trained.hidden:
        return None
    # Lazy: the probe module is only needed by the question that probes layers.
    from posviz.lab import emergence

    states = next(iter(trained.hidden.values()))
    result = emergence.position_probe_by_layer(states)
    score = np.stack([layer.r2_per_seed for layer in result.layers])
    control = np.stack([layer.control_r2_per_seed for layer in result.layers])
    parts = [
        f"layer {probe.layer}: R² {probe.r2.text(2)} (shuffled: {probe.control_r2.text(2)})"
        for probe in result.layers
    ]
    text = (
        f"Position probe of {labels[q.layer_probe]}'s hidden states, layer by layer (layer 0 = "
        f"the input, no position in it by construction): " + "; ".join(parts) + "."
    )
    return LayerProbe(
        q.layer_probe,
        labels[q.layer_probe],
        default.id,
        score,
        control,
        "positions shuffled within each sequence",
        text,
    )


def _notes(q: Question, trained: Trained) -> tuple[str, ...]:
    notes = []
    for inst in trained.instances.values():
        if inst.snapshots is None or inst.snapshots.shape[2] <= inst.trained_rows:
            continue
        tail = inst.snapshots[:, :, inst.trained_rows :]
        moved = float(np.abs(tail[:, -1] - tail[:, 0]).max())
        notes.append(
            f"{q.variant(inst.arm).label} ({inst.id}): rows {inst.trained_rows}–"
            f"{inst.snapshots.shape[2] - 1} were never used in training and moved by {moved:g} "
            "from their start (zero gradient)."
        )
    return tuple(notes)
