"""Judge each cell of a sweep, then say which verdicts hold across it — only what numbers show.

Every comparison is a paired difference over seeds with its 95 % interval
(:func:`posviz.analysis.difference.paired_difference`; the arms share each seed's training and
held-out data) and is decided on that interval: "the same in practice" whenever it lies inside
± the metric's equivalence margin (:attr:`posviz.lab.engine.metrics.MetricSpec.margin`, stated
with it), even when it excludes 0; "better" only when it excludes 0 and is not inside the margin;
otherwise "undecided". Arms that are not trained in a cell
(:func:`posviz.lab.engine.metrics.convergence`: still improving, stalled, collapsed or
diverged) are left out of its verdict and ranking, and said so; a stalled, collapsed or diverged
arm never supports a verdict. Rankings are decided pairwise against the best arm (every arm not
decided different from the best shares rank 1), never by a chain of neighbours.

A :class:`~posviz.lab.engine.results.Finding` states a verdict as holding only where it holds in
every
cell of the sweep; otherwise it names the setting(s) it depends on, with the numbers of the
preset's cell and of the nearest cell where it differs. Metric names are words with their
direction ("held-out loss (lower is better)"), never ids.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from posviz.analysis.difference import Difference, paired_difference
from posviz.analysis.evidence import spread
from posviz.lab.engine import metrics as m
from posviz.lab.engine.results import Cell, Comparison, Finding, RankRow, SummaryRow, Verdict
from posviz.lab.studies.presets import Question

NOT_DEFINED = "not defined"
CEILING = 0.99  # accuracy at which two arms can no longer be told apart by accuracy
#: an arm "keeps its accuracy" past the training length when unseen ÷ seen ≥ this (pre-set here,
#: between the relative schemes' ≈ 0.8–0.95 and the absolute ones' ≈ 0.2–0.3 on k-back).
HOLDS = 0.75
#: equivalence margin of the relative loss gaps (2 % of the loss with positions).
GAP_MARGIN = 0.02
AXIS_NAMES = {
    "task": "the task",
    "init": "the table's initial scale",
    "budget": "the budget",
    "panel": "a held-out setting",
}


# --------------------------------------------------------------------------- small pieces


def metric_name(question: Question, eval_lengths: tuple[int, ...] = ()) -> str:
    """The display name (with its direction) of the metric that decides the preset's cell."""
    del eval_lengths  # the deciding metric no longer depends on them (unseen positions are named)
    return m.label(question.metric)


def seeds_text(values: np.ndarray) -> str:
    """``"0.218 ± 0.003"`` (mean ± std over seeds)."""
    finite = np.asarray(values, dtype=np.float64)
    if not np.isfinite(finite).all():
        return NOT_DEFINED
    return spread(finite).text(3)


def _finite(values: tuple[float, ...] | np.ndarray | None) -> bool:
    return values is not None and len(values) > 0 and bool(np.isfinite(values).all())


def compare(
    metrics: dict[str, dict[str, tuple[float, ...]]],
    a: str,
    b: str,
    metric: str,
    labels: dict[str, str],
) -> Comparison:
    """Arm ``a`` against arm ``b`` on ``metric``: paired difference, outcome and words."""
    spec = m.spec(metric)
    va, vb = metrics.get(a, {}).get(metric), metrics.get(b, {}).get(metric)
    if not (_finite(va) and _finite(vb)):
        text = f"{labels[a]} vs {labels[b]}: {spec.name} is {NOT_DEFINED} for one of them."
        nan = math.nan
        return Comparison(
            a, b, metric, m.label(metric), spec.higher_is_better, nan, nan, nan, nan, nan, nan,
            0, "", "undefined", text,
        )  # fmt: skip
    d = paired_difference(va, vb)
    outcome = _outcome(d, spec.higher_is_better, spec.margin)
    return Comparison(
        a, b, metric, m.label(metric), spec.higher_is_better, float(np.mean(va)),
        float(np.mean(vb)), d.estimate, d.low, d.high, d.p_value, d.n, d.method, outcome,
        _comparison_text(labels[a], labels[b], metric, d),
    )  # fmt: skip


