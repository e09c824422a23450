"""A cell's verdict in words, per kind of question: the clause with its numbers and the plain
first sentence of an answer. Each :class:`~posviz.lab.present.kinds.KindView` names the ones it
uses; every number is read from the run.
"""

from __future__ import annotations

import re

import numpy as np

from posviz.lab.engine import metrics as m
from posviz.lab.engine.results import Cell, Comparison, LabResult
from posviz.lab.studies.judging import CEILING, HOLDS, nearest_other, undecided_key


def names(items: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def deciding(cell: Cell) -> Comparison | None:
    """The comparison behind a pair cell's verdict (speed of learning at the ceiling)."""
    speed = cell.verdict.key.startswith("ceiling")
    for c in cell.comparisons:
        if (c.metric == "train_loss_mean") == speed:
            return c
    return None


def at_ceiling(cell: Cell) -> bool:
    return cell.verdict.key.startswith("ceiling")


def pair_clause(cell: Cell, labels: dict[str, str], *, head: bool = True) -> str:
    """A pair cell's verdict with its numbers; at the accuracy ceiling, the speed of learning
    (``head=False`` leaves out "both reach held-out accuracy ≥ 0.99")."""
    c = deciding(cell)
    if cell.verdict.key == "undecided" or c is None or c.outcome == "undefined":
        return cell.verdict.text.rstrip(".")
    a, b = labels[c.a], labels[c.b]
    win, lose = (a, b) if c.outcome == "a" else (b, a)
    w, lo = (c.a_mean, c.b_mean) if c.outcome == "a" else (c.b_mean, c.a_mean)
    margin = m.spec(c.metric).margin
    interval = f"the difference's 95% interval {c.low:+.3f} … {c.high:+.3f}"
    if at_ceiling(cell):
        first = f"both reach held-out accuracy ≥ {CEILING:.2f}, and " if head else ""
        losses = f"{a} {c.a_mean:.3f}, {b} {c.b_mean:.3f}"
        if c.outcome == "tie":
            return first + (
                f"they learn equally fast (mean training loss {losses}; {interval} lies "
                f"inside ±{margin:g}, the equivalence margin)"
            )
        if c.outcome == "unclear":
            return first + (
                f"which learns faster is undecided (mean training loss {losses}; {interval} "
                f"contains 0 but reaches past ±{margin:g})"
            )
        return first + f"{win} learns faster (mean training loss {w:.3f} vs {lo:.3f})"
    name = m.spec(c.metric).name
    if c.outcome == "tie":
        return (
            f"{a} and {b} do equally well ({name} {c.a_mean:.3f} vs {c.b_mean:.3f}; {interval} "
            f"lies inside ±{margin:g}, the equivalence margin)"
        )
    if c.outcome == "unclear":
        return (
            f"undecided between {a} and {b} ({name} {c.a_mean:.3f} vs {c.b_mean:.3f}; "
            f"{interval} contains 0 but reaches past ±{margin:g}, the equivalence margin)"
        )
    side = "higher" if m.spec(c.metric).higher_is_better else "lower"
    return f"{win} reaches {side} {name} than {lose} ({w:.3f} vs {lo:.3f})"


def _values(rows: list, *, digits: int = 2) -> str:
    return names([f"{r.label} ({r.mean:.{digits}f})" for r in rows])


def extrapolation_clause(cell: Cell, result: LabResult) -> str:
    """Who keeps its accuracy past the training length (with the unseen-position accuracy),
    who does not, and which arms are not ranked (under-trained, or not defined there)."""
    ranked = {r.arm for r in cell.ranking}
    holding = [r for r in cell.ranking if r.holds]
    losing = [r for r in cell.ranking if not r.holds]
    under, undefined = [], []
    for arm in result.arms:
        values = cell.metrics.get(arm.id, {}).get("accuracy_unseen", ())
        if arm.id not in ranked:
            defined = len(values) and np.isfinite(values).all()
            (under if defined else undefined).append(arm.label)
    parts = [
        f"{_values(holding)} keep{'s' if len(holding) == 1 else ''} at least {HOLDS:.0%} of "
        "their seen-position accuracy on unseen positions"
        if holding
        else f"no ranked arm keeps {HOLDS:.0%} of its seen-position accuracy on unseen positions"
    ]
    if losing:
        parts.append(f"{_values(losing)} {'does' if len(losing) == 1 else 'do'} not")
    if under:
        parts.append(f"not ranked, not trained: {_status_words(cell, result, under)}")
    if undefined:
        parts.append(f"{names(undefined)} has no rows there (not defined)")
    return "; ".join(parts)


def _status_words(cell: Cell, result: LabResult, labels: list[str]) -> str:
    """``"NoPE still improving"``: the arms of ``labels`` with their status in the cell."""
    words = {"improving": "still improving", "collapsed": "collapsed on some seeds"}
    return names(
        [
            f"{result.label(a)} {words.get(s, s)}"
            for a, s in cell.status.items()
            if result.label(a) in labels
        ]
    )


def _late(cell: Cell, arm: str) -> float:
    return float(np.mean(cell.metrics[arm]["accuracy_late"]))


def rare_rows_clause(cell: Cell) -> str:
    key = cell.verdict.key
    if key == "undecided":
        return cell.verdict.text.rstrip(".")
    short, uniform, free = (_late(cell, a) for a in ("short", "uniform", "rope_short"))
    numbers = f"late-position accuracy {short:.2f} vs {uniform:.2f} with uniform lengths"
    if key == "no_lag":
        return f"no: the short-trained table does not lag at the late positions ({numbers})"
    if key == "rows":
        return (
            f"yes: the short-trained table lags at the late positions ({numbers}), while RoPE, "
            f"which has no table, trained on the same short lengths does not ({free:.2f})"
        )
    return (
        f"not the rows: the short-trained table lags at the late positions ({numbers}), but so "
        f"does RoPE with no table on the same short lengths ({free:.2f}): attention never saw "
        "long sequences"
    )


_WITHOUT = {
    "b": "does worse without positions",
    "a": "does better without positions",
    "tie": "does as well without positions",
    "unclear": "is undecided",
    "undecided": "is undecided",
}
#: why a side is undecided, said once after both sides (never once per side).
_WHY = {
    "unclear": "the interval is too wide",
    "undecided": "not trained, or the interval is too wide",
}


def need_positions_clause(cell: Cell) -> str:
    enc, dec = cell.comparisons[0], cell.comparisons[1]
    said = {c.a: _WITHOUT.get(c.outcome, "is not defined") for c in (enc, dec)}
    why = list(dict.fromkeys(_WHY[c.outcome] for c in (enc, dec) if c.outcome in _WHY))
    return (
        f"the encoder {said[enc.a]} (held-out loss {enc.a_mean:.2f} vs {enc.b_mean:.2f} with a "
        f"learned table) and the causal decoder {said[dec.a]} ({dec.a_mean:.2f} vs "
        f"{dec.b_mean:.2f})" + (f"; undecided: {' or '.join(why)}" if why else "")
    )


def short_label(label: str) -> str:
    """An arm's label without its parenthetical (``"concatenate (token d−p ‖ position p)"`` →
    ``"concatenate"``): what the first line and the repeated mentions use; the evidence defines
    each label in full once."""
    return re.sub(r"\s*\([^()]*\)", "", label).strip() or label


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


MAX_FIRST_WORDS = 15


#: a training status in words, after an arm's label ("… is still improving").
STATUS_WORDS = {
    "improving": "is still improving",
    "stalled": "stopped without learning",
    "collapsed": "collapsed on some seeds",
    "diverged": "diverged",
}


def why_undecided(cell: Cell, labels: dict[str, str], as_it_stands: tuple[str, ...] = ()) -> str:
    """A plain first line for a cell that decides nothing, saying why: the first arm not
    trained there and its status (so a chart of a wide gap beside it is not contradicted),
    else that the interval is too wide; at most :data:`MAX_FIRST_WORDS` words. Arms of
    ``as_it_stands`` (judged trained or not) are never the reason."""
    for arm, status in cell.status.items():
        if arm in as_it_stands or arm not in labels or cell.converged.get(arm, True):
            continue
        if status in STATUS_WORDS:
            said = f"{short_label(labels[arm])} {STATUS_WORDS[status]}"
            text = f"Undecided yet: {said} at this budget."
            if len(text.split()) <= MAX_FIRST_WORDS:
                return text
            return "Undecided yet: an arm has not finished training at this budget."
    return "Undecided: the runs cannot tell them apart yet."


def pair_plain(cell: Cell, labels: dict[str, str]) -> str:
    c = deciding(cell)
    if cell.verdict.key == "undecided" or c is None or c.outcome in ("undefined", "unclear"):
        return why_undecided(cell, labels)
    a, b = labels[c.a], labels[c.b]
    win, lose = (a, b) if c.outcome == "a" else (b, a)
    if at_ceiling(cell):
        if c.outcome == "tie":
            return "Both solve it, and they learn equally fast."
        return f"Both solve it; the {win} learns faster."
    if c.outcome == "tie":
        return f"No difference: the {a} and the {b} do equally well."
    return f"The {win} does better than the {lose}."


def _side(cell: Cell, labels: dict[str, str]) -> str:
    """A pair cell's verdict in two or three words: ``"fixed sinusoid faster"``, ``"learned
    table better"``, ``"no difference"``, ``"undecided"``."""
    c = deciding(cell)
    if c is None or c.outcome not in ("a", "b", "tie"):
        return "undecided"
    if c.outcome == "tie":
        return "no difference"
    win = short_label(labels[c.a if c.outcome == "a" else c.b])
    return f"{win} {'faster' if at_ceiling(cell) else 'better'}"


def _setting_words(cell: Cell, other: Cell) -> tuple[str, str]:
    """The one setting two cells differ in, in a word or two each (``"from small"``)."""
    for s in cell.settings:
        o = other.setting(s.axis)
        if o.key != s.key:
            if s.axis == "init":
                return f"from {s.key}", f"from {o.key}"
            return f"with {short_label(s.label)}", f"with {short_label(o.label)}"
    return "", ""


def pair_sides(cell: Cell, other: Cell, labels: dict[str, str]) -> str:
    """Both sides of a pair verdict that depends on one setting: ``"fixed sinusoid faster from
    small, learned table from matched"`` ("" when the cells differ in more than one setting)."""
    if sum(s.key != other.setting(s.axis).key for s in cell.settings) != 1:
        return ""
    here, there = _side(cell, labels), _side(other, labels)
    words_here, words_there = _setting_words(cell, other)
    verb = here.split()[-1]
    if there.endswith(f" {verb}"):  # "learned table faster" → "learned table" after a comma
        there = there.removesuffix(f" {verb}")
    return f"{here} {words_here}, {there} {words_there}"


def extrapolation_plain(cell: Cell, labels: dict[str, str] | None = None) -> str:
    holding = [r.label for r in cell.ranking if r.holds]
    if not cell.ranking:
        return "Undecided yet: too few arms finished training at this budget."
    if not holding:
        return "No scheme keeps its accuracy past the training length."
    return f"{names(holding)} keep their accuracy past the training length."


def rare_rows_plain(cell: Cell, labels: dict[str, str] | None = None) -> str:
    return {
        "rows": "Yes: the rarely seen rows are what is untrained.",
        "attention": "No: attention never saw long sequences; the rows are not the cause.",
        "no_lag": "No: the short-trained table does not lag at late positions.",
    }.get(cell.verdict.key) or why_undecided(cell, labels or {}, ("short",))


def need_positions_plain(cell: Cell) -> str:
    enc, dec = cell.comparisons[0], cell.comparisons[1]
    words = {"b": "needs positions", "a": "does better without", "tie": "does not need them"}
    e, d = words.get(enc.outcome), words.get(dec.outcome)
    if e and d:
        return f"The encoder {e}; the causal decoder {d}."
    if e:
        return f"The encoder {e}; the causal decoder is undecided."
    if d:
        return f"The causal decoder {d}; the encoder is undecided."
    return "Undecided yet: neither comparison is decided at this budget."


def decided_with_longer_training(result: LabResult, labels: dict[str, str]) -> str:
    """``"With longer training, …"`` where the preset's cell is undecided and the verdict it
    depends on is the budget's alone, decided at a longer one (its arms trained only there);
    "" otherwise or past :data:`MAX_FIRST_WORDS`."""
    main, default = result.findings[0], result.default_cell
    if main.depends_on != ("budget",) or not undecided_key(main.keys[default.id]):
        return ""
    other = nearest_other(result.cells, main.keys, default)
    if other is None or other.steps <= default.steps or undecided_key(main.keys[other.id]):
        return ""
    plain = pair_plain(other, labels)
    text = f"With longer training, {plain[:1].lower()}{plain[1:]}"
    return text if len(text.split()) <= MAX_FIRST_WORDS else ""
