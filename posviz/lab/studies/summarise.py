"""The findings of a run across its sweep, and the answer in plain words built from them.

Each topic (the question's own verdict, every arm against the control, the control against its
bound, the ranking, row movement, …) gets one verdict key per cell;
:func:`posviz.lab.studies.judging.finding` states it as holding only where it holds in every cell,
else
names what it depends on with the numbers of both cells. Every number in the text is computed
from the run (or, for the ``rare_rows`` reach probability, from
:func:`posviz.lab.engine.tasks.length_probabilities`).
"""

from __future__ import annotations

from dataclasses import replace

from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import (
    Bound,
    Cell,
    Finding,
    Instance,
    LabResult,
    LayerProbe,
    Setting,
)
from posviz.lab.engine.sweep import budget_label, change_label
from posviz.lab.studies.kinds import study_kind
from posviz.lab.studies.presets import LONG, Question, question
from posviz.lab.studies.topics import dropped_control_line


def findings_and_answer(
    q: Question,
    cells: tuple[Cell, ...],
    labels: dict[str, str],
    bounds: dict[str, Bound | None],
    layer: LayerProbe | None,
    config: LabConfig,
) -> tuple[tuple[Finding, ...], str]:
    """Every finding of the run and the answer: one line per finding, then computed facts."""
    kind = study_kind(q.kind)
    found = kind.findings(q, cells, bounds, config)
    lines = [f.text for f in found]
    default = next(c for c in cells if c.default)
    lines.extend(kind.lines(q, cells, labels, config))
    dropped = dropped_control_line(q, cells, bounds)
    if dropped:
        lines.append(dropped)
    if layer is not None:
        lines.append(layer.text)
    under = [
        f"{labels[a]} ({default.convergence[a]})"
        for a, ok in default.converged.items()
        # the control's line says how it stands to its ceiling; a measured arm is judged as
        # it stands at each budget (its lag is the finding), so it is not "left out"
        if not ok and a != q.control and a not in study_kind(q.kind).measured_as_it_stands
    ]
    standing = [
        a
        for a in study_kind(q.kind).measured_as_it_stands
        if a in default.converged and not default.converged[a]
    ]
    if len(standing) == 1:
        a = standing[0]
        lines.append(
            f"{labels[a]} is still training at the preset's budget ({default.convergence[a]}): "
            "how far its rows got by then is what this question measures, so it is judged as it "
            "stands."
        )
    elif standing:
        lines.append(
            "Still improving at the preset's budget, compared as they stand there (the budget "
            "axis says whether more training changes a verdict): "
            + "; ".join(labels[a] for a in standing)
            + "."
        )
    if under:
        lines.append(
            "Not trained with the preset's settings, left out of its verdict: "
            + "; ".join(under)
            + "."
        )
    lines.extend(longest_budget_lines(q, cells, labels))
    lines.append(sweep_line(cells))
    return tuple(found), "\n".join(lines)


def longest_budget_lines(q: Question, cells: tuple[Cell, ...], labels: dict[str, str]) -> list[str]:
    """Arms still not trained at the sweep's longest budget (the preset's task and init), each
    with the slope of its held-out loss: why the verdict waits for them, in numbers."""
    default = next(c for c in cells if c.default)
    same = [
        c
        for c in cells
        if all(c.setting(a).key == default.setting(a).key for a in ("task", "init"))
        and all(s.key == "preset" for s in c.settings if s.axis == "panel")
    ]
    longest = max(same, key=lambda c: c.steps)
    if longest.id == default.id:
        return []
    return [
        f"Not trained even at {longest.setting('budget').label}: "
        f"{labels[arm]} — {longest.convergence[arm]}. The preset's budget is held so that every "
        "default answer computes within the first start's few minutes on 2 cores; it is left "
        "out of the verdicts, never counted."
        for arm, ok in longest.converged.items()
        if not ok and arm != q.control and arm not in study_kind(q.kind).measured_as_it_stands
    ]


def sweep_line(cells: tuple[Cell, ...]) -> str:
    """What the sweep covered, in one sentence."""

    def values(axis: str) -> str:
        seen = dict.fromkeys(c.setting(axis).label for c in cells)
        return ", ".join(seen)

    panel = [c for c in cells if c.settings[-1].axis == "panel" and c.settings[-1].key != "preset"]
    held = (
        f" Held-out panel (settings not used to choose the preset), {len(panel)} more cells: "
        + ", ".join(dict.fromkeys(c.setting("panel").label for c in panel))
        + "; a finding holds only where it holds there too."
        if panel
        else ""
    )
    sweep = [c for c in cells if c not in panel]
    tasks = {c.setting("task").key for c in sweep}
    budgets = {}  # budget label → the tasks trained to it
    for c in sweep:
        budgets.setdefault(c.setting("budget").label, set()).add(c.setting("task").key)
    every = [b for b, on in budgets.items() if on == tasks]
    longer = [b for b, on in budgets.items() if on != tasks]
    more = (
        f" Longer training on {_one_task(sweep, longer)} only: {', '.join(longer)}."
        if longer
        else ""
    )
    return (
        f"Sweep: {len(sweep)} cells — tasks: {values('task')}; {values('init')}; budgets: "
        f"{', '.join(every)}.{more}{held} Every difference is paired over seeds, with its 95% "
        "interval."
    )


