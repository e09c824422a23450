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

import itertools
from dataclasses import replace

import numpy as np

from posviz.analysis.evidence import spread
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.measure import late_start
from posviz.lab.engine.metrics import spec as metric_spec
from posviz.lab.engine.results import (
    Bound,
    Cell,
    Comparison,
    Finding,
    Instance,
    LabResult,
    LayerProbe,
    Setting,
    Verdict,
)
from posviz.lab.engine.sweep import budget_label, change_label
from posviz.lab.engine.tasks import one_in, reach_probability
from posviz.lab.studies import judging as judge
from posviz.lab.studies.presets import LONG, Question, question

#: a control "stays at its bound" unless its 95% interval lies wholly above it.
BOUND_TEXT = "position-blind ceiling"
#: arms judged as they stand at each budget, trained or not (``rare_rows``: the short-trained
#: table's lag at the late rows *is* the finding;
#: :func:`posviz.lab.studies.judging.judge_rare_rows`).
MEASURED_AS_IT_STANDS = {"rare_rows": ("short",)}


def _cells_by_id(cells: tuple[Cell, ...]) -> dict[str, Cell]:
    return {c.id: c for c in cells}


def _topic(topic: str, cells: tuple[Cell, ...], verdicts: dict[str, Verdict]) -> Finding:
    return judge.finding(topic, cells, verdicts)


def _comparison_verdicts(
    cells: tuple[Cell, ...],
    a: str,
    b: str,
    labels: dict[str, str],
    bounds: dict[str, Bound | None] | None = None,
) -> dict[str, Verdict]:
    """Per cell: the verdict of the stored comparison ``a`` vs ``b`` (first one found); ``bounds``
    (task → the control ``b``'s ceiling) decides wins over a control still training."""
    out = {}
    for cell in cells:
        found = next((c for c in cell.comparisons if (c.a, c.b) == (a, b)), None)
        bound = (bounds or {}).get(cell.setting("task").key)
        ceiling = bound.value if bound is not None else None
        out[cell.id] = _comparison_verdict(found, cell, labels, ceiling)
    return out


def _comparison_verdict(
    c: Comparison | None, cell: Cell, labels: dict[str, str], ceiling: float | None = None
) -> Verdict:
    if c is None or c.outcome == "undefined":
        return Verdict("undefined", judge.NOT_DEFINED, c.text if c else judge.NOT_DEFINED)
    winner = c.a if c.outcome == "a" else c.b
    values = cell.metrics.get(winner, {}).get(c.metric, ()) if c.metric == "accuracy" else ()
    why = judge.undecidable(
        c, cell.converged, labels, ceiling=ceiling, winner_values=values, status=cell.status
    )
    if why:
        return Verdict("undecided", "undecided", f"undecided ({why})")
    note = judge.lower_bound_note(c, cell.converged, labels)
    margin = metric_spec(c.metric).margin
    short = {
        "a": "better",
        "b": "worse",
        "tie": f"no difference (within ±{margin:g})",
        "unclear": "undecided (interval too wide)",
    }[c.outcome]
    key = "undecided" if c.outcome == "unclear" else c.outcome
    return Verdict(key, short, c.text + note)


def _with_positions(q: Question) -> list[str]:
    """The arms a control's ceiling is read against: same attention kind and task, positions."""
    control = q.variant(q.control)
    return [
        v.id
        for v in q.variants
        if v.id != q.control and v.model.kind == control.model.kind and v.task == control.task
    ]


def _can_fail(q: Question, cell: Cell, bound: Bound) -> tuple[bool, str]:
    """Whether "the control stays under its ceiling" can fail in this cell: only where an arm
    *with* positions, of the same kind and task, gets above the ceiling (else a model of this
    size and budget stays under it with or without positions, and staying under says nothing)."""
    best, label = -np.inf, ""
    for arm in _with_positions(q):
        values = cell.metrics.get(arm, {}).get("accuracy")
        if values is not None and np.isfinite(values).all() and np.mean(values) > best:
            best, label = float(np.mean(values)), q.variant(arm).label
    return best > bound.value, f"{label} {best:.3f}"


