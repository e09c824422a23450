"""Answer a preset question: train its variants (or load the stored run) and summarise."""

from __future__ import annotations

from collections.abc import Callable

from posviz.lab.config import LabConfig
from posviz.lab.results import LabResult, Progress
from posviz.lab.store import RunStore


def run_question(
    question_id: str,
    *,
    config: LabConfig | None = None,
    store: RunStore | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> LabResult:
    """Train every variant of a question over its seeds, evaluate held-out, summarise, store.

    Returns the stored result at once when one exists for (question, config, code version).

    Raises:
        ValueError: unknown question or invalid config (the message names the setting).
        LabStopped: ``should_stop()`` returned true (nothing is stored).
    """
    raise NotImplementedError("run_question is being written (issue #10)")
