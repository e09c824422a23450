"""Answer a question: train its arms over the sweep (or load the stored run), judge, store.

One call trains every instance the question's :class:`~posviz.lab.sweep.Sweep` needs (an arm per
task and, if it has a learned table, per initial scale) for the longest budget with held-out
checkpoints, through :func:`posviz.lab.train.train_arms` (all instances of one task shape as one
batched model). Each cell then reads its arms at its budget's checkpoint, judges convergence and
the verdict (:mod:`posviz.lab.answer`), and the findings say which verdicts hold across the sweep.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any

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
from posviz.lab.store import RunStore, code_version
from posviz.lab.summarise import findings_and_answer
from posviz.labfiles import CorruptEntry

#: held-out sequences whose hidden states the layer probe reads (per seed).
PROBE_SEQUENCES = 48


def run_question(
    question_id: str,
    *,
    config: LabConfig | None = None,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
) -> LabResult:
    """Train every arm of a question over its sweep and seeds, evaluate held-out, judge, store.

    Returns the stored result at once when one exists for (question, config, code version); a
    corrupted stored entry is retrained and replaced (``on_corrupt`` hears of it first). While
    waiting for a job slot (:func:`posviz.jobs.job_slot`) ``on_progress`` gets
    ``Progress(queue_position=n)``.

    Raises:
        ValueError: unknown question or invalid config (the message names the setting).
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    q = get_question(question_id)
    config = config or q.default
    store = store or RunStore()
    run_id = store.run_id(q.id, config)
    try:
        stored = store.load(run_id)
    except CorruptEntry as error:
        stored = None  # retrained below; save() moves the bad entry aside
        if on_corrupt is not None:
            on_corrupt(error)
    if stored is not None:
        return stored
    groups = sweep.plan(q.arm_specs(), q.sweep, config)  # validates every instance's config
    start = time.perf_counter()

    def waiting(position: int) -> None:
        if on_progress is not None:
            on_progress(
                Progress(0, config.steps, {}, time.perf_counter() - start, math.nan, "", position)
            )

    try:
        # One training per run id across replicas sharing the store: wait for another's claim
        # (shown as place 1 while it trains), then use what it stored (posviz.jobs.claim).
        claimed = claim(store.root / ".claims", run_id, should_stop=should_stop,
                        on_wait=lambda place: waiting(max(place, 1)))  # fmt: skip
        with claimed as held:
            if (stored := _stored(store, run_id)) is not None:
                return stored
            held.note("training")
            with job_slot("lab", on_wait=waiting, should_stop=should_stop):
                train_module().use_one_thread()
                trained = _train_groups(q, config, groups, on_progress, should_stop)
            result = build_result(q, config, groups, trained, run_id, time.perf_counter() - start)
            store.save(result)  # before the claim is released: its waiters find it
    except JobCancelled as stop:
        raise LabStopped(f"Lab run {run_id} ({q.id}) stopped before it finished.") from stop
    return result


def _stored(store: RunStore, run_id: str) -> LabResult | None:
    """The stored run, or None (also when it is corrupted: it is then retrained and replaced)."""
    try:
        return store.load(run_id)
    except CorruptEntry:
        return None


def train_module() -> ModuleType:
    """:mod:`posviz.lab.train`, imported on first use."""
    # Lazy: torch is heavy; loading and listing stored runs (every page's lab: sources) needs none.
    from posviz.lab import train

    return train


class Trained:
    """What training produced, per task group: instances, steps, and the layer probe."""

    def __init__(self) -> None:
        self.instances: dict[str, Instance] = {}
        self.curve_steps: dict[str, np.ndarray] = {}
        self.checkpoint_steps: dict[str, np.ndarray] = {}
        self.snapshot_steps: dict[str, np.ndarray] = {}
        self.hidden: dict[str, list[np.ndarray]] = {}  # instance id → per-layer states


#: training threads of one run: its work units (a task's instances, or halves of them) train on
#: this many cores at once, one torch thread each (no intra-op barrier to stall on a busy box).
TRAIN_THREADS = 2


@dataclass(frozen=True)
class Unit:
    """One ``train_arms`` call: instances of one task (same steps and checkpoints)."""

    task: str
    planned: tuple[sweep.Planned, ...]

    @property
    def cost(self) -> int:
        """Member-steps × longest training length: the work, for balancing."""
        return sum(p.config.seeds * p.config.steps * p.config.max_len for p in self.planned)


def work_units(groups: dict[str, list[sweep.Planned]], *, threads: int) -> list[Unit]:
    """The training calls of a run, largest first: one per task; a run with fewer tasks than
    threads splits its tasks' instances into halves of about equal work (members are exactly
    independent, so a split changes no number's meaning, and a fixed split is deterministic)."""
    units = [Unit(task, tuple(planned)) for task, planned in groups.items()]
    while len(units) < threads:
        largest = max(units, key=lambda u: u.cost)
        if len(largest.planned) < 2:
            break
        ordered = sorted(largest.planned, key=lambda p: -p.config.seeds * p.config.max_len)
        halves: tuple[list[sweep.Planned], list[sweep.Planned]] = ([], [])
        for p in ordered:  # greedy: each instance to the lighter half
            lighter = min(halves, key=lambda h: sum(x.config.seeds * x.config.max_len for x in h))
            lighter.append(p)
        units.remove(largest)
        units.extend(Unit(largest.task, tuple(h)) for h in halves)
    return sorted(units, key=lambda u: -u.cost)


