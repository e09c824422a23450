"""Heatmap of a position table drawn as one palette PNG (Vega-Lite ``image`` mark), not as rects.

A rect per cell ships every value as a row of JSON/Arrow (512×768 rects ≈ 9.4 MB, seconds to draw);
the same matrix as an 8-bit palette PNG is ~100 KB and the browser paints it at once. So:

* tables up to 1024×1024 are drawn **1:1** — every cell is one image pixel;
* bigger tables (up to 8192×8192) get a **level-of-detail** view: an overview reduced by whole
  blocks (the chart *says* "1 pixel = 8×8 cells, mean"), and any window of ≤ 1024×1024 cells
  (``window=``) is again drawn 1:1.

Colour: a diverging scale centred on 0, symmetric ``[-vmax, vmax]`` (RdBu, blue < 0 < red), with a
legend. The PNG is quantised to 255 levels, fewer (63, then 15) only if that is what keeps the
payload under budget — the chart says which. Hover: an invisible grid of at most 16×16 blocks
carries tooltips (block range, mean, min, max); once a window is ≤ 16 cells a side, each block is
one cell and the tooltip is its exact value.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import altair as alt
import numpy as np
import pandas as pd

from posviz.charts.linked import POSITION_PARAM, cells_mark
from posviz.charts.style import ADAPTIVE_TEXT

Reduce = Literal["mean", "absmax"]

MAX_SIDE_1TO1 = 1024  # rows/cols drawn 1:1
MAX_TABLE_SIDE = 8192  # largest table accepted
PAYLOAD_BUDGET = 1_000_000  # bytes of chart JSON per view (image + tooltips + spec)
_IMAGE_BUDGET = 880_000  # bytes of base64 PNG; the rest of the spec stays well under 120 KB
_LEVELS = (255, 63, 15)  # odd, so value 0 maps exactly onto the middle colour
PNG_COMPRESS_LEVEL = 1  # zlib level: cheaper CPU per repaint, ~12% more bytes than 9
TOOLTIP_BLOCKS = 16  # per side; each tooltip rect costs client time (measured in bench/)

# ColorBrewer RdBu, reversed so negative = blue, 0 = near white, positive = red.
DIVERGING_COLORS: tuple[str, ...] = (
    "#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
    "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f",
)  # fmt: skip


@dataclass(frozen=True)
class Window:
    """Half-open cell window: rows ``row0 … row1 - 1`` (positions), cols ``col0 … col1 - 1``."""

    row0: int
    row1: int
    col0: int
    col1: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.row1 - self.row0, self.col1 - self.col0


@dataclass(frozen=True)
class Annotation:
    """A note drawn on a chart in data coordinates: a dashed rule, a label, or both.

    Only ``x`` (and no ``y``): a vertical rule across the plot; only ``y``: a horizontal one;
    ``x, y, x2, y2``: a segment. ``label_at`` places ``text`` (default: next to the rule's start);
    the label is dark with a white halo so it reads on any colour of the heatmap below it.
    """

    text: str = ""
    x: float | None = None
    y: float | None = None
    x2: float | None = None
    y2: float | None = None
    label_at: tuple[float, float] | None = None
    align: Literal["left", "center", "right"] = "left"

    def __post_init__(self) -> None:
        if self.x is None and self.y is None and self.label_at is None:
            raise ValueError("An annotation needs a rule position (x and/or y) or label_at.")
        if (self.x2 is None) != (self.y2 is None):
            raise ValueError("Give both x2 and y2 (a segment) or neither.")


ANNOTATION_INK = "#1a1a1a"  # on the heatmap's light-to-saturated colours, with a white halo


def annotation_layers(
    annotations: Sequence[Annotation], x: dict[str, Any], y: dict[str, Any]
) -> list[dict[str, Any]]:
    """Vega-Lite layers (inline data) drawing ``annotations`` on the scales of ``x`` and ``y``.

    ``x``/``y`` are the chart's position channel definitions; their ``scale`` and ``axis`` are
    reused so the notes sit on the same scales as the data.
    """
    layers: list[dict[str, Any]] = []
    shared = {k: v for k, v in x.items() if k in ("scale", "axis", "title")}
    shared_y = {k: v for k, v in y.items() if k in ("scale", "axis", "title")}
    for note in annotations:
        if note.x is not None or note.y is not None:
            row: dict[str, float] = {}
            encoding: dict[str, Any] = {}
            for key, value in (("ax", note.x), ("ay", note.y), ("ax2", note.x2), ("ay2", note.y2)):
                if value is not None:
                    row[key] = float(value)
            if "ax" in row:
                encoding["x"] = {"field": "ax", "type": "quantitative", **shared}
            if "ay" in row:
                encoding["y"] = {"field": "ay", "type": "quantitative", **shared_y}
            if "ax2" in row:
                encoding["x2"] = {"field": "ax2"}
                encoding["y2"] = {"field": "ay2"}
            layers.append(
                {
                    "data": {"values": [row]},
                    "mark": {"type": "rule", "color": ANNOTATION_INK, "strokeDash": [5, 3],
                             "strokeWidth": 1.5},
                    "encoding": encoding,
                }
            )  # fmt: skip
        if not note.text:
            continue
        at = note.label_at or (
            note.x if note.x is not None else 0.0,
            note.y if note.y is not None else 0.0,
        )
        base = {
            "data": {"values": [{"tx": float(at[0]), "ty": float(at[1]), "text": note.text}]},
            "encoding": {
                "x": {"field": "tx", "type": "quantitative", **shared},
                "y": {"field": "ty", "type": "quantitative", **shared_y},
                "text": {"field": "text", "type": "nominal"},
            },
        }
        text = {"type": "text", "align": note.align, "baseline": "middle", "dx": 5, "dy": -8,
                "fontSize": 12, "fontWeight": "bold"}  # fmt: skip
        halo = {**text, "stroke": "#ffffff", "strokeWidth": 4, "strokeOpacity": 0.9,
                "strokeJoin": "round", "color": "#ffffff"}  # fmt: skip
        layers.append({**base, "mark": halo})
        layers.append({**base, "mark": {**text, "color": ANNOTATION_INK}})
    return layers


def position_layers(
    view: str, window: Window, x: dict[str, Any], y: dict[str, Any], *, columns: bool = False
) -> list[dict[str, Any]]:
    """Layers outlining the row of the linked position (``pos``, see :mod:`posviz.charts.linked`)
    across the window, and with ``columns`` its column too (a position × position matrix).

    Each outline is drawn twice, a wide white halo under a thin dark line, so it reads on red,
    white and blue cells alike; it disappears while ``pos`` lies outside the window. The layers
    are named ``<view>_row`` / ``<view>_column`` (and ``…_halo``): Vega's SVG gives their marks
    these classes.
    """
    shared = {k: v for k, v in x.items() if k in ("scale", "axis", "title")}
    shared_y = {k: v for k, v in y.items() if k in ("scale", "axis", "title")}
    w, pos = window, POSITION_PARAM
    bands = [("row", "y", "x", shared_y, shared, (w.row0, w.row1), (w.col0, w.col1))]
    if columns:
        bands.append(("column", "x", "y", shared, shared_y, (w.col0, w.col1), (w.row0, w.row1)))
    layers: list[dict[str, Any]] = []
    for kind, along, across, scale, other, (lo, hi), (start, stop) in bands:
        band = {
            "data": {"values": [{}]},
            "transform": [
                {"calculate": pos, "as": "p0"},
                {"calculate": f"{pos} + 1", "as": "p1"},
                {"filter": f"datum.p0 >= {lo} && datum.p0 < {hi}"},
            ],
            "encoding": {
                along: {"field": "p0", "type": "quantitative", **scale},
                f"{along}2": {"field": "p1"},
                across: {"datum": start, "type": "quantitative", **other},
                f"{across}2": {"datum": stop},
            },
        }
        for suffix, color, width in (("_halo", "#ffffff", 4), ("", ANNOTATION_INK, 1.5)):
            mark = {"type": "rect", "fill": color, "fillOpacity": 0, "stroke": color,
                    "strokeWidth": width, "clip": True}  # fmt: skip  # every colour named
            layers.append({"name": f"{view}_{kind}{suffix}", **band, "mark": mark})
    return layers


@dataclass(frozen=True)
class HeatmapImage:
    """A window of a table rendered as a PNG, with what the rendering did to it.

    ``row_factor × col_factor`` cells were reduced (``reduce``) into each pixel; ``(1, 1)`` is 1:1.
    """

    png: bytes
    window: Window
    row_factor: int
    col_factor: int
    reduce: str
    levels: int
    vmax: float
    pixels: tuple[int, int]  # (height, width) of the PNG

    @property
    def is_exact(self) -> bool:
        return self.row_factor == 1 and self.col_factor == 1

    @property
    def data_url(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    def describe(self) -> str:
        """One honest line about the rendering, e.g. "reduced: 1 pixel = 8×8 cells (mean)"."""
        rows, cols = self.window.shape
        if self.is_exact:
            text = f"1:1 — each of the {rows}×{cols} cells is one pixel"
        else:
            text = (
                f"reduced: 1 pixel = {self.row_factor}×{self.col_factor} cells "
                f"({self.reduce}) — zoom to a window of ≤ {MAX_SIDE_1TO1} cells a side for 1:1"
            )
        return f"{text}; colour ±{self.vmax:.3g} in {self.levels} levels"


def _check_table(matrix: np.ndarray) -> np.ndarray:
    array = np.asarray(matrix)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(
            f"matrix has shape {array.shape}; expected a non-empty 2-D table "
            "(n_positions, d_model)."
        )
    if not np.issubdtype(array.dtype, np.floating) and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"matrix has dtype {array.dtype}; expected real numbers.")
    if max(array.shape) > MAX_TABLE_SIDE:
        raise ValueError(
            f"matrix is {array.shape[0]}×{array.shape[1]}; the heatmap draws at most "
            f"{MAX_TABLE_SIDE} cells a side. "
            f"Slice the table first (e.g. matrix[:{MAX_TABLE_SIDE}])."
        )
    return array


def _require_finite(values: np.ndarray | float) -> None:
    if not np.isfinite(values).all():
        raise ValueError("matrix contains NaN/inf; replace them (np.nan_to_num) before drawing.")


def color_limit(matrix: np.ndarray) -> float:
    """``max |matrix|`` without an ``abs`` copy (fast on 8192×8192); raises on NaN/inf."""
    table = _check_table(matrix)
    limit = float(max(table.max(), -table.min()))
    _require_finite(limit)  # NaN/inf anywhere propagates into max/min
    return limit


def _check_window(window: Window | tuple[int, int, int, int] | None, shape: tuple[int, int]):
    n, d = shape
    if window is None:
        return Window(0, n, 0, d)
    w = window if isinstance(window, Window) else Window(*(int(v) for v in window))
    if not (0 <= w.row0 < w.row1 <= n and 0 <= w.col0 < w.col1 <= d):
        raise ValueError(
            f"window rows {w.row0}…{w.row1 - 1}, cols {w.col0}…{w.col1 - 1} does not fit a "
            f"{n}×{d} table; rows must lie in 0…{n - 1} and cols in 0…{d - 1}, start before end."
        )
    return w


def lod_factors(shape: tuple[int, int], max_side: int = MAX_SIDE_1TO1) -> tuple[int, int]:
    """Smallest whole block size ``(rows, cols)`` that brings ``shape`` down to ≤ ``max_side``."""
    return max(1, math.ceil(shape[0] / max_side)), max(1, math.ceil(shape[1] / max_side))


_BAND_CELLS = 4_000_000  # cells converted to float64 at a time


def _block_stats(
    matrix: np.ndarray, row_factor: int, col_factor: int, hows: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """Block reductions ``how -> (ceil(n/rf), ceil(d/cf))`` computed in one pass over row bands."""
    n, d = matrix.shape
    rows, cols = math.ceil(n / row_factor), math.ceil(d / col_factor)
    out = {how: np.empty((rows, cols)) for how in hows}
    band = max(1, _BAND_CELLS // (row_factor * cols * col_factor))  # output rows per band
    ragged = n % row_factor or d % col_factor
    nan_safe = {"mean": np.nanmean, "min": np.nanmin, "max": np.nanmax}
    plain = {"mean": np.mean, "min": np.min, "max": np.max}
    for r in range(0, rows, band):
        chunk = matrix[r * row_factor : (r + band) * row_factor]
        if ragged or not np.issubdtype(chunk.dtype, np.floating):
            chunk = np.asarray(chunk, dtype=np.float64)  # floats are read as they are (no copy)
        k = math.ceil(chunk.shape[0] / row_factor)
        if ragged:
            padded = np.full((k * row_factor, cols * col_factor), np.nan)  # NaN = outside
            padded[: chunk.shape[0], :d] = chunk
            chunk = padded
        blocks = chunk.reshape(k, row_factor, cols, col_factor)
        for how in hows:
            if how == "absmax":
                flat = blocks.transpose(0, 2, 1, 3).reshape(k, cols, row_factor * col_factor)
                pick = np.nan_to_num(np.abs(flat), nan=-1.0).argmax(axis=2)
                out[how][r : r + k] = np.take_along_axis(flat, pick[..., None], axis=2)[..., 0]
            elif how == "mean":  # float64 accumulation even for float32 tables
                reduce = nan_safe[how] if ragged else plain[how]
                out[how][r : r + k] = reduce(blocks, axis=(1, 3), dtype=np.float64)
            else:
                out[how][r : r + k] = (nan_safe if ragged else plain)[how](blocks, axis=(1, 3))
    return out


def _block_reduce(matrix: np.ndarray, row_factor: int, col_factor: int, how: str) -> np.ndarray:
    return _block_stats(matrix, row_factor, col_factor, (how,))[how]


def reduce_blocks(
    matrix: np.ndarray, row_factor: int, col_factor: int, how: Reduce = "mean"
) -> np.ndarray:
    """Reduce ``(n, d)`` to ``(ceil(n/row_factor), ceil(d/col_factor))`` by whole blocks.

    ``"mean"``: block mean (edge blocks average the cells they have). ``"absmax"``: the signed
    value of largest magnitude in the block (keeps fast oscillations visible where a mean cancels
    them out). Returns float64.
    """
    if how not in ("mean", "absmax"):
        raise ValueError(f"reduce={how!r} is unknown; use 'mean' or 'absmax'.")
    return _block_reduce(matrix, int(row_factor), int(col_factor), how)


def _palette(levels: int) -> np.ndarray:
    """``(levels, 3)`` uint8 RGB of the diverging scale, sampled evenly from −vmax to +vmax."""
    stops = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in DIVERGING_COLORS], float)
    where = np.linspace(0.0, len(DIVERGING_COLORS) - 1.0, levels)
    rgb = [np.interp(where, np.arange(len(stops)), stops[:, ch]) for ch in range(3)]
    return np.round(np.stack(rgb, axis=1)).astype(np.uint8)


def _encode_png(values: np.ndarray, vmax: float, levels: int) -> bytes:
    from PIL import Image  # Pillow ships with streamlit

    half = 0.5 * (levels - 1)  # index = round((clip(v / vmax) + 1) * half), computed in place
    scaled = np.multiply(values, half / vmax, dtype=np.float64)
    np.clip(scaled, -half, half, out=scaled)
    scaled += half
    image = Image.fromarray(np.rint(scaled, out=scaled).astype(np.uint8), mode="P")
    image.putpalette(_palette(levels).ravel().tolist())
    buffer = io.BytesIO()
    # zlib level 1: 1024² sinusoid 10 ms / 470 kB vs optimize=True 15 ms / 417 kB (bench/).
    image.save(
        buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL, bits=4 if levels <= 16 else 8
    )
    return buffer.getvalue()


def heatmap_image(
    matrix: np.ndarray,
    *,
    window: Window | tuple[int, int, int, int] | None = None,
    max_side: int = MAX_SIDE_1TO1,
    reduce: Reduce = "mean",
    vmax: float | None = None,
) -> HeatmapImage:
    """Render ``matrix[window]`` as a palette PNG: 1:1 if it fits ``max_side``, else block-reduced.

    Args:
        matrix: ``(n_positions, d_model)``, at most 8192 a side, finite.
        window: ``(row0, row1, col0, col1)`` half-open; default the whole table.
        reduce: how blocks are reduced when the window is bigger than ``max_side``.
        vmax: colour limit (symmetric); default ``max |matrix|`` over the whole table, so colours
            mean the same in every window.
    """
    table = _check_table(matrix)
    w = _check_window(window, table.shape)
    part = table[w.row0 : w.row1, w.col0 : w.col1]
    _require_finite(part)  # only the drawn window is scanned; vmax covers the rest
    if vmax is None:
        vmax = color_limit(table)
    vmax = vmax if math.isfinite(vmax) and vmax > 0 else 1.0
    fy, fx = lod_factors(w.shape, max_side)
    values = reduce_blocks(part, fy, fx, reduce) if (fy, fx) != (1, 1) else part
    for levels in _LEVELS:
        png = _encode_png(values, vmax, levels)
        if len(png) * 4 / 3 <= _IMAGE_BUDGET:
            break
    return HeatmapImage(png, w, fy, fx, reduce, levels, vmax, tuple(values.shape))


def _range_labels(starts: np.ndarray, stops: np.ndarray) -> list[str]:
    """Inclusive labels: "a" for a one-cell range, else "a–b" (``stops`` exclusive)."""
    pairs = zip(starts.tolist(), stops.tolist(), strict=True)
    return [f"{a}" if b - a == 1 else f"{a}–{b - 1}" for a, b in pairs]


def _tooltip_frame(part: np.ndarray, w: Window, blocks: int, vmax: float):
    """Tooltip blocks of ``part`` (= ``matrix[window]``): ``(frame, (block_rows, block_cols))``.

    One row per block (≤ ``blocks``² rows): its half-open cell range ``row0…row1``,
    ``col0…col1``, ready-made labels ``positions``/``dimensions`` (so the browser runs no
    transforms: measured ~30 ms less per repaint in bench/), and mean/min/max rounded to 6
    significant digits of ``vmax``. For 1×1 blocks only the exact value is kept, in ``mean``.
    """
    by, bx = lod_factors(part.shape, blocks)
    ii, jj = np.indices((math.ceil(part.shape[0] / by), math.ceil(part.shape[1] / bx)))
    decimals = max(0, 6 - math.floor(math.log10(vmax)))
    row0, col0 = w.row0 + ii.ravel() * by, w.col0 + jj.ravel() * bx
    row1, col1 = np.minimum(row0 + by, w.row1), np.minimum(col0 + bx, w.col1)
    frame = {"row0": row0, "row1": row1, "col0": col0, "col1": col1}
    frame["positions"], frame["dimensions"] = _range_labels(row0, row1), _range_labels(col0, col1)
    hows = ("mean",) if (by, bx) == (1, 1) else ("mean", "min", "max")
    for how, values in _block_stats(part, by, bx, hows).items():
        frame[how] = np.round(values.ravel(), decimals)
    return pd.DataFrame(frame), (by, bx)


class VegaLiteChart:
    """A finished Vega-Lite spec whose data are DataFrames; it quacks like an Altair chart.

    Building the heatmap with Altair objects and letting ``to_dict()`` validate them against the
    Vega-Lite JSON schema cost ~35 ms per repaint (profiled in bench/); this spec is written
    directly instead, and ``tests/test_charts.py`` validates every variant against the schema once
    (``to_dict(validate=True)``). ``st.altair_chart``, :mod:`posviz.export` and notebooks only call
    ``to_dict()`` (or ``_repr_mimebundle_``); for Altair's editing methods call :meth:`to_altair`.

    ``spec`` refers to each frame in ``frames`` as ``{"data": {"name": key}}``.
    """

    def __init__(self, spec: dict, frames: dict[str, pd.DataFrame]) -> None:
        self.spec, self.frames = spec, frames

    def to_dict(self, validate: bool = False, *, format: str = "vega-lite", **_ignored) -> dict:
        """The spec with each frame passed through Altair's active data transformer.

        Inside ``st.altair_chart`` that transformer turns a frame into Arrow and returns
        ``{"name": ...}``; by default it returns ``{"values": [...]}``, which is hoisted into a
        top-level ``datasets`` entry (as Altair does).
        """
        if format != "vega-lite":
            raise ValueError(f"format={format!r} is not supported; use to_altair().to_dict().")
        transform = alt.data_transformers.get()
        datasets: dict[str, list] = {}
        layers = []
        for layer in self.spec["layer"]:
            frame = self.frames.get(layer.get("data", {}).get("name", ""))
            if frame is not None:
                data = transform(frame)
                if "values" in data:
                    values = data["values"]
                    digest = hashlib.md5(json.dumps(values, sort_keys=True).encode()).hexdigest()
                    datasets[f"data-{digest}"] = values
                    data = {"name": f"data-{digest}"}
                layer = {**layer, "data": data}
            layers.append(layer)
        out = {**self.spec, "layer": layers}
        if datasets:
            out["datasets"] = {**out.get("datasets", {}), **datasets}
        if validate:
            alt.LayerChart.validate(out)  # jsonschema ValidationError if the spec is malformed
        return out

    def to_json(self, indent: int | None = 2, **kwargs) -> str:
        return json.dumps(self.to_dict(**kwargs), indent=indent)

    def to_altair(self) -> alt.LayerChart:
        """The same chart as an ``alt.LayerChart`` (slower to build; for editing it further)."""
        return alt.LayerChart.from_dict(self.to_dict(), validate=False)

    def _repr_mimebundle_(self, *_args, **_kwargs) -> dict:
        return {"application/vnd.vegalite.v5+json": self.to_dict()}


def _axis_channel(
    field: str,
    title: str,
    domain: list[int],
    reverse: bool = False,
    stretch: str = "",
    size: tuple[str, str] = ("width", "height"),
) -> dict:
    """A quantitative position channel over ``domain``; ``stretch`` (``"x"``/``"y"``) lets the
    domain grow with the plot's aspect ratio so that cells stay square (see ``square=``);
    ``size`` names the plot's width and height (Vega signals or numbers)."""
    scale: dict[str, Any] = {"domain": domain, "nice": False, "zero": False}
    if stretch:
        width, height = size
        ratio = f"{width} / {height}" if stretch == "x" else f"{height} / {width}"
        span = domain[1] - domain[0]
        scale = {
            "domainMin": domain[0],
            "domainMax": {"expr": f"{domain[0]} + {span} * max(1, {ratio})"},
            "nice": False,
            "zero": False,
        }
    if reverse:
        scale["reverse"] = True
    axis: dict[str, Any] = {"format": "d", "tickMinStep": 1}
    if stretch:  # ticks only where there are cells, not in the blank the aspect ratio adds
        axis["values"] = _ticks(domain[0], domain[1])
    return {"field": field, "type": "quantitative", "title": title, "scale": scale, "axis": axis}


def _ticks(start: int, stop: int, most: int = 6) -> list[int]:
    """Round tick values in ``[start, stop]``: steps of 1, 2 or 5 × 10^k, at most ``most + 1``."""
    span = max(1, stop - start)
    step = 1
    for decade in (10**k for k in range(10)):
        step = next((f * decade for f in (1, 2, 5) if span / (f * decade) <= most), 0)
        if step:
            break
    first = -(-start // step) * step
    return list(range(first, stop + 1, step))


def _tooltip(field: str, kind: str, title: str, fmt: str | None = None) -> dict:
    out = {"field": field, "type": kind, "title": title}
    if fmt:
        out["format"] = fmt
    return out


def heatmap_chart(
    matrix: np.ndarray,
    *,
    window: Window | tuple[int, int, int, int] | None = None,
    reduce: Reduce = "mean",
    vmax: float | None = None,
    title: str | None = None,
    x_title: str = "dimension",
    y_title: str = "position",
    value_title: str = "value",
    width: int = 800,
    height: int | None = None,
    tooltip_blocks: int = TOOLTIP_BLOCKS,
    renderer: Literal["canvas", "svg"] = "canvas",
    square: bool = False,
    annotations: Sequence[Annotation] = (),
    subtitle: Sequence[str] = (),
    linked_as: str | None = None,
    size_signals: tuple[str, str] = ("width", "height"),
    legend: Literal["right", "bottom"] | None = None,
) -> VegaLiteChart:
    """Heatmap of ``matrix[window]`` (positions down, dimensions across) as a Vega-Lite layer chart.

    Layers: the PNG (``image`` mark, nearest-neighbour scaling) and an invisible grid of tooltip
    blocks whose colour encoding (block mean, explicit domain) carries the diverging legend. The
    subtitle states whether the view is 1:1 or reduced (see :meth:`HeatmapImage.describe`).
    Payload ≤ 1 MB for any window of any table up to 8192×8192 (see :func:`payload_bytes`).

    Args:
        matrix: ``(n_positions, d_model)``.
        window: ``(row0, row1, col0, col1)`` half-open cell window; default the whole table.
        reduce: ``"mean"`` or ``"absmax"`` for reduced views.
        vmax: symmetric colour limit; default ``max |matrix|`` of the whole table.
        width, height: chart size in pixels (height defaults to the window's aspect, 160…720).
        renderer: Vega renderer requested through ``usermeta.embedOptions`` (honoured by
            Streamlit and vega-embed); canvas draws the image and tooltip grid faster (bench/).
        square: keep every cell square at any width (for position × position matrices): the
            longer side of the plot shows more of the axis instead of stretching the image.
        annotations: notes drawn over the image (:class:`Annotation`), e.g. a seam or a band.
        subtitle: lines added under the title, before the 1:1/reduced statement.
        linked_as: the view's name in a :class:`posviz.charts.linked.LinkedChart` whose ``pos``
            this heatmap shows (its row outlined; a ``square`` matrix's column too) and sets
            (the row under the pointer, with ``rows_of=[linked_as]``). Such a chart draws only
            inside that linked chart, which defines ``pos``.
        size_signals: the Vega expressions of the plot's width and height that keep a
            ``square`` matrix square (:func:`posviz.charts.linked.view_size` in a linked chart).
        legend: where the colour legend goes; default below a ``square`` matrix (which keeps
            the width for itself), else to the right.
    Returns:
        :class:`VegaLiteChart` (``to_dict()`` like an Altair chart; ``to_altair()`` for an
        ``alt.LayerChart``); never displayed here.
    """
    if renderer not in ("canvas", "svg"):
        raise ValueError(f"renderer={renderer!r} is unknown; use 'canvas' or 'svg'.")
    img = heatmap_image(matrix, window=window, reduce=reduce, vmax=vmax)
    w = img.window
    rows, cols = w.shape
    if height is None:
        height = int(min(720, max(160, width * img.pixels[0] / img.pixels[1])))
    x = _axis_channel("col0", x_title, [w.col0, w.col1], stretch="x" if square else "",
                      size=size_signals)  # fmt: skip
    y = _axis_channel("row0", y_title, [w.row0, w.row1], reverse=True,
                      stretch="y" if square else "", size=size_signals)  # fmt: skip
    frame = pd.DataFrame({"row0": [w.row0], "row1": [w.row1], "col0": [w.col0],
                          "col1": [w.col1], "url": [img.data_url]})  # fmt: skip
    image = {
        "data": {"name": "image"},
        "mark": {"type": "image", "aspect": False, "smooth": False},
        "encoding": {
            "url": {"field": "url", "type": "nominal"},
            "x": x,
            "x2": {"field": "col1"},
            "y": y,
            "y2": {"field": "row1"},
        },
    }
    part = np.asarray(matrix)[w.row0 : w.row1, w.col0 : w.col1]
    tips, (by, bx) = _tooltip_frame(part, w, tooltip_blocks, img.vmax)
    fields = [_tooltip("positions", "nominal", y_title), _tooltip("dimensions", "nominal", x_title)]
    if (by, bx) == (1, 1):
        fields.append(_tooltip("mean", "quantitative", value_title, ".6~g"))
    else:
        fields += [_tooltip(k, "quantitative", f"{k} of block", ".6~g")
                   for k in ("mean", "min", "max")]  # fmt: skip
    stops = np.linspace(-img.vmax, img.vmax, len(DIVERGING_COLORS)).tolist()
    hover = {
        **({"name": cells_mark(linked_as)} if linked_as else {}),
        "data": {"name": "tooltips"},
        "mark": {
            "type": "rect",
            "fillOpacity": 0.0,
            "stroke": "#222222",
            "strokeOpacity": 0.0,
        },
        "encoding": {
            "x": x,
            "x2": {"field": "col1"},
            "y": y,
            "y2": {"field": "row1"},
            "tooltip": fields,
            "color": {  # drives the legend only: the rects stay invisible (fillOpacity 0)
                "field": "mean",
                "type": "quantitative",
                "title": value_title,
                "scale": {"domain": stops, "range": list(DIVERGING_COLORS), "interpolate": "rgb"},
                # a square matrix keeps the page's width for itself: its legend goes underneath
                "legend": (
                    {"orient": "bottom", "direction": "horizontal", "gradientLength": 160}
                    if (legend or ("bottom" if square else "right")) == "bottom"
                    else {"gradientLength": min(240, max(100, height - 40))}
                ),
            },
        },
    }
    n, d = np.shape(matrix)
    heading = title or f"{n}×{d} table"
    if (rows, cols) != (n, d):
        heading += f" — {y_title}s {w.row0}…{w.row1 - 1}, {x_title}s {w.col0}…{w.col1 - 1}"
    # short lines: a subtitle wider than a phone's chart is cut, never wrapped, by Vega
    lines = [*subtitle, *img.describe().replace(" — ", "; ").split("; ")]
    spec = {
        "$schema": alt.SCHEMA_URL,
        # the linked outline sits under the invisible hover grid, which keeps the pointer's events
        "layer": [
            image,
            *(position_layers(linked_as, w, x, y, columns=square) if linked_as else []),
            hover,
            *annotation_layers(annotations, x, y),
        ],
        "autosize": {"type": "fit-x", "contains": "padding"},
        "width": width,
        "height": height,
        "title": {
            "text": heading,
            "subtitle": lines,
            "anchor": "start",
            "subtitleColor": dict(ADAPTIVE_TEXT),
        },
        # the chart's aria-label (screen readers); "square" tells tests the cells must stay square
        "description": f"{heading}. {'; '.join(lines)}" + (" Square cells." if square else ""),
        "usermeta": {"embedOptions": {"renderer": renderer}},
    }
    return VegaLiteChart(spec, {"image": frame, "tooltips": tips})


def payload_bytes(chart: alt.TopLevelMixin | VegaLiteChart) -> int:
    """Bytes of the chart's Vega-Lite JSON with its data inlined (what a browser receives)."""
    return len(json.dumps(chart.to_dict(), separators=(",", ":")).encode())
