"""Export buttons under each chart (filled in by the exports work: PNG, SVG, CSV, .npy, TSV, JSON)."""

from __future__ import annotations

import altair as alt
import numpy as np


def export_menu(chart: alt.TopLevelMixin, *, key: str, data: np.ndarray | None, name: str) -> None:
    """Offer the chart and its data for download."""
    del chart, key, data, name
