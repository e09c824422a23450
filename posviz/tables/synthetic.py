"""``sinusoidal:NxD[:layout]``: a sinusoid table computed on the spot, within the pickers' limits.

The limits are the Sinusoidal page's, so a table typed as a source is never bigger than one the
page can draw. :func:`parse_synthetic` reads the syntax only (the UI clamps a link's shape to the
limits and says so); :func:`synthetic_table` enforces them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables.table import PositionTable

#: Most positions a synthetic table may have (the Sinusoidal page's picker allows the same).
SYNTHETIC_MAX_POSITIONS = 8192
#: Widest synthetic table (the Sinusoidal page's picker allows the same).
SYNTHETIC_MAX_WIDTH = 2048

SYNTHETIC_PREFIX = "sinusoidal:"
SYNTHETIC_HELP = "sinusoidal:NxD[:layout] (e.g. sinusoidal:512x384)"
_SYNTHETIC = re.compile(r"^sinusoidal:(\d{1,9})x(\d{1,9})(?::([a-z0-9_-]+))?$")


@dataclass(frozen=True)
class SyntheticShape:
    """What ``sinusoidal:NxD[:layout]`` asks for (not yet checked against the limits)."""

    n_positions: int
    width: int
    layout: str | None = None

    @property
    def source(self) -> str:
        """The canonical source text, ``sinusoidal:NxD[:layout]``."""
        return f"{SYNTHETIC_PREFIX}{self.n_positions}x{self.width}" + (
            f":{self.layout}" if self.layout else ""
        )


def parse_synthetic(source: str) -> SyntheticShape:
    """Read ``sinusoidal:NxD[:layout]`` (syntax only; :func:`synthetic_table` checks the limits).

    Raises:
        ValueError: not written as ``sinusoidal:NxD[:layout]`` (the message shows the form).
    """
    match = _SYNTHETIC.match(source.strip())
    if match is None:
        raise ValueError(
            f"{source[:80]!r} is not a synthetic source; write it as {SYNTHETIC_HELP}."
        )
    return SyntheticShape(int(match[1]), int(match[2]), match[3])


def synthetic_table(shape: SyntheticShape) -> PositionTable:
    """The sinusoid table ``shape`` names (Vaswani et al. 2017, §3.5; float32).

    ``PE[p, 2i] = sin(p / 10000^(2i/D))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/D))`` for the
    default interleaved layout; see :func:`posviz.encodings.sinusoidal.sinusoidal` for the others.
    Shape ``(N, D)``.

    Raises:
        ValueError: ``N`` outside 1 … 8192, ``D`` outside 2 … 2048 or odd, or an unknown layout.
    """
    n, d, layout = shape.n_positions, shape.width, shape.layout
    if not 1 <= n <= SYNTHETIC_MAX_POSITIONS:
        raise ValueError(
            f"{shape.source}: {n} positions is outside 1 … {SYNTHETIC_MAX_POSITIONS} (the limit of "
            f"the sinusoid pickers). Use at most sinusoidal:{SYNTHETIC_MAX_POSITIONS}x{d}."
        )
    if not 1 <= d <= SYNTHETIC_MAX_WIDTH:
        raise ValueError(
            f"{shape.source}: width {d} is outside 2 … {SYNTHETIC_MAX_WIDTH} (the limit of the "
            f"sinusoid pickers). Use at most sinusoidal:{n}x{SYNTHETIC_MAX_WIDTH}."
        )
    kwargs = {"layout": layout} if layout else {}
    matrix = sinusoidal(n, d, dtype=np.float32, **kwargs)
    return PositionTable(matrix=matrix, source=shape.source, kind="sinusoidal")
