"""A chart together with the data it draws: what a page shows and what its Export menu offers."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Figure:
    """One chart and the array behind it, built from the same data in one place.

    ``chart`` is an Altair chart (or :class:`posviz.charts.heatmap.VegaLiteChart`); ``data`` the
    matrix or vector a user would export (``None``: the chart has none worth exporting), or a
    ``DataFrame`` whose column names become the CSV header (``dim 64`` rather than ``dim_1``);
    ``name`` the file stem for downloads. Pages never rebuild ``data`` next to a chart by hand.
    """

    chart: Any
    data: np.ndarray | pd.DataFrame | None = None
    name: str = "chart"


class WithParams:
    """An Altair chart plus top-level Vega-Lite parameters that Altair's schema does not know.

    Vega-Lite passes a variable parameter's ``on`` (Vega event handlers, e.g. a ``timer``) through
    to the Vega signal unchanged; Altair 5 rejects the key, so the parameters are added to the
    finished spec instead. ``to_dict`` runs under whatever data transformer is active (Streamlit's
    Arrow datasets, the exporter's inline values), like an Altair chart's.
    """

    def __init__(self, chart: Any, params: list[dict[str, Any]]) -> None:
        self.chart, self.params = chart, params

    def to_dict(self, validate: bool = False, **kwargs: Any) -> dict:
        spec = self.chart.to_dict(**kwargs)
        spec["params"] = [*spec.get("params", []), *copy.deepcopy(self.params)]
        return spec

    def to_json(self, indent: int | None = 2, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(**kwargs), indent=indent)

    def _repr_mimebundle_(self, *_args: Any, **_kwargs: Any) -> dict:
        return {"application/vnd.vegalite.v5+json": self.to_dict()}
