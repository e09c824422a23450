"""The far-context question's arms and windows, without torch: what its preset, kind and trainer
share (:mod:`posviz.lab.studies.far_context_question`, ``far_context_question_train``).

O'Connor & Andreas, "What Context Features Can Transformer Language Models Use?" (ACL 2021,
https://arxiv.org/abs/2106.08367), §2 eq. 10, p. 3: a window is ``far`` characters, a separator,
then ``near`` ordered characters whose losses count; mid range = the first half of them, long
range = the second half. A run's window is its config's ``max_len`` = ``far`` + :data:`NEAR`.
"""

from __future__ import annotations

import numpy as np

from posviz.lab.engine.config import LabConfig

#: the ordered characters after the separator whose losses count (the rest of ``max_len`` is far)
NEAR = 16
#: what an arm trains and is evaluated on: the far context intact, shuffled (trained and
#: evaluated so), absent (no information), or intact in training and shuffled at evaluation only
CONDITIONS = ("full", "shuffle_all", "noinfo", "eval_shuffled")
#: the schemes the question compares, and each arm's id suffix by condition
SCHEMES = ("nope", "learned", "rope")
SUFFIXES = {"full": "full", "shuffle_all": "shuffled", "noinfo": "noinfo", "eval_shuffled": "eval"}


def arm_id(scheme: str, condition: str) -> str:
    """The question's arm id for ``scheme`` under ``condition`` (``"learned_shuffled"``)."""
    return f"{scheme}_{SUFFIXES[condition]}"


#: every arm of the question
ARM_IDS = tuple(arm_id(s, c) for s in SCHEMES for c in CONDITIONS)


def eval_lengths(far: int) -> tuple[int, int]:
    """The evaluation lengths read: the whole window, and its mid-range prefix (a causal
    model's loss on the first ``NEAR // 2`` targets is its loss on that prefix)."""
    return far + NEAR, far + NEAR // 2


def split(config: LabConfig) -> tuple[int, int]:
    """``(far, near)`` of a config's window (``max_len`` = far + :data:`NEAR`).

    Raises:
        ValueError: a window with no far context, or eval lengths other than the two read.
    """
    far = config.max_len - NEAR
    if far < 1 or config.min_len != config.max_len or config.task != "lm":
        raise ValueError(
            f"task={config.task!r}, min_len={config.min_len}, max_len={config.max_len}: the far-"
            f"context question needs task 'lm' and min_len = max_len > {NEAR} (far + {NEAR})."
        )
    if config.eval_lengths != eval_lengths(far):
        raise ValueError(f"eval_lengths must be {eval_lengths(far)} (whole window, mid range).")
    return far, NEAR


def long_range(whole: np.ndarray, mid: np.ndarray) -> np.ndarray:
    """The long-range mean loss from the whole window's and the mid range's: ``2 · whole −
    mid`` (two halves of ``NEAR // 2`` targets each)."""
    return 2.0 * np.asarray(whole, dtype=np.float64) - np.asarray(mid, dtype=np.float64)
