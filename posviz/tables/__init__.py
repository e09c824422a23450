"""Getting learned position tables: the bundled model, the hub (range reads), local files, uploads,
lab runs.

``load_table(source)`` is the entry point; see :mod:`posviz.tables.load` for its one pass
(resolve the source → open its files → the registry picks the tensor → read → align) and
:mod:`posviz.tables.sources` for the one source grammar every caller shares.

Inside ``posviz``, ``tables`` may import ``posviz.encodings`` (the synthetic ``sinusoidal:NxD``
source, the model-type families) and the utilities (``posviz.labfiles`` for ``lab:`` sources);
``encodings`` never imports ``tables``.
"""

from posviz.tables.lab_source import lab_table, list_lab_sources
from posviz.tables.load import (
    fetch_config,
    load_table,
    read_named_tensor,
    table_from_npy_bytes,
    table_from_upload,
)
from posviz.tables.sources import GRAMMAR, source_kind, source_revision
from posviz.tables.synthetic import (
    SYNTHETIC_MAX_POSITIONS,
    SYNTHETIC_MAX_WIDTH,
    SyntheticShape,
    parse_synthetic,
)
from posviz.tables.table import PositionTable, SetAside

__all__ = [
    "GRAMMAR",
    "SYNTHETIC_MAX_POSITIONS",
    "SYNTHETIC_MAX_WIDTH",
    "PositionTable",
    "SetAside",
    "SyntheticShape",
    "fetch_config",
    "lab_table",
    "list_lab_sources",
    "load_table",
    "parse_synthetic",
    "read_named_tensor",
    "source_kind",
    "source_revision",
    "table_from_npy_bytes",
    "table_from_upload",
]
