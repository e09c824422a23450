"""The lab's position mechanisms: the callables a family's :class:`LabMechanism` trains with.

The math half of the family registry (:mod:`posviz.encodings.families` keeps the words: labels,
questions, blurbs, colours). A lab run's id hashes this module's source together with the formula
module of every family its arms use (:func:`posviz.encodings.families.family_math`), never the
registry's words, so rewording a family's page retrains nothing.

Two mechanisms need no callable: ``learned_table`` (an ``nn.Embedding`` of positions, trained
from ``N(0, init_std²)`` by the lab's own model, :mod:`posviz.lab.engine.model`) and ``none``
(NoPE: Kazemnejad et al. 2023, "The Impact of Positional Encoding on Length Generalization in
Transformers", https://arxiv.org/abs/2305.19466; a causal model reads order from its mask only).
Each callable below is a thin wrapper of its family's formula module, at the lab's sizes.
"""

from __future__ import annotations

import numpy as np

from posviz.encodings import p_rope
from posviz.encodings.alibi import alibi_bias, alibi_slopes
from posviz.encodings.sinusoidal import sinusoidal
from posviz.encodings.t5 import t5_relative_bucket

LAB_T5_BUCKETS = 16  # half of T5's 32: the lab's sequences are short
LAB_T5_MAX_DISTANCE = 64
LAB_P_ROPE_FRACTION = p_rope.GEMMA4_FRACTION  # Gemma 4's p; the paper's best 0.25-RoPE too


def sinusoid_table(rows: int, width: int) -> np.ndarray:
    """``(rows, width)`` float32 sinusoid table (Vaswani et al. 2017, section 3.5)."""
    return sinusoidal(rows, width, dtype=np.float32)


def alibi_lab_bias(n: int, heads: int, causal: bool) -> np.ndarray:
    """``(heads, n, n)`` ALiBi logits with the paper's geometric slopes (Press et al. 2022)."""
    return alibi_bias(n, alibi_slopes(heads), causal=causal)


def t5_lab_buckets(n: int, causal: bool) -> tuple[np.ndarray, int]:
    """``((n, n) bucket of key j for query i, number of buckets)``: T5's relative buckets
    (Raffel et al. 2020, section 2.1), :data:`LAB_T5_BUCKETS` of them up to
    :data:`LAB_T5_MAX_DISTANCE`."""
    pos = np.arange(n)
    buckets = t5_relative_bucket(
        pos[None, :] - pos[:, None],
        bidirectional=not causal,
        num_buckets=LAB_T5_BUCKETS,
        max_distance=LAB_T5_MAX_DISTANCE,
    )  # (n, n): query i, key j
    return buckets, LAB_T5_BUCKETS


def p_rope_lab_inv_freq(head_dim: int) -> np.ndarray:
    """``(head_dim // 2,)`` p-RoPE angles per position at Gemma 4's ``p`` (Barbero et al. 2025)."""
    return p_rope.p_rope_inv_freq(head_dim, fraction=LAB_P_ROPE_FRACTION)
