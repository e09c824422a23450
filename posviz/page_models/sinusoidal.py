"""The Sinusoidal page's model: everything /sinusoidal shows, from its table, computed once.

:func:`sinusoid_page` takes the page's table (float64, from
:func:`posviz.encodings.sinusoidal.sinusoidal`) and returns a :class:`SinusoidPage`: the verdict,
the linked hero at the page's position, the "why sin and cos?" panel with its charts and prose,
the wavelengths and sin/cos columns the clock view reads, and the slow columns' table. The table
is never rebuilt here: the verdict's rotation check, the panel's check and the hero all read the
rows passed in (a table of fewer than 7 rows is extended to 7 for the checks, which need them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz import figures
from posviz.analysis.headlines import Verdict, sinusoid_verdict, verdict_rows
from posviz.analysis.sincos import SinCosPanel, panel_rows, sincos_panel_of
from posviz.analysis.sinusoid_columns import column_label, slow_columns_frame
from posviz.charts.figure import Figure
from posviz.charts.heroes import LinkedHero, sinusoid_linked
from posviz.encodings.sinusoidal import (
    MAX_D_MODEL,
    MAX_POSITIONS,
    SINUSOID_LAYOUTS,
    pair_columns,
    sinusoid_wavelengths,
    sinusoidal,
)
from posviz.references import cite

__all__ = [
    "DEFAULT_POSITION",
    "MAX_BASE",
    "MAX_D_MODEL",
    "MAX_POSITIONS",
    "SINUSOID_LAYOUTS",
    "SinusoidPage",
    "check_width",
    "sinusoid_hero",
    "sinusoid_page",
    "slow_columns_note",
]

#: The largest base the page's box accepts.
MAX_BASE = 1e9
#: The position the hero and the clock hands show when the link names none.
DEFAULT_POSITION = 10

INTRO = (
    "The original Transformer adds to the token at position *p* a fixed vector "
    "PE(p): pairs of sin and cos waves, one pair per frequency, from fast (one turn every "
    "2π ≈ 6.3 positions) to very slow (one turn every ≈ 2π·base positions). "
    "`PE[p, 2i] = sin(p / base^(2i/d))`, `PE[p, 2i+1] = cos(p / base^(2i/d))` "
    f"({cite('vaswani_2017')}, §3.5). Move the sliders; the URL keeps every setting, so a copied "
    "link reproduces this view."
)
LIMITS = (
    f"Limits: 1 … {MAX_POSITIONS} positions; even width 2 … {MAX_D_MODEL}; "
    f"1 < base ≤ {MAX_BASE:g}. Tables larger than 1024 on a side are shown as a reduced "
    "overview that says so, with zoom to any window drawn 1:1."
)
LAYOUTS = (
    "| layout | columns | frequencies ω_i | used by |\n"
    "|---|---|---|---|\n"
    "| **interleaved** | sin, cos, sin, cos, … (pair i in columns 2i, 2i+1) | "
    "base^(−2i/d) | the paper; HF `create_sinusoidal_embeddings` (DistilBERT, XLM) |\n"
    "| **split** | all sines, then all cosines (pair i in columns i, d/2+i) | "
    "base^(−2i/d) — the same | Marian |\n"
    "| **tensor2tensor** | split | exp(−i·ln(base)/(d/2−1)): timescales from exactly 1 "
    "to exactly base | tensor2tensor `get_timing_signal_1d`, Whisper, fairseq (M2M-100, "
    "NLLB) |\n\n"
    "*interleaved* and *split* hold **the same numbers**: one is a permutation of the "
    "other's columns, so a model would learn the same thing from either. *tensor2tensor* "
    "uses **a different set of frequencies**: its slowest pair turns once every 2π·base "
    "positions instead of 2π·base^((d−2)/d), and every pair in between is a little slower."
)
HERO_NOTE = (
    "Positions run down, dimensions across (blue −1, white 0, red +1). Point at a row of the "
    "table or a dot on the clock, or press ▶ play: the outlined row and the hands follow the same "
    "position. The Position slider sets where both start, and the link keeps it."
)
HEATMAP_PROSE = (
    "Positions run down, dimensions across; colour is the value (blue −1, white 0, red "
    "+1). On the left the fast pairs flicker from row to row; to the right they slow down until "
    "the last columns are almost constant: sines stay near 0, cosines near 1. In the split "
    "layouts the same picture appears twice side by side (sines, then cosines)."
)
DIMENSIONS_PROSE = (
    "Each line is one column read down the positions. Low columns oscillate quickly, "
    "high columns barely move: column j of pair i has wavelength 2π·base^(2i/d)."
)
SHIFT_PROSE = (
    "For every offset k: the similarity of PE(p) and PE(p + k), computed for **every** p. "
    "For sinusoids PE(p)·PE(p+k) = Σᵢ cos(ωᵢ·k), which does not contain p: each pair is "
    "rotated by the same angle ωᵢ·k wherever you start. So the band (min … max over p) has zero "
    "width — the similarity depends only on the distance, which lets attention read relative "
    "position from a dot product."
)

SLOW_COLUMNS_INTRO = (
    f"A comment in {cite('t2t_1591')} ran tensor2tensor's encoding with d = 512 and 128 "
    "positions and argued that the last dimensions barely move — by about **0.007** — so "
    "only about half of the vector really carries position. Below: how far the slowest "
    "columns of *this* table move between position 0, the middle and the end."
)


def slow_columns_note(active: int, d_model: int) -> str:
    """What the slow columns' table shows at the comment's setting, and how many of the
    ``d_model`` dimensions the variance view counts as ``active``."""
    return (
        "With the comment's setting ([d = 512, 128 positions](?sin_n=128&sin_d=512&sin_base=10000"
        "&sin_layout=interleaved)) the slowest **sines** move 0.0065 … 0.0074 between position 0 "
        "and position 64 — the comment's ≈ 0.007 (interleaved columns 504 … 510; columns 252 … "
        "255 in the split layout, 251 … 254 in tensor2tensor's) — and the last **cosines** less "
        "than 0.0001. Over all 128 positions the slowest sine moves only 0.013, while the first "
        f"pairs sweep all of [−1, 1]. The variance view above counts **{active}** of {d_model} "
        "dimensions as active at its threshold."
    )


def check_width(d_model: int) -> None:
    """Raise ``ValueError`` with the fix for an odd width (sin/cos come in pairs)."""
    if d_model % 2:
        raise ValueError(
            f"d_model={d_model} is odd: sinusoidal encodings use sin/cos pairs, so the width "
            f"must be even; use {d_model - 1} or {d_model + 1}."
        )


@dataclass(frozen=True)
class SinusoidPage:
    """Everything /sinusoidal shows for one table (``n`` positions, width ``d``)."""

    n: int
    d: int
    layout: str
    verdict: Verdict
    why_alone: Figure  # a sine alone: two positions share a value
    why_both: Figure  # the (sin, cos) pair tells them apart
    why_text: str  # the collision, in numbers
    rotation_text: str  # PE(p + k) = R(k)·PE(p), checked on this table
    panel: SinCosPanel
    summary: str  # the table's size and wavelength range
    wavelengths: np.ndarray  # (d/2,): positions per turn of each pair
    sin_columns: np.ndarray  # (d/2,): the sine column of each pair
    cos_columns: np.ndarray  # (d/2,): its cosine column
    slow_columns: pd.DataFrame  # how far the slowest columns move (t2t issue 1591)

    @property
    def name(self) -> str:
        """The stem of every export of this page."""
        return f"sinusoidal-{self.n}x{self.d}-{self.layout}"

    @property
    def default_dims(self) -> list[int]:
        """The columns the dimensions view starts with: fast, three in between, slowest."""
        d = self.d
        return sorted({0, d // 8, d // 4, d // 2, d - 2})

    def dim_label(self, column: int) -> str:
        """``"dim j (sin, pair i)"`` for a column of this table."""
        return column_label(self.d, column, layout=self.layout)


def sinusoid_hero(
    table: np.ndarray, *, base: float, layout: str, position: int = DEFAULT_POSITION
) -> LinkedHero:
    """The page's linked hero (the table and its clock hands) at ``position``, clamped to the
    table: apart from :func:`sinusoid_page`, so moving the position computes nothing else."""
    current = min(max(int(position), 0), len(table) - 1)
    return sinusoid_linked(table, base=base, layout=layout, current=current)


def sinusoid_page(table: np.ndarray, *, base: float, layout: str) -> SinusoidPage:
    """The page's model of ``table``, an ``(n, d)`` float64 sinusoid of this ``base`` and
    ``layout`` (its hero at the page's position: :func:`sinusoid_hero`).

    Every number is computed here once, from ``table``'s rows: the verdict
    (:func:`~posviz.analysis.headlines.sinusoid_verdict`), the panel
    (:func:`~posviz.analysis.sincos.sincos_panel_of`), the slow columns
    (:func:`~posviz.analysis.sinusoid_columns.slow_columns_frame`).
    """
    n, d = np.shape(table)
    rows = max(panel_rows(n), verdict_rows(n))
    checked = table if n >= rows else sinusoidal(rows, d, base=base, layout=layout)
    verdict = sinusoid_verdict(checked, base=base, layout=layout, n_positions=n)
    panel = sincos_panel_of(checked, n_positions=n, base=base, layout=layout)
    alone, both = figures.why_sin_and_cos(panel)
    hit, check = panel.collision, panel.check
    why_text = (
        "A sine alone is ambiguous: sin a = sin(π − a), so within one turn two positions share "
        f"each value. In pair {panel.pair} positions {hit.first} and {hit.second} have "
        f"sines {hit.sine_first:+.3f} and {hit.sine_second:+.3f}; only their cosines, "
        f"{hit.cosine_first:+.2f} and {hit.cosine_second:+.2f}, tell them apart."
    )
    rotation_text = (
        f"The pair also turns a shift into a rotation: PE(p + k) = R(k)·PE(p), one fixed 2×2 "
        f"rotation per pair whatever p is. Checked on this table for k = {check.shift}: the "
        f"largest error over every position and column is {check.pair_error:.1e} (float "
        "rounding). The sines alone admit no such map: the best fixed factor per frequency "
        f"still misses by up to {check.sine_only_error:.2f}. A fixed linear map of PE(p) giving "
        "PE(p + k) is what lets attention read relative positions from a dot product."
    )
    wavelengths = sinusoid_wavelengths(d, base=base, layout=layout)
    sin_columns, cos_columns = pair_columns(d, layout=layout)
    summary = (
        f"**PE** is a {n}×{d} table: {d // 2} sin/cos pairs with wavelengths from "
        f"{wavelengths[0]:.3g} to {wavelengths[-1]:,.0f} positions."
    )
    return SinusoidPage(
        n=n,
        d=d,
        layout=layout,
        verdict=verdict,
        why_alone=alone,
        why_both=both,
        why_text=why_text,
        rotation_text=rotation_text,
        panel=panel,
        summary=summary,
        wavelengths=wavelengths,
        sin_columns=sin_columns,
        cos_columns=cos_columns,
        slow_columns=slow_columns_frame(table, layout=layout),
    )
