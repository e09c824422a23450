"""Getting learned position tables: the bundled model, the hub (range reads), local files, uploads.

``load_table(source)`` is the entry point; see :mod:`posviz.tables.load`.
"""

from posviz.tables.load import load_table, table_from_upload
from posviz.tables.table import PositionTable, SetAside

__all__ = ["PositionTable", "SetAside", "load_table", "table_from_upload"]
