"""Learned tables of finished lab runs as :class:`~posviz.tables.PositionTable` sources.

Spec: ``lab:<run-id>[/<table>[/<seed>[/<step>]]]``; defaults: the run's first learned table,
seed 0, the final step. ``<step>`` is a training step at which a snapshot was kept. Reading and
checking the files is :func:`posviz.labfiles.read_table`'s (the same code serves the ``lab:``
source of :func:`posviz.tables.load_table`).
"""

from __future__ import annotations

from posviz import labfiles
from posviz.lab.store import RunStore
from posviz.tables import PositionTable

PREFIX = labfiles.PREFIX


def load_lab_table(spec: str, *, store: RunStore | None = None) -> PositionTable:
    """The learned table of a stored run, as a ``PositionTable`` every view can open.

    Returns:
        ``PositionTable`` with ``matrix`` ``(table_rows, p)`` (``p`` = width, or the concatenated
        part's width), ``kind="learned"``, ``source`` the full spec.
    Raises:
        ValueError: malformed spec, unknown or corrupted run, a run without a learned table, a
            table, seed or step that the run does not have (the message lists what exists).
    """
    store = store or RunStore()
    table = labfiles.read_table(spec, root=store.root)
    return PositionTable(
        matrix=table.matrix,
        source=table.source,
        kind="learned",
        model_type="posviz-lab",
        notes=table.notes,
    )


def list_lab_tables(*, store: RunStore | None = None) -> list[str]:
    """Specs (``lab:<run-id>/<table>``) of every stored run's learned tables, newest first."""
    return labfiles.list_tables(root=(store or RunStore()).root)
