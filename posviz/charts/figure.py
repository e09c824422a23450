"""A chart together with the data it draws: what a page shows and what its Export menu offers."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from posviz.charts.style import ADAPTIVE_TEXT


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


def _title_text(title: Any) -> str:
    """``"Title. Subtitle."`` of a Vega-Lite title (a string, a list of lines or a title dict)."""
    if isinstance(title, dict):
        parts = [_title_text(title.get("text", "")), _title_text(title.get("subtitle", ""))]
        return " ".join(p for p in parts if p)
    if isinstance(title, list | tuple):
        title = " ".join(str(t) for t in title if t)
    text = str(title or "").strip()
    return text if not text or text.endswith((".", "?", "!", ")")) else f"{text}."


def _child_views(spec: dict) -> Iterator[dict]:
    """The views inside ``spec``, in order: layer and concat children, then a facet's ``spec``."""
    for key in ("layer", "vconcat", "hconcat", "concat"):
        yield from (child for child in spec.get(key, []) if isinstance(child, dict))
    if isinstance(child := spec.get("spec"), dict):
        yield child


def _first_found(spec: dict, find: Callable[[dict], str]) -> str:
    """The first non-empty ``find(child)`` over :func:`_child_views`, else ``""``."""
    return next((found for child in _child_views(spec) if (found := find(child))), "")


def _first_title(spec: dict) -> str:
    """The spec's own title, else the first titled view's (a layer, concat or facet child)."""
    if spec.get("title"):
        return _title_text(spec["title"])
    return _first_found(spec, _first_title)


def _axes_text(spec: dict) -> str:
    """``"y against x."`` from the first view that encodes both (a chart without a title)."""
    encoding = spec.get("encoding", {})
    names = []
    for channel in ("y", "x"):
        enc = encoding.get(channel)
        if isinstance(enc, dict) and isinstance(enc.get("title") or enc.get("field"), str):
            names.append(str(enc.get("title") or enc.get("field")))
    if len(names) == 2:
        return f"{names[0]} against {names[1]}."
    return _first_found(spec, _axes_text)


def accessible_spec(spec: dict, description: str = "") -> dict:
    """``spec`` as assistive technology and both themes need it, changed in place and returned.

    * ``description`` (the chart's finding: the hero's note, else the chart's title and
      subtitle, which posviz writes as findings, else what the axes show) becomes Vega's
      ``aria-label`` of the chart; a description the spec already had (e.g. "Square cells.")
      follows it. Without one a screen reader announces every chart as "Vega visualization".
    * axis, legend and facet-header labels and titles take :data:`ADAPTIVE_TEXT` (≥ 4.5:1 on
      Streamlit's light and dark backgrounds, WCAG 2.1 SC 1.4.3) where the spec names no colour;
      Streamlit's own theme greys them at 3.7:1 on white.
    """
    own = str(spec.get("description") or "").strip()
    lead = description.strip() or _first_title(spec) or ("" if own else _axes_text(spec))
    spec["description"] = " ".join([lead] + ([own] if own and own not in lead else [])).strip()
    config = spec.setdefault("config", {})
    for part in ("axis", "legend", "header"):
        block = config.setdefault(part, {})
        for key in ("labelColor", "titleColor"):
            block.setdefault(key, dict(ADAPTIVE_TEXT))
    return spec


class Accessible:
    """A chart whose spec is passed through :func:`accessible_spec` when it is drawn.

    Quacks like the Altair chart it wraps (``to_dict``/``to_json``/``_repr_mimebundle_``), so
    ``st.altair_chart`` draws it; the Export menu keeps the chart itself.
    """

    def __init__(self, chart: Any, description: str = "") -> None:
        self.chart, self.description = chart, description

    def to_dict(self, validate: bool = False, **kwargs: Any) -> dict:
        return accessible_spec(copy.deepcopy(self.chart.to_dict(**kwargs)), self.description)

    def to_json(self, indent: int | None = 2, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(**kwargs), indent=indent)

    def _repr_mimebundle_(self, *_args: Any, **_kwargs: Any) -> dict:
        return {"application/vnd.vegalite.v5+json": self.to_dict()}
