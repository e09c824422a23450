"""A chart together with the data it draws: what a page shows and what its Export menu offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Figure:
    """One chart and the array behind it, built from the same data in one place.

    ``chart`` is an Altair chart (or :class:`posviz.charts.heatmap.VegaLiteChart`); ``data`` the
    matrix or vector a user would export (``None``: the chart has none worth exporting); ``name``
    the file stem for downloads. Pages never rebuild ``data`` next to a chart by hand.
    """

    chart: Any
    data: np.ndarray | None = None
    name: str = "chart"