def equivalent(d: Difference, margin: float) -> bool:
    """Whether the 95% interval of the difference lies inside ``±margin`` (equivalence)."""
    return math.isfinite(d.low) and -margin < d.low and d.high < margin


def _outcome(d: Difference, higher_is_better: bool, margin: float) -> str:
    """``"tie"`` (the whole interval inside ``±margin``: the same in practice, even when it
    excludes 0), ``"a"``/``"b"`` (that arm is better: the interval excludes 0 and is not inside
    the margin) or ``"unclear"`` (it contains 0 but reaches past the margin)."""
    if equivalent(d, margin):
        return "tie"
    if d.sign() == 0:
        return "unclear"
    return "a" if (d.sign() > 0) == higher_is_better else "b"


def _comparison_text(a: str, b: str, metric: str, d: Difference) -> str:
    """The better arm first, in words (``"sinusoid: lower held-out loss (better) than learned
    table (…)"``), with the interval of ``a − b``; "no difference" only inside the equivalence
    margin (even when the interval excludes 0: the same in practice), else "undecided"."""
    interval = (
        f"{a} − {b} = {d.estimate:+.3f}, paired 95% interval {d.low:+.3f} … {d.high:+.3f}, "
        f"{d.n} seeds"
    )
    margin = m.spec(metric).margin
    name = m.spec(metric).name
    if equivalent(d, margin):
        return (
            f"{a} vs {b}: no difference in {name} in practice ({interval}: inside ±{margin:g}, "
            "the equivalence margin)"
        )
    if not d.decided():
        return (
            f"{a} vs {b}: undecided in {name} ({interval}: contains 0 but reaches past "
            f"±{margin:g}, the equivalence margin)"
        )
    a_wins = (d.estimate > 0) == m.spec(metric).higher_is_better
    winner, loser, gap = (a, b, d.estimate) if a_wins else (b, a, -d.estimate)
    return f"{winner}: {m.better_word(metric, gap)} than {loser} ({interval})"


def summary_rows(
    order: list[str],
    labels: dict[str, str],
    metrics: dict[str, dict[str, tuple[float, ...]]],
    notes: dict[str, str],
) -> tuple[SummaryRow, ...]:
    """One :class:`SummaryRow` per arm and metric, metric names in words (NaN rows: ``note``)."""
    rows = []
    for arm in order:
        for metric, values in metrics.get(arm, {}).items():
            array = np.asarray(values, dtype=np.float64)
            name = m.label(metric)
            if np.isfinite(array).all():
                s = spread(array)
                rows.append(
                    SummaryRow(arm, labels[arm], name, s.mean, s.std, s.n, s.low, s.high, values)
                )
            else:
                note = notes.get(f"{arm}/{metric}", notes.get(arm, NOT_DEFINED))
                nan = math.nan
                rows.append(
                    SummaryRow(
                        arm, labels[arm], name, nan, nan, len(values), nan, nan, values, note
                    )
                )
    return tuple(rows)


# --------------------------------------------------------------------------- cell judges


@dataclass(frozen=True)
class CellInput:
    """What a judge reads in one cell."""

    question: Question
    task: str
    metric: str  # the deciding metric in this cell
    metrics: dict[str, dict[str, tuple[float, ...]]]
    converged: dict[str, bool]
    labels: dict[str, str]
    bound: float | None  # the control's position-blind ceiling on accuracy, if it has one
    status: dict[str, str] = field(default_factory=dict)  # arm → metrics.Convergence.status


@dataclass(frozen=True)
class Judged:
    comparisons: tuple[Comparison, ...]
    ranking: tuple[RankRow, ...]
    verdict: Verdict


#: statuses that never support a verdict, not even as the winner still improving.
FAILED = ("stalled", "collapsed", "diverged")
_STATUS_WORDS = {
    "improving": "still improving",
    "stalled": "stalled",
    "collapsed": "collapsed on some seeds",
    "diverged": "diverged",
}


def status_of(arm: str, converged: dict[str, bool], status: dict[str, str] | None) -> str:
    """An arm's training status (``status`` if known, else trained/improving from
    ``converged``)."""
    if status and arm in status:
        return status[arm]
    return "trained" if converged.get(arm, False) else "improving"


