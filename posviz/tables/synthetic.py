"""``sinusoidal:NxD[:layout]``: a sinusoid table computed on the spot, within the pickers' limits.

The limits are the Sinusoidal page's, so a table typed as a source is never bigger than one the
page can draw.
"""

from __future__ import annotations

import re

import numpy as np

from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables.table import PositionTable

#: Most positions a synthetic table may have (the Sinusoidal page's picker allows the same).
SYNTHETIC_MAX_POSITIONS = 8192
#: Widest synthetic table (the Sinusoidal page's picker allows the same).
SYNTHETIC_MAX_WIDTH = 2048

SYNTHETIC_PREFIX = "sinusoidal:"
_SYNTHETIC = re.compile(r"^sinusoidal:(\d{1,9})x(\d{1,9})(?::([a-z0-9_-]+))?$")


def synthetic_table(source: str) -> PositionTable:
    """The table ``sinusoidal:NxD[:layout]`` names (Vaswani et al. 2017, §3.5; float32).

    ``PE[p, 2i] = sin(p / 10000^(2i/D))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/D))`` for the
    default interleaved layout; see :func:`posviz.encodings.sinusoidal.sinusoidal` for the others.
    Shape ``(N, D)``.

    Raises:
        ValueError: not written as ``sinusoidal:NxD``, ``N`` outside 1 … 8192, ``D`` outside
            2 … 2048 or odd, or an unknown layout.
    """
    match = _SYNTHETIC.match(source.strip())
    if match is None:
        raise ValueError(
            f"{source[:80]!r} is not a synthetic source; write it as 'sinusoidal:NxD' "
            "(e.g. sinusoidal:512x384), optionally ':layout'."
        )
    n, d, layout = int(match[1]), int(match[2]), match[3]
    if not 1 <= n <= SYNTHETIC_MAX_POSITIONS:
        raise ValueError(
            f"{source}: {n} positions is outside 1 … {SYNTHETIC_MAX_POSITIONS} (the limit of the "
            f"sinusoid pickers). Use at most sinusoidal:{SYNTHETIC_MAX_POSITIONS}x{d}."
        )
    if not 1 <= d <= SYNTHETIC_MAX_WIDTH:
        raise ValueError(
            f"{source}: width {d} is outside 2 … {SYNTHETIC_MAX_WIDTH} (the limit of the sinusoid "
            f"pickers). Use at most sinusoidal:{n}x{SYNTHETIC_MAX_WIDTH}."
        )
    kwargs = {"layout": layout} if layout else {}
    matrix = sinusoidal(n, d, dtype=np.float32, **kwargs)
    label = f"sinusoidal:{n}x{d}" + (f":{layout}" if layout else "")
    return PositionTable(matrix=matrix, source=label, kind="sinusoidal")
