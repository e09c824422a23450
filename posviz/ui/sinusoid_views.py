"""Views specific to the sinusoidal page: how far its slowest columns move.

Kept out of ``pages/sinusoidal.py`` so that the page only reads widgets and shows results.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from posviz.encodings.sinusoidal import column_pair, pair_columns
from posviz.references import cite


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


def slow_columns_view(table: np.ndarray, *, layout: str, active: int) -> None:
    """The "do the last dimensions barely change?" section, with the table above and its source."""
    d = table.shape[1]
    st.subheader("Do the last dimensions barely change?")
    st.markdown(
        f"A comment in {cite('t2t_1591')} ran tensor2tensor's encoding with d = 512 and 128 "
        "positions and argued that the last dimensions barely move — by about **0.007** — so "
        "only about half of the vector really carries position. Below: how far the slowest "
        "columns of *this* table move between position 0, the middle and the end."
    )
    st.dataframe(
        slow_columns_frame(table, layout=layout).style.format(precision=5), hide_index=True
    )
    st.markdown(
        "With the comment's setting ([d = 512, 128 positions](?sin_n=128&sin_d=512&sin_base=10000"
        "&sin_layout=interleaved)) the slowest **sines** move 0.0065 … 0.0074 between position 0 "
        "and position 64 — the comment's ≈ 0.007 (interleaved columns 504 … 510; columns 251 … 255 "
        "in the split and tensor2tensor layouts) — and the last **cosines** less than 0.0001. Over "
        "all 128 positions the slowest sine moves only 0.013, while the first pairs sweep all of "
        f"[−1, 1]. The variance view above counts **{active}** of {d} dimensions as active at its "
        "threshold."
    )