def _why(arm: str, converged: dict, status: dict | None, labels: dict[str, str]) -> str:
    return f"{labels.get(arm, arm)} {_STATUS_WORDS.get(status_of(arm, converged, status), '')}"


def _under(cell: CellInput, arms: tuple[str, ...]) -> list[str]:
    return [
        _why(a, cell.converged, cell.status, cell.labels)
        for a in arms
        if status_of(a, cell.converged, cell.status) != "trained"
    ]


def undecidable(
    c: Comparison,
    converged: dict[str, bool],
    labels: dict[str, str],
    *,
    ceiling: float | None = None,
    winner_values: tuple[float, ...] = (),
    status: dict[str, str] | None = None,
) -> str:
    """Why ``c`` cannot be stated with these arms' training, or "" when it can.

    Both arms trained: it can. A stalled, collapsed or diverged arm (``status``) never supports
    a verdict. A decided difference whose *losing* arm is trained while the winner is still
    improving can be stated: more training moves only the winner, so the gap is a lower bound
    (said in :func:`lower_bound_note`). So can a win over a control whose best possible accuracy
    is known (``ceiling``, its position-blind ceiling) when every seed of the winner
    (``winner_values``) is above it: no amount of training lifts the control past it. Anything
    else waits for more training.
    """
    sa, sb = status_of(c.a, converged, status), status_of(c.b, converged, status)
    if c.outcome == "undefined" or (sa == sb == "trained"):
        return ""
    failed = [_why(x, converged, status, labels) for x, s in ((c.a, sa), (c.b, sb)) if s in FAILED]
    if failed:
        return ", ".join(failed)
    if c.outcome in ("a", "b"):
        loser = c.b if c.outcome == "a" else c.a
        if status_of(loser, converged, status) == "trained":
            return ""
        if ceiling is not None and winner_values and min(winner_values) > ceiling:
            return ""
    return ", ".join(
        _why(x, converged, status, labels) for x, s in ((c.a, sa), (c.b, sb)) if s != "trained"
    )


def lower_bound_note(c: Comparison, converged: dict[str, bool], labels: dict[str, str]) -> str:
    """``" (the winner is still improving: the gap is a lower bound)"`` where that applies."""
    if c.outcome not in ("a", "b"):
        return ""
    winner = c.a if c.outcome == "a" else c.b
    if converged.get(winner, False):
        return ""
    return f" ({labels.get(winner, winner)} is still improving, so the gap is a lower bound)"


def _undecided(names: list[str]) -> Verdict:
    """``names``: each arm with its status (``"ALiBi still improving"``)."""
    who = ", ".join(names)
    return Verdict(
        "undecided",
        f"undecided ({who})",
        f"undecided: {who}, so no verdict (a verdict needs arms that learned and stopped "
        "improving).",
    )


def judge_pair(cell: CellInput) -> Judged:
    """``compare[0]`` vs ``compare[1]`` on the deciding metric; at the accuracy ceiling, on
    speed of learning (mean training loss); plus every arm against the control."""
    q = cell.question
    a, b = q.compare
    extra = tuple(
        compare(cell.metrics, arm.id, q.control, cell.metric, cell.labels)
        for arm in q.variants
        if q.control and arm.id != q.control
    )
    main = compare(cell.metrics, a, b, cell.metric, cell.labels)
    why = undecidable(main, cell.converged, cell.labels, status=cell.status)
    if why:
        return Judged((main, *extra), (), _undecided([why]))
    ceiling = (
        cell.metric == "accuracy"
        and main.outcome != "undefined"
        and min(main.a_mean, main.b_mean) >= CEILING
    )
    if not ceiling:
        verdict = _pair_verdict(main, cell.labels, "")
        note = lower_bound_note(main, cell.converged, cell.labels)
        verdict = Verdict(verdict.key, verdict.short, verdict.text + note)
        return Judged((main, *extra), (), verdict)
    speed = compare(cell.metrics, a, b, "train_loss_mean", cell.labels)
    return Judged((main, speed, *extra), (), _pair_verdict(speed, cell.labels, "ceiling"))


