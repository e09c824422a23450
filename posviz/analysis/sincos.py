"""Why sin *and* cos: what a sine alone loses, and what the pair gains (the "why" panel).

A sine alone is ambiguous: ``sin a = sin(π − a)``, so within one turn of a pair of wavelength
``λ = 2π/ω`` the positions ``p`` and ``λ/2 − p`` give the same value, and a fixed shift ``k``
cannot be applied to the value alone (the new value also needs ``cos(ωp)``). The sin/cos pair fixes
both. It puts position ``p`` at the angle ``ωp`` on the unit circle, and a shift by ``k`` turns it
by ``ωk`` whatever ``p`` is::

    [sin ω(p+k)]   [ cos ωk   sin ωk] [sin ωp]
    [cos ω(p+k)] = [−sin ωk   cos ωk] [cos ωp]        (angle addition)

so ``PE(p+k) = R(k) · PE(p)`` with ``R(k)`` block-diagonal, one rotation per pair, independent of
``p``: the property that lets a model attend by relative position through a linear map (Vaswani
et al. 2017, §3.5: "for any fixed offset k, PE_{pos+k} can be represented as a linear function of
PE_pos"). Everything here is checked numerically on the table itself, not assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posviz.encodings.sinusoidal import (
    Layout,
    pair_columns,
    sinusoid_frequencies,
    sinusoidal,
)

#: Two sines this close count as the same value (well below what a model's noise would separate).
SAME_SINE = 0.01


@dataclass(frozen=True)
class SineCollision:
    """Two positions whose sines agree in one pair but whose cosines tell them apart."""

    pair: int
    first: int
    second: int
    sine_first: float
    sine_second: float
    cosine_first: float
    cosine_second: float


@dataclass(frozen=True)
class RotationCheck:
    """How exactly a fixed map carries every ``PE(p)`` to ``PE(p + k)``.

    ``pair_error``: the largest ``|PE(p+k) − R(k)·PE(p)|`` over all ``p`` and columns with the
    2×2 rotations ``R(ω_i k)`` (float rounding when the identity holds). ``sine_only_error``: the
    largest error of the best *per-frequency* linear map of the sines alone,
    ``sin ω(p+k) ≈ c_i · sin ωp`` (least squares over ``p``): what a sine without its cosine
    cannot do. ``sine_only_relative``: that error's root-mean-square over the sines' own RMS.
    """

    shift: int
    pair_error: float
    sine_only_error: float
    sine_only_relative: float


def rotation_matrix(omega: np.ndarray, shift: float) -> np.ndarray:
    """``(pairs, 2, 2)``: the rotation ``R(ω_i k)`` acting on ``(sin, cos)`` of each pair."""
    angle = np.asarray(omega, dtype=np.float64) * float(shift)
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([np.stack([c, s], axis=-1), np.stack([-s, c], axis=-1)], axis=-2)


def shift_by_rotation(
    table: np.ndarray, shift: int, *, base: float = 10000.0, layout: Layout = "interleaved"
) -> np.ndarray:
    """``R(k) · PE(p)`` for every row ``p`` of a sinusoid ``table`` (same shape, float64).

    Each pair turns by ``ω_i k``: ``sin' = cos(ω_i k)·sin + sin(ω_i k)·cos`` and
    ``cos' = −sin(ω_i k)·sin + cos(ω_i k)·cos`` (:func:`rotation_matrix`'s rows, applied column
    by column: no ``(n, pairs, 2)`` stack, so an 8192 × 8192 table needs no extra copies of it).
    """
    table = np.asarray(table, dtype=np.float64)
    d = table.shape[1]
    sin_cols, cos_cols = pair_columns(d, layout=layout)
    rotation = rotation_matrix(sinusoid_frequencies(d, base=base, layout=layout), shift)
    c, s = rotation[:, 0, 0], rotation[:, 0, 1]
    sines, cosines = table[:, sin_cols], table[:, cos_cols]
    out = np.empty_like(table)
    out[:, sin_cols] = c * sines + s * cosines
    out[:, cos_cols] = c * cosines - s * sines
    return out


def rotation_check(
    n_positions: int,
    d_model: int,
    shift: int,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
) -> RotationCheck:
    """Check ``PE(p+k) = R(k)·PE(p)`` on every ``p`` of an ``(n_positions + shift, d_model)`` table
    it builds (:func:`rotation_check_of` on a table already built).

    Raises:
        ValueError: ``shift < 1`` or fewer than 2 positions.
    """
    if shift < 1 or n_positions < 2:
        raise ValueError(
            f"shift={shift}, n_positions={n_positions}: need a shift ≥ 1 and ≥ 2 positions."
        )
    table = sinusoidal(n_positions + shift, d_model, base=base, layout=layout)
    return rotation_check_of(table, shift, n_positions=n_positions, base=base, layout=layout)


def rotation_check_of(
    table: np.ndarray,
    shift: int,
    *,
    n_positions: int,
    base: float = 10000.0,
    layout: Layout = "interleaved",
) -> RotationCheck:
    """Check ``PE(p+k) = R(k)·PE(p)`` for ``p = 0 … n_positions − 1`` on the rows of ``table``,
    a float64 sinusoid of this ``base`` and ``layout`` with at least ``n_positions + shift`` rows.

    Raises:
        ValueError: ``shift < 1``, fewer than 2 positions, or too few rows.
    """
    if shift < 1 or n_positions < 2:
        raise ValueError(
            f"shift={shift}, n_positions={n_positions}: need a shift ≥ 1 and ≥ 2 positions."
        )
    if len(table) < n_positions + shift:
        raise ValueError(
            f"the table has {len(table)} rows; the check needs n_positions + shift = "
            f"{n_positions + shift}."
        )
    d_model = np.shape(table)[1]
    sin_cols, _ = pair_columns(d_model, layout=layout)
    rows = _row_blocks(n_positions, d_model)
    # pass 1: the rotation's largest error, and the sums of the sines' least-squares fit
    pair_error, norm, cross, later_sq = 0.0, 0.0, 0.0, 0.0
    for lo, hi in rows:
        now = np.asarray(table[lo:hi], dtype=np.float64)
        later = np.asarray(table[lo + shift : hi + shift], dtype=np.float64)
        turned = shift_by_rotation(now, shift, base=base, layout=layout)
        pair_error = max(pair_error, float(np.abs(later - turned).max()))
        s_now, s_later = now[:, sin_cols], later[:, sin_cols]
        norm = norm + (s_now**2).sum(axis=0)
        cross = cross + (s_now * s_later).sum(axis=0)
        later_sq += float((s_later**2).sum())
    # the best scalar per frequency: c_i = <s_now, s_later> / <s_now, s_now> (least squares)
    norm = np.asarray(norm, dtype=np.float64)
    coef = np.divide(cross, norm, out=np.zeros_like(norm), where=norm > 0)
    # pass 2: the residual of that fit
    worst, residual_sq = 0.0, 0.0
    for lo, hi in rows:
        s_now = np.asarray(table[lo:hi, sin_cols], dtype=np.float64)
        s_later = np.asarray(table[lo + shift : hi + shift, sin_cols], dtype=np.float64)
        residual = s_later - s_now * coef
        worst = max(worst, float(np.abs(residual).max()))
        residual_sq += float((residual**2).sum())
    count = n_positions * len(sin_cols)
    rms = float(np.sqrt(later_sq / count)) or 1.0
    return RotationCheck(
        shift=int(shift),
        pair_error=pair_error,
        sine_only_error=worst,
        sine_only_relative=float(np.sqrt(residual_sq / count) / rms),
    )


#: elements of a row block (:func:`_row_blocks`): a few MB, so an 8192 × 8192 table is read in
#: cache-sized pieces instead of whole-table temporaries (each 512 MB in float64)
BLOCK_ELEMENTS = 1 << 18


def _row_blocks(n_rows: int, width: int) -> list[tuple[int, int]]:
    """``[(lo, hi), …]`` covering rows ``0 … n_rows − 1`` in blocks of about
    :data:`BLOCK_ELEMENTS` elements of ``width`` columns."""
    step = max(1, BLOCK_ELEMENTS // max(int(width), 1))
    return [(lo, min(lo + step, n_rows)) for lo in range(0, n_rows, step)]


class _FirstBest:
    """The largest value offered in row blocks, first in row-major order on ties (what one
    ``argmax`` over the whole matrix gives): its value and ``(row, column)``."""

    def __init__(self) -> None:
        self.value, self.at = -np.inf, (0, 1)

    @property
    def found(self) -> bool:
        return bool(np.isfinite(self.value))

    def offer(self, block: np.ndarray, first_row: int) -> None:
        row, column = np.unravel_index(int(np.argmax(block)), block.shape)
        if block[row, column] > self.value:
            self.value, self.at = float(block[row, column]), (first_row + int(row), int(column))


def sine_collision(
    d_model: int,
    *,
    pair: int,
    n_positions: int,
    base: float = 10000.0,
    layout: Layout = "interleaved",
) -> SineCollision:
    """Two whole positions ``p ≠ q`` below ``n_positions`` whose sines in ``pair`` agree best.

    Among position pairs whose sines differ by at most :data:`SAME_SINE` (mirrors
    ``q ≈ λ/2 − p + m·λ``, since ``sin a = sin(π − a)``), the one whose cosines differ most is
    returned: the sine alone cannot tell them apart, the cosine can. A pair too slow to repeat a
    sine within ``n_positions`` gives the two positions with the closest sines.

    Raises:
        ValueError: ``pair`` out of range, or fewer than 3 positions.
    """
    omega = sinusoid_frequencies(d_model, base=base, layout=layout)
    if not 0 <= pair < omega.size:
        raise ValueError(f"pair={pair} is out of range; this width has pairs 0 … {omega.size - 1}.")
    if n_positions < 3:
        raise ValueError(f"n_positions={n_positions}: need at least 3 positions to compare.")
    angles = omega[pair] * np.arange(n_positions)
    sines, cosines = np.sin(angles), np.cos(angles)
    # a true ambiguity: (almost) the same sine, the cosines far apart; the clearest one wins
    # (a pair too slow to come back within these positions: the nearest sines instead). Row
    # blocks of p against every later q: the first best in row-major order, as one argmax over
    # the whole (n, n) matrix would give, without its temporaries (512 MB each at 8192).
    close_best, near_best = _FirstBest(), _FirstBest()
    q = np.arange(n_positions)
    for lo, hi in _row_blocks(n_positions, n_positions):
        later = q[None, :] > np.arange(lo, hi)[:, None]
        gaps = np.abs(sines[lo:hi, None] - sines[None, :])
        split = np.abs(cosines[lo:hi, None] - cosines[None, :])
        close_best.offer(np.where(later & (gaps <= SAME_SINE), split, -np.inf), lo)
        near_best.offer(np.where(later, -gaps, -np.inf), lo)
    p, q = (close_best if close_best.found else near_best).at
    return SineCollision(
        pair=int(pair),
        first=p,
        second=q,
        sine_first=float(sines[p]),
        sine_second=float(sines[q]),
        cosine_first=float(cosines[p]),
        cosine_second=float(cosines[q]),
    )


def illustrative_pair(
    d_model: int, *, n_positions: int, base: float = 10000.0, layout: Layout = "interleaved"
) -> int:
    """The pair whose wavelength is closest to a third of ``n_positions``.

    Three turns on screen: slow enough to read the sine by eye, fast enough to repeat its values
    (pair 0 turns once every 6.3 positions, a blur over 128 positions).
    """
    wavelengths = 2 * np.pi / sinusoid_frequencies(d_model, base=base, layout=layout)
    return int(np.argmin(np.abs(wavelengths - max(n_positions, 3) / 3)))


@dataclass(frozen=True)
class SinCosPanel:
    """Everything the "why sin and cos?" panel shows for one table's settings."""

    pair: int
    sines: np.ndarray  # (n_positions,) the pair's sine column
    cosines: np.ndarray  # (n_positions,) its cosine column
    collision: SineCollision
    check: RotationCheck

    @property
    def data(self) -> np.ndarray:
        """``(n_positions, 2)``: the sine and cosine columns side by side (the export)."""
        return np.column_stack([self.sines, self.cosines])


