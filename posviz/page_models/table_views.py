"""What the shared table views say: their names, which need a page's full width, and each one's
default words (a page may pass its own, e.g. :mod:`posviz.page_models.sinusoidal`'s prose).

A "view" is one section of a page with its own controls (``posviz/ui/*_view.py``,
``posviz/ui/*_views.py``); this module holds their words and choices, the ui draws them.
"""

from __future__ import annotations

from posviz.charts.heatmap import MAX_SIDE_1TO1
from posviz.urlparams import NumberField

#: view id -> label. heatmap/pair/dims/variance/shift are the shared table views (the
#: sinusoidal page uses them too); the rest are the Learned-tables page's own.
TABLE_VIEWS: dict[str, str] = {
    "heatmap": "Heatmap",
    "pair": "Two coordinates",
    "dims": "Dimensions over positions",
    "variance": "Variance per dimension",
    "similarity": "Cosine similarity",
    "shift": "Similarity vs offset",
    "pca2": "PCA trajectory 2-D",
    "pca3": "PCA trajectory 3-D",
    "norms": "Norm per position",
}

#: views that need the page's full width: images with every cell one pixel, and the circle view
#: (which splits its width between a round plot and its controls).
FULL_WIDTH_VIEWS: frozenset[str] = frozenset({"heatmap", "similarity", "pair"})

#: the largest offset k the shift view offers (its chart stays readable).
MAX_SHIFT_SHOWN = 1024

ZOOM_HELP = (
    f"Pick a window of at most {MAX_SIDE_1TO1}×{MAX_SIDE_1TO1} cells: it is drawn 1:1. "
    "Windows of at most 16×16 cells show each cell's exact value on hover."
)
REDUCTION_HELP = (
    "mean: average of each block (fast oscillations cancel to ~0); absmax: the value "
    "of largest magnitude in each block (keeps oscillating columns visible)."
)
HEATMAP_PROSE = (
    "Each row is a position, each column a dimension; colour is the value (blue < 0 < red). "
    "Hover for values (blocks show mean/min/max; zoomed windows of ≤ 16×16 cells show each "
    "cell). The subtitle says whether every cell is its own pixel."
)
#: the heatmap's words on the Learned-tables page (any table, one vector per position).
TABLE_HEATMAP_PROSE = (
    "Row p is the vector the model adds at position p, column i one dimension; "
    "colour is the value (blue < 0 < red, symmetric around 0). A sinusoid shows stripes "
    "that slow down from left to right; a learned table shows which dimensions carry "
    "position at all."
)
DIMENSIONS_PROSE = (
    "Each line is one column of the table read down the positions: how that single "
    "coordinate changes as the token moves along the sequence."
)
VARIANCE_PROSE = (
    "Bar height is how much a dimension varies as the position changes (log scale). A "
    "dimension below the threshold is nearly constant over these positions: adding it to a "
    "word embedding shifts every token by almost the same amount."
)
SHIFT_PROSE = (
    "For every offset k, the similarity of position p with position p + k, computed for all "
    "p. The line is the mean; the shaded band is the range over p. A band of zero width "
    "means the similarity depends only on the distance k, not on where you are."
)
SIMILARITY_PROSE = (
    "Cosine similarity cos(PE(p), PE(q)) of every pair of positions, every pair its own "
    "pixel (red +1 = same direction, white 0 = orthogonal, blue −1 = opposite). A bright "
    "diagonal band that fades with |p − q| means nearby positions look alike: the table "
    "encodes distance."
)
SIN_COS_PROSE = (
    "Each sin/cos pair turns like a clock hand: plotting (sin, cos) puts every position on "
    "the unit circle, starting at 12 o'clock and moving clockwise by ω radians per position. "
    "Fast pairs (small i) wrap around many times; slow pairs barely leave the top."
)
FREE_PAIR_PROSE = (
    "A learned table has no sin/cos pairs, but any two coordinates can be plotted against "
    "each other. The first two principal components show the main 2-D shape of the "
    "positions: a curve or circle means neighbouring positions sit close together."
)


def zoom_fields(n: int, d: int) -> tuple[NumberField, ...]:
    """The heatmap's zoom window of an ``n × d`` table: start row/column and size, each at most
    :data:`MAX_SIDE_1TO1` so the window draws 1:1."""
    return (
        NumberField("First position", "hm_r0", 0, n - 1, 0),
        NumberField("Positions shown", "hm_rows", 1, min(n, MAX_SIDE_1TO1), min(n, 16)),
        NumberField("First dimension", "hm_c0", 0, d - 1, 0),
        NumberField("Dimensions shown", "hm_cols", 1, min(d, MAX_SIDE_1TO1), min(d, 16)),
    )


def overview_note(n: int, d: int, fy: int, fx: int) -> str:
    """What the heatmap says when an ``n × d`` table is drawn reduced (``fy × fx`` cells to a
    pixel)."""
    return (
        f"This {n}×{d} table is larger than {MAX_SIDE_1TO1}×{MAX_SIDE_1TO1}: the overview is "
        f"reduced (1 pixel = {fy}×{fx} cells). Zoom to a window to see cells 1:1."
    )


#: what the circle view plots for a table without sin/cos pairs.
COORDINATES = ["principal components", "dimensions"]


def pair_fields(d: int) -> tuple[NumberField, NumberField]:
    """The circle view's two dimensions of a ``d``-wide table (the first two by default)."""
    return (
        NumberField("x: dimension", "circ_x", 0, d - 1, 0),
        NumberField("y: dimension", "circ_y", 0, d - 1, min(1, d - 1)),
    )


def variance_caption(threshold: float) -> str:
    """Why the variance view's threshold starts where it does for this table."""
    return (
        f"The threshold starts at 1% of this table's mean variance (≈ {threshold:.2g}), so "
        "tables on different scales (a sinusoid's ±1, a learned table's ±0.1) compare fairly."
    )


def similarity_window_note(n_positions: int) -> str:
    """What the similarity view says when a table is too long to compare 1:1 at once."""
    return (
        f"This table has {n_positions} positions; {MAX_SIDE_1TO1} of them are compared 1:1 at a "
        "time. Choose where the window starts."
    )


def pca_fields(view: str) -> list[NumberField]:
    """The controls both sides of a comparison share: PCA axes (``pca2``, 1-based) or the
    viewing angle (``pca3``); none for the other views."""
    if view == "pca2":
        return [
            NumberField("Horizontal axis: PC", "pcx", 1, 10, 1, 1),
            NumberField("Vertical axis: PC", "pcy", 1, 10, 2, 1),
        ]
    if view == "pca3":
        return [
            NumberField("Turn (azimuth, °)", "az", -180, 180, 30, 5),
            NumberField("Tilt (elevation, °)", "el", -90, 90, 20, 5),
        ]
    return []


def pca_options(view: str, values: list[float]) -> dict[str, float]:
    """The options a PCA view draws with, from :func:`pca_fields`' values (PCs 0-based)."""
    if view == "pca2":
        return {"x": values[0] - 1, "y": values[1] - 1}
    return {"azimuth": values[0], "elevation": values[1]}