def _pair_verdict(c: Comparison, labels: dict[str, str], prefix: str) -> Verdict:
    if c.outcome == "undefined":
        return Verdict("undefined", NOT_DEFINED, c.text)
    head = (
        f"Both reach the accuracy ceiling (≥ {CEILING}), so accuracy cannot separate them; "
        "speed of learning: "
        if prefix
        else ""
    )
    winner = {"a": labels[c.a], "b": labels[c.b]}.get(c.outcome, "")
    margin = f"±{m.spec(c.metric).margin:g}"
    if prefix:
        short = (
            f"at ceiling; {winner} learns faster"
            if winner
            else f"at ceiling; the same speed in practice (within {margin})"
            if c.outcome == "tie"
            else "at ceiling; speed undecided"
        )
    else:
        short = (
            f"{winner} better"
            if winner
            else f"the same in practice (within {margin})"
            if c.outcome == "tie"
            else "undecided (interval too wide)"
        )
    key = f"{prefix}:{c.outcome}" if prefix else c.outcome
    return Verdict(key, short, head + c.text)


def judge_extrapolation(cell: CellInput) -> Judged:
    """Rank every trained arm on unseen positions (pairwise against the best, with intervals);
    which keep their accuracy; who is best, only where no untrained arm could still be."""
    q = cell.question
    measured = [
        v.id for v in q.variants if _finite(cell.metrics.get(v.id, {}).get("accuracy_unseen"))
    ]
    defined = [a for a in measured if status_of(a, cell.converged, cell.status) == "trained"]
    if not defined:  # every arm with unseen-position numbers is untrained: no ranking
        return Judged((), (), _undecided(_under(cell, tuple(measured))))
    comparisons, ranking = rank_pairwise(cell, defined)
    holding = tuple(r.arm for r in ranking if r.holds)
    names = ", ".join(cell.labels[a] for a in holding) or "none"
    best = best_on_unseen(ranking, cell.metrics, cell.converged, cell.status, cell.labels).text
    text = (
        f"keep ≥ {HOLDS:.0%} of their seen-position accuracy on unseen positions: {names}; "
        f"best on unseen positions: {best}"
    )
    verdict = Verdict("holds:" + ",".join(sorted(holding)), f"hold: {names}", text)
    return Judged(tuple(comparisons), tuple(ranking), verdict)


def best_on_unseen(
    ranking: tuple[RankRow, ...] | list[RankRow],
    metrics: dict[str, dict[str, tuple[float, ...]]],
    converged: dict[str, bool],
    status: dict[str, str],
    labels: dict[str, str],
) -> Verdict:
    """Who is best on unseen positions: the arms of rank 1 (``"top:alibi,rope"``), or
    ``"undecided"`` when an arm left out as untrained already reaches the best's 95% interval
    (more training could make it best). Arms left out are named with their status."""
    ranked = {r.arm for r in ranking}
    left_out = tuple(
        a
        for a, values in metrics.items()
        if a not in ranked and _finite(values.get("accuracy_unseen"))
    )
    whys = {a: _why(a, converged, status, labels) for a in left_out}
    out = f"; left out: {', '.join(whys.values())}" if left_out else ""
    top = [r for r in ranking if r.rank == 1]
    if not top:
        return Verdict("undecided", "best: undecided", f"undecided{out}")
    floor = min(r.low for r in top)
    rivals = [a for a in left_out if float(np.mean(metrics[a]["accuracy_unseen"])) >= floor]
    if rivals:
        who = ", ".join(whys[a] for a in rivals)
        text = f"undecided ({who}, already within the best's interval){out}"
        return Verdict("undecided", "best: undecided", text)
    names = ", ".join(r.label for r in top)
    tied = " (not separated)" if len(top) > 1 else ""
    key = "top:" + ",".join(sorted(r.arm for r in top))
    return Verdict(key, f"best: {names}", f"{names}{tied}{out}")


def rank_pairwise(cell: CellInput, arms: list[str]) -> tuple[list[Comparison], list[RankRow]]:
    """Ranks on unseen positions decided **against the best**, never by chains of neighbours:
    the best remaining arm takes the next rank together with every remaining arm whose paired
    interval against it contains 0; repeat with the rest (so 0.835 [0.828, 0.841] does not
    share rank 1 with 0.981 through an arm between them)."""
    remaining = sorted(arms, key=lambda a: -float(np.mean(cell.metrics[a]["accuracy_unseen"])))
    comparisons, ranking = [], []
    while remaining:
        lead, rest = remaining[0], remaining[1:]
        rank = len(ranking) + 1
        group = [lead]
        for arm in rest:
            c = compare(cell.metrics, lead, arm, "accuracy_unseen", cell.labels)
            comparisons.append(c)
            if c.outcome not in ("a", "b"):
                group.append(arm)
        ranking.extend(_rank_row(cell, arm, rank) for arm in group)
        remaining = [a for a in rest if a not in group]
    return comparisons, ranking


