"""The hero charts of the two table pages, alone and linked.

Each page leads with two views of one table: the sinusoid's table beside its clock hands, a
learned table's cosine-similarity matrix beside its PCA path. Alone (the home page's thumbnails,
exports) each is an ordinary chart; linked (:mod:`posviz.charts.linked`) they share one position:
the row under the pointer, the dot pointed at, or ▶ play moves it in both, in the browser.

A linked hero is built twice, :class:`LinkedHero`: ``wide`` (side by side, fixed sizes that fit a
page :data:`WIDE_HERO_MIN` pixels wide) and ``tall`` (stacked, each view as wide as the page, for
phones and narrow windows); the page shows the one that fits. Arrays in (similarities, PCA scores,
the seam computed by :mod:`posviz.analysis`), charts out; nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from posviz.charts.circle import unit_circle_figure
from posviz.charts.figure import Figure
from posviz.charts.heatmap import Annotation, heatmap_chart
from posviz.charts.linked import linked_chart, view_size
from posviz.charts.trajectory import pca_trajectory_chart
from posviz.encodings.sinusoidal import pair_columns, sinusoid_wavelengths

#: Hands on the sinusoid's hero clock: pair indices as fractions of d/2, fast to slow.
HERO_PAIRS = (0.0, 1 / 16, 1 / 8, 1 / 4)

Size = tuple[int, int]  # a view's plot (width, height) in pixels, before axes and legends
Linked = tuple[str, Size] | None  # (direction, size) of a view in a linked hero; None: alone
#: Linked heroes' view sizes. Side by side (WIDE_…) the two views with their axes and legends fit
#: a page WIDE_HERO_MIN pixels wide (tests/test_linked.py renders them); stacked (TALL_…) every
#: view is as wide as the page (these widths are what an export draws) and the heights differ,
#: as a stack needs (equal heights would share one Vega signal).
WIDE_SIN: tuple[Size, Size] = ((370, 220), (280, 280))
TALL_SIN: tuple[Size, Size] = ((800, 200), (800, 300))
WIDE_LRN: tuple[Size, Size] = ((300, 300), (270, 300))
TALL_LRN: tuple[Size, Size] = ((800, 280), (800, 300))
WIDE_HERO_MIN = 920


@dataclass(frozen=True)
class LinkedHero:
    """A linked hero drawn two ways: ``wide`` side by side, ``tall`` stacked (narrow pages)."""

    wide: Figure
    tall: Figure


def _signals(view: str, linked: Linked) -> tuple[str, str]:
    """The plot-size expressions a round or square view reads: its own, or its linked view's."""
    if linked is None:
        return "width", "height"
    direction, (width, height) = linked
    return view_size(view, direction=direction, width=width, height=height)


