"""The family registry: one :class:`FamilySpec` per positional-encoding family, one id everywhere.

A family is one thing in the code. Its id (``"sinusoidal"``, ``"learned"``, ``"rope"``,
``"alibi"``, ``"t5"``, ``"nope"`` …) is the same in the lab's ``ModelConfig.scheme``, the Compare
page, the URL of its page and the tables registry. Whatever needs to know "which families exist"
reads :data:`FAMILIES`; nothing keeps its own list.

How the lab uses a family is a :class:`LabMechanism`: the lab's tiny transformer
(:mod:`posviz.lab.model`) knows only these mechanisms, never family names, so a new family trains
in the lab by registering one here. ``module`` names the formula module, whose source is hashed
into the lab's run ids (:func:`code_modules`): editing a formula re-trains, never returns an old
result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from posviz.encodings.alibi import alibi_bias, alibi_slopes
from posviz.encodings.rope import default_inv_freq
from posviz.encodings.sinusoidal import sinusoidal
from posviz.encodings.t5 import t5_relative_bucket

MechanismKind = Literal["none", "table", "learned_table", "rotary", "bias", "learned_bucket_bias"]

LAB_T5_BUCKETS = 16  # half of T5's 32: the lab's sequences are short
LAB_T5_MAX_DISTANCE = 64


@dataclass(frozen=True)
class LabMechanism:
    """How the lab's transformer puts a family's positions in (one of six mechanisms).

    Attributes:
        kind: ``"none"`` (no positions), ``"table"`` (fixed vectors added/concatenated at the
            input), ``"learned_table"`` (an ``nn.Embedding`` of positions), ``"rotary"`` (queries
            and keys rotated by position-dependent angles), ``"bias"`` (fixed additive attention
            logits), ``"learned_bucket_bias"`` (a learned scalar per relative-distance bucket and
            head, added to the attention logits).
        table: ``(rows, width) -> (rows, width)`` float array, for ``"table"``.
        inv_freq: ``head_dim -> (head_dim // 2,)`` angle per position of each rotary pair, for
            ``"rotary"`` (a zero frequency leaves its pair unrotated).
        bias: ``(n_positions, heads, causal) -> (heads, n, n)`` additive logits, for ``"bias"``
            (``-inf`` above the diagonal when causal is allowed but not required: the lab adds its
            own causal mask).
        buckets: ``(n_positions, causal) -> ((n, n) int bucket of key j for query i, n_buckets)``,
            for ``"learned_bucket_bias"``.
    """

    kind: MechanismKind
    table: Callable[[int, int], np.ndarray] | None = None
    inv_freq: Callable[[int], np.ndarray] | None = None
    bias: Callable[[int, int, bool], np.ndarray] | None = None
    buckets: Callable[[int, bool], tuple[np.ndarray, int]] | None = None

    @property
    def absolute(self) -> bool:
        """True when positions are vectors at the input (they can be concatenated or re-added)."""
        return self.kind in ("table", "learned_table")


@dataclass(frozen=True)
class FamilySpec:
    """One positional-encoding family: what it is called, where it lives, how each view uses it.

    Attributes:
        id: the one id used everywhere (lab scheme, Compare, URLs).
        label: display name.
        module: the formula module (``posviz.encodings.…``); hashed into lab run ids.
        page: the page that explains it (``pages/….py``), or None with the reason in ``missing``.
        lab: how the lab trains with it, or None with the reason in ``missing``.
        references: keys of :data:`posviz.references.REFERENCES`.
        missing: ``"page" | "comparison" | "lab"`` → why this family has none.
    """

    id: str
    label: str
    module: str
    page: str | None
    lab: LabMechanism | None
    references: tuple[str, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)


def _sinusoid_table(rows: int, width: int) -> np.ndarray:
    return sinusoidal(rows, width, dtype=np.float32)


def _alibi(n: int, heads: int, causal: bool) -> np.ndarray:
    return alibi_bias(n, alibi_slopes(heads), causal=causal)


def _t5_buckets(n: int, causal: bool) -> tuple[np.ndarray, int]:
    pos = np.arange(n)
    buckets = t5_relative_bucket(
        pos[None, :] - pos[:, None],
        bidirectional=not causal,
        num_buckets=LAB_T5_BUCKETS,
        max_distance=LAB_T5_MAX_DISTANCE,
    )  # (n, n): query i, key j
    return buckets, LAB_T5_BUCKETS


FAMILIES: dict[str, FamilySpec] = {
    spec.id: spec
    for spec in (
        FamilySpec(
            "nope",
            "NoPE (no positions)",
            "posviz.encodings.families",
            "pages/nope.py",
            LabMechanism("none"),
            ("haviv_2022",),
        ),
        FamilySpec(
            "learned",
            "learned table (nn.Embedding)",
            "posviz.encodings.families",
            "pages/learned.py",
            LabMechanism("learned_table"),
            ("so_nn_embedding",),
        ),
        FamilySpec(
            "sinusoidal",
            "sinusoid",
            "posviz.encodings.sinusoidal",
            "pages/sinusoidal.py",
            LabMechanism("table", table=_sinusoid_table),
            ("vaswani_2017",),
        ),
        FamilySpec(
            "rope",
            "RoPE",
            "posviz.encodings.rope",
            "pages/rope.py",
            LabMechanism("rotary", inv_freq=default_inv_freq),
            ("su_2021",),
        ),
        FamilySpec(
            "alibi",
            "ALiBi",
            "posviz.encodings.alibi",
            "pages/alibi.py",
            LabMechanism("bias", bias=_alibi),
            ("press_2022",),
        ),
        FamilySpec(
            "t5",
            "T5 buckets",
            "posviz.encodings.t5",
            "pages/t5_buckets.py",
            LabMechanism("learned_bucket_bias", buckets=_t5_buckets),
            ("raffel_2020",),
        ),
    )
}


def family(family_id: str) -> FamilySpec:
    """The spec with this id.

    Raises:
        ValueError: unknown id (lists the known ones).
    """
    if family_id not in FAMILIES:
        raise ValueError(f"No encoding family {family_id!r}; choose one of {', '.join(FAMILIES)}.")
    return FAMILIES[family_id]


def lab_schemes() -> tuple[str, ...]:
    """Ids of the families the lab can train with, in registry order."""
    return tuple(spec.id for spec in FAMILIES.values() if spec.lab is not None)


def lab_mechanism(family_id: str) -> LabMechanism:
    """The lab mechanism of a family.

    Raises:
        ValueError: unknown id, or a family the lab cannot train (the message says why).
    """
    spec = family(family_id)
    if spec.lab is None:
        why = spec.missing.get("lab", "it has no lab mechanism")
        raise ValueError(f"The lab cannot train with {spec.label}: {why}.")
    return spec.lab


def code_modules() -> tuple[str, ...]:
    """The formula modules of every family (hashed into lab run ids), without repeats."""
    return tuple(dict.fromkeys(spec.module for spec in FAMILIES.values()))
