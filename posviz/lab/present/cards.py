"""The paper checks as cards: the claim, the criterion fixed before the run, published vs this run,
the outcome, and what it would take to differ.

A card is drawn from the check itself (:mod:`posviz.lab.studies.papers`: claim, published tables,
criterion, caveat), so it says what will be tested before any run, and from its stored
:class:`~posviz.lab.engine.results.CardResult` once one exists (this run's numbers and the verdict).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.headlines import Verdict
from posviz.charts import lab as charts
from posviz.charts.figure import Figure
from posviz.charts.style import CONTROL_COLOR, PALETTE
from posviz.lab.engine.results import SIZE_QUESTION, CardResult
from posviz.lab.studies.papers import PAPER_CHECKS, Condition, PaperCheck, judge_sizes, paper_check
from posviz.references import cite

NOT_RUN = "not run on this server yet"


@dataclass(frozen=True)
class Section:
    """A paragraph of a card under a bold lead (the criterion, what would differ, a ladder),
    with its bullets and its chart, if any."""

    heading: str
    text: str
    bullets: tuple[str, ...] = ()
    figure: Figure | None = None


@dataclass(frozen=True)
class CardView:
    """What one card shows (Markdown-ready strings; ``published`` a table)."""

    check_id: str
    citation: str  # Markdown link (posviz.references.cite)
    claim: str
    claim_read_at: str
    caveat: str
    outcome: str
    agrees: bool | None
    published: tuple[tuple[str, pd.DataFrame], ...]
    published_note: str
    this_run: tuple[str, ...]
    convergence: tuple[str, ...]
    run_id: str
    #: what the card says under its numbers, in order: the criterion with its conditions, what
    #: it would take to differ, the ladders (the size ladder with its chart)
    sections: tuple[Section, ...] = ()


def published_tables(check_id: str) -> tuple[tuple[str, pd.DataFrame], ...]:
    """The paper's numbers as printed, one ``(table, setting and unit; rows)`` per table read;
    each frame has ``row, value``."""
    return tuple(
        (
            f"{t.table}: {t.setting}. Values: {t.unit}.",
            pd.DataFrame(t.numbers, columns=["row", "value"]),
        )
        for t in paper_check(check_id).published
    )


def _rule(c: Condition) -> str:
    return c.text.split(" (whole interval)")[0].split(": ")[0]


def _edge(c: Condition) -> tuple[float, float] | None:
    """The interval's end nearer the threshold, and the threshold (None without numbers)."""
    low, high, threshold = (c.numbers.get(k, math.nan) for k in ("low", "high", "threshold"))
    if not all(math.isfinite(v) for v in (low, high, threshold)):
        return None
    edge = low if abs(low - threshold) < abs(high - threshold) else high
    return edge, threshold


def _shown(c: Condition, value: float) -> str:
    """A condition's number as the reader reads it: ratios (judged on log scale) as ``1.23×``."""
    return f"{math.exp(value):.3f}×" if "×" in c.text else f"{value:+.3f}"


def arm_label(card: CardResult, arm: str) -> str:
    """An arm's label, never its internal id: a size ladder's arm (``lm_nope_width16``) is its
    base arm's label with the size ("causal LM, no positions, width 16")."""
    if arm in card.arm_labels:
        return card.arm_labels[arm]
    if found := re.fullmatch(r"(.+)_([a-z]+)(\d+)", arm):
        base, axis, size = found.groups()
        if base in card.arm_labels:
            return f"{card.arm_labels[base]}, {axis} {size}"
    return arm


def with_labels(text: str, card: CardResult) -> str:
    """``text`` with every arm id the judge wrote ("nope 0.058, t5 0.058") replaced by the arm's
    label, so a card never shows an internal id."""
    for arm in sorted(card.arm_labels, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(arm)}(?= \d|[:,;)])", card.arm_labels[arm], text)
    return text


