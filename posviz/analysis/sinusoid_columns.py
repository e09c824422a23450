"""Which columns of a sinusoid move least, and how far: the numbers behind the sinusoid page's
"do the last dimensions barely change?" section (tensor2tensor issue #1591's ≈0.007 comment).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.encodings.sinusoidal import column_pair, pair_columns


def column_label(d_model: int, column: int, *, layout: str) -> str:
    """``"dim j (sin, pair i)"`` for column ``j`` of a ``d_model``-wide sinusoid in ``layout``."""
    i, kind = column_pair(d_model, column, layout=layout)
    return f"dim {column} ({kind}, pair {i})"


def slowest_columns(d_model: int, *, layout: str) -> list[int]:
    """The columns of the four slowest sin/cos pairs (the last 8 columns when interleaved)."""
    if layout == "interleaved":
        return list(range(max(0, d_model - 8), d_model))
    sin_cols, cos_cols = pair_columns(d_model, layout=layout)
    return sorted(set(sin_cols[-4:].tolist()) | set(cos_cols[-4:].tolist()))


def slow_columns_frame(table: np.ndarray, *, layout: str) -> pd.DataFrame:
    """How far each slow column moves: PE at 0, the middle and the end, and its range.

    ``table`` is ``(n, d)``; one row per column of :func:`slowest_columns`; columns ``column``,
    ``kind``, ``PE[0]``, ``PE[mid]``, ``PE[n-1]``, ``|PE[mid] − PE[0]|``, ``range over positions``.
    """
    n, d = table.shape
    mid = n // 2
    rows = []
    for j in slowest_columns(d, layout=layout):
        column = np.asarray(table[:, j], dtype=np.float64)  # (n,)
        rows.append(
            {
                "column": j,
                "kind": column_label(d, j, layout=layout).split("(")[1].rstrip(")"),
                "PE[0]": column[0],
                f"PE[{mid}]": column[mid],
                f"PE[{n - 1}]": column[n - 1],
                f"|PE[{mid}] − PE[0]|": abs(column[mid] - column[0]),
                "range over positions": float(np.ptp(column)),
            }
        )
    return pd.DataFrame(rows)