def panel_rows(n_positions: int, shift: int = 5) -> int:
    """Rows of the sinusoid :func:`sincos_panel_of` reads for an ``n_positions`` table: 3 for a
    collision, ``max(n − shift, 2) + shift`` for the rotation check (``n`` itself from 7 rows)."""
    n = max(int(n_positions), 3)
    return max(n, max(n - shift, 2) + shift)


def sincos_panel(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    shift: int = 5,
) -> SinCosPanel:
    """:func:`sincos_panel_of` an ``(n_positions, d_model)`` sinusoid it builds."""
    table = sinusoidal(panel_rows(n_positions, shift), d_model, base=base, layout=layout)
    return sincos_panel_of(table, n_positions=n_positions, base=base, layout=layout, shift=shift)


def sincos_panel_of(
    table: np.ndarray,
    *,
    n_positions: int,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    shift: int = 5,
) -> SinCosPanel:
    """The illustrative pair of an ``(n_positions, d_model)`` sinusoid, two positions its sine
    confuses, and the rotation check for ``shift`` on every pair ``(p, p + shift)`` inside the
    table (at least 3 positions are used; a table of ``MAX_POSITIONS`` rows stays in range).

    ``table`` is that sinusoid in float64 with at least :func:`panel_rows` rows (the page's own
    table when it has 7 rows or more).
    """
    n = max(int(n_positions), 3)
    d_model = np.shape(table)[1]
    pair = illustrative_pair(d_model, n_positions=n, base=base, layout=layout)
    sin_cols, cos_cols = pair_columns(d_model, layout=layout)
    return SinCosPanel(
        pair=pair,
        sines=np.array(table[:n, sin_cols[pair]]),
        cosines=np.array(table[:n, cos_cols[pair]]),
        collision=sine_collision(d_model, pair=pair, n_positions=n, base=base, layout=layout),
        check=rotation_check_of(
            table, shift, n_positions=max(n - shift, 2), base=base, layout=layout
        ),
    )
