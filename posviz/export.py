"""Exports: charts as PNG, SVG, Vega-Lite JSON; matrices as CSV, ``.npy``, Embedding Projector TSV.

Everything returns ``bytes`` ready to be saved or offered for download; no streamlit here. Charts
are rendered server-side by ``vl-convert`` (Vega's own renderer, no browser), so an export looks
like the chart on screen, including heatmaps drawn as embedded (data-URL) PNG images.

Example::

    import posviz
    from posviz import export
    pe = posviz.sinusoidal(128, 512)
    open("pe.png", "wb").write(export.chart_png(posviz.heatmap_chart(pe)))
    vectors, metadata = export.projector_tsv(pe)   # load both at projector.tensorflow.org
"""

from __future__ import annotations

import copy
import io
import json
import re
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

#: Width given to charts that ask for their container's width (there is no container off-screen).
EXPORT_WIDTH = 900
#: Largest matrix offered as text (CSV / TSV), in cells; a 1024×1024 table is ~10 MB of CSV.
MAX_TEXT_CELLS = 4 * 1024 * 1024
#: Largest matrix offered as ``.npy``, in bytes.
MAX_NPY_BYTES = 512 * 1024 * 1024

_FORMAT = "%.7g"  # float32 carries ~7 significant digits; more would only add noise and bytes

#: the lock every default :func:`chart_spec` takes around Altair's global registries; an app
#: whose framework switches them too hands its own lock over (:func:`share_altair_lock`)
_own_lock: Any = threading.Lock()

MIME = {
    "png": "image/png",
    "svg": "image/svg+xml",
    "json": "application/json",
    "csv": "text/csv",
    "npy": "application/octet-stream",
    "tsv": "text/tab-separated-values",
}


def chart_spec(chart: alt.TopLevelMixin, *, lock: Any = None) -> dict[str, Any]:
    """The chart's complete Vega-Lite spec, data inlined, ready for any Vega-Lite renderer.

    Altair's 5 000-row guard is lifted for this call only: charts in posviz are bounded by the views
    that build them. Altair's transformer registry is global, so the switch happens under ``lock``
    (by default the one :func:`share_altair_lock` was given: Streamlit's, once ``posviz.ui`` is
    loaded). Widths of ``"container"`` become :data:`EXPORT_WIDTH` pixels.
    """
    with lock or _own_lock, alt.data_transformers.enable("default", max_rows=None):
        spec = chart.to_dict()
    return _fix_container_sizes(spec)


def share_altair_lock(lock: Any) -> None:
    """Make ``lock`` the default lock of :func:`chart_spec`: the one a framework holds while it
    switches Altair's registries itself.

    Two locks around one registry exclude nothing: Streamlit draws a chart with its own data
    transformer switched on under its lock, and a spec built under another lock at that moment
    switched the transformer back in between, so a session's chart carried the other chart's
    data or its own inline (issue 35; ``tests/test_altair_registry.py``).
    """
    global _own_lock
    _own_lock = lock


def _fix_container_sizes(node: Any) -> Any:
    """Replace ``width/height: "container"`` (meaningless off-screen) by fixed sizes."""
    if isinstance(node, dict):
        out = {key: _fix_container_sizes(value) for key, value in node.items()}
        if out.get("width") == "container":
            out["width"] = EXPORT_WIDTH
        if out.get("height") == "container":
            out["height"] = EXPORT_WIDTH // 2
        return out
    if isinstance(node, list):
        return [_fix_container_sizes(item) for item in node]
    return node


def chart_json(chart: alt.TopLevelMixin, *, lock: Any = None) -> bytes:
    """Vega-Lite JSON of the chart (opens in the Vega editor, or ``alt.Chart.from_json``)."""
    return json.dumps(chart_spec(chart, lock=lock), indent=1).encode()


