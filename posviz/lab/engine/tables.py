"""Learned tables of finished lab runs, addressed by a :class:`~posviz.lab.engine.store.RunStore`.

Spec: ``lab:<run-id>[/<table>[/<seed>[/<step>]]]``; defaults: the run's first learned table,
seed 0, the final step. The ``lab:`` source of :func:`posviz.tables.load_table` does the reading
(:func:`posviz.tables.lab_table`, checked by :mod:`posviz.labfiles`); these two functions only
let lab code name the store by object instead of by directory.
"""

from __future__ import annotations

from posviz.lab.engine.store import RunStore
from posviz.tables import PositionTable, lab_table, list_lab_sources


def load_lab_table(spec: str, *, store: RunStore | None = None) -> PositionTable:
    """The learned table of a stored run, as a ``PositionTable`` every view can open.

    Raises:
        ValueError: malformed spec, unknown or corrupted run, a run without a learned table, a
            table, seed or step that the run does not have (the message lists what exists).
    """
    return lab_table(spec, root=(store or RunStore()).root)


def list_lab_tables(*, store: RunStore | None = None) -> list[str]:
    """Specs (``lab:<run-id>/<table>``) of every stored run's learned tables, newest first."""
    return list_lab_sources(root=(store or RunStore()).root)
