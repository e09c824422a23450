"""Gu et al.'s attention-sink result as a paper check's data and judge (card ``gu_2025``), fixed
before any run of the card.

Gu, Pang, Du, Liu, Zhang, Du, Wang & Lin, "When Attention Sink Emerges in Language Models: An
Empirical View" (ICLR 2025, https://arxiv.org/abs/2410.10781). A head's first-token score is
``α₁ = (1/T) Σ_t A_{t,1}`` and Sink₁^ε the share of heads with ``α₁ > ε`` (§3.2, p. 4–5; ε = 0.3,
T = 64). Three of their tables are the card's published numbers (:data:`PUBLISHED`):

* Table 3 (p. 8): every position scheme they tried has sinks (Sink₁ 18.18–35.53 %, NoPE 20.35 %);
* Table 4 (p. 9): a learnable key bias whose value is 0 ("K biases", ``[k^s; K]`` with
  ``[0; V]``) takes the sink off the first token (Sink₁ 0.00 %, 73.34 % on the bias), a value
  bias (``Softmax(QKᵀ/√d_h + M) V + v^s``) does not (17.53 %, softmax 18.18 %);
* Table 6 (p. 10): sigmoid attention without normalisation has none (0.44 %, proxy scores),
  with normalisation it has (30.24 %) — shown, not trained (:data:`CAVEAT` says why).

No PDF of the paper is kept here: the numbers are **read from a transcription of the paper** in a
public repository (:data:`READ_AT`), whose page marks are the pages given.

The lab's run is the sinks question's setting (:mod:`posviz.lab.studies.sinks_arms`, the
bigram-backcopy task of :mod:`posviz.lab.sink_task`, one layer of width 32 with 2 heads, T = 64,
a BOS first, batch 16, lr 2e-2, 3 seeds) at its longer budget, 600 steps (the sinks pilot's
chosen setting: at the question's 200 the learned table's sink has not formed yet). Arms
(:data:`ARMS`): softmax × {NoPE, learned table, RoPE}; the key-bias slot (the question's
``key_bias`` attention) × {learned, RoPE}; a value bias (:class:`posviz.lab.studies.
sinks_card_train.ValueBiasModel`) × {learned, RoPE}. Trained by :func:`train_card_arms`
(→ :func:`posviz.lab.studies.sinks_card_train.train_card_arms`) through the one runner and
judged by :func:`judge_card` on mean α₁ over heads, every difference paired over seeds
(:func:`posviz.analysis.difference.paired_difference`). The criterion (:data:`CRITERION`) was
committed before the card's first run. The arms, settings and extractor live in
:mod:`posviz.lab.studies.sinks_card_arms` (hashed into the run id with the trainer); this
module's words and judge are not (a stored card is judged again on every load).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from posviz.analysis.difference import Difference, paired_difference
from posviz.lab.engine.results import Condition, Published
from posviz.lab.studies.sinks_arms import EPSILON, uniform_alpha
from posviz.lab.studies.sinks_card_arms import (
    ALPHA_FIRST,
    ARMS,
    BIASED,
    CARD_CONFIG,
    CONDITION_LABELS,
    CONDITIONS,
    COPIES,
    LOSS,
    SCHEME_LABELS,
    SCHEMES,
    SHARE,
    SINK,
    arm_config,
    arm_id,
    card_arms,
    condition_of,
    sinks_inputs,
)

if TYPE_CHECKING:
    from posviz.lab.studies.papers import CheckOutcome

CARD_ID = "gu_2025"
#: What decides the card's numbers besides the engine's source: the task, the attentions, the
#: question's loop pieces the card's trainer reuses, the card's arms and extractor, and its
#: trainer. Not this module: its words and judge are judged again on every load.
TASK_MODULES = (
    "posviz.lab.sink_task",
    "posviz.lab.attention_variants",
    "posviz.lab.studies.sinks_arms",
    "posviz.lab.studies.own_loop",
    "posviz.lab.studies.sinks_question_train",
    "posviz.lab.studies.sinks_card_arms",
    "posviz.lab.studies.sinks_card_train",
)
#: re-exported for the card's registration and tests (defined with the arms)
__all__ = [
    "ARMS", "BIASED", "CARD_CONFIG", "CONDITIONS", "CONDITION_LABELS", "SCHEMES",
    "SCHEME_LABELS", "arm_config", "arm_id", "card_arms", "condition_of", "sinks_inputs",
]  # fmt: skip

#: The transcription the numbers were read in, at the commit they were read at (no PDF kept).
_TRANSCRIPTION = (
    "https://github.com/viktor-shcherb/msc_thesis/blob/a6577d10fb277f0ceae4327a2d0b6de951bed76b/"
    "references/2025-04-attention-sink-emerges/sections/"
)
READ_AT = _TRANSCRIPTION + "07_effects-of-model-architecture.md"
SETUP_AT = _TRANSCRIPTION + "04_effects-of-optimization.md"
_READ = "read from a transcription, sections/07_effects-of-model-architecture.md"
_SETTING = (
    "LLaMA2-style decoders, 10 blocks of width 768 with 8 heads (≈ 60M parameters without "
    "embeddings), 5B tokens of the Pile at context 2048, 20k steps, AdamW with weight decay 0.1; "
    "Sink₁ at ε = 0.3 on 100 held-out sequences of T = 64 without a BOS (§4, p. 5–6)"
)
PUBLISHED = (
    Published(
        table=f"Table 3 (p. 8, {_READ})",
        setting=_SETTING + "; the position scheme replaced, Rotary the default",
        numbers=(
            ("NoPE", 20.35),
            ("Absolute PE", 32.73),
            ("Learnable PE", 33.13),
            ("Relative PE", 35.53),
            ("ALiBi", 20.78),
            ("Rotary", 18.18),
        ),
        unit="Sink₁ (%, share of heads with α₁ > 0.3)",
        read_at=READ_AT,
    ),
    Published(
        table=f"Table 4 (p. 9, {_READ})",
        setting=_SETTING + "; Rotary; the attention in each head changed",
        numbers=(
            ("Softmax (default)", 18.18),
            ("learnable sink token", 0.00),
            ("learnable sink token, Sink₁* on the token", 74.12),
            ("KV biases", 0.04),
            ("KV biases, Sink₁* on the biases", 72.76),
            ("K biases, v = 0", 0.00),
            ("K biases, v = 0, Sink₁* on the bias", 73.34),
            ("V biases", 17.53),
        ),
        unit="Sink₁ (%) on the first token; Sink₁* on the bias's position",
        read_at=READ_AT,
    ),
    Published(
        table=f"Table 6 (p. 10, {_READ})",
        setting=_SETTING + "; Rotary; the similarity and normaliser of attention changed",
        numbers=(
            ("softmax", 18.18),
            ("sigmoid without normalisation (Sink₁*, proxy scores)", 0.44),
            ("sigmoid with normalisation", 30.24),
        ),
        unit="Sink₁ (%; * on proxy scores A_tj / Σ_j' A_tj')",
        read_at=READ_AT,
    ),
)


def train_card_arms(members, **kwargs):
    """The card's trainer (:func:`posviz.lab.studies.sinks_card_train.train_card_arms`), imported
    when it trains (torch is heavy; listing and judging cards needs none)."""
    # lazy: torch, only when the card trains
    from posviz.lab.studies import sinks_card_train

    return sinks_card_train.train_card_arms(members, **kwargs)


INPUTS = (
    (ALPHA_FIRST, "mean first-token score α₁ over the 2 heads, 100 held-out sequences of T = 64"),
    (SINK, f"Sink₁: share of the heads with α₁ above {EPSILON:g} (Gu et al.'s ε)"),
    (COPIES, "held-out accuracy on the back-copies (the targets that need attention)"),
    (SHARE, "attention a query spends on tokens (the rest goes to the key bias)"),
    (LOSS, "held-out loss per token over all 64 targets, nats"),
)

#: each input's name in the card's "This run" lines (words: read at display, never hashed)
INPUT_WORDS = {
    ALPHA_FIRST: "α₁",
    SINK: "Sink₁",
    COPIES: "copies",
    SHARE: "attention on tokens",
}


CRITERION = (
    "Judged on the mean first-token score α₁ over heads, every difference paired over the 3 seeds "
    "with its whole 95% interval. Agrees in shape when (1) softmax with the BOS has a sink with "
    "every scheme — NoPE, the learned table and RoPE: α₁ above a uniform causal head's H₆₄/64 = "
    "0.0741; (2) the key bias takes it, for the learned table and RoPE: softmax − key bias above "
    "0, with a control that can fail: the key-bias arm's copy accuracy must not be decided below "
    "softmax's (softmax − key bias in copies with its whole interval above 0 fails the control: a "
    "sink removed by a model that learned less does not count, and that condition is not judged); "
    "(3) a value bias does not take it, for the learned table and RoPE: the value-bias arm's α₁ "
    "above the uniform head's, and value bias − key bias above 0. Any judged condition that fails "
    "makes it disagree; otherwise a failed control makes it unjudgeable. NoPE's copies are shown "
    "(in one layer it cannot find the previous token), only its sink is judged; softmax − value "
    "bias and Sink₁ are shown, not judged."
)


def _arrays(values: Mapping[str, Mapping[str, np.ndarray]]) -> str:
    """Why the values cannot be judged (a missing arm or input, < 2 seeds, NaN), or ``""``."""
    for scheme, condition in ARMS:
        arm = arm_id(scheme, condition)
        for name in (ALPHA_FIRST, COPIES):
            v = values.get(arm, {}).get(name)
            a = None if v is None else np.asarray(v, dtype=np.float64).ravel()
            if a is None or a.size < 2 or not np.isfinite(a).all():
                return f"arm {arm!r} has no finite {name!r} on ≥ 2 seeds."
    return ""


def _numbers(d: Difference, **extra: float) -> dict[str, float]:
    return {"estimate": d.estimate, "low": d.low, "high": d.high, "threshold": 0.0, **extra}


def _mean(values, scheme: str, condition: str, name: str) -> float:
    return float(np.mean(values[arm_id(scheme, condition)][name]))


def _above_uniform(rule: str, alpha: np.ndarray, uniform: float) -> Condition:
    """``rule`` holds when α₁ − a uniform head's ``H_T/T`` has its whole interval above 0."""
    d = paired_difference(alpha, np.full(alpha.shape, uniform))
    return Condition(
        f"{rule}: α₁ {alpha.mean():.3f} − a uniform head's {uniform:.4f} = {d.interval_text()}, "
        "whole interval above 0",
        d.low > 0,
        _numbers(d, uniform=uniform),
    )