def _rank_row(cell: CellInput, arm: str, rank: int) -> RankRow:
    unseen = np.asarray(cell.metrics[arm]["accuracy_unseen"])
    seen = np.asarray(cell.metrics[arm]["accuracy_in_range"])
    retention = np.asarray(cell.metrics[arm]["retention"])
    s, r = spread(unseen), spread(retention)
    return RankRow(
        rank, arm, cell.labels[arm], s.mean, max(s.low, 0.0), min(s.high, 1.0),
        float(seen.mean()), r.mean, r.low, r.high, r.mean >= HOLDS,
    )  # fmt: skip


def judge_rare_rows(cell: CellInput) -> Judged:
    """Late-position accuracy first: does the short-trained table lag uniform lengths, and does
    a table-free arm on the same short lengths lag too (then it is not the rows)?"""
    lag = compare(cell.metrics, "uniform", "short", "accuracy_late", cell.labels)
    free = compare(cell.metrics, "rope_short", "short", "accuracy_late", cell.labels)
    movement = compare(cell.metrics, "short", "uniform", "movement_late_ratio", cell.labels)
    comparisons = (lag, free, movement)
    under = _under(cell, ("uniform", "rope_short"))
    if under:
        return Judged(comparisons, (), _undecided(under))
    # does RoPE on the short lengths lag too? decided against uniform lengths, not by "no
    # difference from the short-trained table" (an interval that contains 0 proves nothing)
    free_lag = compare(cell.metrics, "uniform", "rope_short", "accuracy_late", cell.labels)
    if lag.outcome == "a" and free.outcome == "a":
        verdict = Verdict(
            "rows",
            "rows untrained",
            "The short-trained table lags at the late positions, and RoPE (no table) on the "
            f"same lengths does not: the rows are what is untrained. {lag.text}; {free.text}",
        )
    elif lag.outcome == "a" and free_lag.outcome == "a":
        verdict = Verdict(
            "attention",
            "lengths, not rows",
            "The short-trained table lags at the late positions, but so does RoPE (no table) on "
            f"the same lengths: attention never saw long sequences. {lag.text}; {free_lag.text}",
        )
    elif lag.outcome in ("b", "tie"):
        verdict = Verdict(
            "no_lag", "no late-position lag", f"The short-trained table does not lag: {lag.text}"
        )
    else:
        shown = [c for c in (lag, free, free_lag) if c.outcome not in ("a", "b")]
        verdict = Verdict(
            "undecided",
            "undecided (interval too wide)",
            "undecided: " + "; ".join(c.text for c in shown),
        )
    return Judged(comparisons, (), verdict)


def judge_need_positions(cell: CellInput) -> Judged:
    """Each attention kind without positions vs with (held-out loss), and whose gap is larger
    (relative to the loss with positions, seed by seed)."""
    enc = compare(cell.metrics, "enc_nope", "enc_learned", "loss", cell.labels)
    dec = compare(cell.metrics, "dec_nope", "dec_learned", "loss", cell.labels)
    gap = _relative_gap_comparison(cell)
    parts = []
    for who, c in (("encoder", enc), ("causal decoder", dec)):
        why = undecidable(c, cell.converged, cell.labels, status=cell.status)
        if why or c.outcome == "unclear":
            parts.append(f"the {who}: undecided ({why or 'the interval is too wide'})")
            c = replace(c, outcome="undecided")
            if who == "encoder":
                enc = c
            else:
                dec = c
        elif c.outcome == "b":
            parts.append(f"the {who} is worse without positions")
        elif c.outcome == "a":
            parts.append(f"the {who} is better without positions")
        else:
            parts.append(
                f"the {who}: no difference without positions (within ±"
                f"{m.spec('loss').margin:g} nats)"
            )
    if "undecided" in (enc.outcome, dec.outcome) or gap.outcome == "unclear":
        gap = replace(gap, outcome="undecided")
    larger = {"a": "the encoder", "b": "the decoder", "tie": "neither"}.get(
        gap.outcome, "undecided"
    )
    short = f"enc {_arrow(enc)} · dec {_arrow(dec)} · larger gap: {larger.replace('the ', '')}"
    notes = "".join(lower_bound_note(c, cell.converged, cell.labels) for c in (enc, dec))
    text = (
        f"{'; '.join(parts)}; "
        + (
            "which relative loss gap without positions is larger: undecided. "
            if larger == "undecided"
            else f"the relative loss gap without positions is larger for {larger}. "
        )
        + f"{enc.text}; {dec.text}; {gap.text}{notes}"
    )
    key = f"enc:{enc.outcome}|dec:{dec.outcome}|gap:{gap.outcome}"
    return Judged((enc, dec, gap), (), Verdict(key, short, text))


