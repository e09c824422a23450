"""Paper checks as studies of the lab's one runner: trained, judged, stored and warmed like
questions (:func:`posviz.lab.engine.run.run_study`).

Each check of :mod:`posviz.lab.studies.papers` defines its arms (model + full settings), the
per-seed
numbers its judge reads and the criterion, fixed in code before any run. :class:`CardStudy` trains
the arms (one unit, balanced over the training threads like a question's), hands the held-out
results to the check's own extractor and judge, and builds a :class:`CardResult`: the published
numbers beside this run's, and "agrees in shape" / "does not agree in shape" / "cannot be judged".
Its run id is :func:`posviz.lab.engine.store.study_run_id` of the check's design
(:meth:`~posviz.lab.studies.papers.PaperCheck.design`: arms, checkpoints, extractor, published
numbers)
and the math of the families it trains. A stored card is judged again from its stored per-seed
numbers, with today's words, whenever it is loaded (:func:`rejudge_card`), so neither the judge
nor the claim sentence is part of the run id.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from posviz.analysis.evidence import spread
from posviz.lab.engine import metrics as m
from posviz.lab.engine.card_inputs import card_values, ladder_steps
from posviz.lab.engine.results import CardResult, Progress
from posviz.lab.engine.run import Unit, UnitOutput, run_study
from posviz.lab.engine.store import RunStore, code_version, study_run_id
from posviz.lab.studies.papers import (
    PAPER_CHECKS,
    PaperCheck,
    judge_ladder,
    judge_sizes,
    paper_check,
)
from posviz.labfiles import CorruptEntry
from posviz.references import cite_plain

#: the held-out checkpoint before the last is this share of the run (for the plateau test).
PLATEAU_AT = 0.75


@dataclass(frozen=True)
class CardStudy:
    """One paper check as a study of :func:`posviz.lab.engine.run.run_study`."""

    check: PaperCheck
    part: str = "default"
    kind: str = "paper_check"

    @property
    def id(self) -> str:
        return self.check.id

    @property
    def steps(self) -> int:
        return max(a.config.steps for a in self.check.all_arms)

    @property
    def run_id(self) -> str:
        return study_run_id(
            self.kind, self.id, self.check.design(), part=self.part, schemes=self.check.schemes
        )

    def units(self) -> list[Unit]:
        # every budget of the ladder is a checkpoint; the one before the last is PLATEAU_AT
        marks = ladder_steps(self.steps)
        return [Unit(self.check.id, self.check.all_arms, self.steps, marks, train=self.check.train)]

    def build(self, trained: list[UnitOutput], run_id: str, wall: float) -> CardResult:
        outputs = {k: v for part in trained for k, v in part.outputs.items()}
        return _card(self.check, run_id, outputs, wall)

    def load(self, store: RunStore, run_id: str) -> CardResult | None:
        return store.load_card(run_id, judge=rejudge_card)


def card_run_id(check: PaperCheck) -> str:
    """The run id of a check (:func:`posviz.lab.engine.store.study_run_id` of its id and arms)."""
    return CardStudy(check).run_id


def run_paper_check(
    check_id: str,
    *,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_corrupt: Callable[[CorruptEntry], None] | None = None,
) -> CardResult:
    """Run (or load) one paper check and judge it with its pre-registered criterion.

    Raises:
        ValueError: unknown check id.
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    return run_study(
        CardStudy(paper_check(check_id)), store=store, on_progress=on_progress,
        should_stop=should_stop, on_corrupt=on_corrupt,
    )  # fmt: skip


def _plateau(loss: np.ndarray) -> str:
    """How an arm's held-out loss moved over the last quarter of its run (mean over seeds)."""
    before, now = float(np.mean(loss[:, -2])), float(np.mean(loss[:, -1]))
    gain = (before - now) / before if before > 0 else 0.0
    state = "plateaued" if gain < m.PLATEAU else "still falling"
    return f"held-out loss {before:.3f} → {now:.3f} over the last quarter ({gain:+.1%}): {state}"