def _sinks(values, uniform: float) -> list[Condition]:
    """(1): softmax with the BOS above a uniform head, every scheme."""
    return [
        _above_uniform(
            f"{SCHEME_LABELS[s]} softmax sinks",
            np.asarray(values[arm_id(s, "softmax")][ALPHA_FIRST], dtype=np.float64),
            uniform,
        )
        for s in SCHEMES
    ]


def _key_bias(values, scheme: str) -> tuple[Condition, str]:
    """(2) for one scheme: softmax − key bias in α₁, and why its control failed ("" if held:
    the key-bias arm's copies not decided below softmax's)."""
    name, rule = SCHEME_LABELS[scheme], f"{SCHEME_LABELS[scheme]} key bias takes the sink"
    soft, slot = values[arm_id(scheme, "softmax")], values[arm_id(scheme, "key_bias")]
    sink = paired_difference(soft[ALPHA_FIRST], slot[ALPHA_FIRST])
    copies = paired_difference(soft[COPIES], slot[COPIES])
    said = (
        f"{name} copies {np.mean(soft[COPIES]):.2f} with softmax, {np.mean(slot[COPIES]):.2f} "
        f"with the key bias (softmax − key bias {copies.interval_text()})"
    )
    numbers = _numbers(sink, copies_low=copies.low, control=float(copies.low <= 0))
    if copies.low > 0:
        text = (
            f"{rule}: not judged, the control fails — the key-bias arm learned the copies less "
            f"({said}); softmax − key bias in α₁ {sink.interval_text()}"
        )
        return Condition(text, False, numbers), said
    text = (
        f"{rule}: softmax − key bias in α₁ {sink.interval_text()}, whole interval above 0 (α₁ "
        f"{np.mean(soft[ALPHA_FIRST]):.3f} and {np.mean(slot[ALPHA_FIRST]):.3f}; the control "
        f"holds: {said})"
    )
    return Condition(text, sink.low > 0, numbers), ""