def _arrow(c: Comparison) -> str:
    return {
        "b": "needs positions",
        "a": "better without",
        "tie": "no difference",
        "unclear": "undecided",
        "undecided": "undecided",
    }.get(c.outcome, NOT_DEFINED)


def _relative_gap_comparison(cell: CellInput) -> Comparison:
    def rel(nope: str, pos: str) -> np.ndarray:
        a = np.asarray(cell.metrics[nope]["loss"], dtype=np.float64)
        b = np.asarray(cell.metrics[pos]["loss"], dtype=np.float64)
        return (a - b) / b

    enc, dec = rel("enc_nope", "enc_learned"), rel("dec_nope", "dec_learned")
    d = paired_difference(enc, dec)
    outcome = _outcome(d, True, GAP_MARGIN)
    inside = f"; inside ±{GAP_MARGIN:g}, the equivalence margin)"
    wide = f"; contains 0 but reaches past ±{GAP_MARGIN:g}, the equivalence margin)"
    text = (
        f"relative loss gap without positions, encoder − decoder = {d.estimate:+.3f} (paired 95% "
        f"interval {d.low:+.3f} … {d.high:+.3f}, {d.n} seeds"
        + (inside if outcome == "tie" else ")" if d.decided() else wide)
    )
    return Comparison(
        "enc_nope", "dec_nope", "loss", "relative held-out loss gap without positions", True,
        float(enc.mean()), float(dec.mean()), d.estimate, d.low, d.high, d.p_value, d.n,
        d.method, outcome, text,
    )  # fmt: skip


# --------------------------------------------------------------------------- across the sweep


def depends_on(keys: dict[str, str], cells: tuple[Cell, ...]) -> tuple[str, ...]:
    """The fewest axes whose values determine ``keys`` (cell id → verdict key); ``()`` when the
    verdict is the same everywhere."""
    if len(set(keys.values())) <= 1:
        return ()
    axes = [s.axis for s in cells[0].settings]
    varying = [a for a in axes if len({c.setting(a).key for c in cells}) > 1]
    for size in range(1, len(varying) + 1):
        for combo in itertools.combinations(varying, size):
            seen: dict[tuple[str, ...], str] = {}
            if all(
                seen.setdefault(tuple(c.setting(a).key for a in combo), keys[c.id]) == keys[c.id]
                for c in cells
            ):
                return combo
    return tuple(varying)


def undecided_key(key: str) -> bool:
    """Whether a verdict key says nothing could be decided (untrained arms, a wide interval)."""
    first = key.split("|")[0]
    return key == "undefined" or "undecided" in first or first.endswith("unclear")


def nearest_other(cells: tuple[Cell, ...], keys: dict[str, str], start: Cell) -> Cell | None:
    """The cell nearest to ``start`` (fewest settings changed) whose verdict differs, a decided
    one first: a cell that decides otherwise is what a finding depends on; one that could not
    decide (arms still training) is only a cell where it was not checked."""
    others = [c for c in cells if keys[c.id] != keys[start.id]]
    if not others:
        return None

    def distance(c: Cell) -> tuple[bool, int]:
        changed = sum(s.key != start.setting(s.axis).key for s in c.settings)
        return undecided_key(keys[c.id]), changed

    return min(others, key=distance)


