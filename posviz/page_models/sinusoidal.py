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
from posviz.analysis.echo import cosine_by_distance
from posviz.analysis.formula_match import float16_half_spacing, sinusoid_match
from posviz.analysis.headlines import Verdict, sinusoid_verdict, verdict_rows
from posviz.analysis.sincos import SinCosPanel, panel_rows, sincos_panel_of
from posviz.analysis.sinusoid_columns import column_label, slow_columns_frame
from posviz.charts.families import heatmap_figure, lines_figure
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
from posviz.page_models.learned import Finding, RealSection
from posviz.references import cite
from posviz.tables import PositionTable, bundled
from posviz.tables.bundled import packaged_file

__all__ = [
    "DEFAULT_POSITION",
    "MAX_BASE",
    "MAX_D_MODEL",
    "MAX_POSITIONS",
    "SINUSOID_LAYOUTS",
    "WHISPER_DECODER",
    "WHISPER_ENCODER",
    "SinusoidPage",
    "check_width",
    "sinusoid_hero",
    "sinusoid_page",
    "slow_columns_note",
    "whisper_section",
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
    "Positions run down, dimensions across (blue −1, white 0, red +1). The Position slider moves "
    "the outlined row and the hands together, and the link keeps it. Pointing at a row or a dot "
    "previews its position; ▶ play animates, and stopped returns to the slider's position."
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


# ------------------------------------------ a real model that uses the formula: Whisper tiny.en

#: Whisper tiny.en's two tables (offline, hash-checked): the encoder's fixed, the decoder's learned
WHISPER_ENCODER = "bundled:whisper-tiny.en-encoder"
WHISPER_DECODER = "bundled:whisper-tiny.en-decoder"


def whisper_missing() -> str:
    """ "" when Whisper's package is installed (its file is then hash-checked on load), else a
    note saying how to add it: an optional checkpoint, not an error on a core install."""
    try:
        packaged_file(bundled.WHISPER_ENCODER)
    except ValueError as missing:
        return f"Whisper's real tables are optional here: {missing}"
    return ""


_SHOWN_ROWS = 128  # rows of the stored table drawn beside the difference map
_BLOCK = (10, 4)  # the difference map's blocks (1500 × 384 → 150 × 96 cells)


def _block_max_abs(matrix: np.ndarray, block: tuple[int, int]) -> np.ndarray:
    rows, cols = block
    n, d = matrix.shape
    trimmed = np.abs(matrix[: n - n % rows, : d - d % cols])
    return trimmed.reshape(n // rows, rows, d // cols, cols).max(axis=(1, 3))


def whisper_section(tables: tuple[PositionTable, PositionTable]) -> RealSection:
    """Whisper's encoder table beside the formula (its difference map), and one model's two
    schemes: the encoder's fixed sinusoid and the decoder's learned table, by distance."""
    encoder, decoder = tables
    stored = encoder.matrix
    match = sinusoid_match(stored, layout="tensor2tensor", base=1e4)
    others = {lay: sinusoid_match(stored, layout=lay).max_abs for lay in ("interleaved", "split")}
    half = float16_half_spacing(0.75)
    n, d = stored.shape
    table_fig = heatmap_figure(
        stored[:_SHOWN_ROWS],
        name="whisper_encoder_table",
        x_title="dimension",
        y_title="position",
        color_title="value",
        scheme="redblue",
        domain_mid=0.0,
        height=300,
    )
    table_text = (
        f"Whisper's stored encoder table, its first {_SHOWN_ROWS} of {n} positions: sines in "
        f"the first {d // 2} columns, cosines in the last {d // 2} (tensor2tensor's layout)."
    )
    diff_fig = heatmap_figure(
        _block_max_abs(match.difference, _BLOCK),
        name="whisper_encoder_minus_formula",
        x_title=f"dimension block ({_BLOCK[1]} columns)",
        y_title=f"position block ({_BLOCK[0]} rows)",
        color_title="max |Δ|",
        scheme="viridis",
        height=300,
    )
    diff_text = (
        f"Stored table minus the formula (tensor2tensor layout, base 10⁴), largest |Δ| per block "
        f"of {_BLOCK[0]} × {_BLOCK[1]}: at most {match.max_abs:.3g} anywhere, half a float16 step "
        f"for values in [0.5, 1) ({half:.3g}); {match.exact_share:.2%} of the {n * d:,} entries "
        "are exactly the formula computed in float32 and rounded to float16. The other layouts "
        f"miss by up to {others['interleaved']:.2f} (interleaved) and {others['split']:.2f} "
        "(split, the paper's frequencies)."
    )
    enc_curve = cosine_by_distance(stored)
    dec_curve = cosine_by_distance(decoder.matrix)
    k = np.arange(1, len(dec_curve) + 1)
    two_fig = lines_figure(
        k,
        {"encoder: fixed sinusoid": enc_curve[: len(k)], "decoder: learned": dec_curve},
        name="whisper_two_schemes",
        x_title="distance k",
        y_title="mean cos(row p, row p + k)",
        height=280,
    )
    at = {j: (float(enc_curve[j - 1]), float(dec_curve[j - 1])) for j in (10, 114, 225)}
    two_text = (
        "One model, two schemes, the same width 384: mean cosine of rows p and p + k. The "
        f"encoder's sinusoid: {at[10][0]:.2f} at k = 10, {at[114][0]:.2f} at 114, "
        f"{at[225][0]:.2f} at 225. The decoder's learned table: {at[10][1]:.2f}, "
        f"{at[114][1]:.2f}, then back up to {at[225][1]:.2f} (the Learned page tests that echo)."
    )
    exact = match.exact_share == 1.0
    lead = (
        "**A real model uses this very formula.** Whisper tiny.en's audio encoder "
        f"({cite('radford_2022')}) stores a {n} × {d} sinusoid, and it is posviz's "
        "tensor2tensor-layout sinusoid (base 10⁴) "
        + (
            "entry for entry, rounded to float16"
            if exact
            else f"to within {match.max_abs:.3g} (float16 rounding is {half:.3g})"
        )
        + f": the largest difference is {match.max_abs:.3g}. Its text decoder, same width, "
        "learned its table instead: one model, two schemes."
    )
    return RealSection(
        title="A real model's sinusoid: Whisper tiny.en's encoder, beside the formula",
        lead=lead,
        findings=(
            Finding(table_fig, table_text),
            Finding(diff_fig, diff_text),
            Finding(two_fig, two_text),
        ),
        caveat=encoder.notes[0] if encoder.notes else "",
    )
