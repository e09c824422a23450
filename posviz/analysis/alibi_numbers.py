"""What the ALiBi page shows, computed: the slope table, one head's bias, each head's reach.

ALiBi (Press, Smith & Lewis 2022, §3) adds ``−m_h·(i − j)`` to head ``h``'s logit, so a key ``k``
tokens back gets its attention weight multiplied by a factor that does not depend on content::

    w_h(k) / w_h(0) = exp(−m_h·k)         (equal content, k = i − j ≥ 0)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from posviz.encodings.alibi import alibi_bias, alibi_slopes

MAX_SHOWN_HEADS = 16  # lines drawn in the reach chart; the export keeps every head
MAX_DECAY_DISTANCE = 65_536


def slope_split(n_heads: int) -> tuple[int, int]:
    """``(c, n − c)`` with ``c = 2^⌊log₂ n⌋``: slopes from the ``c``-head sequence, and the rest
    taken from every other slope of ``2c`` heads (Press et al. 2022, §3)."""
    closest = 2 ** math.floor(math.log2(alibi_slopes(n_heads).size))
    return closest, n_heads - closest


def slope_table(n_heads: int) -> pd.DataFrame:
    """One row per head: slope ``m_h``, ``log₂ m_h``, and which geometric sequence it came from.

    Raises:
        ValueError: ``n_heads`` outside ``MIN_HEADS … MAX_HEADS`` (from :func:`alibi_slopes`).
    """
    slopes = alibi_slopes(n_heads)
    closest, _ = slope_split(n_heads)
    heads = np.arange(n_heads)
    origin = np.where(heads < closest, f"{closest}-head sequence", f"every other of {2 * closest}")
    return pd.DataFrame(
        {"head": heads, "slope": slopes, "log2(slope)": np.log2(slopes), "from": origin}
    )


def head_bias(n_positions: int, slope: float, *, causal: bool) -> np.ndarray:
    """``B[i, j] = −m·|i − j|`` for one head (``−inf`` above the diagonal when causal).

    Returns:
        ``(n_positions, n_positions)`` float64 (see :func:`posviz.encodings.alibi.alibi_bias`).
    """
    return alibi_bias(n_positions, slope, causal=causal)[0]


def decay_factors(slopes: np.ndarray, max_distance: int) -> tuple[np.ndarray, np.ndarray]:
    """``exp(−m_h·k)`` for ``k = 0 … max_distance`` and every head.

    Returns:
        ``(distances (n,), factors (n, n_heads))``; 1 at ``k = 0``.
    """
    if isinstance(max_distance, bool) or not 1 <= int(max_distance) <= MAX_DECAY_DISTANCE:
        raise ValueError(
            f"distances up to {max_distance!r} is out of range; choose 1 … {MAX_DECAY_DISTANCE}."
        )
    distances = np.arange(int(max_distance) + 1)
    return distances, np.exp(-np.outer(distances, np.asarray(slopes, dtype=np.float64)))


def shown_heads(n_heads: int, *, limit: int = MAX_SHOWN_HEADS) -> np.ndarray:
    """Every head if there are at most ``limit``, else ``limit`` evenly spread ones (first, last).

    Returns:
        ``(≤ limit,)`` sorted head indices.
    """
    if n_heads <= limit:
        return np.arange(n_heads)
    return np.unique(np.linspace(0, n_heads - 1, limit).astype(int))
