"""A question as a study of the lab's one runner (:func:`posviz.lab.engine.run.run_study`).

A question (:class:`QuestionStudy`) trains every instance its :class:`~posviz.lab.engine.sweep.
Sweep` needs for the longest budget; each cell then reads its arms at its budget's checkpoint,
judges convergence and the verdict (:mod:`posviz.lab.studies.judging`), and the findings say
which verdicts hold across the sweep. A question's ``panel`` part (when its preset defines
``panel``, a second sweep of held-out settings) is a run of its own, trained after every default.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from posviz.lab.engine import bounds, sweep
from posviz.lab.engine import metrics as lab_metrics
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.measure import measure, task_chance
from posviz.lab.engine.results import (
    ArmInfo,
    Bound,
    Cell,
    Instance,
    LabResult,
    LayerProbe,
    Progress,
)
from posviz.lab.engine.run import PARTS, Unit, UnitOutput, run_study
from posviz.lab.engine.store import RunStore, code_version, question_run_id
from posviz.lab.studies import judging as judge
from posviz.lab.studies.kinds import study_kind
from posviz.lab.studies.presets import Question
from posviz.lab.studies.presets import question as get_question
from posviz.lab.studies.summarise import findings_and_answer
from posviz.labfiles import CorruptEntry

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
        kind = study_kind(q.kind)
        trainer = kind.train  # its own loop, for a task the engine does not draw
        for task, planned in groups.items():
            steps = planned[0].config.steps
            marks = tuple(sweep.checkpoints(steps // q.sweep.longest, q.sweep))
            if trainer is not None:
                length = kind.train_length or (lambda condition, config: None)
                members = tuple(
                    Conditioned.of(p, c, length(c, p.config))
                    for p in planned
                    for c in (q.variant(p.arm).condition,)
                )
                cut = kind.calls is not None
                calls = kind.calls(members) if cut else (members,)
                units.extend(
                    Unit(task, call, steps, marks, train=trainer, whole=cut) for call in calls
                )
                continue
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
        return store.load(run_id, judge=rejudge)


@dataclass(frozen=True)
class Conditioned(sweep.Planned):
    """A planned instance with its variant's ``condition``, for a kind's own trainer, and the
    tokens a sequence it trains on where that is not its config's (``StudyKind.train_length``)."""

    condition: str = ""
    train_length: int | None = None

    @classmethod
    def of(
        cls, planned: sweep.Planned, condition: str, train_length: int | None = None
    ) -> Conditioned:
        fields = {f.name: getattr(planned, f.name) for f in dataclasses.fields(planned)}
        return cls(**fields, condition=condition, train_length=train_length)


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
        self.head_scores: list[Any] = []  # prefix-matching scores (posviz.lab.engine.induction)


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
    """The control's ceiling on this task: an encoder control's position-blind ceiling, or the
    induction control's ceiling without composition (:func:`bounds.no_composition_ceiling`)."""
    if not q.control:
        return None
    control = q.variant(q.control)
    task_config = control.config_for(config)
    if task_config.task == "induction" and task_config.layers == 1:
        b = bounds.no_composition_ceiling(task_config, heads=task_config.heads)
        chance = bounds.chance_level(task_config).value or 0.0
        return Bound(task_config.task, "accuracy", float(b.value), b.method, b.text(3), chance)
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


def _blind_ceiling(planned: sweep.Planned) -> float | None:
    """The position-blind ceiling an arm *with* positions must clear to count as learned (an
    encoder on a task that has one; None for no-position arms, decoders and text tasks)."""
    cfg = planned.config
    if planned.model.kind != "encoder" or planned.model.scheme == "nope":
        return None
    if cfg.task not in ("reverse", "kback"):  # count's is 1 (positions not needed), mlm's text
        return None
    return _exact_blind(cfg)


@functools.lru_cache(maxsize=64)
def _exact_blind(cfg: LabConfig) -> float | None:
    return bounds.position_blind_ceiling(cfg, kind="encoder").value


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
        role = q.variant(inst.arm).role if inst.arm in {v.id for v in q.variants} else "arm"
        measured = measure(
            inst,
            planned.config,
            control=role == "control",
            extra=study_kind(q.kind).measures,
            curve_steps=trained.curve_steps[task],
            checkpoint_steps=trained.checkpoint_steps[task],
            snapshot_steps=trained.snapshot_steps[task],
            steps=plan.steps,
        )
        blind = _blind_ceiling(planned) if role != "control" else None
        if blind is not None:  # "learned" measured from what a model without positions reaches
            first = str(planned.config.eval_lengths[0])
            index = lab_metrics.checkpoint_index(trained.checkpoint_steps[task], plan.steps)
            chance = task_chance(planned.config)
            again = lab_metrics.convergence(
                inst, length=first, index=index, chance=chance, blind=blind
            )
            measured = dataclasses.replace(measured, convergence=again)
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
    judged = study_kind(q.kind).judge(inputs)
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
    from posviz.lab.engine import emergence

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
