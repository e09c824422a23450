"""Getting learned position tables: the bundled model, the hub (range reads), local files, uploads.

``load_table(source)`` is the entry point; see :mod:`posviz.tables.load` for its one pass
(resolve the source → open its files → the registry picks the tensor → read → align).

Inside ``posviz``, ``tables`` may import ``posviz.encodings`` (the synthetic ``sinusoidal:NxD``
source, the model-type families) and the utilities; ``encodings`` never imports ``tables``.
"""

from posviz.tables.load import (
    fetch_config,
    load_table,
    read_named_tensor,
    table_from_npy_bytes,
    table_from_upload,
)
from posviz.tables.sources import source_revision
from posviz.tables.synthetic import SYNTHETIC_MAX_POSITIONS, SYNTHETIC_MAX_WIDTH
from posviz.tables.table import PositionTable, SetAside

__all__ = [
    "SYNTHETIC_MAX_POSITIONS",
    "SYNTHETIC_MAX_WIDTH",
    "PositionTable",
    "SetAside",
    "fetch_config",
    "load_table",
    "read_named_tensor",
    "source_revision",
    "table_from_npy_bytes",
    "table_from_upload",
]