def _one_task(cells: list[Cell], budgets: list[str]) -> str:
    """The task(s) trained to ``budgets`` (the longer budget's: the preset's own)."""
    names = dict.fromkeys(
        c.setting("task").label for c in cells if c.setting("budget").label in budgets
    )
    return " and ".join(names)


# --------------------------------------------------------------------------- the held-out panel

PANEL_AXIS = "panel"
PRESET = Setting(PANEL_AXIS, "preset", "the preset's settings")


def panel_pending(q: Question) -> str:
    """What the held-out check will cover, said while it has not run ("" without a panel)."""
    long = (
        f"; the arms also train for {q.long_steps:,} steps ({q.long_budget}× the preset), "
        "for those still improving at the sweep's budgets"
        if q.long_budget
        else ""
    )
    if not q.panel_settings:
        return f"Longer training pending{long}." if long else ""
    names = ", ".join(change_label(*p.change(q.default), q.default) for p in q.panel_settings)
    return (
        f"Held-out check pending: every finding will be checked on {names}{long}; until then "
        "the findings hold on the sweep only."
    )


def _bounds_by_task(q: Question, result: LabResult) -> dict[str, Bound | None]:
    """The stored bounds, by the sweep's task keys (a bound is stored by its task name)."""
    if not q.control:
        return {}
    out: dict[str, Bound | None] = {}
    for t in q.sweep.tasks:
        task = q.variant(q.control).config_for(t.config(result.config)).task
        out[t.key] = next((b for b in result.bounds if b.task == task), None)
    return out


def _panel_cells(
    q: Question, default: LabResult, panel: LabResult
) -> tuple[list[Cell], dict[str, Instance]]:
    """The panel's cells as cells of the preset's task with one more axis, ``panel``, and their
    instances renamed ``panel.<id>`` (so they never clash with the sweep's)."""
    own = default.default_cell.setting("task")
    labels = {
        p.key: change_label(*p.change(default.config), default.config) for p in q.panel_settings
    }
    cells = []
    taken = {c.id for c in default.cells}
    for c in panel.cells:
        key = c.setting("task").key
        renamed = {arm: f"panel.{i}" for arm, i in c.instances.items()}
        if key == LONG:  # the longer budget: cells of the preset's task at more steps
            times, rest = divmod(c.steps, default.default_cell.steps)
            budget = (
                Setting("budget", f"x{times}", budget_label(times, c.steps))
                if not rest
                else Setting("budget", f"s{c.steps}", f"{c.steps:,} steps")
            )
            cell_id = f"{own.key}.{c.setting('init').key}.{budget.key}"
            if cell_id in taken:  # a custom run whose own sweep already reaches these steps
                continue
            cells.append(
                replace(
                    c,
                    id=cell_id,
                    settings=(own, c.setting("init"), budget, PRESET),
                    default=False,
                    instances=renamed,
                    group=key,
                )
            )
            continue
        setting = Setting(PANEL_AXIS, key, labels.get(key, c.setting("task").label))
        cells.append(
            replace(
                c,
                id=f"panel.{c.id}",
                settings=(own, c.setting("init"), c.setting("budget"), setting),
                default=False,
                instances=renamed,
                group=key,
            )
        )
    instances = {f"panel.{k}": replace(v, id=f"panel.{k}") for k, v in panel.instances.items()}
    return cells, instances


def with_panel(default: LabResult, panel: LabResult | None) -> LabResult:
    """The default answer judged together with its held-out panel: every finding holds only
    where it holds in the sweep *and* on every panel setting, else it names what it depends
    on, with both cells' numbers. Without a panel result the answer says the check is pending.
    """
    q = question(default.question_id)
    if panel is None:
        pending = panel_pending(q)
        return replace(default, answer=f"{default.answer}\n{pending}") if pending else default
    extra, instances = _panel_cells(q, default, panel)
    extra.sort(key=lambda c: c.group != LONG)  # the longer budget's cells right after the sweep's
    cells = tuple(replace(c, settings=(*c.settings, PRESET)) for c in default.cells) + tuple(extra)
    labels = {a.id: a.label for a in default.arms}
    found, answer = findings_and_answer(
        q, cells, labels, _bounds_by_task(q, default), default.layer_probe, default.config
    )

    def merged(a: dict, b: dict) -> dict:
        return {**a, **b}

    return replace(
        default,
        cells=cells,
        findings=found,
        answer=answer,
        instances={**default.instances, **instances},
        curve_steps=merged(default.curve_steps, panel.curve_steps),
        checkpoint_steps=merged(default.checkpoint_steps, panel.checkpoint_steps),
        snapshot_steps_by_task=merged(default.snapshot_steps_by_task, panel.snapshot_steps_by_task),
    )
