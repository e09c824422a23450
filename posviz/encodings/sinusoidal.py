"""Sinusoidal position encodings (Vaswani et al. 2017) in the three layouts found in real code.

Attention Is All You Need, §3.5 (https://arxiv.org/abs/1706.03762)::

    PE[p, 2i]   = sin(p / base^(2i/d))
    PE[p, 2i+1] = cos(p / base^(2i/d))        i = 0 … d/2 − 1, base = 10000

Pair ``i`` turns at angular frequency ``ω_i = base^(−2i/d)`` radians per position, i.e. its
wavelength is ``2π·base^(2i/d)`` positions: a geometric progression
from ``2π`` to (almost) ``2π·base``.

Layouts (``SINUSOID_LAYOUTS``):

* ``"interleaved"`` — the paper's formula: sin and cos of pair ``i`` sit in columns ``2i`` and
  ``2i+1``. Hugging Face ``create_sinusoidal_embeddings`` (transformers/models/distilbert/
  modeling_distilbert.py, also XLM) builds exactly this.
* ``"split"`` — the same frequencies, all sines first (columns ``0 … d/2−1``) then all cosines
  (columns ``d/2 … d−1``), as in Marian (``MarianSinusoidalPositionalEmbedding.create_weight`` in
  transformers/models/marian/modeling_marian.py). A pure permutation of the interleaved columns.
* ``"tensor2tensor"`` — tensor2tensor's ``get_timing_signal_1d`` (tensor2tensor/layers/
  common_attention.py): split layout, but timescales spaced geometrically from *exactly* 1 to
  exactly ``base``: ``ω_i = exp(−i · ln(base) / (d/2 − 1))``. The slowest pair has wavelength
  ``2π·base`` instead of ``2π·base^((d−2)/d)``: a *different set of frequencies*, not a
  permutation. Whisper's ``sinusoids`` (transformers/models/whisper/modeling_whisper.py) and
  fairseq's ``SinusoidalPositionalEmbedding`` (M2M-100, NLLB: ``log(10000) / (half_dim - 1)``)
  use this schedule too.

Odd ``d_model`` is refused: every frequency is a sin/cos pair, and the implementations disagree on
what to do with a leftover column (tensor2tensor pads a zero column, the paper's formula leaves a
lone sine), so identities such as ``‖PE(p)‖² = d/2`` would silently break.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

Layout = Literal["interleaved", "split", "tensor2tensor"]
SINUSOID_LAYOUTS: tuple[str, ...] = ("interleaved", "split", "tensor2tensor")

MAX_POSITIONS = 8192
MAX_D_MODEL = 8192
MAX_BASE = 1e12
_ROW_BLOCK = 512  # rows computed at a time, so a big float32 table needs no float64 temporaries


def _check_int(name: str, value: object, lo: int, hi: int, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name}={value!r} must be a whole number from {lo} to {hi}. {hint}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name}={value} is out of range; allowed {lo} … {hi}. {hint}")
    return int(value)


def _check_d_model(d_model: object) -> int:
    d = _check_int("d_model", d_model, 2, MAX_D_MODEL, "Use an even width such as 64, 512 or 768.")
    if d % 2:
        raise ValueError(
            f"d_model={d} is odd. Sinusoidal encodings use sin/cos *pairs*, one pair per "
            f"frequency, so the width must be even; use d_model={d - 1} or {d + 1}."
        )
    return d


def _check_base(base: object) -> float:
    try:
        value = float(base)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"base={base!r} is not a number; use e.g. 10000.") from None
    if not math.isfinite(value) or not 1.0 < value <= MAX_BASE:
        raise ValueError(
            f"base={base!r} is out of range; it must be a finite number with 1 < base ≤ "
            f"{MAX_BASE:g} (the paper uses 10000). base ≤ 1 would make every pair turn at the "
            "same speed or faster than one radian per position."
        )
    return value


def _check_layout(layout: object) -> str:
    if layout not in SINUSOID_LAYOUTS:
        raise ValueError(
            f"layout={layout!r} is unknown; choose one of {', '.join(map(repr, SINUSOID_LAYOUTS))}."
        )
    return str(layout)


def sinusoid_frequencies(
    d_model: int, *, base: float = 10000.0, layout: Layout = "interleaved"
) -> np.ndarray:
    """Angular frequency ``ω_i`` (radians per position) of each sin/cos pair, fastest first.

    ``"interleaved"``/``"split"``: ``ω_i = base^(−2i/d)`` (Vaswani et al. 2017, §3.5).
    ``"tensor2tensor"``: ``ω_i = exp(−i · ln(base) / max(d/2 − 1, 1))`` (``get_timing_signal_1d``
    with ``min_timescale=1``, ``max_timescale=base``), so timescales ``1/ω`` run from 1 to ``base``.

    Returns:
        ``(d_model // 2,)`` float64. The wavelength of pair ``i`` is ``2π / ω_i`` positions
        (see :func:`sinusoid_wavelengths`).
    """
    d = _check_d_model(d_model)
    b = _check_base(base)
    layout = _check_layout(layout)
    i = np.arange(d // 2, dtype=np.float64)
    if layout == "tensor2tensor":
        return np.exp(-i * math.log(b) / max(d // 2 - 1, 1))
    return b ** (-2.0 * i / d)


def sinusoid_wavelengths(
    d_model: int, *, base: float = 10000.0, layout: Layout = "interleaved"
) -> np.ndarray:
    """Wavelength of each pair in positions, ``2π / ω_i`` (``2π·base^(2i/d)`` for the paper's).

    Returns:
        ``(d_model // 2,)`` float64.
    """
    return 2.0 * np.pi / sinusoid_frequencies(d_model, base=base, layout=layout)


def pair_columns(d_model: int, *, layout: Layout = "interleaved") -> tuple[np.ndarray, np.ndarray]:
    """Column indices of the sine and of the cosine of every pair ``i``.

    Interleaved: ``(2i, 2i+1)``; split and tensor2tensor: ``(i, d/2 + i)``.

    Returns:
        ``(sin_columns, cos_columns)``, each ``(d_model // 2,)`` int64.
    """
    d = _check_d_model(d_model)
    layout = _check_layout(layout)
    i = np.arange(d // 2)
    if layout == "interleaved":
        return 2 * i, 2 * i + 1
    return i, d // 2 + i


def column_pair(d_model: int, column: int, *, layout: Layout = "interleaved") -> tuple[int, str]:
    """Which pair ``i`` a column belongs to, and whether it is its ``"sin"`` or ``"cos"``."""
    d = _check_d_model(d_model)
    j = _check_int("column", column, 0, d - 1, "Columns are numbered from 0.")
    half = d // 2
    if _check_layout(layout) == "interleaved":
        return j // 2, "sin" if j % 2 == 0 else "cos"
    return (j, "sin") if j < half else (j - half, "cos")


def sinusoidal(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    dtype: type[np.floating] | np.dtype = np.float64,
) -> np.ndarray:
    """The sinusoidal position table: row ``p`` is the vector added to the token at position ``p``.

    ``PE[p, sin_col(i)] = sin(p·ω_i)``, ``PE[p, cos_col(i)] = cos(p·ω_i)`` with ``ω_i`` from
    :func:`sinusoid_frequencies` and columns from :func:`pair_columns` (see the module docstring
    for the three layouts and their sources). Angles ``p·ω_i`` are always computed in float64.
    For float64 output sin/cos are taken in float64; for a narrower ``dtype`` the angles are first
    reduced modulo 2π in float64 and sin/cos taken in that dtype (float32: within 1e-6 of the
    float64 values, about 3× faster — what keeps the app's 8192² slider responsive).

    Args:
        n_positions: number of positions, 1 … 8192.
        d_model: width, even, 2 … 8192.
        base: ``> 1``; 10000 in the paper.
        layout: ``"interleaved"`` (paper, HF DistilBERT/XLM), ``"split"`` (Marian) or
            ``"tensor2tensor"`` (``get_timing_signal_1d``; Whisper, fairseq).
        dtype: output float type (float32 halves the memory of big tables).
    Returns:
        ``(n_positions, d_model)`` array of ``dtype``.
    Raises:
        ValueError: a size, base or layout out of range (the message says the limit and the fix).
    """
    n = _check_int(
        "n_positions", n_positions, 1, MAX_POSITIONS, "Use fewer positions (e.g. 512 or 2048)."
    )
    omega = sinusoid_frequencies(d_model, base=base, layout=layout)  # (d/2,)
    half = int(d_model) // 2
    # the columns of pair_columns(), as slices: strided writes instead of a fancy-index scatter
    if layout == "interleaved":
        sin_cols, cos_cols = slice(0, None, 2), slice(1, None, 2)
    else:
        sin_cols, cos_cols = slice(0, half), slice(half, None)
    out = np.empty((n, int(d_model)), dtype=np.dtype(dtype))
    for start in range(0, n, _ROW_BLOCK):
        positions = np.arange(start, min(start + _ROW_BLOCK, n), dtype=np.float64)
        angle = positions[:, None] * omega[None, :]  # (block, d/2)
        if out.dtype != np.float64:
            angle = np.mod(angle, 2 * np.pi).astype(out.dtype)
        out[start : start + len(positions), sin_cols] = np.sin(angle)
        out[start : start + len(positions), cos_cols] = np.cos(angle)
    return out
