"""``lab:<run-id>[/<table>[/<seed>[/<step>]]]``: a learned table a lab run trained, from its store.

The run store's files are read and checked by :mod:`posviz.labfiles` (every file against its
SHA-256; a corrupted run is a ``ValueError`` naming the run id, never a result), so a ``lab:``
source loads like every other source, from the library, the command line and the app alike.
Defaults: the run's first learned table, seed 0, the last snapshot.
"""

from __future__ import annotations

from pathlib import Path

from posviz import labfiles
from posviz.tables.table import PositionTable

LAB_PREFIX = labfiles.PREFIX
LAB_HELP = labfiles.SPEC_HELP
LAB_MODEL_TYPE = "posviz-lab"


def lab_table(source: str, *, root: Path | None = None) -> PositionTable:
    """The learned table a ``lab:`` source names, from the store at ``root``.

    ``root`` defaults to :func:`posviz.labfiles.default_root` (``$POSVIZ_LAB_DIR``).

    Returns:
        ``PositionTable`` with ``matrix`` ``(rows, p)`` float32 (``p`` = the model width, or the
        concatenated part's), ``kind="learned"``, ``source`` the full
        ``lab:<run>/<table>/<seed>/<step>``, and notes on which rows training never used.
    Raises:
        ValueError: a malformed source (the message shows the grammar), no such run, a corrupted
            run, or a table, seed or step the run does not have (the message lists what exists).
    """
    table = labfiles.read_table(source.strip(), root=root)
    return PositionTable(
        matrix=table.matrix,
        source=table.source,
        kind="learned",
        model_type=LAB_MODEL_TYPE,
        notes=table.notes,
    )


def list_lab_sources(*, root: Path | None = None) -> list[str]:
    """``lab:<run-id>/<table>`` of every readable stored run's learned tables, newest first."""
    return labfiles.list_tables(root=root)