def _this_run(check: PaperCheck, values: dict[str, dict[str, np.ndarray]]) -> tuple[str, ...]:
    """Each arm's judged numbers in words: losses also as perplexity (``exp``)."""
    lines = []
    for arm in check.arms:
        parts = []
        for name, _ in check.inputs:
            v = np.asarray(values[arm.id][name], dtype=np.float64)
            if not np.isfinite(v).all():
                parts.append(f"{name}: not defined")
                continue
            s = spread(v)
            if name.startswith("loss"):
                at = name.removeprefix("loss")  # "@64" for a length, "" for the one loss
                words = ("perplexity", at, f"{math.exp(s.mean):.2f}")
                parts.append(" ".join(w for w in words if w))
                parts[-1] += f" (loss {s.text(3)} nats)"
            else:
                words = check.input_words.get(name, name.replace("_", " "))
                parts.append(f"{words} {s.text(3)}")
        lines.append(f"{arm.label}: " + "; ".join(parts))
    return tuple(lines)


def _card(check: PaperCheck, run_id: str, outputs, wall: float) -> CardResult:
    heldout = {arm.id: outputs[arm.id].heldout for arm in check.all_arms}
    values = card_values(check, heldout)
    outcome = check.check(values)
    first = min(check.arms[0].config.eval_lengths)
    return CardResult(
        run_id=run_id,
        check_id=check.id,
        code_version=code_version(),
        reference=check.reference,
        citation=cite_plain(check.reference),
        claim=check.claim,
        claim_read_at=check.claim_read_at,
        published=check.published,
        published_note=check.published_note or "",
        criterion=check.criterion,
        caveat=check.caveat,
        arm_labels={a.id: a.label for a in check.arms},
        inputs={
            arm: {name: tuple(float(x) for x in np.ravel(v)) for name, v in by_name.items()}
            for arm, by_name in values.items()
        },
        input_names=check.inputs,
        this_run=_this_run(check, values),
        verdict=outcome.verdict,
        agrees=outcome.agrees,
        conditions=outcome.conditions,
        reason=outcome.reason,
        convergence={
            a.id: _plateau(np.asarray(outputs[a.id].heldout[first].loss)) for a in check.all_arms
        },
        wall_s=wall,
        ladder=_ladder(check, values),
        sizes=_sizes(check, values),
    )


def _ladder(check: PaperCheck, values: dict[str, dict[str, np.ndarray]]) -> str:
    """The check's budget ladder in words, or "" for a check without one."""
    if check.ladder is None:
        return ""
    steps = ladder_steps(max(a.config.steps for a in check.arms))
    return judge_ladder(check.ladder, values, steps).text


def _sizes(check: PaperCheck, values: dict[str, dict[str, np.ndarray]]) -> str:
    """The check's size ladder in words, or "" for a check without one."""
    if check.sizes is None:
        return ""
    base = next(a for a in check.arms if a.id == check.sizes.a)
    text = judge_sizes(check.sizes, values, getattr(base.config, check.sizes.axis)).text
    config = base.config
    seeds = f"{config.first_seed}–{config.first_seed + config.seeds - 1}"
    return (
        f"{text} Every size trained at one learning rate ({config.lr:g}) with seeds {seeds}: "
        "the trend is not repeated at other learning rates or seeds, unlike the questions' "
        "findings."
    )


def stored_cards(*, store: RunStore | None = None) -> dict[str, CardResult]:
    """Every paper check whose current run is stored, by check id (nothing trains)."""
    store = store or RunStore()
    out = {}
    for check_id, check in PAPER_CHECKS.items():
        try:
            card = store.load_card(card_run_id(check), judge=rejudge_card)
        except CorruptEntry:
            card = None
        if card is not None:
            out[check_id] = card
    return out


def rejudge_card(card: CardResult) -> CardResult:
    """A stored card judged again by the current code from its stored per-seed numbers (the
    verdict, conditions, reason and this run's numbers in words; nothing trains)."""
    check = paper_check(card.check_id)
    values = {
        arm: {name: np.asarray(v, dtype=np.float64) for name, v in by_name.items()}
        for arm, by_name in card.inputs.items()
    }
    outcome = check.check(values)
    return dataclasses.replace(
        card,
        reference=check.reference,
        citation=cite_plain(check.reference),
        claim=check.claim,  # words are not in the run id: always today's
        claim_read_at=check.claim_read_at,
        published=check.published,
        published_note=check.published_note or "",
        arm_labels={a.id: a.label for a in check.arms},
        criterion=check.criterion,
        caveat=check.caveat,
        this_run=_this_run(check, values),
        verdict=outcome.verdict,
        agrees=outcome.agrees,
        conditions=outcome.conditions,
        reason=outcome.reason,
        ladder=_ladder(check, values),
        sizes=_sizes(check, values),
    )