def _train_groups(
    q: Question,
    config: LabConfig,
    groups: dict[str, list[sweep.Planned]],
    on_progress: Callable[[Progress], None] | None,
    should_stop: Callable[[], bool] | None,
) -> Trained:
    units = work_units(groups, threads=TRAIN_THREADS)
    progress = _Progress(on_progress, units)
    with ThreadPoolExecutor(max_workers=TRAIN_THREADS, thread_name_prefix="lab") as pool:
        futures = [pool.submit(_train_unit, q, u, progress, should_stop) for u in units]
        results = [f.result() for f in futures]  # re-raises a unit's error (LabStopped too)
    if should_stop is not None and should_stop():
        raise LabStopped("Stopped before every arm finished training.")
    trained = Trained()
    for unit, (outputs, hidden) in zip(units, results, strict=True):
        for p in unit.planned:
            trained.instances[p.id] = _instance(p, outputs[p.id])
        first = outputs[unit.planned[0].id]
        trained.curve_steps[unit.task] = np.asarray(first.curve_steps)
        trained.checkpoint_steps[unit.task] = np.asarray(first.checkpoint_steps)
        snapped = [outputs[p.id] for p in unit.planned if outputs[p.id].snapshots is not None]
        if snapped:
            trained.snapshot_steps[unit.task] = np.asarray(snapped[0].snapshot_steps)
        trained.snapshot_steps.setdefault(unit.task, np.zeros(0, dtype=np.int64))
        trained.hidden.update(hidden)
    return trained


def _train_unit(
    q: Question, unit: Unit, progress: _Progress, should_stop: Callable[[], bool] | None
) -> tuple[Any, dict[str, list[np.ndarray]]]:
    """One ``train_arms`` call (in a worker thread), and the layer probe's hidden states."""
    train = train_module()
    train.use_one_thread()
    steps = unit.planned[0].config.steps
    marks = sweep.checkpoints(steps // q.sweep.longest, q.sweep)
    arms = [train.Arm(p.id, p.model, p.config) for p in unit.planned]
    outputs = train.train_arms(
        arms,
        steps=steps,
        checkpoints=marks,
        on_step=progress.reporter(unit),
        should_stop=should_stop,
    )
    hidden = {}
    if q.layer_probe and unit.task == q.sweep.tasks[0].key:
        probe_id = sweep.instance_id(q.layer_probe, unit.task, None, sweep=q.sweep)
        planned = next((p for p in unit.planned if p.id == probe_id), None)
        if planned is not None:
            states = outputs.hidden_states(
                probe_id, planned.config.eval_lengths[0], PROBE_SEQUENCES
            )
            hidden[probe_id] = [np.asarray(h, dtype=np.float64) for h in states]
    return outputs, hidden


class _Progress:
    """The units' ``on_step(done, total, losses)`` reports, as one :class:`Progress` of the run."""

    def __init__(self, on_progress: Callable[[Progress], None] | None, units: list[Unit]) -> None:
        self.on_progress = on_progress
        self.start = time.perf_counter()
        self.done = dict.fromkeys(range(len(units)), 0)
        self.sizes = {
            i: sum(p.config.seeds * p.config.steps for p in u.planned) for i, u in enumerate(units)
        }
        self.units = units
        self.losses: dict[str, float] = {}
        self.last = -1.0
        self.lock = threading.Lock()

    def reporter(self, unit: Unit) -> Callable[[int, int, dict[str, float]], None] | None:
        if self.on_progress is None:
            return None
        index = self.units.index(unit)
        steps = unit.planned[0].config.steps
        what = f"{unit.task}: {len(unit.planned)} arms × {unit.planned[0].config.seeds} seeds"

        def report(done: int, total: int, losses: dict[str, float]) -> None:
            with self.lock:
                self.done[index] = done
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
    )


def rejudge(result: LabResult) -> LabResult:
    """Every cell, verdict, finding and the answer recomputed from a run's stored arrays, with
    the current code and no training: a stored answer is a function of its numbers only (the
    tests check that a stored run and its rejudged self agree)."""
    q = get_question(result.question_id)
    groups = sweep.plan(q.arm_specs(), q.sweep, result.config)
    trained = Trained()
    trained.instances = dict(result.instances)
    trained.curve_steps = dict(result.curve_steps)
    trained.checkpoint_steps = dict(result.checkpoint_steps)
    trained.snapshot_steps = dict(result.snapshot_steps_by_task)
    return build_result(
        q, result.config, groups, trained, result.run_id, result.wall_s, layer=result.layer_probe
    )


def _cell(
    q: Question,
    plan: sweep.CellPlan,
    task: str,
    trained: Trained,
    by_id: dict[str, sweep.Planned],
    labels: dict[str, str],
    bound: Bound | None,
) -> Cell:
    metrics, notes, converged, how = {}, {}, {}, {}
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
    task_setting = next(t for t in q.sweep.tasks if t.key == task)
    metric = task_setting.metric or q.metric
    inputs = judge.CellInput(
        q, task, metric, metrics, converged, labels, None if bound is None else bound.value
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