def _bound_verdicts(
    q: Question, cells: tuple[Cell, ...], bounds: dict[str, Bound | None]
) -> dict[str, Verdict] | None:
    """Per cell: the control's held-out accuracy against its position-blind ceiling. The control
    can fail: a 95% interval wholly above the ceiling means position leaks into it. Where no arm
    with positions gets above the ceiling either, the check cannot fail there and says so
    (``"cannot_fail"``); a control check that cannot fail in any cell is dropped (None)."""
    out = {}
    for cell in cells:
        bound = bounds.get(cell.setting("task").key)
        values = cell.metrics.get(q.control, {}).get("accuracy")
        if bound is None or values is None or not np.isfinite(values).all():
            return None
        informative, best = _can_fail(q, cell, bound)
        if not informative:
            text = (
                f"cannot fail here: the arm with positions ({best}) does not get above the "
                f"{BOUND_TEXT} {bound.text} either, so a control under it says nothing"
            )
            out[cell.id] = Verdict("cannot_fail", "check cannot fail", text)
            continue
        s = spread(values)
        above = s.low > bound.value
        share = f", {s.mean / bound.value:.0%} of" if bound.value > 0 else " against"
        chance = (
            f" ({s.mean / bound.chance:.1f}× chance, {bound.chance:.3f})" if bound.chance else ""
        )
        still = (
            ""
            if cell.converged.get(q.control, True)
            else "; still improving, but no training can lift it past the ceiling"
        )
        text = (
            f"{q.variant(q.control).label}: held-out accuracy {s.text(3)}{chance}{share} its "
            f"{BOUND_TEXT} {bound.text}: "
            + (
                "above it, so position leaks into this model and its numbers are suspect"
                if above
                else "at or below it, as a model that cannot tell positions apart must be"
            )
            + still
        )
        short = "above its bound!" if above else "within its bound"
        out[cell.id] = Verdict("above" if above else "at_or_below", short, text)
    if all(v.key == "cannot_fail" for v in out.values()):
        return None
    return out


def _pair_findings(q: Question, cells: tuple[Cell, ...], bounds: dict) -> list[Finding]:
    a, b = q.compare
    labels = {v.id: v.label for v in q.variants}
    found = [_topic(f"{labels[a]} vs {labels[b]}", cells, {c.id: c.verdict for c in cells})]
    for v in q.variants:
        if v.id == q.control:
            continue
        verdicts = _comparison_verdicts(cells, v.id, q.control, labels, bounds)
        found.append(_topic(f"{v.label} vs the control", cells, verdicts))
    control = _bound_verdicts(q, cells, bounds)
    if control is not None:
        found.append(_topic("The control", cells, control))
    return found


def _rank_one_line(found: Finding, cells: tuple[Cell, ...]) -> Finding:
    """A "best" finding that varies is stated as a tie of every arm that is best somewhere."""
    if found.holds_everywhere:
        return found
    tops = sorted(
        {arm for k in found.keys.values() if k.startswith("top:") for arm in k[4:].split(",")}
    )
    if len(tops) < 2:
        return found
    labels = {r.arm: r.label for c in cells for r in c.ranking}
    names = ", ".join(labels.get(a, a) for a in tops)
    rest = found.text.removeprefix(f"{found.topic}: ")
    text = (
        f"{found.topic}: no single best — {names} each rank first somewhere, so they are stated "
        f"as tied; {rest}"
    )
    return replace(found, text=text)


