"""Answer a preset question: train its variants (or load the stored run) and summarise."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from posviz.analysis.probes import probe_positions
from posviz.jobs import JobCancelled, job_slot
from posviz.lab.answer import answer_text, summary_rows
from posviz.lab.config import LabConfig
from posviz.lab.presets import Question
from posviz.lab.presets import question as get_question
from posviz.lab.results import LabResult, LabStopped, Progress
from posviz.lab.rows import late_to_early_ratio, rank_correlation, row_movement
from posviz.lab.store import RunStore, code_version
from posviz.lab.tasks import length_probabilities
from posviz.labfiles import CorruptEntry

if TYPE_CHECKING:
    from posviz.lab.train import TrainOutput

LATE_FRACTION = 0.75  # "late" positions: the last quarter of the longest training length


def run_question(
    question_id: str,
    *,
    config: LabConfig | None = None,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
) -> LabResult:
    """Train every variant of a question over its seeds, evaluate held-out, summarise, store.

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
    configs = {v.id: v.config_for(config) for v in q.variants}  # validates every arm first
    start = time.perf_counter()

    def waiting(position: int) -> None:
        if on_progress is not None:
            on_progress(
                Progress(0, config.steps, {}, time.perf_counter() - start, math.nan, "", position)
            )

    try:
        with job_slot("lab", on_wait=waiting, should_stop=should_stop):
            _train_module().use_one_thread()
            outputs = _train_all(q, configs, on_progress, should_stop)
    except JobCancelled as stop:
        raise LabStopped(f"Lab run {run_id} ({q.id}) stopped before it finished.") from stop
    result = _result(q, config, configs, outputs, run_id, time.perf_counter() - start)
    store.save(result)
    return result


def _train_module() -> ModuleType:
    """:mod:`posviz.lab.train`, imported on first use."""
    # Lazy: torch is heavy; loading and listing stored runs (every page's lab: sources) needs none.
    from posviz.lab import train

    return train


def _train_all(
    q: Question, configs: dict[str, LabConfig], on_progress, should_stop
) -> dict[str, TrainOutput]:
    train = _train_module()
    outputs: dict[str, TrainOutput] = {}
    losses: dict[str, float] = {}
    total = sum(c.steps for c in configs.values())
    done_before, start = 0, time.perf_counter()
    for variant in q.variants:
        config = configs[variant.id]

        def on_step(
            step: int,
            loss: float,
            variant_id: str = variant.id,
            base: int = done_before,
            steps: int = config.steps,
        ) -> None:
            losses[variant_id] = loss
            if on_progress is None or (step % 5 and step != steps):
                return
            elapsed = time.perf_counter() - start
            eta = elapsed / (base + step) * (total - base - step)
            on_progress(Progress(step, steps, dict(losses), elapsed, eta, variant_id))

        outputs[variant.id] = train.train_variant(
            variant.model, config, on_step=on_step, should_stop=should_stop
        )
        if should_stop is not None and should_stop():
            raise LabStopped(f"Stopped while training {variant.label!r}.")
        done_before += config.steps
    return outputs


def _accuracies(
    config: LabConfig, out: TrainOutput
) -> tuple[dict[str, np.ndarray], dict[str, str], np.ndarray]:
    """``accuracy`` (first evaluation length) and ``accuracy@n`` (the others), per seed."""
    train = _train_module()
    metrics: dict[str, np.ndarray] = {}
    notes: dict[str, str] = {}
    per_position = np.zeros((config.seeds, 0))
    for index, length in enumerate(config.eval_lengths):
        name = "accuracy" if index == 0 else f"accuracy@{length}"
        if out.diverged_at is not None:
            metrics[name] = np.full(config.seeds, np.nan)
            notes[name] = (
                f"diverged: the loss became NaN/inf at step {out.diverged_at}; lower lr "
                f"(now {config.lr})."
            )
        elif out.model.config.scheme == "learned" and length > out.model.rows:
            metrics[name] = np.full(config.seeds, np.nan)
            notes[name] = (
                f"{NOT_INDEXABLE}: it has {out.model.rows} rows, length {length} needs {length}."
            )
        else:
            metrics[name], positions = train.evaluate(out.model, config, length)
            if positions.shape[1] >= per_position.shape[1]:
                per_position = positions
    return metrics, notes, per_position


