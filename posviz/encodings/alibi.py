"""ALiBi, attention with linear biases (Press, Smith & Lewis 2022, ICLR), numpy in, numpy out.

Instead of adding position vectors, each head ``h`` adds a penalty to the attention logit of query
``i`` and key ``j`` (Press et al. 2022, §3)::

    logit[h, i, j] = q_i·k_j − m_h·(i − j)        j ≤ i (causal)
    m_h = 2^(−8h/n),   h = 1 … n                  (n heads, a power of two)

The slopes ``m_h`` are a fixed geometric sequence that depends on the head count; nothing is
learned. Shapes: slopes ``(n_heads,)``, biases ``(n_heads, n, n)``.
"""

from __future__ import annotations

import math

import numpy as np

MIN_HEADS = 1
MAX_HEADS = 1024
MAX_BIAS_CELLS = 1 << 24  # n_heads · n² cap on a materialised bias tensor (128 MiB of float64)


def _check_heads(n_heads: int) -> int:
    if isinstance(n_heads, bool) or not isinstance(n_heads, int | np.integer):
        raise ValueError(f"n_heads={n_heads!r} must be a whole number (e.g. 8, 12 or 16).")
    if not MIN_HEADS <= n_heads <= MAX_HEADS:
        raise ValueError(
            f"n_heads={n_heads} is out of range; choose {MIN_HEADS} … {MAX_HEADS} heads."
        )
    return int(n_heads)


def _power_of_two_slopes(n: int) -> np.ndarray:
    """``m_h = 2^(−8h/n)``, ``h = 1 … n`` (start = ratio = ``2^(−8/n)``); ``(n,)``."""
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes for any head count, as the paper's ``get_slopes`` and BLOOM define them.

    Press et al. 2022, §3 and their reference code ``get_slopes``; ``build_alibi_tensor`` in
    transformers' BLOOM. With ``c = 2^⌊log₂ n⌋``::

        n a power of two:  m_h = 2^(−8h/n),   h = 1 … n          (8 heads: 1/2, 1/4, …, 1/256)
        otherwise:         the c slopes of c heads, then every other slope of 2c heads,
                           2^(−4(2k−1)/c),   k = 1 … n − c

    Args:
        n_heads: ``MIN_HEADS … MAX_HEADS`` (1 … 1024).
    Returns:
        ``(n_heads,)`` float64, in head order.
    Raises:
        ValueError: n_heads not a whole number in range.
    """
    n = _check_heads(n_heads)
    closest = 2 ** math.floor(math.log2(n))
    slopes = _power_of_two_slopes(closest)
    if closest == n:
        return slopes
    extra = _power_of_two_slopes(2 * closest)[0::2][: n - closest]
    return np.concatenate([slopes, extra])


def alibi_bias(n_positions: int, slopes: np.ndarray | float, *, causal: bool = True) -> np.ndarray:
    """ALiBi bias added to the logits, per head (Press et al. 2022, §3)::

        B[h, i, j] = −m_h · |i − j|        (causal: −inf where j > i)

    Causal (the paper's decoder): keys after the query (``j > i``) are masked, returned as ``−inf``.
    Symmetric (``causal=False``, the bidirectional variant used by ALiBi encoders): ``−m_h·|i − j|``
    both ways. BLOOM adds ``m_h · j`` instead, which differs from ``−m_h (i − j)`` by a constant per
    query row and so gives the same softmax.

    Args:
        n_positions: sequence length ``n`` (≥ 1).
        slopes: ``(n_heads,)`` or a single slope.
    Returns:
        ``(n_heads, n, n)`` float64 (``n_heads = 1`` for a scalar slope).
    """
    if isinstance(n_positions, bool) or not isinstance(n_positions, int | np.integer):
        raise ValueError(f"n_positions={n_positions!r} must be a whole number.")
    m = np.atleast_1d(np.asarray(slopes, dtype=np.float64))
    if m.ndim != 1 or not np.all(np.isfinite(m)):
        raise ValueError("slopes must be a 1-D array of finite numbers (one per head).")
    if n_positions < 1 or m.size * n_positions**2 > MAX_BIAS_CELLS:
        limit = math.isqrt(MAX_BIAS_CELLS // max(m.size, 1))
        raise ValueError(
            f"n_positions={n_positions} with {m.size} head(s) is out of range; choose 1 … {limit} "
            "(or fewer heads)."
        )
    offset = np.arange(n_positions)[:, None] - np.arange(n_positions)[None, :]  # i − j
    bias = -m[:, None, None] * np.abs(offset)[None, :, :]
    if causal:
        bias = np.where(offset[None, :, :] < 0, -np.inf, bias)
    return bias