def differ_text(card: CardResult) -> str:
    """What it would take for the outcome to differ, from the conditions' margins."""
    if card.agrees is None:
        return f"It cannot be judged yet: {with_labels(card.reason, card)}"
    margins = [(c, _edge(c)) for c in card.conditions]
    margins = [(c, e) for c, e in margins if e is not None]
    if card.agrees and margins:
        c, (edge, threshold) = min(margins, key=lambda ce: abs(ce[1][0] - ce[1][1]))
        return (
            f"It would not agree if any condition failed. Closest to failing: {_rule(c)} — the "
            f"95% interval ends at {_shown(c, edge)}, the threshold is {_shown(c, threshold)}."
        )
    failed = [c for c in card.conditions if not c.holds]
    return "It would agree if these held too: " + "; ".join(_rule(c) for c in failed) + "."


def size_figure(check: PaperCheck, card: CardResult) -> Figure | None:
    """The size ladder's gap at each size with its 95% interval over seeds (grey: a size not
    trained enough to compare), the criterion's line beside it; None without a ladder."""
    ladder = check.sizes
    if ladder is None:
        return None
    values = {
        arm: {name: np.asarray(v, dtype=np.float64) for name, v in by_name.items()}
        for arm, by_name in card.inputs.items()
    }
    base = getattr(next(a for a in check.arms if a.id == ladder.a).config, ladder.axis)
    shown = math.exp if ladder.ratio else float
    rows = [
        {
            "variant": f"{ladder.axis} {r.size}"
            + (" (this card)" if r.size == base else "")
            + (" · not trained" if r.untrained else ""),
            "mean": shown(r.gap.estimate),
            "low": shown(r.gap.low),
            "high": shown(r.gap.high),
        }
        for r in judge_sizes(ladder, values, base).rungs
        if r.gap is not None
    ]
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    colors = {v: CONTROL_COLOR if "not trained" in v else PALETTE[0] for v in frame["variant"]}
    chart = charts.interval_chart(
        frame,
        colors=colors,
        x_title=ladder.short,
        title=f"The gap by model {ladder.axis}",
        subtitle="mean and 95% interval over seeds; grey: not trained enough to compare",
        rules=(ladder.line,) if ladder.line else (),
    )
    return Figure(chart, frame, f"{check.id}-size-ladder")


def _sections(
    check: PaperCheck, card: CardResult | None, conditions: tuple[str, ...]
) -> tuple[Section, ...]:
    criterion = Section("Criterion, fixed in code before the run.", check.criterion, conditions)
    if card is None:
        return (criterion,)
    differ = Section("What it would take to differ.", differ_text(card))
    ladders = tuple(
        Section(
            heading, text, figure=size_figure(check, card) if heading == SIZE_QUESTION else None
        )
        for heading, text in card.trends()
    )
    return (criterion, differ, *ladders)


def card_view(check_id: str, card: CardResult | None) -> CardView:
    """One card: the check's own text, and the stored run's numbers and verdict if it has run."""
    check = paper_check(check_id)
    conditions = tuple(
        f"{'holds' if c.holds else 'fails'}: {c.text}" for c in (card.conditions if card else ())
    )
    return CardView(
        check_id=check_id,
        citation=cite(check.reference),
        claim=check.claim,
        claim_read_at=check.claim_read_at,
        caveat=check.caveat,
        outcome=card.verdict if card else NOT_RUN,
        agrees=card.agrees if card else None,
        published=published_tables(check_id),
        published_note=check.published_note or "",
        this_run=card.this_run if card else (),
        convergence=tuple(
            f"{arm_label(card, a)}: {how}" for a, how in (card.convergence if card else {}).items()
        ),
        run_id=card.run_id if card else "",
        sections=_sections(check, card, conditions),
    )


def card_paragraph(card: CardView) -> str:
    """What a card said of its run before it had a first line: this run's numbers, then what
    it would take to differ (every number :func:`card_verdict` must keep)."""
    differ = [part.text for part in card.sections if part.heading.startswith("What it would")]
    return " ".join([*card.this_run, *differ])


