"""The paper checks as cards: the claim, the criterion fixed before the run, published vs this run,
the outcome, and what it would take to differ.

A card is drawn from the check itself (:mod:`posviz.lab.papers`: claim, published tables,
criterion, caveat), so it says what will be tested before any run, and from its stored
:class:`~posviz.lab.results.CardResult` once one exists (this run's numbers and the verdict).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from posviz.lab.papers import PAPER_CHECKS, Condition, paper_check
from posviz.lab.results import CardResult
from posviz.references import cite

NOT_RUN = "not run on this server yet"


@dataclass(frozen=True)
class CardView:
    """What one card shows (Markdown-ready strings; ``published`` a table)."""

    check_id: str
    citation: str  # Markdown link (posviz.references.cite)
    claim: str
    claim_read_at: str
    criterion: str
    caveat: str
    outcome: str
    agrees: bool | None
    published: tuple[tuple[str, pd.DataFrame], ...]
    published_note: str
    this_run: tuple[str, ...]
    conditions: tuple[str, ...]
    differ: str
    convergence: tuple[str, ...]
    run_id: str
    #: (heading, text): how the gap moves with the budget and with the model's size (each only
    #: for a check with that ladder and a stored run)
    trends: tuple[tuple[str, str], ...] = ()


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


def differ_text(card: CardResult) -> str:
    """What it would take for the outcome to differ, from the conditions' margins."""
    if card.agrees is None:
        return f"It cannot be judged yet: {card.reason}"
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


def card_view(check_id: str, card: CardResult | None) -> CardView:
    """One card: the check's own text, and the stored run's numbers and verdict if it has run."""
    check = paper_check(check_id)
    return CardView(
        check_id=check_id,
        citation=cite(check.reference),
        claim=check.claim,
        claim_read_at=check.claim_read_at,
        criterion=check.criterion,
        caveat=check.caveat,
        outcome=card.verdict if card else NOT_RUN,
        agrees=card.agrees if card else None,
        published=published_tables(check_id),
        published_note=check.published_note or "",
        this_run=card.this_run if card else (),
        conditions=tuple(
            f"{'holds' if c.holds else 'fails'}: {c.text}"
            for c in (card.conditions if card else ())
        ),
        differ=differ_text(card) if card else "",
        convergence=tuple(
            f"{card.arm_labels.get(a, a)}: {how}"
            for a, how in (card.convergence if card else {}).items()
        ),
        run_id=card.run_id if card else "",
        trends=card.trends() if card else (),
    )


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
