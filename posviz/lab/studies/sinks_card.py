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
committed before the card's first run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from posviz.analysis.difference import Difference, paired_difference
from posviz.lab.engine.card_inputs import ladder_inputs
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import Condition, Published
from posviz.lab.studies.sinks_arms import (
    ALPHA,
    COPY,
    EPSILON,
    N_TOKENS,
    TOKEN_SHARE,
    uniform_alpha,
)

if TYPE_CHECKING:
    from posviz.lab.studies.papers import CheckOutcome

CARD_ID = "gu_2025"
#: What decides the card's numbers besides the engine's source: the task, the attentions, the
#: question's loop pieces the card's trainer reuses, and the card's own trainer and extractor.
TASK_MODULES = (
    "posviz.lab.sink_task",
    "posviz.lab.attention_variants",
    "posviz.lab.studies.sinks_arms",
    "posviz.lab.studies.sinks_question_train",
    "posviz.lab.studies.sinks_card",
    "posviz.lab.studies.sinks_card_train",
)

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

SCHEMES = ("nope", "learned", "rope")
#: the schemes that can find the previous token in one layer: the key and value biases' arms
BIASED = ("learned", "rope")
CONDITIONS = ("softmax", "key_bias", "value_bias")
#: every arm, ``(scheme, condition)``: NoPE only with softmax (it cannot learn the copies in one
#: layer, so a bias arm of it would remove or keep a sink of a model that learned nothing)
ARMS = tuple([(s, "softmax") for s in SCHEMES] + [(s, c) for c in CONDITIONS[1:] for s in BIASED])
SCHEME_LABELS = {"nope": "NoPE", "learned": "learned table", "rope": "RoPE"}
CONDITION_LABELS = {
    "softmax": "softmax with the BOS",
    "key_bias": "key bias (value 0) with the BOS",
    "value_bias": "value bias with the BOS",
}

#: The card's run: the sinks question's default (``presets.SINKS.default``, tested equal) at its
#: 3× budget; the condition rides in ``extra`` (hashed into the run id with the rest).
CARD_CONFIG = LabConfig(
    task="kback", k=1, vocab=N_TOKENS, min_len=64, max_len=64, eval_lengths=(64,), width=32,
    heads=2, layers=1, steps=600, batch=16, lr=2e-2, seeds=3, eval_batch=100,
)  # fmt: skip


def arm_id(scheme: str, condition: str) -> str:
    """``rope_value_bias``: a card arm's id."""
    return f"{scheme}_{condition}"


def arm_config(condition: str, config: LabConfig = CARD_CONFIG) -> LabConfig:
    """``config`` for an arm of ``condition`` (carried in ``extra``).

    Raises:
        ValueError: an unknown condition.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"condition={condition!r}; choose one of {', '.join(CONDITIONS)}.")
    return dataclasses.replace(config, extra=(("condition", condition),))


def condition_of(config: LabConfig) -> str:
    """The condition an arm's ``config`` carries (:func:`arm_config`).

    Raises:
        ValueError: a config without one of :data:`CONDITIONS`.
    """
    condition = dict(config.extra).get("condition", "")
    if condition not in CONDITIONS:
        raise ValueError(
            f"config.extra={config.extra!r} names no condition of the sinks card; build it with "
            "arm_config(condition)."
        )
    return condition


def card_arms(config: LabConfig = CARD_CONFIG) -> tuple[tuple[str, str, str, LabConfig], ...]:
    """``(id, label, scheme, settings)`` of every arm of :data:`ARMS`."""
    return tuple(
        (
            arm_id(scheme, condition),
            f"{SCHEME_LABELS[scheme]}, {CONDITION_LABELS[condition]}",
            scheme,
            arm_config(condition, config),
        )
        for scheme, condition in ARMS
    )


def train_card_arms(members, **kwargs):
    """The card's trainer (:func:`posviz.lab.studies.sinks_card_train.train_card_arms`), imported
    when it trains (torch is heavy; listing and judging cards needs none)."""
    # lazy: torch, only when the card trains
    from posviz.lab.studies import sinks_card_train

    return sinks_card_train.train_card_arms(members, **kwargs)


ALPHA_FIRST, SINK, COPIES, SHARE, LOSS = (
    "alpha_first", "sink_rate", "copy_accuracy", "token_share", "loss",
)  # fmt: skip
INPUTS = (
    (ALPHA_FIRST, "mean first-token score α₁ over the 2 heads, 100 held-out sequences of T = 64"),
    (SINK, f"Sink₁: share of the heads with α₁ above {EPSILON:g} (Gu et al.'s ε)"),
    (COPIES, "held-out accuracy on the back-copies (the targets that need attention)"),
    (SHARE, "attention a query spends on tokens (the rest goes to the key bias)"),
    (LOSS, "held-out loss per token over all 64 targets, nats"),
)


def sinks_inputs(arm, heldout: Mapping[object, object]) -> dict[str, np.ndarray]:
    """The judge's per-seed inputs of one arm at the last checkpoint, and α₁ and the copies at
    every budget of the ladder, from its trainer's held-out readings (the sinks question's
    shape: column 0 is step 0, then the checkpoints)."""

    def series(key: object, name: str = "accuracy") -> np.ndarray:
        return np.asarray(getattr(heldout[key], name), dtype=np.float64)[:, 1:]

    per_head = np.asarray(heldout[ALPHA].per_position, dtype=np.float64)[:, -1]  # type: ignore[attr-defined]
    alpha, copies = series(ALPHA), series(COPY)
    return {
        ALPHA_FIRST: alpha[:, -1],
        SINK: (per_head > EPSILON).mean(-1),
        COPIES: copies[:, -1],
        SHARE: series(TOKEN_SHARE)[:, -1],
        LOSS: series(arm.config.max_len, "loss")[:, -1],
        **ladder_inputs(ALPHA_FIRST, arm, alpha),
        **ladder_inputs(COPIES, arm, copies),
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


def _numbers(d: Difference, threshold: float = 0.0) -> dict[str, float]:
    return {"estimate": d.estimate, "low": d.low, "high": d.high, "threshold": threshold}


def _mean(values, scheme: str, condition: str, name: str) -> float:
    return float(np.mean(values[arm_id(scheme, condition)][name]))


def _sinks(values, uniform: float) -> list[Condition]:
    """(1): softmax with the BOS above a uniform head, every scheme."""
    out = []
    for scheme in SCHEMES:
        alpha = np.asarray(values[arm_id(scheme, "softmax")][ALPHA_FIRST], dtype=np.float64)
        d = paired_difference(alpha, np.full(alpha.shape, uniform))
        out.append(
            Condition(
                f"{SCHEME_LABELS[scheme]} with softmax and the BOS has a sink (α₁ "
                f"{alpha.mean():.3f} − a uniform head's {uniform:.4f}, whole interval above 0): "
                f"{d.interval_text()}",
                d.low > 0,
                _numbers(d, uniform),
            )
        )
    return out


def _key_bias(values, scheme: str) -> tuple[Condition, bool]:
    """(2) for one scheme: softmax − key bias in α₁, and whether the copies' control held."""
    name = SCHEME_LABELS[scheme]
    soft, slot = values[arm_id(scheme, "softmax")], values[arm_id(scheme, "key_bias")]
    sink = paired_difference(soft[ALPHA_FIRST], slot[ALPHA_FIRST])
    copies = paired_difference(soft[COPIES], slot[COPIES])
    control = copies.low <= 0
    said = (
        f"α₁ {np.mean(soft[ALPHA_FIRST]):.3f} with softmax, {np.mean(slot[ALPHA_FIRST]):.3f} with "
        f"the key bias; copies {np.mean(soft[COPIES]):.2f} and {np.mean(slot[COPIES]):.2f}, "
        f"softmax − key bias {copies.interval_text()}"
    )
    numbers = _numbers(sink) | {"copies_low": copies.low, "control": float(control)}
    if not control:
        text = (
            f"{name}: not judged — the control fails, the key-bias arm learned the copies less "
            f"({said}); softmax − key bias in α₁ {sink.interval_text()}"
        )
        return Condition(text, False, numbers), False
    text = (
        f"{name}: the key bias takes the sink (softmax − key bias in α₁, whole interval above 0; "
        f"{said}, the control holds): {sink.interval_text()}"
    )
    return Condition(text, sink.low > 0, numbers), True


