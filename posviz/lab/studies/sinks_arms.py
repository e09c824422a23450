"""The attention-sinks question's arms, task settings and readings, without torch: what its preset,
kind and trainer share (:mod:`posviz.lab.studies.sinks_question`, ``sinks_question_train``).

Gu et al., "When Attention Sink Emerges in Language Models: An Empirical View" (ICLR 2025,
https://arxiv.org/abs/2410.10781): a head's first-token score ``α₁ = (1/T) Σ_t A_{t,1}`` and
Sink₁^ε, the share of heads with ``α₁ > ε`` (§3.2, p. 4–5; ε = 0.3, T = 64). An arm is a
position scheme (NoPE, learned table, RoPE) under a *condition*: softmax attention with a BOS
token first, a key-bias slot (softmax over one extra learnable key whose value is 0, their
Table 4 "K biases", p. 9) with the BOS, or softmax without a BOS (the control). The task is the
bigram-backcopy of :mod:`posviz.lab.sink_task` at its defaults (29 plain tokens, 3 triggers).

The engine's :class:`~posviz.lab.engine.config.LabConfig` names only its own tasks, so the
question's config carries the task as ``kback`` with ``k = 1`` and ``vocab`` = the chain's 32
output tokens (:func:`check`): the engine reads from it the chance level (1/32, the floor of
"learned") and a label; the trainer draws the bigram-backcopy sequences itself.
"""

from __future__ import annotations

import numpy as np

from posviz.lab.engine.config import LabConfig
from posviz.lab.sink_task import bigram_chain

#: softmax with a BOS, the key-bias slot with a BOS, softmax without a BOS (the control)
CONDITIONS = ("softmax", "key_bias", "no_bos")
#: the attention each condition trains with (:data:`posviz.lab.attention_variants.ATTENTIONS`)
ATTENTION = {"softmax": "softmax", "key_bias": "key_bias", "no_bos": "softmax"}
#: whether each condition's sequences start with the BOS token
BOS = {"softmax": True, "key_bias": True, "no_bos": False}
SCHEMES = ("nope", "learned", "rope")
#: the chain's output tokens (plain tokens and triggers; the BOS is one more input)
N_TOKENS = bigram_chain().n_tokens
#: Gu et al.'s threshold ε (§3.2, p. 5)
EPSILON = 0.3

#: held-out readings that are not evaluation lengths, stored beside the length's entry in the
#: engine's ``heldout`` shape (marked not a length: no per-position figure reads them)
ALPHA = "alpha_first"  # accuracy: mean α₁ over heads; per_position: α₁ per layer × head
COPY = "copy"  # accuracy / loss on the back-copy targets
TOKEN_SHARE = "token_share"  # accuracy: the attention a query spends on tokens (1 − slot share)
READINGS = (ALPHA, COPY, TOKEN_SHARE)
NOT_A_LENGTH = "a reading of the sinks question, not an evaluation length"


def arm_id(scheme: str, condition: str) -> str:
    """The question's arm id for ``scheme`` under ``condition`` (``"rope_key_bias"``)."""
    return f"{scheme}_{condition}"


#: every arm of the question, ``(scheme, condition)``: NoPE has no arm without a BOS — it keeps
#: the default answer inside its minute (8 arms cut into two calls of 4, not 9 into 5 and 4);
#: the learned table and RoPE, which could mark the first position, carry that control
ARMS = tuple((s, c) for s in SCHEMES for c in CONDITIONS if (s, c) != ("nope", "no_bos"))
ARM_IDS = tuple(arm_id(s, c) for s, c in ARMS)


def uniform_alpha(length: int) -> float:
    """α₁ of a head that spreads every query evenly over the keys it sees (causal):
    ``(1/T) Σ_{t=1}^{T} 1/t = H_T / T`` (0.0741 at T = 64)."""
    if length < 1:
        raise ValueError(f"length={length} must be ≥ 1.")
    return float(np.sum(1.0 / np.arange(1, length + 1)) / length)


def check(config: LabConfig) -> int:
    """The sequence length ``T`` of a config of the question (training and held-out).

    Raises:
        ValueError: a config that does not carry the bigram-backcopy task (module docstring).
    """
    t = config.max_len
    if (
        config.task != "kback"
        or config.k != 1
        or config.vocab != N_TOKENS
        or config.min_len != t
        or config.eval_lengths != (t,)
    ):
        raise ValueError(
            f"task={config.task!r}, k={config.k}, vocab={config.vocab}, lengths "
            f"{config.min_len}–{t}, eval_lengths={config.eval_lengths}: the sinks question "
            f"carries its task as task='kback', k=1, vocab={N_TOKENS}, min_len = max_len and "
            "eval_lengths = (max_len,)."
        )
    return t
