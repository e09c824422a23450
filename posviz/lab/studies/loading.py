"""Stored runs judged again when they are read: one registry, keyed by the stored kind's name.

The run store (:mod:`posviz.lab.engine.store`) reads and writes arrays and judges nothing; a
run's verdicts, findings and words are recomputed from its stored arrays by the current code
whenever a page, the CLI or the runner reads it (``RunStore.load(run_id, judge=rejudge)``).
:data:`REJUDGE` names the function per kind of stored run (``question``, ``paper_check``, the
names :func:`posviz.lab.engine.store.study_run_id` keys by); adding a kind of study adds one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from posviz.lab.engine.results import CardResult, LabResult
from posviz.lab.engine.store import RunStore
from posviz.lab.studies.cards import rejudge_card
from posviz.lab.studies.questions import rejudge as rejudge_question

#: kind of stored run → ``result -> result`` judged again from its arrays.
REJUDGE: dict[str, Callable[[Any], Any]] = {
    "question": rejudge_question,
    "paper_check": rejudge_card,
}
#: the stored kind's name of each result type (as the store writes it).
KIND_OF: dict[type, str] = {LabResult: "question", CardResult: "paper_check"}


def rejudge(result: Any) -> Any:
    """``result`` judged again by the judge registered for its kind (:data:`REJUDGE`).

    Raises:
        ValueError: a result of a kind no judge is registered for.
    """
    kind = KIND_OF.get(type(result), "")
    if kind not in REJUDGE:
        raise ValueError(f"no judge for stored runs of kind {kind or type(result).__name__!r}.")
    return REJUDGE[kind](result)


def load_judged(store: RunStore, run_id: str) -> LabResult | None:
    """A stored question run, judged again (:meth:`RunStore.load` with :func:`rejudge`)."""
    return store.load(run_id, judge=rejudge)


def load_judged_card(store: RunStore, run_id: str) -> CardResult | None:
    """A stored paper-check run, judged again (:meth:`RunStore.load_card`)."""
    return store.load_card(run_id, judge=rejudge)