def _value_bias(values, scheme: str, uniform: float) -> list[Condition]:
    """(3) for one scheme: the value-bias arm keeps a sink, above the key-bias arm's α₁."""
    name = SCHEME_LABELS[scheme]
    vb = np.asarray(values[arm_id(scheme, "value_bias")][ALPHA_FIRST], dtype=np.float64)
    kb = np.asarray(values[arm_id(scheme, "key_bias")][ALPHA_FIRST], dtype=np.float64)
    over = paired_difference(vb, kb)
    return [
        _above_uniform(f"{name} value bias keeps a sink", vb, uniform),
        Condition(
            f"{name} value bias above key bias: value bias − key bias in α₁ "
            f"{over.interval_text()}, whole interval above 0",
            over.low > 0,
            _numbers(over),
        ),
    ]


def _shown(values) -> list[Condition]:
    """Lines shown, not judged (no numbers): NoPE's copies, softmax − value bias, Sink₁."""
    nope, learned = (_mean(values, s, "softmax", COPIES) for s in ("nope", "learned"))
    gap = paired_difference(
        values[arm_id("learned", "softmax")][COPIES], values[arm_id("nope", "softmax")][COPIES]
    )
    learns = "does not learn" if gap.low > 0 else "is not decided below the learned table on"
    lines = [
        f"shown, not judged: NoPE {learns} the copies (accuracy {nope:.2f}, the learned table's "
        f"{learned:.2f}; learned − NoPE {gap.interval_text()}): in one layer without positions "
        "it cannot find the previous token, so only its sink is judged"
    ]
    gaps = "; ".join(
        f"{SCHEME_LABELS[s]} "
        + paired_difference(
            values[arm_id(s, "softmax")][ALPHA_FIRST], values[arm_id(s, "value_bias")][ALPHA_FIRST]
        ).interval_text()
        for s in BIASED
    )
    lines.append(
        f"shown, not judged: softmax − value bias in α₁, {gaps} (Gu et al.'s Sink₁: 18.18 % and "
        "17.53 %)"
    )
    rates = "; ".join(
        f"{SCHEME_LABELS[s]} with {CONDITION_LABELS[c].removesuffix(' with the BOS')} "
        f"{np.mean(values[arm_id(s, c)][SINK]):.2f}"
        for s, c in ARMS
        if SINK in values.get(arm_id(s, c), {})
    )
    if rates:
        lines.append(f"shown, not judged: Sink₁ at ε = {EPSILON:g}, mean over seeds: {rates}")
    return [Condition(line, True, {}) for line in lines]