def sinusoid_table_figure(
    table: np.ndarray, *, base: float, layout: str, height: int, linked: Linked = None
) -> Figure:
    """The sinusoid's table as a heatmap, its fast and slow ends labelled.

    ``table`` is ``(n, d)`` from :func:`posviz.encodings.sinusoidal.sinusoidal` with this
    ``base`` and ``layout``; ``linked`` makes it the linked hero's view ``table`` (its row
    outlined at the shared position, which the row under the pointer sets).
    """
    n, d = np.shape(table)
    wavelengths = sinusoid_wavelengths(d, base=base, layout=layout)
    sin_cols, _cos_cols = pair_columns(d, layout=layout)
    slow_at = d // 2 - 1
    notes = [  # short labels, mid-table: clear of each other on a phone and of the outlined row
        Annotation("fast", label_at=(0, n * 0.55)),
        Annotation("slow", label_at=(int(sin_cols[slow_at * 3 // 4]), n * 0.55), align="center"),
    ]
    width, height = linked[1] if linked else (800, height)
    chart = heatmap_chart(
        table,
        title=f"PE: {n} positions × {d} dimensions",
        subtitle=[
            f"fast pairs turn every {wavelengths[0]:.3g} positions,",
            f"the slowest every {wavelengths[slow_at]:,.0f}",
        ],
        value_title="PE[p, i]",
        width=width,
        height=height,
        annotations=notes,
        linked_as="table" if linked else None,
    )
    return Figure(chart, np.asarray(table), f"sinusoidal-{n}x{d}-{layout}")


def sinusoid_clock_figure(
    table: np.ndarray, *, base: float, layout: str, current: int, size: int, linked: Linked = None
) -> Figure:
    """Four of the sinusoid's clock hands (:data:`HERO_PAIRS`), fast to slow, with ▶ play."""
    n, d = np.shape(table)
    wavelengths = sinusoid_wavelengths(d, base=base, layout=layout)
    sin_cols, cos_cols = pair_columns(d, layout=layout)
    pairs = sorted({min(int(f * (d // 2)), d // 2 - 1) for f in HERO_PAIRS})
    return unit_circle_figure(
        table,
        (int(sin_cols[pairs[0]]), int(cos_cols[pairs[0]])),
        extra_pairs=[(int(sin_cols[i]), int(cos_cols[i])) for i in pairs[1:]],
        labels=[f"pair {i}: λ {wavelengths[i]:,.3g}" for i in pairs],
        current=min(current, n - 1),
        size=linked[1][1] if linked else size,
        animate=True,
        title="Clock hands at different speeds",
        name=f"sinusoidal-{n}x{d}-hands",
        size_signals=_signals("clock", linked),
    )


def sinusoid_linked(table: np.ndarray, *, base: float, layout: str, current: int) -> LinkedHero:
    """The table and its clock hands linked: the row under the pointer, the dot pointed at or ▶
    play moves one position, outlined in the table and shown by the hands."""
    return _linked_hero(
        (WIDE_SIN, TALL_SIN),
        ("table", "clock"),
        lambda linked: sinusoid_table_figure(
            table, base=base, layout=layout, height=0, linked=linked
        ),
        lambda linked: sinusoid_clock_figure(
            table, base=base, layout=layout, current=current, size=0, linked=linked
        ),
    )


def _linked_hero(
    sizes: tuple[tuple[Size, Size], tuple[Size, Size]],
    names: tuple[str, str],
    pointed: Callable[[tuple[str, Size]], Figure],
    other: Callable[[tuple[str, Size]], Figure],
) -> LinkedHero:
    """Two views linked: ``pointed`` (whose rows the pointer picks; the export is its data) and
    ``other``, each made for a (direction, size); side by side at ``sizes[0]``, one above the
    other at ``sizes[1]`` (each: ``pointed``'s size, ``other``'s). ``names`` name the views."""
    figures = []
    for direction, (pointed_size, other_size) in zip(
        ("horizontal", "vertical"), sizes, strict=True
    ):
        first, second = pointed((direction, pointed_size)), other((direction, other_size))
        chart = linked_chart(
            [(names[0], first.chart), (names[1], second.chart)],
            rows_of=[names[0]],
            direction=direction,
            description=first.chart.spec["description"],
        )
        figures.append(Figure(chart, first.data, first.name))
    return LinkedHero(*figures)


def similarity_figure(
    similarity: np.ndarray,
    *,
    n_positions: int,
    seam: tuple[int, int] | None,
    height: int,
    linked: Linked = None,
    legend_right: bool = False,
) -> Figure:
    """The ``(m, m)`` cosine similarity of a table's first ``m`` of ``n_positions`` positions,
    square, its diagonal and its ``seam`` (first, last position; ``None``: no seam) marked; the
    colour legend below it unless ``legend_right`` or linked side by side."""
    m = len(similarity)
    notes = [Annotation("diagonal: p = q", label_at=(m * 0.47, m * 0.53), align="right")]
    if seam is not None:
        edge = seam[1]
        notes += [
            Annotation(f"seam at {seam[0]}–{seam[1]}", x=edge, y=0, x2=edge, y2=m),
            Annotation("", x=0, y=edge, x2=m, y2=edge),
        ]
    shown = f"positions 0…{m - 1} of {n_positions}" if m < n_positions else ""
    width, height = linked[1] if linked else (800, height)
    chart = heatmap_chart(
        similarity,
        vmax=1.0,
        title="Which positions look alike?",
        subtitle=["cos(PE(p), PE(q))", *([shown] if shown else [])],
        x_title="position q",
        y_title="position p",
        value_title="cosine",
        width=width,
        height=height,
        square=True,
        renderer="svg",
        annotations=notes,
        linked_as="matrix" if linked else None,
        size_signals=_signals("matrix", linked),
        # side by side, the fixed-size matrix has room beside it; below it would push ▶ play
        # off a laptop's first screen
        legend="right" if legend_right or (linked and linked[0] == "horizontal") else None,
    )
    return Figure(chart, similarity, "cosine_similarity")


def pca_path_figure(
    scores: np.ndarray,
    *,
    explained: np.ndarray,
    current: int,
    height: int,
    width: int | None = None,
) -> Figure:
    """The positions on two principal components, in order, with ▶ play from ``current``."""
    chart = pca_trajectory_chart(
        scores,
        explained=explained,
        title="Positions as a path (PCA)",
        current=current,
        width=width,
        height=height,
    )
    return Figure(chart, scores, "pca_trajectory")


def similarity_linked(
    similarity: np.ndarray,
    scores: np.ndarray,
    *,
    n_positions: int,
    seam: tuple[int, int] | None,
    explained: np.ndarray,
    current: int,
) -> LinkedHero:
    """The similarity matrix and the PCA path linked: the row under the pointer, the dot pointed
    at or ▶ play moves one position, crossed in the matrix and ringed on the path."""
    return _linked_hero(
        (WIDE_LRN, TALL_LRN),
        ("matrix", "path"),
        lambda linked: similarity_figure(
            similarity, n_positions=n_positions, seam=seam, height=0, linked=linked
        ),
        lambda linked: pca_path_figure(
            scores,
            explained=explained,
            current=current,
            width=linked[1][0],
            height=linked[1][1],
        ),
    )
