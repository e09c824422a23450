"""O'Connor & Andreas's far-context result as a paper check's data and judge (card
``oconnor_2021``).

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), Fig. 2 (p. 5) and Fig. 4 (p. 7), mid-range condition: a model
*trained and evaluated* with its far context's words shuffled loses part of what the far
context gives (41 %: "shuffle all" +0.10 bits of the 0.26 the far context is worth), not all of
it, and the same shuffle applied to a model trained on intact text at *evaluation time only*
costs more (+0.22 bits). The numbers are :data:`~posviz.lab.studies.far_context.FIGURE_2` and
``FIGURE_4``, each found on its row and page of the PDF by ``tests/test_lab_far_context.py``.

The lab's run (:data:`CARD_CONFIG`, the setting ``scripts/pilot_far_context.py`` measured at far =
near = 16 characters) trains, per scheme (NoPE, learned table, RoPE): *full*, *shuffle-all*
(trained with the far context shuffled) and *no information*; the full model is also read with
the far context shuffled. Trained by :func:`posviz.lab.studies.far_context_train.
train_card_arms` through the one runner. The criterion (:data:`CRITERION`) was written after
that pilot had measured this setting: it states the paper's shape, three conditions per scheme,
and is not tuned to the pilot's numbers (its RoPE share's interval reaches past 100 %).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from posviz.analysis.difference import paired_difference
from posviz.lab.engine.card_inputs import ladder_inputs
from posviz.lab.engine.results import Condition
from posviz.lab.studies import far_context as fc

if TYPE_CHECKING:
    from posviz.lab.studies.papers import CheckOutcome

CARD_ID = "oconnor_2021"
#: What decides the card's numbers besides the engine's source: the windows and ablations, and
#: the training loop (hashed into the card's run id).
TASK_MODULES = (
    "posviz.lab.studies.far_context",
    "posviz.lab.studies.own_loop",
    "posviz.lab.studies.far_context_train",
)
SCHEMES = ("nope", "learned", "rope")
CONDITIONS = ("full", "shuffle_all", "noinfo")
LABELS = {"nope": "no positions (NoPE)", "learned": "learned table", "rope": "RoPE"}
CONDITION_LABELS = {
    "full": "full far context",
    "shuffle_all": "far context shuffled (trained so)",
    "noinfo": "no far context",
}


@dataclass(frozen=True)
class FarConfig:
    """One arm: a scheme trained under one condition on windows of ``far`` + separator +
    ``near`` characters (flat, as the engine's ``LabConfig``: the one runner reads its seeds,
    steps and the sizes :func:`posviz.lab.engine.run.step_cpu_s` weighs).

    Raises:
        ValueError: a setting out of range (the message names it).
    """

    scheme: str
    condition: str
    far: int = 16
    near: int = 16
    seeds: int = 3
    first_seed: int = 0
    width: int = 32
    heads: int = 2
    layers: int = 2
    batch: int = 16
    lr: float = 1e-2
    steps: int = 1200
    eval_batch: int = 256

    def __post_init__(self) -> None:
        if self.condition not in CONDITIONS:
            raise ValueError(f"condition={self.condition!r}; choose one of {CONDITIONS}.")
        for name in ("far", "near", "seeds", "width", "heads", "layers", "batch", "steps",
                     "eval_batch"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number ≥ 1.")
        if self.near < 2 or self.width % self.heads or (self.width // self.heads) % 2:
            raise ValueError(
                f"near={self.near} must be ≥ 2 (a mid and a long range), and width={self.width} "
                f"÷ heads={self.heads} an even head size (RoPE rotates pairs)."
            )

    @property
    def max_len(self) -> int:
        """The model's input length: far + separator + near − 1 (no information: near)."""
        return self.near if self.condition == "noinfo" else self.far + self.near

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        """Every arm's held-out numbers are keyed by the text window's length."""
        return (self.far + self.near,)

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


#: The card's run: far = near = 16 characters, 3 seeds, 1,200 steps (the pilot's second setting).
CARD_CONFIG = FarConfig("rope", "full")


def arm_id(scheme: str, condition: str) -> str:
    return f"{scheme}_{condition}"


def card_arms(config: FarConfig = CARD_CONFIG) -> tuple[tuple[str, str, str, FarConfig], ...]:
    """``(id, label, scheme, settings)`` of every scheme × condition."""
    return tuple(
        (
            arm_id(scheme, condition),
            f"{LABELS[scheme]}, {CONDITION_LABELS[condition]}",
            scheme,
            dataclasses.replace(config, scheme=scheme, condition=condition),
        )
        for scheme in SCHEMES
        for condition in CONDITIONS
    )