def _vl_version(spec: dict[str, Any]) -> str | None:
    """The Vega-Lite ``major.minor`` the spec was written for, if vl-convert bundles it."""
    import vl_convert

    schema = str(spec.get("$schema", ""))  # e.g. ".../vega-lite/v5.20.1.json"
    version = schema.rsplit("/v", 1)[-1].removesuffix(".json")
    major_minor = ".".join(version.split(".")[:2])
    return major_minor if major_minor in vl_convert.get_vegalite_versions() else None


def chart_png(chart: alt.TopLevelMixin, *, scale: float = 2.0, lock: Any = None) -> bytes:
    """PNG of the chart rendered by vl-convert; ``scale=2`` gives crisp slides, ``1`` screen pixels.

    Raises:
        ValueError: ``scale`` is outside (0, 8], or the spec cannot be rendered.
    """
    if not 0 < scale <= 8:
        raise ValueError(f"PNG scale must be in (0, 8], got {scale}.")
    import vl_convert

    spec = chart_spec(chart, lock=lock)
    try:
        return vl_convert.vegalite_to_png(spec, vl_version=_vl_version(spec), scale=scale)
    except ValueError as exc:
        raise ValueError(f"The chart could not be rendered to PNG: {exc}") from None


def spec_png(spec: dict[str, Any], *, scale: float = 2.0) -> bytes:
    """PNG of a finished Vega-Lite spec (data inlined, as :func:`chart_spec` returns it).

    Raises:
        ValueError: ``scale`` is outside (0, 8], or the spec cannot be rendered.
    """
    if not 0 < scale <= 8:
        raise ValueError(f"PNG scale must be in (0, 8], got {scale}.")
    import vl_convert

    try:
        return vl_convert.vegalite_to_png(spec, vl_version=_vl_version(spec), scale=scale)
    except ValueError as exc:
        raise ValueError(f"The chart could not be rendered to PNG: {exc}") from None


def thumbnail_png(
    spec: dict[str, Any], *, width: int, height: int, scale: float = 2.0, plot: bool = False
) -> bytes:
    """PNG of a finished Vega-Lite spec drawn ``width`` × ``height`` CSS pixels, without its
    title (a card beside it says what it shows); ``spec`` itself is left unchanged. ``plot``:
    a square plot ``height`` on a side, axes and legend around it, centred on a transparent strip
    ``width`` wide (a square heatmap drawn square, not widened to fill a wide box with empty
    grid, and as tall on a card as a wide picture).

    Raises:
        ValueError: as :func:`spec_png`.
    """
    small = {**copy.deepcopy(spec), "width": height if plot else width, "height": height}
    if plot:
        small["autosize"] = {"type": "pad"}
    small.pop("title", None)
    png = spec_png(small, scale=scale)
    return _centred(png, round(width * scale)) if plot else png