def finding(
    topic: str,
    cells: tuple[Cell, ...],
    verdicts: dict[str, Verdict],
) -> Finding:
    """One topic's verdicts across the sweep, as a :class:`Finding` with its sentence."""
    keys = {cell_id: v.key for cell_id, v in verdicts.items()}
    shorts = {cell_id: v.short for cell_id, v in verdicts.items()}
    default = next(c for c in cells if c.default)
    axes = depends_on(keys, cells)
    here = verdicts[default.id]
    where = (
        "of the sweep and the held-out panel"
        if any(s.axis == "panel" for s in default.settings)
        else "of the sweep"
    )
    if not axes:
        text = f"{topic}: {here.text.rstrip('.')} — the same in all {len(cells)} cells {where}."
        return Finding(topic, True, (), text, keys, shorts)
    other = nearest_other(cells, keys, default)
    names = " and ".join(AXIS_NAMES.get(a, a) for a in axes)
    holds = sum(keys[c.id] == keys[default.id] for c in cells)
    if undecided_key(keys[other.id]) and not undecided_key(keys[default.id]):
        # no cell decides otherwise: the verdict stands wherever it could be checked
        changed = [s.label for s in other.settings if s.key != default.setting(s.axis).key]
        text = (
            f"{topic}: {here.text.rstrip('.')} — the same in every cell where it is decided "
            f"({holds} of {len(cells)} cells {where}); not decided in the other "
            f"{len(cells) - holds}, e.g. with {', '.join(changed)}: "
            f"{verdicts[other.id].text.rstrip('.')}."
        )
        return Finding(topic, False, axes, text, keys, shorts)
    # every other decided verdict, each at its nearest cell (a dependence that flips the verdict
    # the other way must not hide behind the first one named)
    shown = [other]
    for key in dict.fromkeys(keys[c.id] for c in cells):
        if key in (keys[default.id], keys[other.id]) or undecided_key(key):
            continue
        near = nearest_other(cells, {c.id: keys[c.id] if keys[c.id] == key else keys[default.id]
                                     for c in cells}, default)  # fmt: skip
        if near is not None:
            shown.append(near)
    undecided = sum(
        undecided_key(k) and k != keys[default.id] and c_id != other.id for c_id, k in keys.items()
    )
    rest = (
        f" Undecided in {undecided} more cell{'s' if undecided > 1 else ''} (arms not trained "
        "there, or an interval too wide)."
        if undecided and not undecided_key(keys[other.id])
        else ""
    )

    def at(cell: Cell) -> str:
        changed = [s.label for s in cell.settings if s.key != default.setting(s.axis).key]
        return f" With {', '.join(changed)}: {verdicts[cell.id].text.rstrip('.')}."

    text = (
        f"{topic}: depends on {names} (the preset's verdict holds in {holds} of {len(cells)} "
        f"cells). With the preset's settings: {here.text.rstrip('.')}."
        + "".join(at(c) for c in shown)
        + rest
    )
    return Finding(topic, False, axes, text, keys, shorts)


def scheme_keys(cell: Cell) -> dict[str, str]:
    """``scheme → verdict key`` of a cell whose verdict key is ``"stated|scheme:key|…"`` (the
    far-context and sinks kinds)."""
    return dict(p.split(":", 1) for p in cell.verdict.key.split("|") if ":" in p)


def budget_sides(cell: Cell, other: Cell, names: dict[str, str], phrases: dict[str, str]) -> str:
    """Where a per-scheme verdict depends on the budget, each scheme that differs, at both
    budgets (``"learned: undecided at 300 steps, order partly needed at 900"``); "" when the
    cells differ in anything but their budget (the first line then names the setting only)."""
    if [s.key for s in cell.settings if s.axis != "budget"] != [
        s.key for s in other.settings if s.axis != "budget"
    ]:
        return ""
    here, there = scheme_keys(cell), scheme_keys(other)
    return "; ".join(
        f"{names.get(s, s)} {phrases.get(k, k)} at {cell.steps:,} steps, "
        f"{phrases.get(there.get(s, ''), 'undecided')} at {other.steps:,}"
        for s, k in here.items()
        if there.get(s) != k
    )
