"""Every chart of a lab page, for one cell of the sweep, each with the data it draws and a note
saying what to notice.

The hero is the evidence for the cell's verdict: the deciding metric per arm with its 95 %
interval and the control's position-blind ceiling (or, where both arms reach the accuracy
ceiling, the training-loss curves that show which learns faster), the ranking on unseen positions
(extrapolation), accuracy by position (rarely-seen rows), held-out loss with and without
positions. Every arm keeps one colour on every chart of a page (:func:`arm_colors`); controls
are grey. Accuracy intervals are clipped to [0, 1] (:mod:`posviz.lab.present.frames`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.evidence import spread
from posviz.charts import lab as charts
from posviz.charts.figure import Figure
from posviz.charts.style import CONTROL_COLOR, series_colors
from posviz.lab.engine import metrics as m
from posviz.lab.engine import probe
from posviz.lab.engine.measure import late_start
from posviz.lab.engine.results import Bound, Cell, Instance, LabResult
from posviz.lab.engine.rows import movement_frame, row_movement
from posviz.lab.engine.tasks import length_probabilities
from posviz.lab.present import clauses
from posviz.lab.present.frames import metric_frame, seed_band
from posviz.lab.present.kinds import kind_view
from posviz.lab.studies.judging import HOLDS, NOT_DEFINED
from posviz.lab.studies.kinds import study_kind
from posviz.lab.studies.presets import Question, question


@dataclass(frozen=True)
class Shown:
    """One chart of a page: its widget key suffix, the figure and what to notice."""

    key: str
    figure: Figure
    note: str = ""
    #: what the chart must not be read as, said first (a hero beside untrained arms).
    caveat: str = ""

    @property
    def caption(self) -> str:
        """The caveat, then what to notice: the line under the chart."""
        return " ".join(part for part in (self.caveat, self.note) if part)


def arm_colors(arms: Question | LabResult) -> dict[str, str]:
    """``arm label → colour`` for every chart of a page: controls grey, the others a palette
    colour each (named families keep theirs: sinusoid orange, RoPE green, …). A stored run
    colours its own arms (its labels may predate the preset's current ones)."""
    pairs = [
        (a.label, a.role) for a in (arms.variants if isinstance(arms, Question) else arms.arms)
    ]
    others = [label for label, role in pairs if role != "control"]
    palette = dict(zip(others, series_colors(others), strict=True))
    return {label: palette.get(label, CONTROL_COLOR) for label, _ in pairs}


def _instances(result: LabResult, cell: Cell) -> dict[str, Instance]:
    return {arm: result.instances[i] for arm, i in cell.instances.items()}


def _checkpoint(result: LabResult, cell: Cell) -> int:
    return m.checkpoint_index(result.checkpoint_steps[cell.steps_key], cell.steps)


def bound_for(result: LabResult, cell: Cell) -> Bound | None:
    """The control's position-blind ceiling in this cell's task (None where there is none)."""
    task = cell.setting("task").key
    found = [b for b in result.bounds if b.task == task]
    if not found and len({c.setting("task").key for c in result.cells}) == 1:
        found = list(result.bounds)
    return found[0] if found else None


def short_setting(cell: Cell, axis: str) -> str:
    """A setting's label without the words its column already says ("table init …")."""
    label = cell.setting(axis).label
    return label.removeprefix("table init ") if axis == "init" else label


def short_label(cell: Cell) -> str:
    """``"reverse (length 12) · N(0, 0.02²) (BERT/GPT-2) · 200 steps (preset)"``."""
    return " · ".join(short_setting(cell, s.axis) for s in cell.settings)


# --------------------------------------------------------------------------- frames of one cell


def curves_frame(result: LabResult, cell: Cell) -> pd.DataFrame:
    """Training loss (mean over seeds) up to the cell's budget: ``variant, step, loss``."""
    steps = np.asarray(result.curve_steps[cell.steps_key])
    keep = steps <= cell.steps
    parts = [
        pd.DataFrame(
            {
                "variant": result.label(arm),
                "step": steps[keep],
                "loss": inst.losses[:, keep].mean(0),
            }
        )
        for arm, inst in _instances(result, cell).items()
    ]
    frame = pd.concat(parts, ignore_index=True)
    return frame[np.isfinite(frame["loss"]) & (frame["loss"] > 0)]


def positions_frame(result: LabResult, cell: Cell) -> tuple[pd.DataFrame, int]:
    """Held-out accuracy by position at the cell's budget, at the longest length each arm is
    defined for: ``variant, position, mean, low, high`` (± 1 std over seeds, clipped to [0, 1]),
    and that longest length."""
    index, parts, longest = _checkpoint(result, cell), [], 0
    for arm, inst in _instances(result, cell).items():
        defined = [k for k in inst.per_position if k not in inst.undefined]
        if not defined:
            continue
        length = max(defined, key=int)
        longest = max(longest, int(length))
        mean, low, high = seed_band(inst.per_position[length][:, index])
        parts.append(
            pd.DataFrame(
                {
                    "variant": result.label(arm),
                    "position": np.arange(mean.shape[0]),
                    "mean": mean,
                    "low": np.clip(low, 0.0, 1.0),
                    "high": np.clip(high, 0.0, 1.0),
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    return frame[np.isfinite(frame["mean"])], longest


def ranking_frame(result: LabResult, cell: Cell) -> pd.DataFrame:
    """Every arm on unseen positions, ranked ones first: ``variant, row, mean, low, high,
    in_range, ranked`` (``row``: the arm and its rank/retention or why it is not ranked)."""
    rows = [
        {
            "variant": r.label,
            "row": f"{r.label}\n#{r.rank} · keeps {r.retention:.0%}",
            "mean": r.mean,
            "low": r.low,
            "high": r.high,
            "in_range": r.in_range,
            "ranked": True,
        }
        for r in cell.ranking
    ]
    ranked = {r.arm for r in cell.ranking}
    for arm in result.variant_ids:
        if arm in ranked:
            continue
        values = cell.metrics.get(arm, {})
        unseen = np.asarray(values.get("accuracy_unseen", ()), dtype=np.float64)
        seen = np.asarray(values.get("accuracy_in_range", ()), dtype=np.float64)
        defined = unseen.size > 0 and np.isfinite(unseen).all()
        s = spread(unseen) if defined else None
        why = "not trained: not ranked" if defined else f"{NOT_DEFINED} past its rows"
        rows.append(
            {
                "variant": result.label(arm),
                "row": f"{result.label(arm)}\n{why}",
                "mean": s.mean if s else np.nan,
                "low": max(s.low, 0.0) if s else np.nan,
                "high": min(s.high, 1.0) if s else np.nan,
                "in_range": float(seen.mean()) if seen.size and np.isfinite(seen).all() else np.nan,
                "ranked": False,
            }
        )
    return pd.DataFrame(rows)


def movement(result: LabResult, cell: Cell) -> pd.DataFrame:
    """Each learned table's row movement from its start up to the cell's budget, by position
    (:func:`posviz.lab.engine.rows.movement_frame`)."""
    q = question(result.question_id)
    task = cell.setting("task").key
    steps = np.asarray(result.snapshot_steps_by_task.get(cell.steps_key, ()))
    keep = steps <= cell.steps
    config = next(t for t in q.sweep.tasks if t.key == task).config(result.config)
    moved, labels, seen = {}, {}, {}
    for arm, inst in _instances(result, cell).items():
        if inst.snapshots is None or keep.sum() < 2:
            continue
        moved[arm] = row_movement(inst.snapshots[:, keep])
        labels[arm] = result.label(arm)
        seen[arm] = length_probabilities(q.variant(arm).config_for(config))
    return movement_frame(moved, labels, seen)


def layer_frame(result: LabResult) -> pd.DataFrame:
    """The layer probe: ``variant, layer, mean, low, high`` (95 % interval over seeds) for the
    probed arm and its shuffled-position control."""
    probe = result.layer_probe
    rows = []
    for label, scores in ((probe.label, probe.score), (probe.control_label, probe.control)):
        for layer, values in enumerate(np.asarray(scores)):
            s = spread(values)
            rows.append(
                {"variant": label, "layer": layer, "mean": s.mean, "low": s.low, "high": s.high}
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- figures


def _name(result: LabResult, cell: Cell, what: str) -> str:
    return f"lab_{result.run_id}_{cell.id}_{what}"


def _metric_figure(result: LabResult, cell: Cell, metric: str, colors: dict) -> Shown:
    q = question(result.question_id)
    frame = metric_frame(result, q, metric, cell=cell.id)
    bound = bound_for(result, cell) if metric == "accuracy" else None
    rules = [(bound.value, "position-blind ceiling")] if bound else []
    note = ""
    if bound is not None and q.control:
        control = frame[frame["variant"] == result.label(q.control)]
        scored = f" scores {control['mean'].iloc[0]:.3f}" if len(control) else ""
        note = (
            f"The control, {result.label(q.control)},{scored}. The dashed line is its "
            f"position-blind ceiling, {bound.text}: the best held-out accuracy any model that "
            "cannot tell positions apart can reach on this task."
        )
    chart = charts.interval_chart(
        frame,
        colors=colors,
        x_title=m.label(metric),
        title=m.spec(metric).name.capitalize(),
        subtitle=f"mean and 95% interval over seeds · {short_label(cell)}",
        unit=m.spec(metric).unit,
        rules=rules,
    )
    return Shown(metric, Figure(chart, frame, _name(result, cell, metric)), note)


def _curves_figure(result: LabResult, cell: Cell, colors: dict) -> Shown:
    frame = curves_frame(result, cell)
    chart = charts.lines_chart(
        frame, x="step", y="loss", x_title="optimiser step", y_title="training loss (log scale)",
        colors=colors, title="Training loss", subtitle=f"mean over seeds · {short_label(cell)}",
        log=True,
    )  # fmt: skip
    note = "Lower sooner = learns faster (mean training loss over the run decides at the ceiling)."
    return Shown("loss", Figure(chart, frame, _name(result, cell, "loss")), note)


def _positions_figure(result: LabResult, cell: Cell, colors: dict) -> Shown:
    frame, length = positions_frame(result, cell)
    q = question(result.question_id)
    config = q.sweep.tasks[0].config(result.config)
    if arm := kind_view(q.kind).late_rows_arm:
        late = late_start(q.variant(arm).config_for(config))
        rules, note = (
            [(late, "late positions")],
            (
                f"Right of the dashed line: the late positions ({late}–{config.max_len - 1}) that "
                "mostly-short training rarely reaches. Band: ± 1 std over seeds."
            ),
        )
    elif length > config.max_len:
        rules, note = (
            [(config.max_len, "unseen from here")],
            (
                f"Right of the dashed line: positions past every training sequence (length "
                f"{config.max_len}). Band: ± 1 std over seeds."
            ),
        )
    else:
        rules, note = [], "Band: ± 1 std over seeds."
    chart = charts.lines_chart(
        frame, x="position", y="mean", x_title="position in the held-out sequence", whole=True,
        y_title="held-out accuracy", colors=colors, title="Held-out accuracy by position",
        subtitle=short_label(cell), band=True, unit=True, rules=rules,
    )  # fmt: skip
    return Shown("position", Figure(chart, frame, _name(result, cell, "by_position")), note)


def _ranking_figure(result: LabResult, cell: Cell, colors: dict) -> Shown:
    frame = ranking_frame(result, cell)
    chart = charts.ranking_chart(
        frame,
        colors=colors,
        title="Ranked on unseen positions",
        subtitle=[f"filled: unseen positions (95% interval) · hollow: seen · {short_label(cell)}"],
    )
    note = (
        f"“keeps” = retention, unseen ÷ seen-position accuracy; an arm keeping ≥ {HOLDS:.0%} "
        "holds its accuracy past the training length. Ranks are decided against the best arm: "
        "every arm its paired interval does not separate from the best shares its rank."
    )
    return Shown("ranking", Figure(chart, frame, _name(result, cell, "ranking")), note)


def _movement_figure(result: LabResult, cell: Cell, colors: dict) -> Shown | None:
    frame = movement(result, cell)
    if not len(frame):
        return None
    trained = question(result.question_id).sweep.tasks[0].config(result.config).max_len
    chart = charts.lines_chart(
        frame, x="position", y="mean", x_title="row of the learned table (position)", whole=True,
        y_title="movement ÷ early-row movement", colors=colors,
        title="How far training moved each row", subtitle=short_label(cell), band=True,
        rules=[(trained, "never used from here")],
    )  # fmt: skip
    note = (
        "Second evidence, after accuracy: ‖W_trained[p] − W_start[p]‖ per row, over the mean of "
        "rows 0–7. Rows right of the dashed line are never used: no gradient reaches them, so "
        "they cannot move (a fact of the optimiser, not a check)."
    )
    return Shown("movement", Figure(chart, frame, _name(result, cell, "movement")), note)


def _layer_figure(result: LabResult, colors: dict) -> Shown:
    frame = layer_frame(result)
    probe = result.layer_probe
    layer_colors = {probe.label: colors.get(probe.label, CONTROL_COLOR)}
    layer_colors[probe.control_label] = CONTROL_COLOR
    chart = charts.lines_chart(
        frame, x="layer", y="mean", x_title="layer (0 = the input)", y_title="probe R²", whole=True,
        colors=layer_colors, title="Where position appears without positions",
        subtitle=f"{probe.label}: 95% interval over seeds", band=True,
    )  # fmt: skip
    note = (
        "A ridge probe reads each token's position from the hidden state, layer by layer; the "
        "grey control is the same probe with positions shuffled within each sequence."
    )
    return Shown("layers", Figure(chart, frame, f"lab_{result.run_id}_layer_probe"), note)


def _ceiling(cell: Cell) -> bool:
    return cell.verdict.key.startswith("ceiling")


#: every figure a kind of question can show, by name (:class:`~posviz.lab.present.kinds.
#: KindView` names its hero and evidence here): ``(result, cell, arm colours) → Shown | None``.
FIGURES: dict[str, Callable[[LabResult, Cell, dict], Shown | None]] = {
    "ranking": lambda r, c, colors: _ranking_figure(r, c, colors),
    "positions": lambda r, c, colors: _positions_figure(r, c, colors),
    "movement": lambda r, c, colors: _movement_figure(r, c, colors),
    "curves": lambda r, c, colors: _curves_figure(r, c, colors),
    "loss": lambda r, c, colors: _metric_figure(r, c, "loss", colors),
    "loss_mid": lambda r, c, colors: _metric_figure(r, c, "loss_mid", colors),
    "loss_long": lambda r, c, colors: _metric_figure(r, c, "loss_long", colors),
    "alpha_first": lambda r, c, colors: _metric_figure(r, c, "alpha_first", colors),
    "copy_accuracy": lambda r, c, colors: _metric_figure(r, c, "copy_accuracy", colors),
    "layers": lambda r, c, colors: _layer_figure(r, colors) if r.layer_probe is not None else None,
    # accuracy at the ceiling cannot decide: the curves (speed) carry the verdict there
    "accuracy_or_curves": lambda r, c, colors: (
        _curves_figure(r, c, colors) if _ceiling(c) else _metric_figure(r, c, "accuracy", colors)
    ),
    "accuracy_at_ceiling": lambda r, c, colors: (
        _metric_figure(r, c, "accuracy", colors) if _ceiling(c) else None
    ),
    "curves_below_ceiling": lambda r, c, colors: (
        None if _ceiling(c) else _curves_figure(r, c, colors)
    ),
}


def untrained_note(result: LabResult, cell: Cell) -> str:
    """What the hero says of the arms not trained in its cell (left out of the verdict), so a
    gap it draws is never read as a verdict the text does not state ("" when every arm is
    trained, or judged as it stands)."""
    as_it_stands = study_kind(question(result.question_id).kind).measured_as_it_stands
    words = clauses.STATUS_WORDS
    left_out = [
        f"{clauses.short_label(result.label(arm))} {words.get(status, status)}"
        for arm, status in cell.status.items()
        if not cell.converged.get(arm, True) and arm not in as_it_stands
    ]
    if not left_out:
        return ""
    return (
        f"Not a verdict yet: {clauses.names(left_out)} at this budget, so no gap drawn here is "
        "a verdict."
    )


def hero(result: LabResult, cell_id: str) -> Shown:
    """The chart that carries a cell's verdict (its kind's :attr:`KindView.hero`), its caveat
    saying which arms are not trained there (:func:`untrained_note`)."""
    q, cell = question(result.question_id), result.cell(cell_id)
    shown = FIGURES[kind_view(q.kind).hero](result, cell, arm_colors(result))
    if shown is None:
        raise ValueError(f"the {q.kind!r} hero figure draws nothing for cell {cell_id!r}.")
    return Shown(shown.key, shown.figure, shown.note, untrained_note(result, cell))


def evidence(result: LabResult, cell_id: str) -> list[Shown]:
    """The cell's other charts, below the hero (one colour per arm, as the hero's)."""
    q, cell = question(result.question_id), result.cell(cell_id)
    colors = arm_colors(result)
    out = [FIGURES[name](result, cell, colors) for name in kind_view(q.kind).evidence]
    return [s for s in out if s is not None]


def live_spec(q: Question, *, title: str = "Training loss (live)") -> dict:
    """The live loss chart's spec (no data), with every arm's colour fixed from the start."""
    return charts.live_loss_spec(arm_colors(q), title=title)


# --------------------------------------------------------------------------- the table forming


def seed_options(result: LabResult) -> list[str]:
    """The run's seeds, as a picker lists them."""
    return [str(seed) for seed in range(result.config.seeds)]


def table_forming(result: LabResult, variant: str, seed: int) -> Figure:
    """One learned table at every saved step, stepped through (▶ play) in the browser.

    Returns:
        a :class:`Figure` whose data is the ``(snapshots, rows, p)`` array it draws.
    """
    tables = np.round(np.asarray(result.snapshots[variant][seed], dtype=np.float64), 4)
    steps = [int(s) for s in result.snapshot_steps]
    chart = charts.table_forming_chart(
        tables, steps, title=result.label(variant), subtitle=f"seed {seed}, during training"
    )
    return Figure(chart, tables.reshape(len(steps), -1), f"{result.run_id}-{variant}-forming")


def probe_frames(result: LabResult, variant: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lab's probe (:mod:`posviz.lab.engine.probe`) on one learned table at every snapshot, and
    its
    error by position on every learned arm's final table (this seed), each beside the control.

    Returns:
        ``variant, step, score`` and ``variant, position, predicted, abs_error``.
    """
    steps = [int(s) for s in result.snapshot_steps]
    scores = probe.probe_score_frame(
        result.snapshots[variant][seed], steps, label=result.label(variant), seed=seed
    )
    finals = {result.label(v): tables[seed][-1] for v, tables in result.snapshots.items()}
    errors = probe.probe_error_frame(finals, seed=seed).rename(columns={"table": "variant"})
    return scores, errors


def probe_shown(
    result: LabResult, variant: str, step: int, scores: pd.DataFrame, errors: pd.DataFrame
) -> list[Shown]:
    """The probe charts of :func:`probe_frames`: R² per step (the slider's step marked) and the
    error by position of the final tables."""
    colors = {**arm_colors(result), probe.CONTROL: CONTROL_COLOR}
    score_colors = {k: colors[k] for k in dict.fromkeys(scores["variant"])}
    error_colors = {k: colors[k] for k in dict.fromkeys(errors["variant"])}
    r2 = charts.lines_chart(
        scores, x="step", y="score", x_title="optimiser step", y_title="probe R² (held-out rows)",
        colors=score_colors, title="Can a line read the position back?",
        subtitle="1 = exactly; below 0 = worse than guessing the mean", rules=[(step, "shown")],
    )  # fmt: skip
    error = charts.lines_chart(
        errors, x="position", y="abs_error", x_title="position (row of the table)", whole=True,
        y_title="|predicted − actual| (positions)", colors=error_colors,
        title="Probe error by position", subtitle="final tables, this seed",
    )  # fmt: skip
    note = (
        "A ridge probe predicts each row's position with a model that never saw that row "
        "(5-fold CV, Wang & Chen 2020); the grey control is a random table of the same shape and "
        "scale. R² below 0: the rows are distinct but not ordered along a line, which a model "
        "can still use at 100% accuracy."
    )
    name = f"lab_{result.run_id}_{variant}"
    return [
        Shown("probe", Figure(r2, scores, f"{name}_probe"), note),
        Shown("probe_err", Figure(error, errors, f"{name}_probe_errors")),
    ]
