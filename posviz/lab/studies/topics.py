"""The topics of a question's findings, per kind of question: each topic (the question's own
verdict, every arm against the control, the control against its bound, the ranking, row
movement, …) gets one verdict key per cell, and the lines a kind adds to its answer.

Each :class:`~posviz.lab.studies.kinds.StudyKind` names the functions here it uses; the generic
findings and answer are :mod:`posviz.lab.studies.summarise`'s.
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
    Verdict,
)
from posviz.lab.engine.tasks import one_in, reach_probability
from posviz.lab.studies import judging as judge
from posviz.lab.studies.presets import Question

#: a control "stays at its bound" unless its 95% interval lies wholly above it.
BOUND_TEXT = "position-blind ceiling"
#: the induction control's bound (:func:`posviz.lab.engine.bounds.no_composition_ceiling`).
NO_COMPOSITION_TEXT = "ceiling without composition"


def bound_text(bound: Bound) -> str:
    """What the control's bound is called: the induction control's is no position-blind one."""
    return NO_COMPOSITION_TEXT if bound.task == "induction" else BOUND_TEXT


def control_broken(cell: Cell, control: str, bound: Bound | None) -> str:
    """Why the control cannot serve as one in this cell ("" when it can): its bound is already
    the task's ceiling (a shortcut solves the task without what the control lacks), or its
    held-out accuracy's 95% interval lies wholly above its bound."""
    if bound is None:
        return ""
    name = bound_text(bound)
    if bound.task == "induction" and bound.value >= judge.CEILING:
        return (
            f"the control is void here: its {name} is {bound.text}, the task's ceiling — a "
            "one-layer model can solve this task without composing (a positional shortcut)"
        )
    values = cell.metrics.get(control, {}).get("accuracy")
    if values is not None and np.isfinite(values).all() and spread(values).low > bound.value:
        return (
            f"the control broke its bound here: held-out accuracy {spread(values).text(3)} "
            f"lies above its {name} {bound.text}"
        )
    return ""


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
        broken = control_broken(cell, b, bound)
        if broken and found is not None:
            out[cell.id] = Verdict(
                "no_control", "no control (it broke its bound)", f"not judged: {broken}."
            )
            continue
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
        broken = control_broken(cell, q.control, bound)
        if broken and bound.value >= judge.CEILING:
            out[cell.id] = Verdict("void", "control void!", broken)
            continue
        informative, best = _can_fail(q, cell, bound)
        if not informative:
            text = (
                f"cannot fail here: the arm with positions ({best}) does not get above the "
                f"{bound_text(bound)} {bound.text} either, so a control under it says nothing"
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
            if bound.task != "induction"
            else "; still improving (the ceiling is a generous rule's, simulated, not a proof)"
        )
        text = (
            f"{q.variant(q.control).label}: held-out accuracy {s.text(3)}{chance}{share} its "
            f"{bound_text(bound)} {bound.text}: "
            + (
                (
                    "above it, so it composes after all (or the task has a shortcut) and is no "
                    "control"
                    if bound.task == "induction"
                    else "above it, so position leaks into this model and its numbers are suspect"
                )
                if above
                else (
                    "at or below it, as a model that cannot compose must be"
                    if bound.task == "induction"
                    else "at or below it, as a model that cannot tell positions apart must be"
                )
            )
            + still
        )
        short = "above its bound!" if above else "within its bound"
        out[cell.id] = Verdict("above" if above else "at_or_below", short, text)
    if all(v.key == "cannot_fail" for v in out.values()):
        return None
    return out


def pair_findings(q: Question, cells: tuple[Cell, ...], bounds: dict) -> list[Finding]:
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


def extrapolation_findings(q: Question, cells: tuple[Cell, ...]) -> list[Finding]:
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


def rank_place(cell: Cell, row) -> str:
    """``"1."``, ``"=2."`` (a shared rank) or ``"=1."`` for an arm not separated from some arm
    of rank 1 (its paired interval against it is not decided), whatever rank the pairwise
    ranking against the best gave it."""
    firsts = [r.arm for r in cell.ranking if r.rank == 1 and r.arm != row.arm]
    labels = {r.arm: r.label for r in cell.ranking}
    if row.rank > 1:
        for arm in firsts:
            c = judge.compare(cell.metrics, arm, row.arm, "accuracy_unseen", labels)
            if c.outcome not in ("a", "b"):
                return "=1."
    shared = sum(r.rank == row.rank for r in cell.ranking) > 1
    return f"={row.rank}." if shared else f"{row.rank}."


def ranking_lines(q: Question, cell: Cell) -> list[str]:
    """The preset cell's ranking on unseen positions, and the arms left out and why. A shared
    rank is printed as a tie (``"=1."``), and so is an arm whose paired interval against any arm
    of rank 1 does not separate them: it cannot be said to rank below it (:func:`rank_place`)."""
    ranked = "; ".join(
        f"{rank_place(cell, r)} {r.label} {r.mean:.3f} (95% interval {r.low:.3f} … "
        f"{r.high:.3f}; retention {r.retention:.2f})"
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


def rare_rows_findings(q: Question, cells: tuple[Cell, ...], config: LabConfig) -> list[Finding]:
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


def need_positions_findings(q: Question, cells: tuple[Cell, ...], bounds: dict) -> list[Finding]:
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
        f"The control's {bound_text(bound)} ({bound.text}) is not used as a check: no arm with "
        f"positions gets above it either ({best} with the preset's settings), so a control "
        "under it could not fail."
    )