def _variant_metrics(
    q: Question, config: LabConfig, out: TrainOutput
) -> tuple[dict[str, tuple[float, ...]], dict[str, str], np.ndarray]:
    """Per-seed metrics of one trained variant, notes on undefined ones, per-position accuracy."""
    metrics, notes, per_position = _accuracies(config, out)
    metrics["train_loss_mean"] = _mean_training_loss(config, out)
    if q.probe_tables:
        late = math.ceil(LATE_FRACTION * config.max_len)
        if per_position.shape[1] >= config.max_len:
            metrics["accuracy_late"] = np.nanmean(per_position[:, late : config.max_len], axis=1)
        else:
            metrics["accuracy_late"] = np.full(config.seeds, np.nan)
        metrics.update(_probe_metrics(config, out, late))
        metrics.update(_movement_metrics(config, out, late))
    return {k: tuple(float(x) for x in v) for k, v in metrics.items()}, notes, per_position


NOT_INDEXABLE = "a learned table cannot index positions past its last row"


def _mean_training_loss(config: LabConfig, out: TrainOutput) -> np.ndarray:
    """``(E,)`` training loss averaged over the recorded steps: the area under the learning curve.

    Every step trains on fresh sequences, so this is also the loss on data the model had not
    seen yet; lower = learned faster. It still separates arms that all end at 100 % accuracy.
    """
    if out.diverged_at is not None or out.losses.shape[1] == 0:
        return np.full(config.seeds, np.nan)
    return np.asarray(out.losses, dtype=np.float64).mean(axis=1)


def _movement_metrics(config: LabConfig, out: TrainOutput, late: int) -> dict[str, np.ndarray]:
    """Row movement against how often each row was seen (:mod:`posviz.lab.rows`), per seed."""
    if out.snapshots is None:
        return {}
    movement = row_movement(out.snapshots)  # (E, rows)
    trained = config.max_len
    seen = length_probabilities(config)[:trained]  # P(a sequence reaches row p)
    return {
        "movement_late_ratio": late_to_early_ratio(movement, late=late, trained=trained),
        "movement_rank_corr": rank_correlation(movement[:, :trained], seen),
        "movement_unseen_max": movement[:, trained:].max(axis=1, initial=0.0),
    }


def _probe_metrics(config: LabConfig, out: TrainOutput, late: int) -> dict[str, np.ndarray]:
    """Linear-probe error on the late trained rows, final table vs the same table at step 0."""
    if out.snapshots is None:
        return {}
    rows = config.max_len

    def late_error(table: np.ndarray) -> float:
        probe = probe_positions(table[:rows], train="kfold", folds=5, seed=0)
        frame = probe.frame()
        return float(frame.loc[frame["position"] >= late, "abs_error"].mean())

    final = np.array([late_error(out.snapshots[s, -1]) for s in range(config.seeds)])
    initial = np.array([late_error(out.snapshots[s, 0]) for s in range(config.seeds)])
    return {"probe_error_late": final, "probe_error_late_at_init": initial}


def _result(
    q: Question,
    config: LabConfig,
    configs: dict[str, LabConfig],
    outputs: dict[str, TrainOutput],
    run_id: str,
    wall: float,
) -> LabResult:
    metrics, notes, per_position = {}, {}, {}
    for variant in q.variants:
        out = outputs[variant.id]
        m, n, pp = _variant_metrics(q, configs[variant.id], out)
        metrics[variant.id] = m
        notes.update({f"{variant.id}/{k}": v for k, v in n.items() if v})
        per_position[variant.id] = pp
    extra_notes = []
    for variant in q.variants:
        snaps = outputs[variant.id].snapshots
        rows_trained = configs[variant.id].max_len
        if snaps is not None and snaps.shape[2] > rows_trained:
            moved = float(np.abs(snaps[:, -1, rows_trained:] - snaps[:, 0, rows_trained:]).max())
            extra_notes.append(
                f"{variant.label}: rows {rows_trained}–{snaps.shape[2] - 1} were never used in "
                f"training and moved by {moved:g} from their start (zero gradient)."
            )
    curve_steps = next(iter(outputs.values())).curve_steps
    return LabResult(
        run_id=run_id,
        question_id=q.id,
        config=config,
        code_version=code_version(),
        variant_ids=tuple(v.id for v in q.variants),
        variant_labels=tuple(v.label for v in q.variants),
        metrics=metrics,
        summary=summary_rows(q, metrics, notes),
        answer=answer_text(q, metrics, config.eval_lengths),
        curve_steps=curve_steps,
        curves={v: o.losses for v, o in outputs.items()},
        snapshot_steps=next(
            (o.snapshot_steps for o in outputs.values() if o.snapshots is not None),
            np.zeros(0, dtype=np.int64),
        ),
        snapshots={v: o.snapshots for v, o in outputs.items() if o.snapshots is not None},
        position_accuracy=per_position,
        n_params={v: o.n_params for v, o in outputs.items()},
        diverged=tuple(v for v, o in outputs.items() if o.diverged_at is not None),
        notes=tuple(extra_notes),
        wall_s=wall,
    )