def _centred(png: bytes, width: int) -> bytes:
    """``png`` centred on a transparent image ``width`` pixels wide (unchanged if as wide)."""
    from PIL import Image  # Pillow ships with streamlit

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    if image.width >= width:
        return png
    canvas = Image.new("RGBA", (width, image.height), (0, 0, 0, 0))
    canvas.paste(image, ((width - image.width) // 2, 0))
    out = io.BytesIO()
    canvas.save(out, format="PNG", optimize=True)
    return out.getvalue()


def chart_svg(chart: alt.TopLevelMixin, *, lock: Any = None) -> bytes:
    """SVG of the chart rendered by vl-convert (embedded heatmap images stay embedded).

    Raises:
        ValueError: the spec cannot be rendered.
    """
    import vl_convert

    spec = chart_spec(chart, lock=lock)
    try:
        return vl_convert.vegalite_to_svg(spec, vl_version=_vl_version(spec)).encode()
    except ValueError as exc:
        raise ValueError(f"The chart could not be rendered to SVG: {exc}") from None


def as_matrix(data: Any) -> np.ndarray:
    """``data`` as a 2-D numeric array: a vector becomes one column.

    Raises:
        ValueError: not numeric (e.g. an object array), or more than 2 dimensions.
    """
    array = np.asarray(data)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise ValueError(f"Only numeric arrays can be exported, not dtype {array.dtype}.")
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(
            f"Only 1-D or 2-D arrays can be exported as a table, got shape {array.shape}; "
            "use the .npy export for arrays with more dimensions."
        )
    return array


def text_export_problem(data: Any, *, max_cells: int | None = MAX_TEXT_CELLS) -> str | None:
    """Why ``data`` cannot be exported as text (CSV/TSV), or ``None`` if it can.

    ``max_cells=None`` lifts the size limit (a file written from the shell, not a download).
    """
    try:
        matrix = as_matrix(data)
    except ValueError as exc:
        return str(exc)
    if max_cells is not None and matrix.size > max_cells:
        return (
            f"{matrix.shape[0]}×{matrix.shape[1]} = {matrix.size:,} cells is more than the "
            f"{max_cells:,} offered as text; download the .npy instead."
        )
    return None


def column_names(data: Any) -> list[str]:
    """CSV column names for ``data``: a ``DataFrame``'s own (``dim 64``, ``mean``, …), else
    ``dim_0 … dim_{k-1}`` for a plain array's columns.

    Commas, quotes and line breaks in a name become spaces, so the header stays one CSV row.
    """
    if isinstance(data, pd.DataFrame):
        return [re.sub(r'[,"\s]+', " ", str(c)).strip() or f"column_{j}"
                for j, c in enumerate(data.columns)]  # fmt: skip
    return [f"dim_{j}" for j in range(as_matrix(data).shape[1])]


def matrix_csv(
    data: Any,
    *,
    index_name: str = "position",
    max_cells: int | None = MAX_TEXT_CELLS,
    columns: list[str] | None = None,
) -> bytes:
    """CSV with a header ``position,<columns>`` and one row per row of the matrix (``%.7g``).

    A ``DataFrame`` keeps its column names in the header (a chart of dimensions 0, 64 and 128
    exports ``position,dim 0,dim 64,dim 128``); a plain array gets ``dim_0,dim_1,…`` unless
    ``columns`` names them (as :func:`column_names` of the original frame does).

    Raises:
        ValueError: see :func:`text_export_problem` (``max_cells`` as there).
    """
    problem = text_export_problem(data, max_cells=max_cells)
    if problem:
        raise ValueError(problem)
    matrix = as_matrix(data)
    names = column_names(data) if columns is None else column_names(pd.DataFrame(columns=columns))
    if len(names) != matrix.shape[1]:
        raise ValueError(f"{len(names)} column names for {matrix.shape[1]} columns; give one each.")
    header = ",".join([index_name, *names])
    table = np.column_stack([np.arange(matrix.shape[0]), matrix.astype(np.float64)])
    buffer = io.BytesIO()
    fmt = ["%d"] + [_FORMAT] * matrix.shape[1]
    np.savetxt(buffer, table, delimiter=",", fmt=fmt, header=header, comments="", encoding="utf-8")
    return buffer.getvalue()


def matrix_npy(data: Any, *, max_bytes: int | None = MAX_NPY_BYTES) -> bytes:
    """The array as a ``.npy`` file (``np.load(path)`` reads it back; no pickle inside).

    ``max_bytes=None`` lifts the size limit (a file written from the shell, not a download).

    Raises:
        ValueError: not numeric, or larger than ``max_bytes``.
    """
    array = np.asarray(data)
    if array.dtype == object:
        raise ValueError("Only numeric arrays can be exported as .npy, not object arrays.")
    if max_bytes is not None and array.nbytes > max_bytes:
        raise ValueError(
            f"The array is {array.nbytes / 2**20:.0f} MiB, more than the "
            f"{max_bytes / 2**20:.0f} MiB offered for download; save it from a notebook."
        )
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def projector_tsv(data: Any, *, bins: int = 10) -> tuple[bytes, bytes]:
    """Vectors and metadata TSV for the TensorFlow Embedding Projector (projector.tensorflow.org).

    Each row of the matrix is one point (one position); see :func:`projector_vectors` and
    :func:`projector_metadata`.

    Returns:
        ``(vectors_tsv, metadata_tsv)``.
    """
    vectors = projector_vectors(data)
    return vectors, projector_metadata(as_matrix(data).shape[0], bins=bins)


def projector_vectors(data: Any, *, max_cells: int | None = MAX_TEXT_CELLS) -> bytes:
    """The projector's vectors file: one tab-separated row per position, no header.

    Raises:
        ValueError: see :func:`text_export_problem` (``max_cells`` as there).
    """
    problem = text_export_problem(data, max_cells=max_cells)
    if problem:
        raise ValueError(problem)
    buffer = io.BytesIO()
    np.savetxt(buffer, as_matrix(data).astype(np.float64), delimiter="\t", fmt=_FORMAT)
    return buffer.getvalue()


def projector_metadata(n_rows: int, *, bins: int = 10) -> bytes:
    """The projector's metadata file for ``n_rows`` positions: header ``position<TAB>segment``.

    ``segment`` splits the positions into ``bins`` equal runs ("0-12", "13-25", …) so the projector
    can colour points by where they sit (it colours by categories, not by a number).

    Raises:
        ValueError: ``n_rows`` < 0 or ``bins`` < 1.
    """
    if n_rows < 0 or bins < 1:
        raise ValueError(f"Need n_rows >= 0 and bins >= 1, got n_rows={n_rows}, bins={bins}.")
    width = max(1, -(-n_rows // bins))  # ceil(n_rows / bins)
    lines = ["position\tsegment"]
    for p in range(n_rows):
        start = (p // width) * width
        lines.append(f"{p}\t{start}-{min(start + width, n_rows) - 1}")
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------- the Export menu's files

#: A session lives on for ``server.disconnectedSessionTTL`` (120 s) after its tab is closed, with
#: the export buttons of its last run. Buttons hold arrays bigger than this only weakly: while the
#: app's byte-budgeted cache keeps a table it can be exported, and twenty links opened and closed
#: cannot pin twenty tables the cache has already let go.
PIN_LIMIT_BYTES = 8 * 2**20


class HeldData:
    """An export's array: kept as is when small, by weak reference when big.

    :meth:`get` returns the array, or raises ``ValueError`` (with what to do) when a big one has
    been freed since the page was drawn.
    """

    def __init__(self, data: np.ndarray) -> None:
        self.shape: tuple[int, ...] = data.shape
        self.nbytes = int(data.nbytes)
        self._strong: np.ndarray | None = None
        self._weak: weakref.ref[np.ndarray] | None = None
        if self.nbytes > PIN_LIMIT_BYTES:
            self._weak = weakref.ref(data)
        else:
            self._strong = data

    def get(self) -> np.ndarray:
        data = self._strong if self._weak is None else self._weak()
        if data is None:
            raise ValueError(
                f"This {'×'.join(map(str, self.shape))} array is no longer held by the server "
                "(other views have been opened since; big tables are not kept for closed tabs). "
                "Reload the page and export again."
            )
        return data


def safe_stem(name: str) -> str:
    """A file-name stem made of ``[A-Za-z0-9._-]`` only (at most 80 characters)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return stem[:80] or "chart"


@dataclass(frozen=True)
class ExportFile:
    """One file of an Export menu, made by ``make()`` only when it is asked for."""

    kind: str  # png, svg, json, csv, npy, tsv or meta: one per menu (widget keys derive from it)
    label: str
    file_name: str
    make: Callable[[], bytes]
    help: str
    disabled: bool = False

    @property
    def mime(self) -> str | None:
        return MIME.get(self.file_name.rsplit(".", 1)[-1])


def chart_files(chart: alt.TopLevelMixin, *, stem: str, lock: Any = None) -> list[ExportFile]:
    """The chart as PNG, SVG and Vega-Lite JSON (rendered under ``lock``, see :func:`chart_spec`).

    ``make`` looks the renderers up when called, so nothing is rendered before a click.
    """
    png_help = "Image at 2× screen resolution, drawn by vl-convert."
    json_help = (
        "The chart's spec with its data: open it in the Vega editor or `alt.Chart.from_json`."
    )
    return [
        ExportFile("png", "PNG", f"{stem}.png", lambda: chart_png(chart, lock=lock), png_help),
        ExportFile(
            "svg",
            "SVG",
            f"{stem}.svg",
            lambda: chart_svg(chart, lock=lock),
            "Vector image; heatmaps stay embedded images.",
        ),
        ExportFile(
            "json",
            "Vega-Lite JSON",
            f"{stem}.vl.json",
            lambda: chart_json(chart, lock=lock),
            json_help,
        ),
    ]


def data_files(data: Any, *, stem: str) -> list[ExportFile]:
    """The matrix or vector behind a chart as CSV, ``.npy`` and Embedding Projector TSV.

    A file ``data`` is too big or not numeric for is offered disabled, saying why. The files hold
    big arrays only weakly (:class:`HeldData`): the menu runs later, in another thread. A tidy
    table with text columns (a chart's rows: series names beside their numbers) is offered as
    that table's CSV; the matrix formats are then disabled, saying so.
    """
    if isinstance(data, pd.DataFrame) and not all(
        pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in data.dtypes
    ):
        return _table_files(data, stem=stem)
    array = np.asarray(data)
    names = column_names(data) if array.ndim == 2 else None
    problem = text_export_problem(array)
    rows = array.shape[0] if array.ndim else 1  # a vector is exported as one column
    held = HeldData(array)
    text_off = problem is not None
    vectors_help = "For projector.tensorflow.org → Load: the vectors (one row per position) …"
    return [
        ExportFile(
            "csv",
            "CSV",
            f"{stem}.csv",
            lambda: matrix_csv(held.get(), columns=names),
            problem or "One row per position: `position,dim_0,dim_1,…`.",
            disabled=text_off,
        ),
        ExportFile(
            "npy",
            ".npy",
            f"{stem}.npy",
            lambda: matrix_npy(held.get()),
            "`np.load(path)` reads it back exactly (no pickle inside).",
            disabled=array.nbytes > MAX_NPY_BYTES,
        ),
        ExportFile(
            "tsv",
            "Projector vectors",
            f"{stem}.vectors.tsv",
            lambda: projector_vectors(held.get()),
            problem or vectors_help,
            disabled=text_off,
        ),
        ExportFile(
            "meta",
            "Projector metadata",
            f"{stem}.metadata.tsv",
            lambda: projector_metadata(rows),
            problem or "… and their labels (position, segment) to colour points by.",
            disabled=text_off,
        ),
    ]


def table_csv(frame: pd.DataFrame) -> bytes:
    """A tidy table (one row per mark, text and number columns) as CSV with its own header."""
    if frame.size > MAX_TEXT_CELLS:
        raise ValueError(
            f"{frame.shape[0]}×{frame.shape[1]} cells is more than the {MAX_TEXT_CELLS:,} offered "
            "as text."
        )
    return frame.to_csv(index=False, float_format="%.7g").encode("utf-8")


def _table_files(frame: pd.DataFrame, *, stem: str) -> list[ExportFile]:
    why = "A table of text and number columns: its CSV holds every column; no matrix formats."
    too_big = frame.size > MAX_TEXT_CELLS
    return [
        ExportFile(
            "csv",
            "CSV",
            f"{stem}.csv",
            lambda: table_csv(frame),
            "One row per mark of the chart, with the chart's own column names.",
            disabled=too_big,
        ),
        *(
            ExportFile(kind, label, f"{stem}{ext}", lambda: b"", why, disabled=True)
            for kind, label, ext in (
                ("npy", ".npy", ".npy"),
                ("tsv", "Projector vectors", ".vectors.tsv"),
                ("meta", "Projector metadata", ".metadata.tsv"),
            )
        ),
    ]
