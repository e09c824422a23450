"""A lab store entry as the lab writes one, for the tests that read it back.

    from labstore_support import RUN, write_lab_entry

Used by ``tests/test_lab_files.py`` (the store's layout and verified reads) and
``tests/test_tables_local.py`` (``lab:`` sources load like every other table source).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

RUN = "0123456789abcdef"


def write_lab_entry(
    root: Path, run_id: str = RUN, trained_rows: int = 4
) -> tuple[dict, dict[str, np.ndarray]]:
    """Write one entry under ``root``: a table index for one learned table and its snapshots
    (2 seeds × 3 snapshots at steps 0, 10, 20 × 5 rows × 4 dims, the values 0..119); return
    (meta, arrays) as written."""
    from posviz import labfiles

    snaps = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4)
    meta = {
        "run_id": run_id,
        "question_id": "learned",
        "numbers": {"accuracy": [0.5, 0.75]},
        "tables": {
            "learned": {
                "array": "snapshots__learned",
                "steps_array": "snapshot_steps",
                "label": "learned table",
                "trained_rows": trained_rows,
                "steps": 20,
            }
        },
    }
    arrays = {"snapshots__learned": snaps, "snapshot_steps": np.array([0, 10, 20])}
    labfiles.write_entry(root, run_id, meta, arrays)
    return meta, arrays
