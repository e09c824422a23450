"""How far a stored table is from a formula: a real checkpoint's sinusoid against posviz's.

Whisper's audio encoder (Radford et al. 2022, https://arxiv.org/abs/2212.04356) adds a *fixed*
sinusoid, ``whisper/model.py``'s ``sinusoids(length, channels, max_timescale=10000)``:
``[sin | cos]`` halves with timescales ``1 … 10⁴`` — tensor2tensor's ``get_timing_signal_1d``
layout (:func:`posviz.encodings.sinusoidal.sinusoidal` with ``layout="tensor2tensor"``). A converted
checkpoint stores it as a float16 table; float16 rounds a value in ``[0.5, 1)`` to a multiple of
``2⁻¹¹``, so the largest error it can add there is half that, ``2⁻¹² ≈ 2.44e-4``
(:func:`float16_half_spacing`). :attr:`FormulaMatch.exact_share` asks the sharper question: is
each stored entry *exactly* the formula computed in float32 (as Whisper's PyTorch code does) and
rounded to float16?
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.encodings.sinusoidal import pair_columns, sinusoid_frequencies


def float16_half_spacing(magnitude: float) -> float:
    """Half the gap between neighbouring float16 values at ``magnitude``: float16's worst
    rounding error for a value that size (IEEE 754 binary16, 10 fraction bits)."""
    return float(np.spacing(np.float16(abs(magnitude)))) / 2


@dataclass(frozen=True)
class FormulaMatch:
    layout: str
    base: float
    formula: np.ndarray  # the formula's table, same shape as the stored one
    difference: np.ndarray  # stored − formula
    max_abs: float
    worst_at: tuple[int, int]  # (position, column) of the largest |difference|
    exact_share: float  # share of entries equal to the formula rounded to float32, then float16


def formula_table(n: int, d: int, *, base: float, layout: str) -> np.ndarray:
    """posviz's sinusoid (:func:`posviz.encodings.sinusoidal.sinusoidal`, same float64 angles and
    the same columns), assembled here from its frequencies and columns: the reference a stored
    table is compared with, built without counting as one of the page's own sinusoid tables."""
    omega = sinusoid_frequencies(d, base=base, layout=layout)  # type: ignore[arg-type]
    sin_cols, cos_cols = pair_columns(d, layout=layout)  # type: ignore[arg-type]
    angle = np.arange(n, dtype=np.float64)[:, None] * omega[None, :]
    out = np.empty((n, d), dtype=np.float64)
    out[:, sin_cols], out[:, cos_cols] = np.sin(angle), np.cos(angle)
    return out


def sinusoid_match(
    stored: np.ndarray, *, layout: str = "tensor2tensor", base: float = 10000.0
) -> FormulaMatch:
    """Compare ``stored`` (n × d) with posviz's sinusoid of the same shape, ``layout`` and base."""
    table = np.asarray(stored, dtype=np.float64)
    n, d = table.shape
    formula = formula_table(n, d, base=base, layout=layout)
    diff = table - formula
    worst = np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape)
    return FormulaMatch(
        layout=layout,
        base=base,
        formula=formula,
        difference=diff,
        max_abs=float(np.abs(diff).max()),
        worst_at=(int(worst[0]), int(worst[1])),
        exact_share=float(np.mean(formula.astype(np.float32).astype(np.float16) == table)),
    )