def order_line(q: Question, cells: tuple[Cell, ...], labels: dict[str, str]) -> str:
    """Which orderings on unseen positions hold in every cell of the preset's task (sweep and
    held-out panel): a pair is ordered only where its paired 95% interval separates the two arms
    the same way in every such cell, both trained there; every other pair is stated as tied."""
    default = next(c for c in cells if c.default)
    task = default.setting("task")
    same = [c for c in cells if c.setting("task").key == task.key]
    arms = [r.arm for r in default.ranking]
    if len(arms) < 2:
        return ""
    above: dict[str, list[str]] = {}
    tied = []
    for a, b in itertools.combinations(arms, 2):
        outcomes = set()
        for cell in same:
            ranked = {r.arm for r in cell.ranking}
            if a not in ranked or b not in ranked:
                outcomes.add("left out")
                break
            outcomes.add(judge.compare(cell.metrics, a, b, "accuracy_unseen", labels).outcome)
        if outcomes in ({"a"}, {"b"}):
            win, lose = (a, b) if outcomes == {"a"} else (b, a)
            above.setdefault(win, []).append(labels[lose])
        else:
            tied.append(f"{labels[a]} and {labels[b]}")
    ordered = "; ".join(f"{labels[w]} above {', '.join(losers)}" for w, losers in above.items())
    return (
        f"Orderings on unseen positions that hold in all {len(same)} cells of {task.label} "
        f"(every pair's paired 95% interval, both arms trained): {ordered or 'none'}"
        + (f"; stated as tied: {'; '.join(tied)}." if tied else ".")
    )


def _extrapolation_findings(q: Question, cells: tuple[Cell, ...]) -> list[Finding]:
    found = [
        _topic(
            "Past the training length",
            cells,
            {c.id: c.verdict for c in cells},
        )
    ]
    labels = {v.id: v.label for v in q.variants}
    top = {}
    for cell in cells:
        best = judge.best_on_unseen(cell.ranking, cell.metrics, cell.converged, cell.status, labels)
        top[cell.id] = Verdict(best.key, best.short, f"best: {best.text}")
    found.append(_rank_one_line(_topic("Best on unseen positions", cells, top), cells))
    return found


def ranking_lines(q: Question, cell: Cell) -> list[str]:
    """The preset cell's ranking on unseen positions, and the arms left out and why."""
    ranked = "; ".join(
        f"{r.rank}. {r.label} {r.mean:.3f} (95% interval {r.low:.3f} … {r.high:.3f}; "
        f"retention {r.retention:.2f})"
        for r in cell.ranking
    )
    lines = [f"Ranking on unseen positions ({cell.label()}): {ranked or 'no arm qualifies'}."]
    ranked_ids = {r.arm for r in cell.ranking}
    for v in q.variants:
        if v.id in ranked_ids:
            continue
        values = cell.metrics.get(v.id, {}).get("accuracy_unseen")
        if values is None or not np.isfinite(values).all():
            seen = cell.metrics.get(v.id, {}).get("accuracy_in_range", ())
            seen_text = f" (seen positions: {judge.seeds_text(seen)})" if len(seen) else ""
            lines.append(
                f"{v.label}: {judge.NOT_DEFINED} on unseen positions — a learned table has no "
                f"row past its training length{seen_text}."
            )
        else:
            lines.append(
                f"{v.label}: left out of the ranking, not trained ({cell.convergence[v.id]})."
            )
    return lines


def _rare_rows_findings(q: Question, cells: tuple[Cell, ...], config: LabConfig) -> list[Finding]:
    found = [_topic("Late positions", cells, {c.id: c.verdict for c in cells})]
    # Movement is read at each budget as it is: how far the rows got by then is the question
    # (an under-trained late row is the finding, not a reason to wait), so no convergence gate.
    movement = {}
    for cell in cells:
        c = next(c for c in cell.comparisons if (c.a, c.b) == ("short", "uniform"))
        short = {
            "a": "moved more",
            "b": "moved less",
            "tie": "no difference",
            "unclear": "undecided",
        }.get(c.outcome, "")
        movement[cell.id] = Verdict(c.outcome, short or judge.NOT_DEFINED, c.text)
    found.append(
        _topic("Late-row movement (late ÷ early rows), short vs uniform lengths", cells, movement)
    )
    return found


