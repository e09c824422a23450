"""The attention-sinks question's kind: its readings, judge and findings (kind ``sinks``).

"Why does attention pile onto the first token — is it the positions, or softmax's sum-to-one?"
Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781) measure a head's first-token score ``α₁ = (1/T) Σ_t A_{t,1}``
and Sink₁^ε, the share of heads with ``α₁ > ε`` (§3.2, p. 4–5; ε = 0.3, T = 64); a learnable key
bias (their Table 4, "K biases", p. 9) removes the sink, and every position scheme has one (their
Table 3, p. 8). The lab's version trains one-layer models on the bigram-backcopy task
(:mod:`posviz.lab.sink_task`: only the copies need attention, so a head has nothing to read at
≈ 90 % of the positions); per position scheme (NoPE, learned table, RoPE) softmax with a BOS
token and a key-bias slot with the BOS, and for the learned table and RoPE softmax without a BOS
(the control; :data:`~posviz.lab.studies.sinks_arms.ARMS`).
Training: :mod:`posviz.lab.studies.sinks_question_train`.

Judged per scheme on the mean α₁ over heads (the continuous reading; with two heads Sink₁ takes
only 0, ½ and 1), every difference paired over seeds with its 95 % interval and the ±0.02
equivalence margin (:mod:`posviz.lab.studies.judging`):

* **softmax − key-bias slot** (the cell's verdict): decided above 0 means the sink is softmax's
  sum-to-one (the slot takes it). The control that can fail: the slot's arm must learn the task
  as well — not decided worse than softmax in copy accuracy or held-out loss; otherwise a sink
  removed by a model that learned less says nothing;
* **with − without a BOS** (softmax): above 0 means the sink sits on the BOS token. The control
  that can fail: without a BOS no head may cross ε in any seed (a sink there would mean it is not
  the BOS token's); its α₁ is shown against a uniform head's ``H_T / T``;
* **RoPE / learned table − NoPE** (softmax with the BOS): whether positions change the sink's
  strength. The control that can fail: the arm with positions must beat NoPE (which cannot find
  the previous token in one layer) on the copies, or it has not learned what positions are for;
* **Sink₁ at ε = 0.3**, Gu et al.'s own reading: whether softmax with the BOS has a sink in every
  head of every seed with RoPE and the learned table and the slot in none.

Arms are compared as they stand at each budget (the budget axis says whether more training
changes a verdict); a stalled, collapsed or diverged arm never supports one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.engine import metrics as m
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.measure import Reading
from posviz.lab.engine.results import Cell, Comparison, Finding, Instance, Verdict
from posviz.lab.studies import judging
from posviz.lab.studies.presets import Question
from posviz.lab.studies.sinks_arms import (
    ALPHA,
    ARM_IDS,
    COPY,
    EPSILON,
    TOKEN_SHARE,
    check,
    uniform_alpha,
)

#: every arm is compared as it stands at each budget (module docstring)
AS_IT_STANDS = ARM_IDS
METRIC = "alpha_first"
SINK = "sink_rate"
COPIES = "copy_accuracy"
SHARE = "token_share"
#: the metrics this kind reads, registered beside the engine's (margin 0.02, a share)
SPECS = (
    m.MetricSpec(
        METRIC, "mean first-token attention α₁ over heads", True, True,
        meaning="higher = more of each query's attention on the first token",
    ),
    m.MetricSpec(
        SINK, f"Sink₁ (share of heads with α₁ above {EPSILON:g})", True, True,
        meaning="1 = every head has a first-token sink",
    ),
    m.MetricSpec(COPIES, "held-out accuracy on the back-copies", True, True),
    m.MetricSpec(
        SHARE, "attention a query spends on tokens", True, True,
        meaning="1 = all of it; the rest goes to the key-bias slot",
    ),
)  # fmt: skip
for _spec in SPECS:
    m.METRICS.setdefault(_spec.id, _spec)

SCHEME_NAMES = {"nope": "NoPE", "learned": "learned table", "rope": "RoPE"}
SHORT_NAMES = {"nope": "NoPE", "learned": "learned", "rope": "RoPE"}
#: a scheme's verdict (softmax vs the key-bias slot), by key, in a few words
PHRASES = {
    "slot": "slot removes pile-up",
    "learned_less": "slot arm learned less",
    "no_sink": "no pile-up",
    "same": "slot changes nothing",
    "slot_more": "slot piles up more",
    "undecided": "undecided",
}
#: the BOS and positions findings' keys in a few words (their short form: "RoPE on the BOS")
SHORT_WORDS = {
    "bos": "on the BOS",
    "same": "no BOS effect",
    "sink_without_bos": "control fails",
    "stronger": "more than NoPE",
    "weaker": "less than NoPE",
    "no_copies": "control fails",
    "copies_undecided": "copies undecided",
    "undecided": "undecided",
}


def _short(keys: list[str]) -> str:
    """``"learned on the BOS · RoPE on the BOS"``: each ``scheme:key`` in a few words."""
    words = []
    for scheme, _, key in (k.partition(":") for k in keys):
        words.append(f"{SHORT_NAMES.get(scheme, scheme)} {SHORT_WORDS.get(key, key)}")
    return " · ".join(words)


def train_question_arms(members: Any, **kw: Any) -> Any:
    """The kind's trainer (:func:`posviz.lab.studies.sinks_question_train.
    train_question_arms`), imported when a run trains (it needs torch)."""
    # lazy: the loop imports torch, which judging and the pages never need
    from posviz.lab.studies.sinks_question_train import train_question_arms as train

    return train(members, **kw)


def sink_readings(
    inst: Instance, config: LabConfig, at: Reading
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """α₁ (mean over heads), Sink₁^0.3 (share of heads with α₁ > ε, per seed), the copies'
    accuracy and the attention spent on tokens, at the reading's checkpoint."""
    check(config)
    per_head = np.asarray(inst.per_position[ALPHA][:, at.index], dtype=np.float64)  # (E, L·H)
    return {
        METRIC: inst.heldout_accuracy[ALPHA][:, at.index],
        SINK: (per_head > EPSILON).mean(-1),
        COPIES: inst.heldout_accuracy[COPY][:, at.index],
        SHARE: inst.heldout_accuracy[TOKEN_SHARE][:, at.index],
    }, {}


@dataclass(frozen=True)
class Arms:
    """One scheme's arm ids (``no_bos`` "" where the scheme has no arm without a BOS)."""

    scheme: str
    softmax: str
    key_bias: str
    no_bos: str = ""


def scheme_arms(q: Question) -> list[Arms]:
    """Every scheme's arms, by their variants' conditions, in the question's order."""
    by: dict[str, dict[str, str]] = {}
    for v in q.variants:
        by.setdefault(v.model.scheme, {})[v.condition] = v.id
    return [Arms(s, c["softmax"], c["key_bias"], c.get("no_bos", "")) for s, c in by.items()]


def _interval(c: Comparison) -> str:
    return f"{c.estimate:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"


def _failed(arms: tuple[str, ...], status: dict[str, str], labels: dict[str, str]) -> list[str]:
    return [
        f"{labels[a]} {status.get(a, 'improving')}"
        for a in arms
        if status.get(a, "improving") in judging.FAILED
    ]


def _mean(metrics: dict, arm: str, metric: str) -> float:
    values = metrics.get(arm, {}).get(metric, ())
    return float(np.mean(values)) if len(values) else math.nan


@dataclass(frozen=True)
class SchemeVerdict:
    scheme: str
    key: str
    text: str
    comparisons: tuple[Comparison, ...]


def above_uniform(values: tuple[float, ...], uniform: float) -> str:
    """Whether a softmax arm's α₁ is above a uniform head's (the gate: no sink, nothing to
    remove): ``"a"`` decided above by more than the margin, ``"tie"`` inside ±margin of it,
    ``"b"`` below, ``"unclear"`` undecided (paired over seeds against the constant)."""
    d = paired_difference(list(values), [uniform] * len(values))
    if judging.equivalent(d, m.spec(METRIC).margin):
        return "tie"
    if d.sign() == 0:
        return "unclear"
    return "a" if d.sign() > 0 else "b"


def judge_scheme(
    arms: Arms,
    metrics: dict[str, dict[str, tuple[float, ...]]],
    status: dict[str, str],
    labels: dict[str, str],
    uniform: float,
) -> SchemeVerdict:
    """Softmax − key-bias slot in α₁, gated on softmax having a sink (α₁ above a uniform
    head's), with the slot arm's learning as the control."""
    name = SCHEME_NAMES.get(arms.scheme, arms.scheme)
    sink = judging.compare(metrics, arms.softmax, arms.key_bias, METRIC, labels)
    failed = _failed((arms.softmax, arms.key_bias), status, labels)
    if failed:
        return SchemeVerdict(arms.scheme, "undecided", f"{name}: undecided ({', '.join(failed)})",
                             (sink,))  # fmt: skip
    soft, slot = _mean(metrics, arms.softmax, METRIC), _mean(metrics, arms.key_bias, METRIC)
    gate = above_uniform(metrics[arms.softmax][METRIC], uniform)
    if gate != "a":
        against = f"α₁ {soft:.3f}, a uniform head's {uniform:.3f}"
        if gate == "unclear":  # the interval reaches both sides of the uniform head's
            text = f"{name}: undecided whether softmax piles up ({against}: not decided above it)"
            return SchemeVerdict(arms.scheme, "undecided", text, (sink,))
        text = f"{name}: softmax puts no more than a uniform head on the first token ({against})"
        return SchemeVerdict(arms.scheme, "no_sink", text, (sink,))
    copies = judging.compare(metrics, arms.softmax, arms.key_bias, COPIES, labels)
    loss = judging.compare(metrics, arms.softmax, arms.key_bias, "loss", labels)
    alphas = f"α₁ {soft:.3f} with softmax, {slot:.3f} with the slot: {_interval(sink)}"
    worse = copies.outcome == "a" or loss.outcome == "a"  # softmax decided better: control fails
    control = (
        f"{'the slot arm learned less' if worse else 'the slot arm learned as well'}: copies "
        f"{_mean(metrics, arms.softmax, COPIES):.2f} with softmax, "
        f"{_mean(metrics, arms.key_bias, COPIES):.2f} with the slot ({_interval(copies)}); "
        f"held-out loss {_mean(metrics, arms.softmax, 'loss'):.3f} and "
        f"{_mean(metrics, arms.key_bias, 'loss'):.3f} ({_interval(loss)})"
    )
    if sink.outcome == "a" and worse:
        key, words = "learned_less", "the slot arm piles up less but learned less (says nothing)"
    elif sink.outcome == "a":
        key, words = "slot", "the key-bias slot removes softmax's pile-up on the first token"
    elif sink.outcome == "tie":
        key, words = "same", f"the slot changes nothing (within ±{m.spec(METRIC).margin:g})"
    elif sink.outcome == "b":
        key, words = "slot_more", "the slot arm puts more on the first token"
    else:
        key, words = "undecided", "undecided (the interval contains 0)"
    text = f"{name}: {words} ({alphas}, softmax − slot; {control})"
    return SchemeVerdict(arms.scheme, key, text, (sink, copies, loss))


def _verdict(verdicts: list[SchemeVerdict]) -> Verdict:
    # the first segment says whether anything is decided (judging.undecided_key reads it)
    decided = "undecided" if all(v.key == "undecided" for v in verdicts) else "stated"
    key = "|".join([decided, *(f"{v.scheme}:{v.key}" for v in verdicts)])
    short = " · ".join(f"{SHORT_NAMES.get(v.scheme, v.scheme)} {PHRASES[v.key]}" for v in verdicts)
    return Verdict(key, short, "; ".join(v.text for v in verdicts) + ".")


def judge_sinks(cell: judging.CellInput) -> judging.Judged:
    """A cell's verdict: softmax − key-bias slot in α₁, per scheme."""
    uniform = uniform_alpha(cell.question.default.max_len)
    verdicts = [
        judge_scheme(arms, cell.metrics, cell.status, cell.labels, uniform)
        for arms in scheme_arms(cell.question)
    ]
    comparisons = tuple(c for v in verdicts for c in v.comparisons)
    return judging.Judged(comparisons, (), _verdict(verdicts))


# --------------------------------------------------------------------------- findings


def bos_verdict(q: Question, cell: Cell, labels: dict[str, str], config: LabConfig) -> Verdict:
    """With − without a BOS (softmax) in α₁ per scheme; the no-BOS control fails when a head
    crosses ε in any seed without a BOS."""
    uniform = uniform_alpha(check(config))
    keys, texts = [], []
    for arms in (a for a in scheme_arms(q) if a.no_bos):
        name = SCHEME_NAMES.get(arms.scheme, arms.scheme)
        c = judging.compare(cell.metrics, arms.softmax, arms.no_bos, METRIC, labels)
        failed = _failed((arms.softmax, arms.no_bos), cell.status, labels)
        bare = cell.metrics.get(arms.no_bos, {})
        sinks = bare.get(SINK, ())
        alpha = _mean(cell.metrics, arms.no_bos, METRIC)
        control = (
            f"without a BOS α₁ {alpha:.3f} ({alpha / uniform:.1f} times a uniform head's "
            f"{uniform:.3f}), Sink₁ {_mean(cell.metrics, arms.no_bos, SINK):.2f}"
        )
        if failed:
            key, words = "undecided", f"undecided ({', '.join(failed)})"
        elif len(sinks) and max(sinks) > 0:
            key, words = "sink_without_bos", "a head sinks without a BOS too (the control fails)"
        elif c.outcome == "a":
            key, words = "bos", "the pile-up is on the BOS token"
        elif c.outcome == "tie":
            key, words = "same", "no difference with or without a BOS"
        else:
            key, words = "undecided", "undecided"
        keys.append(f"{arms.scheme}:{key}")
        texts.append(f"{name}: {words} (with − without {_interval(c)}; {control})")
    decided = "undecided" if all(k.endswith(":undecided") for k in keys) else "stated"
    short = _short(keys)
    return Verdict("|".join([decided, *keys]), short, "; ".join(texts) + ".")


_POSITION_WORDS = {
    "a": ("stronger", "piles up more than NoPE"),
    "b": ("weaker", "piles up less than NoPE"),
    "tie": ("same", "piles up as NoPE does"),
}


def positions_verdict(q: Question, cell: Cell, labels: dict[str, str]) -> Verdict:
    """RoPE / learned table − NoPE in α₁ (softmax with the BOS); each must beat NoPE on the
    copies (the control), else it has not learned what its positions are for."""
    by = {a.scheme: a for a in scheme_arms(q)}
    if "nope" not in by:
        return Verdict("undefined", "no NoPE arm", "No arm without positions to compare with.")
    base = by["nope"].softmax
    keys, texts = [], []
    for scheme in (s for s in by if s != "nope"):
        arm = by[scheme].softmax
        name = SCHEME_NAMES.get(scheme, scheme)
        c = judging.compare(cell.metrics, arm, base, METRIC, labels)
        copies = judging.compare(cell.metrics, arm, base, COPIES, labels)
        failed = _failed((arm, base), cell.status, labels)
        said = (
            f"{name} − NoPE {_interval(c)}; copies {_mean(cell.metrics, arm, COPIES):.2f} vs "
            f"NoPE's {_mean(cell.metrics, base, COPIES):.2f} ({_interval(copies)})"
        )
        if failed:
            key, words = "undecided", f"undecided ({', '.join(failed)})"
        elif copies.outcome in ("b", "tie"):
            key, words = "no_copies", "does not beat NoPE on the copies (the control fails)"
        elif copies.outcome != "a":
            key, words = "copies_undecided", "not decided above NoPE on the copies, so no verdict"
        else:
            key, words = _POSITION_WORDS.get(c.outcome, ("undecided", "undecided"))
        keys.append(f"{scheme}:{key}")
        texts.append(f"{name}: {words} ({said})")
    decided = "undecided" if all(k.endswith(":undecided") for k in keys) else "stated"
    short = _short(keys)
    nope = _mean(cell.metrics, base, METRIC)
    text = "; ".join(texts) + f". NoPE's own α₁ with the BOS: {nope:.3f}."
    return Verdict("|".join([decided, *keys]), short, text)


def sink_rate_verdict(q: Question, cell: Cell) -> Verdict:
    """Gu et al.'s Sink₁^0.3 per arm (mean [min, max] over seeds); the key says whether softmax
    with the BOS sinks in every head of every seed with RoPE and the learned table, the slot in
    none."""
    parts, every = [], True
    for arms in scheme_arms(q):
        for arm, is_softmax in ((arms.softmax, True), (arms.key_bias, False)):
            values = cell.metrics.get(arm, {}).get(SINK, ())
            if not len(values):
                every = False
                continue
            if arms.scheme != "nope":
                every &= (min(values) == 1.0) if is_softmax else (max(values) == 0.0)
            kind = "softmax" if is_softmax else "slot"
            parts.append(
                f"{SCHEME_NAMES.get(arms.scheme, arms.scheme)} {kind} {np.mean(values):.2f} "
                f"[{min(values):.2f}, {max(values):.2f}]"
            )
    key = "every_seed" if every else "not_every_seed"
    lead = (
        "softmax with the BOS has Sink₁ = 1 with RoPE and the learned table in every seed, the "
        "slot 0"
        if every
        else "not every seed: softmax's Sink₁ with RoPE or the learned table is below 1 somewhere, "
        "or the slot's above 0"
    )
    text = f"{lead} (mean [min, max] over seeds: {'; '.join(parts)})"
    return Verdict(key, key.replace("_", " "), text)


def sinks_findings(
    q: Question, cells: tuple[Cell, ...], bounds: dict, config: LabConfig
) -> list[Finding]:
    """Softmax vs the slot (the cells' verdicts), the BOS, the positions, and Sink₁."""
    labels = {v.id: v.label for v in q.variants}
    return [
        judging.finding("Softmax vs a key-bias slot", cells, {c.id: c.verdict for c in cells}),
        judging.finding(
            "With vs without a BOS", cells,
            {c.id: bos_verdict(q, c, labels, config) for c in cells},
        ),
        judging.finding(
            "Positions (softmax with the BOS)", cells,
            {c.id: positions_verdict(q, c, labels) for c in cells},
        ),
        judging.finding("Sink₁ at ε = 0.3", cells, {c.id: sink_rate_verdict(q, c) for c in cells}),
    ]  # fmt: skip


def sinks_lines(
    q: Question, cells: tuple[Cell, ...], labels: dict[str, str], config: LabConfig
) -> list[str]:
    """The preset cell's readings per scheme, as measured."""
    default = next(c for c in cells if c.default)
    parts = []
    for arms in scheme_arms(q):
        a = [_mean(default.metrics, x, METRIC) for x in (arms.softmax, arms.key_bias)]
        bare = f" / {_mean(default.metrics, arms.no_bos, METRIC):.3f}" if arms.no_bos else ""
        copies = [_mean(default.metrics, x, COPIES) for x in (arms.softmax, arms.key_bias)]
        share = _mean(default.metrics, arms.key_bias, SHARE)
        if all(math.isfinite(v) for v in (*a, *copies, share)):
            parts.append(
                f"{SCHEME_NAMES.get(arms.scheme, arms.scheme)} α₁ {a[0]:.3f} / {a[1]:.3f}{bare}, "
                f"copies {copies[0]:.2f} / {copies[1]:.2f}, the slot takes {1 - share:.0%} of the "
                "attention"
            )
    if not parts:
        return []
    return [
        f"At {default.steps} steps, α₁ softmax / key-bias slot (/ softmax without a BOS), and "
        "copy accuracy softmax / slot: " + "; ".join(parts) + "."
    ]


# --------------------------------------------------------------------------- words


def plain(cell: Cell) -> str:
    """The first line: each scheme's verdict in a few words (≤ 15 words)."""
    keys = judging.scheme_keys(cell)
    if not keys or cell.verdict.key.startswith("undecided|"):
        return "Undecided yet: softmax and the key-bias slot are not told apart here."
    if set(keys.values()) == {"slot"}:
        return (
            "Softmax's sum-to-one: with a key-bias slot, no scheme piles attention on the first "
            "token."
        )
    parts = [f"{SHORT_NAMES.get(s, s)}: {PHRASES.get(k, k)}" for s, k in keys.items()]
    return capital("; ".join(parts) + ".")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def clause(cell: Cell) -> str:
    """The cell's verdict in words (no final stop; it opens with a scheme's name)."""
    return cell.verdict.text.rstrip(".")


def sides(cell: Cell, other: Cell, labels: dict[str, str]) -> str:
    """Where the verdict depends on the budget, each scheme that differs at both budgets
    (:func:`~posviz.lab.studies.judging.budget_sides`)."""
    return judging.budget_sides(cell, other, SHORT_NAMES, PHRASES)