def _value_bias(values, scheme: str, uniform: float) -> list[Condition]:
    """(3) for one scheme: the value-bias arm keeps a sink, above the key-bias arm's α₁."""
    name = SCHEME_LABELS[scheme]
    vb = np.asarray(values[arm_id(scheme, "value_bias")][ALPHA_FIRST], dtype=np.float64)
    kb = np.asarray(values[arm_id(scheme, "key_bias")][ALPHA_FIRST], dtype=np.float64)
    above = paired_difference(vb, np.full(vb.shape, uniform))
    over = paired_difference(vb, kb)
    return [
        Condition(
            f"{name} with a value bias keeps a sink (α₁ {vb.mean():.3f} − a uniform head's "
            f"{uniform:.4f}, whole interval above 0): {above.interval_text()}",
            above.low > 0,
            _numbers(above, uniform),
        ),
        Condition(
            f"{name}: a value bias does not take it as the key bias does (value bias − key bias "
            f"in α₁, whole interval above 0): {over.interval_text()}",
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
    for scheme in BIASED:
        d = paired_difference(
            values[arm_id(scheme, "softmax")][ALPHA_FIRST],
            values[arm_id(scheme, "value_bias")][ALPHA_FIRST],
        )
        lines.append(
            f"shown, not judged: {SCHEME_LABELS[scheme]} softmax − value bias in α₁ "
            f"{d.interval_text()} (Gu et al.: 18.18 % and 17.53 %)"
        )
    rates = "; ".join(
        f"{arm_id(s, c)} {np.mean(values[arm_id(s, c)][SINK]):.2f}"
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
    conditions, failed_controls = _sinks(values, uniform), []
    for scheme in BIASED:
        condition, control = _key_bias(values, scheme)
        conditions.append(condition)
        if not control:
            failed_controls.append(condition)
    for scheme in BIASED:
        conditions += _value_bias(values, scheme, uniform)
    judged = [c for c in conditions if c.numbers and c not in failed_controls]
    shown = tuple(conditions + _shown(values))
    if not all(c.holds for c in judged):
        return CheckOutcome(DISAGREES, shown)
    if failed_controls:
        reason = "; ".join(c.text for c in failed_controls)
        return CheckOutcome(NOT_JUDGED, shown, reason=f"{reason}; train longer before comparing.")
    return CheckOutcome(AGREES, shown)


def sinks_card_run_id() -> str:
    """The registered card's run id (:func:`posviz.lab.studies.cards.card_run_id`)."""
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.cards import card_run_id
    from posviz.lab.studies.papers import GU_2025  # lazy: the same cycle

    return card_run_id(GU_2025)