def judge_card(values: Mapping[str, Mapping[str, np.ndarray]]) -> CheckOutcome:
    """The verdict on the card's per-seed numbers (``values[arm id][input]`` = ``(E,)``), by
    :data:`CRITERION`. Never raises for bad numbers: a missing arm, one seed or NaN gives
    "cannot be judged" with the reason."""
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.papers import AGREES, DISAGREES, NOT_JUDGED, CheckOutcome

    missing = _arrays(values)
    if missing:
        return CheckOutcome(NOT_JUDGED, reason=missing)
    uniform = uniform_alpha(CARD_CONFIG.max_len)
    conditions, failed_controls, why = _sinks(values, uniform), [], []
    for scheme in BIASED:
        condition, failed = _key_bias(values, scheme)
        conditions.append(condition)
        if failed:
            failed_controls.append(condition)
            why.append(failed)
    for scheme in BIASED:
        conditions += _value_bias(values, scheme, uniform)
    judged = [c for c in conditions if c.numbers and c not in failed_controls]
    shown = tuple(conditions + _shown(values))
    if not all(c.holds for c in judged):
        return CheckOutcome(DISAGREES, shown)
    if failed_controls:
        reason = (
            "the key bias's control fails — its arm learned the copies less than softmax's, so "
            f"the sink it removes does not count: {'; '.join(why)}; train longer before comparing."
        )
        return CheckOutcome(NOT_JUDGED, shown, reason=reason)
    return CheckOutcome(AGREES, shown)


def sinks_card_run_id() -> str:
    """The registered card's run id (:func:`posviz.lab.studies.cards.card_run_id`)."""
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.cards import card_run_id
    from posviz.lab.studies.papers import GU_2025  # lazy: the same cycle

    return card_run_id(GU_2025)
