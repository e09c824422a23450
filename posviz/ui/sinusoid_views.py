"""Views specific to the sinusoidal page: how far its slowest columns move.

Kept out of ``pages/sinusoidal.py`` so that the page only reads widgets and shows results.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz.references import cite


def slow_columns_view(slow_columns: pd.DataFrame, *, active: int, d_model: int) -> None:
    """The "do the last dimensions barely change?" section: its source, the slow columns' table
    (:func:`posviz.analysis.sinusoid_columns.slow_columns_frame`, from the page's model) and
    how many of the ``d_model`` dimensions the variance view counts as ``active``."""
    d = d_model
    st.subheader("Do the last dimensions barely change?")
    st.markdown(
        f"A comment in {cite('t2t_1591')} ran tensor2tensor's encoding with d = 512 and 128 "
        "positions and argued that the last dimensions barely move — by about **0.007** — so "
        "only about half of the vector really carries position. Below: how far the slowest "
        "columns of *this* table move between position 0, the middle and the end."
    )
    st.dataframe(slow_columns.style.format(precision=5), hide_index=True)
    st.markdown(
        "With the comment's setting ([d = 512, 128 positions](?sin_n=128&sin_d=512&sin_base=10000"
        "&sin_layout=interleaved)) the slowest **sines** move 0.0065 … 0.0074 between position 0 "
        "and position 64 — the comment's ≈ 0.007 (interleaved columns 504 … 510; columns 252 … 255 "
        "in the split layout, 251 … 254 in tensor2tensor's) — and the last **cosines** less than "
        "0.0001. Over "
        "all 128 positions the slowest sine moves only 0.013, while the first pairs sweep all of "
        f"[−1, 1]. The variance view above counts **{active}** of {d} dimensions as active at its "
        "threshold."
    )