def card_line(card: CardView) -> str:
    """A card's answer in one plain line (at most 15 words, no formula)."""
    if not card.run_id:
        return "Not run on this server yet: the card says what it will test."
    if card.agrees is None:
        differ = card_paragraph(card)
        why = "its arms are under-trained" if "under-trained" in differ else "see why below"
        return f"Cannot be judged yet: {why}."
    return (
        "Agrees in shape with the paper."
        if card.agrees
        else ("Does not agree in shape with the paper.")
    )


def card_verdict(card: CardView) -> Verdict:
    """A card's first line (:func:`card_line`) and its evidence: this run's numbers per arm,
    each condition of the criterion, and what it would take to differ."""
    items: list[tuple[str, str]] = []
    for line in card.this_run:
        label, _, text = line.partition(": ")
        items.append((label, text) if text else ("", line))
    for part in card.sections:
        if part.heading.startswith("Criterion"):
            items += [(b.split(": ", 1)[0], b.split(": ", 1)[-1]) for b in part.bullets]
        elif part.heading.startswith("What it would"):
            items.append(("What it would take to differ", part.text))
    return Verdict(card_paragraph(card), {}, card_line(card), tuple(items))


def cards_verdict(cards: dict[str, CardResult], *, computing: bool = False) -> Verdict:
    """The paper checks in one line (how many agree, differ, cannot be judged, have not run; at
    most 15 words), what a card holds folded under it; ``sentence`` is :func:`cards_headline`."""
    total = len(PAPER_CHECKS)
    sentence = cards_headline(cards, computing=computing)
    what = (
        "Each card",
        "the claim, the criterion fixed in code before the run, published numbers beside this "
        "run's, and the outcome",
    )
    if not cards:
        line = (
            f"The {total} paper checks are being computed on this server now."
            if computing
            else f"None of the {total} paper checks has run on this server yet."
        )
        then = (
            "each card shows its outcome as soon as it is stored"
            if computing
            else "each card says what it will test and offers to run it"
        )
        return Verdict(sentence, {}, line, (what, ("Meanwhile", then)))
    said = {True: "agree in shape", False: "differ in shape", None: "cannot be judged"}
    counted = {key: sum(c.agrees is key for c in cards.values()) for key in said}
    parts = [f"{n} {said[key]}" for key, n in counted.items() if n]
    missing = total - len(cards)
    if missing:
        parts.append(f"{missing} {'being computed' if computing else 'not run here yet'}")
    line = f"Paper checks: {', '.join(parts)}."
    return Verdict(sentence, {}, line, (what, ("Checked in shape on tiny models", sentence)))


def cards_headline(cards: dict[str, CardResult], *, computing: bool = False) -> str:
    """The paper checks in one sentence: how many agree in shape, do not, or are not judged.

    ``computing``: the first start's warm-up is computing the missing checks now (its progress
    line follows), so the sentence says so instead of offering to run them.
    """
    total = len(PAPER_CHECKS)
    if not cards:
        if computing:
            return (
                f"The {total} paper checks are being computed on this server now; each card "
                "below shows its outcome as soon as it is stored."
            )
        return (
            f"None of the {total} paper checks has run on this server yet: each card below says "
            "what it will test and offers to run it."
        )
    words = {
        "agrees in shape": ("agrees in shape", "agree in shape"),
        "does not agree in shape": ("does not agree in shape", "do not agree in shape"),
        "cannot be judged": ("cannot be judged", "cannot be judged"),
    }
    counted = {verdict: 0 for verdict in words}
    for card in cards.values():
        counted[card.verdict] += 1
    parts = [f"{n} {words[v][n != 1]}" for v, n in counted.items() if n]
    missing = total - len(cards)
    tail = (
        f"; {missing} {'being computed now' if computing else 'not run here yet'}"
        if missing
        else ""
    )
    return (
        f"Of {total} published results checked in shape on tiny models: {', '.join(parts)}{tail}."
    )