def rare_rows_lines(q: Question, cells: tuple[Cell, ...], config: LabConfig) -> list[str]:
    """Computed facts behind rare_rows: how rarely the last row is reached, the never-used rows."""
    short = q.variant("short").config_for(config)
    last = short.max_len - 1
    late = late_start(short)
    lines = [
        f"With mostly short sequences a training sequence reaches row {last} with probability "
        f"{reach_probability(short, last):.2e} ({one_in(reach_probability(short, last))}; "
        f"from the length distribution), row {late} with "
        f"{one_in(reach_probability(short, late))}."
    ]
    # Rows past the longest training length get no gradient, so they cannot move: not a control
    # (it cannot fail), so not stated as one.
    default = next(c for c in cells if c.default)
    for arm in ("short", "uniform"):
        rho = default.metrics[arm].get("movement_rank_corr")
        if rho is not None and np.isfinite(rho).all():
            lines.append(
                f"{q.variant(arm).label}: rank correlation of a row's movement with how often it "
                f"was seen ρ = {judge.seeds_text(rho)} ({default.label()})."
            )
        err, err0 = (
            default.metrics[arm].get(k) for k in ("probe_error_late", "probe_error_late_at_init")
        )
        if err is not None and err0 is not None:
            names = {arm: q.variant(arm).label, "init": "the same rows before training"}
            pair = {arm: {"probe_error_late": err}, "init": {"probe_error_late": err0}}
            c = judge.compare(pair, arm, "init", "probe_error_late", names)
            lines.append(f"Probe on the late rows: {c.text}.")
    return lines


def _need_positions_findings(q: Question, cells: tuple[Cell, ...], bounds: dict) -> list[Finding]:
    found = [_topic("Without positions", cells, {c.id: c.verdict for c in cells})]
    control = _bound_verdicts(q, cells, bounds)
    if control is not None:
        found.append(_topic("The encoder without positions", cells, control))
    return found


def dropped_control_line(q: Question, cells: tuple[Cell, ...], bounds: dict) -> str:
    """Why the control's ceiling check is not shown, when it cannot fail in any cell ("")."""
    if not q.control or _bound_verdicts(q, cells, bounds) is not None:
        return ""
    default = next(c for c in cells if c.default)
    bound = bounds.get(default.setting("task").key)
    if bound is None:
        return ""
    informative, best = _can_fail(q, default, bound)
    if informative:
        return ""
    return (
        f"The control's {BOUND_TEXT} ({bound.text}) is not used as a check: no arm with "
        f"positions gets above it either ({best} with the preset's settings), so a control "
        "under it could not fail."
    )


def findings_and_answer(
    q: Question,
    cells: tuple[Cell, ...],
    labels: dict[str, str],
    bounds: dict[str, Bound | None],
    layer: LayerProbe | None,
    config: LabConfig,
) -> tuple[tuple[Finding, ...], str]:
    """Every finding of the run and the answer: one line per finding, then computed facts."""
    if q.kind == "pair":
        found = _pair_findings(q, cells, bounds)
    elif q.kind == "extrapolation":
        found = _extrapolation_findings(q, cells)
    elif q.kind == "rare_rows":
        found = _rare_rows_findings(q, cells, config)
    else:
        found = _need_positions_findings(q, cells, bounds)
    lines = [f.text for f in found]
    default = next(c for c in cells if c.default)
    if q.kind == "extrapolation":
        lines.extend(ranking_lines(q, default))
        if line := order_line(q, cells, labels):
            lines.append(line)
    if q.kind == "rare_rows":
        lines.extend(rare_rows_lines(q, cells, config))
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
        if not ok and a != q.control and a not in MEASURED_AS_IT_STANDS.get(q.kind, ())
    ]
    lines.extend(
        f"{labels[a]} is still training at the preset's budget ({default.convergence[a]}): how "
        "far its rows got by then is what this question measures, so it is judged as it stands."
        for a in MEASURED_AS_IT_STANDS.get(q.kind, ())
        if a in default.converged and not default.converged[a]
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
        if not ok and arm != q.control and arm not in MEASURED_AS_IT_STANDS.get(q.kind, ())
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
