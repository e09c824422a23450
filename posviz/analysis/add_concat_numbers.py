"""What the Add-vs-concatenate page shows: its inputs from MiniLM's tables, their sizes, and the
subspace reports of three position tables side by side (see :mod:`posviz.analysis.add_concat`).

``words`` is MiniLM's word-embedding table ``(30522, 384)``, ``learned`` its position table
``(512, 384)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from posviz.analysis.add_concat import dimension_magnitudes, last_dimensions_table
from posviz.encodings.sinusoidal import sinusoidal

#: position tables the page compares: MiniLM's own, a sinusoid, and a random control.
TABLE_KINDS = ("learned", "sinusoid", "random")
#: tensor2tensor #1591's late dimensions of a d = 512 sinusoid.
LAST_DIMENSIONS = (-1, -2, -16, -17, -128, -256)


def position_table(kind: str, n_positions: int, *, learned: np.ndarray) -> np.ndarray:
    """``(n_positions, width)`` float64: MiniLM's rows ``0…n−1`` (``"learned"``), the sinusoid
    of the same width (``"sinusoid"``), or a Gaussian with the learned table's std, seed 0
    (``"random"``, the control).

    Raises:
        ValueError: an unknown ``kind``.
    """
    width = learned.shape[1]
    if kind == "learned":
        return learned[:n_positions].astype(np.float64)
    if kind == "sinusoid":
        return sinusoidal(n_positions, width)
    if kind == "random":
        return np.random.default_rng(0).normal(0, learned.std(), (n_positions, width))
    raise ValueError(f"table kind {kind!r} is not one of {', '.join(TABLE_KINDS)}.")


def concat_inputs(
    token_id: int, kind: str, n_positions: int, *, words: np.ndarray, learned: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(word vector (width,), position table (n, width))``, both float64."""
    table = position_table(kind, n_positions, learned=learned)
    return words[token_id].astype(np.float64), np.asarray(table, dtype=np.float64)


def concat_sizes(word_vector: np.ndarray, table: np.ndarray, words: np.ndarray) -> dict[str, float]:
    """``‖WE‖₂``, the mean over positions of ``‖PE[p]‖₂``, and the median per-dimension std of
    all word rows (the words' scale)."""
    return {
        "word_norm": float(np.linalg.norm(word_vector)),
        "mean_position_norm": float(np.linalg.norm(table, axis=1).mean()),
        "word_std_median": float(np.median(words.std(axis=0))),
    }


class Magnitudes(NamedTuple):
    """:func:`~posviz.analysis.add_concat.dimension_magnitudes` with its two medians."""

    frame: pd.DataFrame
    pe_median: float
    we_median: float

    @property
    def data(self) -> np.ndarray:
        """The frame's numbers without the dimension index (what the chart exports)."""
        return self.frame.drop(columns="dimension").to_numpy()


def magnitudes(table: np.ndarray, words: np.ndarray, word_vector: np.ndarray) -> Magnitudes:
    """Per-dimension spread of PE over positions and of WE over the vocabulary."""
    frame = dimension_magnitudes(table, words, word_vector)
    return Magnitudes(frame, float(frame.pe_std.median()), float(frame.we_std.median()))


#: the tables of the subspace report, by column title: MiniLM's, a sinusoid, a random control.
REPORT_TABLES = {
    "MiniLM's learned position table": "learned",
    "sinusoid of the same width (384)": "sinusoid",
    "random Gaussian (control)": "random",
}


def side_by_side(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Reports (each a ``ConcatReport.frame()``) merged: one ``value`` column per name."""
    merged = None
    for name, frame in frames.items():
        renamed = frame.rename(columns={"value": name})
        merged = renamed if merged is None else merged.assign(**{name: renamed[name]})
    return merged


def last_dimensions_frame() -> pd.DataFrame:
    """tensor2tensor #1591's table for ``d_model = 512``, 128 positions, in both layouts."""
    rows = []
    for layout in ("interleaved", "tensor2tensor"):
        table = sinusoidal(128, 512, layout=layout)
        frame = last_dimensions_table(table, dims=LAST_DIMENSIONS)
        frame.insert(0, "layout", layout)
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)
