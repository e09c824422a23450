"""The sinks card's arms, settings and extractor, without torch (card ``gu_2025``): what decides
its stored numbers besides the trainer, hashed into its run id (:data:`posviz.lab.studies.
sinks_card.TASK_MODULES`); its words, published numbers and judge live in
:mod:`posviz.lab.studies.sinks_card`, judged again on every load.

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781): α₁ ``= (1/T) Σ_t A_{t,1}`` per head and Sink₁^ε, the share of
heads with ``α₁ > ε`` (§3.2, p. 4–5; ε = 0.3, T = 64). The run is the sinks question's setting
(:mod:`posviz.lab.studies.sinks_arms`) at 600 steps; an arm is a position scheme under a
*condition*: softmax with the BOS, the key-bias slot (their Table 4 "K biases", value 0), or a
value bias (Table 4 "V biases", :class:`posviz.lab.studies.sinks_card_train.ValueBiasBlock`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from posviz.lab.engine.card_inputs import ladder_inputs
from posviz.lab.engine.config import LabConfig
from posviz.lab.studies.sinks_arms import ALPHA, COPY, EPSILON, N_TOKENS, TOKEN_SHARE

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


#: the per-seed inputs the card stores for every arm (:func:`sinks_inputs`)
ALPHA_FIRST, SINK, COPIES, SHARE, LOSS = (
    "alpha_first", "sink_rate", "copy_accuracy", "token_share", "loss",
)  # fmt: skip


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