def train_card_arms(members, **kwargs):
    """The card's trainer (:func:`posviz.lab.studies.far_context_train.train_card_arms`),
    imported when it trains (torch is heavy; listing and judging cards needs none)."""
    # lazy: torch, only when the card trains
    from posviz.lab.studies import far_context_train

    return far_context_train.train_card_arms(members, **kwargs)


INPUTS = (
    ("mid", "held-out loss (nats per character) on the first half of the near part's targets"),
    ("long", "held-out loss on the second half of the near part's targets"),
    (
        "mid_shuffled",
        "the same model's mid-range loss with the far context shuffled at evaluation only",
    ),
)


def far_inputs(arm, heldout: Mapping[int, object]) -> dict[str, np.ndarray]:
    """The judge's per-seed inputs of one arm at the last checkpoint (and ``mid`` at every
    budget of the ladder)."""
    held = heldout[arm.config.far + arm.config.near]
    mid = np.asarray(held.mid, dtype=np.float64)  # type: ignore[attr-defined]
    return {
        "mid": mid[:, -1],
        "long": np.asarray(held.long, dtype=np.float64)[:, -1],  # type: ignore[attr-defined]
        "mid_shuffled": np.asarray(held.mid_shuffled, dtype=np.float64)[:, -1],  # type: ignore[attr-defined]
        **ladder_inputs("mid", arm, mid),
    }


CRITERION = (
    "Judged only when the far context gives usable information to at least one scheme in the "
    "mid range (no information − full, the whole paired 95% interval over seeds above 0); the "
    "schemes it gives none are named and not judged. Agrees in shape when, for every scheme it "
    "gives some, (1) the model trained with the far context shuffled loses some of it (shuffled "
    "− full above 0), (2) keeps some of it (no information − shuffled above 0) — the paper: 41% "
    "lost — and (3) the full model read with the far context shuffled at evaluation only does "
    "worse than the model trained shuffled (evaluation-only − trained-shuffled above 0; the "
    "paper: +0.22 vs +0.10 bits). Every condition on whole paired 95% intervals; the long range "
    "is shown, not judged."
)


def _condition(text: str, a: np.ndarray, b: np.ndarray) -> Condition:
    d = paired_difference(a, b)
    return Condition(
        f"{text}: {d.interval_text()}",
        d.low > 0,
        {"estimate": d.estimate, "low": d.low, "high": d.high, "threshold": 0.0},
    )


def judge_card(values: Mapping[str, Mapping[str, np.ndarray]]) -> CheckOutcome:
    """The verdict on the card's per-seed numbers (``values[arm id][input]``), by
    :data:`CRITERION`; never raises for bad numbers (the check's own test for missing or
    non-finite inputs runs first)."""
    # lazy: papers imports this module (a cycle at import time)
    from posviz.lab.studies.papers import AGREES, DISAGREES, NOT_JUDGED, CheckOutcome

    def v(scheme: str, condition: str, name: str = "mid") -> np.ndarray:
        return np.asarray(values[arm_id(scheme, condition)][name], dtype=np.float64)

    using, unused, conditions = [], [], []
    for scheme in SCHEMES:
        usable = paired_difference(v(scheme, "noinfo"), v(scheme, "full"))
        (using if usable.low > 0 else unused).append((scheme, usable))
    if not using:
        listed = "; ".join(f"{LABELS[s]} {d.interval_text()}" for s, d in unused)
        return CheckOutcome(
            NOT_JUDGED,
            reason=(
                "the far context gives no scheme usable information in the mid range (no "
                f"information − full: {listed}); train longer or with a shorter far part."
            ),
        )
    for scheme, usable in using:
        name = LABELS[scheme]
        full, shuffled, none = v(scheme, "full"), v(scheme, "shuffle_all"), v(scheme, "noinfo")
        share = fc.fieller_ratio(shuffled - full, none - full)
        conditions += [
            _condition(
                f"{name} trained shuffled loses some of the far context's "
                f"{usable.estimate:+.3f} nats ({share.percent_text()} removed; shuffled − full, "
                "whole interval above 0)",
                shuffled,
                full,
            ),
            _condition(
                f"{name} trained shuffled keeps some of it (no information − shuffled, whole "
                "interval above 0)",
                none,
                shuffled,
            ),
            _condition(
                f"{name} read shuffled at evaluation only does worse than trained shuffled "
                "(evaluation-only − trained-shuffled, whole interval above 0)",
                v(scheme, "full", "mid_shuffled"),
                shuffled,
            ),
        ]
    for scheme, usable in unused:
        conditions.append(
            Condition(
                f"{LABELS[scheme]} is left out: the far context gives it no usable information (no "
                f"information − full {usable.interval_text()})",
                True,
                {},
            )
        )
    judged = [c for c in conditions if c.numbers]
    verdict = AGREES if all(c.holds for c in judged) else DISAGREES
    return CheckOutcome(verdict, tuple(conditions))
