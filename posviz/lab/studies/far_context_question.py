"""The far-context question's kind: its reading, judge and findings (kind ``far_context``).

"Does the far context need its order, and does the position scheme change that?" — O'Connor &
Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), §2 eq. 9, p. 3, scaled to the lab (windows and ablations:
:mod:`posviz.lab.studies.far_context`; training: :mod:`posviz.lab.studies.
far_context_question_train`). Per position scheme the question trains four arms on the same
windows and seeds: *full* (far context intact), *shuffled* (trained and evaluated with the far
context's words shuffled), *no information* (separator + near part alone) and *evaluation only*
(the full model read with the far context shuffled).

Judged per scheme on the held-out mid-range loss (:data:`METRIC`; the long range the same way,
as its own finding), every difference paired over seeds with its 95 % interval and the metric's
equivalence margin (:mod:`posviz.lab.studies.judging`):

* **usable information** = no information − full. The no-information arm is the control that
  can fail: unless the full model is decided better than it (the gate), no share is stated and
  the scheme's verdict says so (the far context unused, or hurting);
* **share removed** = (shuffled − full) ÷ (no information − full), with Fieller's interval
  (:func:`~posviz.lab.studies.far_context.fieller_ratio`). The verdict: shuffling costs nothing
  (the order is not needed), costs part (shuffled decided worse than full and better than no
  information), or all of it (shuffled no better than no information, within the margin);
* **evaluation only vs trained with**: the full model read shuffled against the model trained
  shuffled (the paper: +0.22 vs +0.10 bits, Fig. 4 and Fig. 2, mid range).

Arms are compared as they stand at each budget (a character LM keeps improving slowly: the
budget axis of the sweep says whether more training changes a verdict); a stalled, collapsed or
diverged arm never supports one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from posviz.lab.engine import metrics as m
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.measure import Reading
from posviz.lab.engine.results import Cell, Comparison, Finding, Instance, Verdict
from posviz.lab.studies import judging
from posviz.lab.studies.far_context import fieller_ratio
from posviz.lab.studies.far_context_arms import ARM_IDS, eval_lengths, long_range, split
from posviz.lab.studies.presets import Question

#: every arm is compared as it stands at each budget (module docstring)
AS_IT_STANDS = ARM_IDS
METRIC = "loss_mid"
LONG_METRIC = "loss_long"
#: the metrics this kind reads, registered beside the engine's (margin: 0.02 nats, as loss)
SPECS = (
    m.MetricSpec(METRIC, "held-out loss on the mid-range targets (nats per character)", False),
    m.MetricSpec(
        LONG_METRIC, "held-out loss on the long-range targets (nats per character)", False
    ),
)
for _spec in SPECS:
    m.METRICS.setdefault(_spec.id, _spec)

#: a scheme's verdict, by key, in a few words (the first line's words)
PHRASES = {
    "part": "order partly needed",
    "all": "order fully needed",
    "order_free": "order not needed",
    "some_lost": "order needed, remainder undecided",
    "hurts": "far context hurts",
    "unused": "far context unused",
    "undecided": "undecided",
}
SCHEME_NAMES = {"nope": "NoPE", "learned": "learned table", "rope": "RoPE"}
#: the schemes' names in the first line (one word each, so three verdicts fit 15 words)
SHORT_NAMES = {"nope": "NoPE", "learned": "learned", "rope": "RoPE"}


def train_question_arms(members: Any, **kw: Any) -> Any:
    """The kind's trainer (:func:`posviz.lab.studies.far_context_question_train.
    train_question_arms`), imported when a run trains (it needs torch)."""
    # lazy: the loop imports torch, which judging and the pages never need
    from posviz.lab.studies.far_context_question_train import train_question_arms as train

    return train(members, **kw)


SIDES = (True, False)


def train_length(condition: str, config: LabConfig) -> int | None:
    """Tokens a training sequence of a member with ``condition`` has, where that is not the
    config's ``max_len`` (far + near): the near window alone (SEP + near[:-1]) without the far
    context; none for an evaluation-only arm, which reads the intact arm's model
    (:func:`training_calls` keeps them in one call)."""
    if condition == "noinfo":
        return split(config)[1]
    return 0 if condition == "eval_shuffled" else None


def training_calls(members: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    """The members in two training calls, each evaluation-only arm with the intact arm of its
    scheme (they train one model, so it trains once): of every cut of these bundles into two
    calls, the one with equal numbers of members (the runner's estimate weighs members alike,
    so it leaves such calls whole, :func:`posviz.lab.engine.run.balance`) whose heavier call
    trains the least (a window with the far context costs about twice one without); the
    first such cut in the variants' order. One call for a single bundle."""
    bundles: dict[tuple, list[Any]] = {}
    for member in members:
        trains_as = "full" if member.condition == "eval_shuffled" else member.condition
        bundles.setdefault((repr(member.model), trains_as, member.config), []).append(member)
    keys = list(bundles)
    if len(keys) < 2 or len(keys) > 16:
        return (tuple(members),)
    weight = [1 if k[1] == "noinfo" else 2 for k in keys]
    size = [len(bundles[k]) for k in keys]

    def score(mask: int) -> tuple[int, int]:
        picked = [bool(mask >> i & 1) for i in range(len(keys))]
        counts = [sum(n for n, p in zip(size, picked, strict=True) if p == side) for side in (1, 0)]
        loads = [
            sum(w for w, p in zip(weight, picked, strict=True) if p == side) for side in (1, 0)
        ]
        return abs(counts[0] - counts[1]), max(loads)

    best = min(range(1, 2 ** len(keys) - 1), key=score)
    calls = (
        [m for i, k in enumerate(keys) if best >> i & 1 for m in bundles[k]],
        [m for i, k in enumerate(keys) if not best >> i & 1 for m in bundles[k]],
    )
    return tuple(tuple(call) for call in calls)


def far_context_losses(
    inst: Instance, config: LabConfig, at: Reading
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The mid-range and long-range held-out losses at the reading's checkpoint."""
    far, _ = split(config)
    whole, mid = (str(n) for n in eval_lengths(far))
    loss_whole = inst.heldout_loss[whole][:, at.index]
    loss_mid = inst.heldout_loss[mid][:, at.index]
    return {METRIC: loss_mid, LONG_METRIC: long_range(loss_whole, loss_mid)}, {}


@dataclass(frozen=True)
class Arms:
    """One scheme's four arm ids."""

    scheme: str
    full: str
    shuffled: str
    noinfo: str
    eval_only: str


def scheme_arms(q: Question) -> list[Arms]:
    """Every scheme's arms, by their variants' conditions, in the question's order."""
    by: dict[str, dict[str, str]] = {}
    for v in q.variants:
        by.setdefault(v.model.scheme, {})[v.condition] = v.id
    return [
        Arms(s, c["full"], c["shuffle_all"], c["noinfo"], c["eval_shuffled"]) for s, c in by.items()
    ]


@dataclass(frozen=True)
class SchemeVerdict:
    scheme: str
    key: str
    text: str
    comparisons: tuple[Comparison, ...]
    eval_key: str = "undecided"
    eval_text: str = ""


def _failed(arms: Arms, status: dict[str, str], labels: dict[str, str]) -> list[str]:
    out = []
    for arm in (arms.full, arms.shuffled, arms.noinfo, arms.eval_only):
        state = status.get(arm, "improving")
        if state in judging.FAILED:
            out.append(f"{labels[arm]} {state}")
    return out


def _interval(c: Comparison) -> str:
    return f"{c.estimate:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"


def judge_scheme(
    arms: Arms,
    metrics: dict[str, dict[str, tuple[float, ...]]],
    status: dict[str, str],
    labels: dict[str, str],
    metric: str = METRIC,
) -> SchemeVerdict:
    """One scheme's verdict on ``metric`` (module docstring): the gate, then the share."""
    name = SCHEME_NAMES.get(arms.scheme, arms.scheme)
    usable = judging.compare(metrics, arms.noinfo, arms.full, metric, labels)
    failed = _failed(arms, status, labels)
    if failed:
        return SchemeVerdict(arms.scheme, "undecided", f"{name}: undecided ({', '.join(failed)})",
                             (usable,))  # fmt: skip
    worth = f"the far context is worth {_interval(usable)} nats (no far context − full)"
    margin = m.spec(metric).margin
    if usable.outcome != "a" and usable.outcome != "b":
        key = "unused" if usable.outcome == "tie" else "undecided"
        why = f"within ±{margin:g}" if key == "unused" else "its interval contains 0"
        text = f"{name}: no usable far context to share out ({worth}: {why}), so no share"
        return SchemeVerdict(arms.scheme, key, text, (usable,))
    if usable.outcome == "a":  # the no-information arm is better: the far context hurts
        text = f"{name}: the far context hurts ({worth}), so no share is stated"
        return SchemeVerdict(arms.scheme, "hurts", text, (usable,))
    cost = judging.compare(metrics, arms.shuffled, arms.full, metric, labels)
    kept = judging.compare(metrics, arms.noinfo, arms.shuffled, metric, labels)
    a = np.asarray(metrics[arms.shuffled][metric]) - np.asarray(metrics[arms.full][metric])
    b = np.asarray(metrics[arms.noinfo][metric]) - np.asarray(metrics[arms.full][metric])
    share = fieller_ratio(a, b)
    if cost.outcome == "tie":
        key = "order_free"
    elif cost.outcome != "b":  # shuffled better than full, unclear or undefined
        key = "undecided"
    elif kept.outcome == "b":
        key = "part"
    elif kept.outcome == "tie":
        key = "all"
    else:
        key = "some_lost"
    lost = (
        f"trained shuffled it loses {share.percent_text()} of it (shuffled − full "
        f"{_interval(cost)}; what survives, no far context − shuffled {_interval(kept)})"
    )
    verdict = {
        "order_free": "its order is not needed",
        "part": "part of it needs its order",
        "all": "all of it needs its order",
        "some_lost": "its order matters; whether any survives shuffling is undecided",
        "undecided": "undecided whether its order matters",
    }[key]
    text = f"{name}: {verdict} — {worth}; {lost}"
    evaluated = judging.compare(metrics, arms.eval_only, arms.shuffled, metric, labels)
    eval_key = {"a": "milder", "b": "harsher", "tie": "same"}.get(evaluated.outcome, "undecided")
    eval_words = {
        "harsher": "costs more read shuffled at evaluation only than trained shuffled",
        "milder": "costs less read shuffled at evaluation only than trained shuffled",
        "same": f"costs the same read shuffled at evaluation only as trained shuffled "
        f"(within ±{margin:g})",
        "undecided": "evaluation-only vs trained-shuffled cost undecided",
    }[eval_key]
    eval_text = f"{name}: {eval_words} (evaluation only − trained shuffled {_interval(evaluated)})"
    return SchemeVerdict(
        arms.scheme, key, text, (usable, cost, kept, evaluated), eval_key, eval_text
    )


def _verdict(verdicts: list[SchemeVerdict]) -> Verdict:
    # the first segment says whether anything is decided (judging.undecided_key reads it)
    decided = "undecided" if all(v.key == "undecided" for v in verdicts) else "stated"
    key = "|".join([decided, *(f"{v.scheme}:{v.key}" for v in verdicts)])
    short = " · ".join(f"{SCHEME_NAMES.get(v.scheme, v.scheme)} {PHRASES[v.key]}" for v in verdicts)
    stated = {v.key for v in verdicts if v.key in ("part", "all", "order_free")}
    differ = "the schemes differ" if len({v.key for v in verdicts}) > 1 else "the schemes agree"
    text = "; ".join(v.text for v in verdicts) + (
        f". Between schemes: {differ}." if stated else "."
    )
    return Verdict(key, short, text)


def judge_far_context(cell: judging.CellInput) -> judging.Judged:
    """A cell's verdict: every scheme's usable information and share removed (mid range)."""
    verdicts = [
        judge_scheme(arms, cell.metrics, cell.status, cell.labels, cell.metric)
        for arms in scheme_arms(cell.question)
    ]
    comparisons = tuple(c for v in verdicts for c in v.comparisons)
    return judging.Judged(comparisons, (), _verdict(verdicts))


def _per_cell(q: Question, cells: tuple[Cell, ...], metric: str) -> dict[str, list[SchemeVerdict]]:
    labels = {v.id: v.label for v in q.variants}
    return {
        c.id: [judge_scheme(a, c.metrics, c.status, labels, metric) for a in scheme_arms(q)]
        for c in cells
    }


def far_context_findings(
    q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig
) -> list[Finding]:
    """The mid-range verdict, the evaluation-only comparison, and the long range."""
    found = [judging.finding("Mid range", cells, {c.id: c.verdict for c in cells})]
    per = _per_cell(q, cells, METRIC)
    evaluated = {}
    for cell_id, verdicts in per.items():
        judged = [v for v in verdicts if v.eval_text]
        key = "|".join(f"{v.scheme}:{v.eval_key}" for v in judged) or "undecided"
        text = "; ".join(v.eval_text for v in judged) or (
            "no scheme has usable far context, so there is nothing to compare"
        )
        short = " · ".join(f"{SCHEME_NAMES.get(v.scheme)} {v.eval_key}" for v in judged)
        evaluated[cell_id] = Verdict(key, short or "undecided", text)
    found.append(judging.finding("Trained with vs evaluation only", cells, evaluated))
    long = {cell_id: _verdict(v) for cell_id, v in _per_cell(q, cells, LONG_METRIC).items()}
    found.append(judging.finding("Long range", cells, long))
    return found


def far_context_lines(
    q: Question, cells: tuple[Cell, ...], labels: dict[str, str], config: LabConfig
) -> list[str]:
    """The preset cell's losses per scheme and condition (mid range), as measured."""
    default = next(c for c in cells if c.default)
    parts = []
    for arms in scheme_arms(q):
        values = [
            float(np.mean(default.metrics[a][METRIC]))
            for a in (arms.full, arms.shuffled, arms.eval_only, arms.noinfo)
        ]
        if all(math.isfinite(v) for v in values):
            parts.append(
                f"{SCHEME_NAMES.get(arms.scheme, arms.scheme)} {values[0]:.3f} / "
                f"{values[1]:.3f} / {values[2]:.3f} / {values[3]:.3f}"
            )
    if not parts:
        return []
    return [
        f"Held-out mid-range loss (nats per character), full / trained shuffled / shuffled at "
        f"evaluation only / no far context, at {default.steps} steps: " + "; ".join(parts) + "."
    ]


def plain(cell: Cell) -> str:
    """The first line: each scheme's verdict in a few words (≤ 15 words)."""
    parts = []
    for piece in cell.verdict.key.split("|"):
        if ":" not in piece:
            continue
        scheme, key = piece.split(":", 1)
        parts.append(f"{SHORT_NAMES.get(scheme, scheme)}: {PHRASES.get(key, key)}")
    if not parts or cell.verdict.key.startswith("undecided|"):
        return "Undecided yet: no scheme's share of the far context is decided here."
    return capital("; ".join(parts) + ".")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def clause(cell: Cell) -> str:
    """The cell's verdict in words (no final stop; it opens with a scheme's name, kept as
    written: "NoPE: …")."""
    return cell.verdict.text.rstrip(".")


def sides(cell: Cell, other: Cell, labels: dict[str, str]) -> str:
    """Where the verdict depends on the budget, each scheme that differs at both budgets
    (:func:`~posviz.lab.studies.judging.budget_sides`)."""
    return judging.budget_sides(cell, other, SHORT_NAMES, PHRASES)
