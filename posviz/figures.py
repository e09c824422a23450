"""The pages' figures: a result drawn by its chart, with the data its Export menu offers.

``posviz.analysis`` computes and ``posviz.charts`` draws arrays it is given; these functions sit
one layer above both and pair each chart with its export data (a
:class:`posviz.charts.figure.Figure`), each page's verdict with its hero chart, and each view of a
position table with the caption that reads its numbers. ``posviz.ui`` caches and lays them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from posviz.analysis import add_concat_numbers
from posviz.analysis.add_concat import ConcatReport, word_position_cloud
from posviz.analysis.headlines import (
    Outliers,
    Seam,
    Verdict,
    concat_hero_frame,
    concat_verdict,
    find_seam,
    permutation_verdict,
    plain_table,
    probe_hero_frame,
    probe_verdict,
    similarity_summary,
)
from posviz.analysis.permutation import PermutationResult
from posviz.analysis.probe_numbers import Reports, probe_chart_frame
from posviz.analysis.sincos import SinCosPanel
from posviz.analysis.stats import PCAResult
from posviz.analysis.table_numbers import (
    PCA_ROWS,
    Trajectory,
    ValueSpread,
    norm_summary,
    principal_pair,
    similarity_window,
)
from posviz.charts.circle import unit_circle_figure
from posviz.charts.experiments import (
    cloud_chart,
    evidence_chart,
    magnitude_chart,
    permutation_chart,
    predicted_vs_actual_chart,
    probe_error_chart,
)
from posviz.charts.figure import Figure
from posviz.charts.heatmap import MAX_SIDE_1TO1, heatmap_chart
from posviz.charts.heroes import (
    LinkedHero,
    similarity_figure,
    similarity_linked,
    sinusoid_table_figure,
)
from posviz.charts.sincos import sine_cosine_chart, sine_only_chart
from posviz.charts.trajectory import norm_chart, pca_3d_chart, pca_trajectory_chart

SinCosColumns = tuple[np.ndarray, np.ndarray]  # (sine columns, cosine columns), one per pair

#: what to notice in each PCA view of a table.
PCA_NOTES = {
    "pca2": "Each dot is one position projected on two principal components of the table, joined "
    "in order (colour = position). A smooth curve means neighbouring positions are neighbours in "
    "the embedding space; a sinusoid traces Lissajous loops, GPT-2's table a helix-like spiral.",
    "pca3": "The first three principal components, drawn as an orthographic projection seen from "
    "the chosen angle (nearer points larger). It is a flat picture of a 3-D path: turn and tilt "
    "to judge its shape — GPT-2's table winds like a helix.",
}


def probe_figures(reports: Reports) -> tuple[Figure, Figure]:
    """Predicted-vs-actual and error-by-position Figures (charts and exports from one frame)."""
    both = probe_chart_frame(reports)
    return (
        Figure(
            predicted_vs_actual_chart(both),
            both[["position", "predicted"]].to_numpy(),
            "probe_predictions",
        ),
        Figure(probe_error_chart(both), both[["position", "abs_error"]].to_numpy(), "probe_errors"),
    )


def probe_hero(reports: Reports) -> tuple[Verdict, Figure]:
    """The Probing page's verdict (the first table's probe against its control) and its hero."""
    name, report = reports[0]
    frame = probe_hero_frame(reports)
    chart = evidence_chart(
        frame,
        x_title="mean absolute error (positions)",
        title="How far off is the probe?",
        subtitle="mean absolute error, lower is better",
    )
    return probe_verdict(name, report), Figure(chart, frame[["mean", "low", "high"]], "probe_mae")


def cloud_figure(
    word_vector: np.ndarray, table: np.ndarray, *, view: str, dims: tuple[int, int], piece: str
) -> Figure:
    """The word moved by each position (``WE + PE[p]``), as a chart with its export."""
    cloud = word_position_cloud(word_vector, table, view=view, dims=dims)
    axes = ("PC 1", "PC 2") if view == "pca" else (f"dimension {dims[0]}", f"dimension {dims[1]}")
    title = f"{piece!r} + PE[p], p = 0…{len(table) - 1}"  # a Vega title: plain text
    chart = cloud_chart(cloud, title=title, x_title=axes[0], y_title=axes[1])
    return Figure(chart, cloud[["x", "y"]].to_numpy(), "word_plus_position")


def magnitude_figure(
    word_vector: np.ndarray, table: np.ndarray, *, words: np.ndarray
) -> tuple[Figure, float, float]:
    """Per-dimension spread of PE (over positions) and WE (over ``words``) as a Figure, with the
    two medians."""
    result = add_concat_numbers.magnitudes(table, words, word_vector)
    figure = Figure(magnitude_chart(result.frame), result.data, "magnitudes")
    return figure, result.pe_median, result.we_median


def concat_hero(
    learned: ConcatReport, sinusoid: ConcatReport, *, n_positions: int
) -> tuple[Verdict, Figure]:
    """The Add-vs-concatenate page's verdict (MiniLM's table) and its hero: each table's share
    inside the words' subspace beside random subspaces of that size."""
    verdict = concat_verdict(learned, name="MiniLM", n_positions=n_positions)
    frame = concat_hero_frame([("MiniLM", learned), ("sinusoid", sinusoid)])
    chart = evidence_chart(
        frame,
        x_title="share of position variance inside the words' principal subspace",
        title="Where does the position signal lie?",
        subtitle=f"inside the words' {learned.k_we} main directions (of {learned.d_model})?",
        percent=True,
    )
    return verdict, Figure(chart, frame[["mean", "low", "high"]], "position_share_in_words")


def permutation_hero(result: PermutationResult) -> tuple[Verdict, Figure]:
    """The Permutation page's verdict and its hero: each token's two outputs' distance, without
    vs with positions."""
    distances = result.per_token[["distance_without_positions", "distance_with_positions"]]
    figure = Figure(permutation_chart(result.per_token), plain_table(distances), "permutation")
    return permutation_verdict(result), figure


# ---------------------------------------------------------------------- the table pages' heroes


def sinusoid_card(table: np.ndarray, *, base: float, layout: str, height: int) -> Figure:
    """The Sinusoid page's annotated table, the one chart the home page's card shows, at most
    ``height`` pixels tall (``table`` float64, at least 3 rows)."""
    n, _d = np.shape(table)
    return sinusoid_table_figure(table, base=base, layout=layout, height=min(height, max(160, n)))


def why_sin_and_cos(panel: SinCosPanel) -> tuple[Figure, Figure]:
    """The "why sin and cos?" panel's charts: a sine alone, where two positions collide, beside
    the (sin, cos) pair that tells them apart."""
    pair, positions = panel.pair, (panel.collision.first, panel.collision.second)
    alone = sine_only_chart(panel.sines, pair=pair, positions=positions, height=260)
    both = sine_cosine_chart(panel.sines, panel.cosines, pair=pair, positions=positions, height=260)
    return (
        Figure(alone, panel.sines, f"sine-alone-pair{pair}"),
        Figure(both, panel.data, f"sine-cosine-pair{pair}"),
    )


class TableSummary(NamedTuple):
    """What both heroes of a learned table draw, computed once per table."""

    similarity: np.ndarray  # (m, m): cosine similarity of the first m ≤ MAX_SIDE_1TO1 positions
    seam: Seam | None  # where the similarity of neighbours breaks, if it does
    pca: PCAResult  # the first two principal components of every position

    @property
    def edges(self) -> tuple[int, int] | None:
        """The seam's first and last position (``None``: no seam)."""
        return (self.seam.first, self.seam.last) if self.seam is not None else None


def table_summary(matrix: np.ndarray) -> TableSummary:
    """:class:`TableSummary` of a position table ``(n_positions, d_model)``."""
    first = np.asarray(matrix)[:MAX_SIDE_1TO1]
    return TableSummary(similarity_summary(first), find_seam(first), principal_pair(matrix))


def learned_card(matrix: np.ndarray, *, height: int) -> Figure:
    """The Learned page's annotated similarity matrix, the one chart the home page's card shows,
    ``height`` pixels square, its colour legend beside it."""
    first = np.asarray(matrix)[:MAX_SIDE_1TO1]
    seam = find_seam(first)
    edges = (seam.first, seam.last) if seam is not None else None
    return similarity_figure(
        similarity_summary(first),
        n_positions=len(matrix),
        seam=edges,
        height=height,
        legend_right=True,
    )


def learned_linked_hero(
    summary: TableSummary, *, n_positions: int, current: int | None = None
) -> LinkedHero:
    """The similarity matrix and the PCA path linked, starting at ``current`` (default: the
    seam's end if there is one, else 0) (:func:`posviz.charts.heroes.similarity_linked`)."""
    edges = summary.edges
    if current is None:
        current = edges[1] if edges else 0
    return similarity_linked(
        summary.similarity,
        summary.pca.scores,
        n_positions=n_positions,
        seam=edges,
        explained=summary.pca.explained_variance_ratio,
        current=current,
    )


# --------------------------------------------------------------------------- views of any table


def similarity_window_figure(matrix: np.ndarray, start: int, stop: int, *, name: str) -> Figure:
    """Cosine similarity of positions ``start … stop − 1`` with each other as a heatmap, every
    pair its own pixel (``stop − start`` ≤ 1024), with the ``(m, m)`` matrix as its export."""
    similarity = similarity_window(matrix, start, stop)
    m = stop - start
    shown = "" if (start, stop) == (0, len(matrix)) else f" — positions {start}…{stop - 1}"
    offset = f" (axes count from position {start})" if start else ""
    chart = heatmap_chart(
        similarity,
        vmax=1.0,
        title=f"cos(PE(p), PE(q)), {m}×{m}{shown}{offset}",
        x_title="position q",
        y_title="position p",
        value_title="cosine",
        height=min(720, max(240, m)),
    )
    return Figure(chart, similarity, f"{name}_cosine")


def pca_view_figure(
    trajectory: Trajectory, view: str, options: Mapping[str, float], *, name: str
) -> tuple[Figure, str]:
    """A table's PCA path, ``view`` ``"pca2"`` (``options`` x, y: 0-based components) or
    ``"pca3"`` (``options`` azimuth, elevation in degrees), and the caption saying what to notice
    and which positions were fitted."""
    result, step = trajectory.pca, trajectory.step
    common = {"explained": result.explained_variance_ratio, "positions": trajectory.positions}
    if view == "pca2":
        x, y = int(options["x"]), int(options["y"])
        chart = pca_trajectory_chart(result.scores, x=x, y=y, **common)
    else:
        angles = {"azimuth": options["azimuth"], "elevation": options["elevation"]}
        chart = pca_3d_chart(result.scores, **angles, **common)
    thinned = (
        f" PCA of positions 0, {step}, {2 * step}, … ({PCA_ROWS} at most)." if step > 1 else ""
    )
    return Figure(chart, result.scores, f"{name}_{view}"), PCA_NOTES[view] + thinned


def norms_figure(matrix: np.ndarray, *, name: str) -> tuple[Figure, str]:
    """‖PE(p)‖ of every position as a chart, and the caption giving its range and mean."""
    summary = norm_summary(matrix)
    note = (
        f"‖PE(p)‖ from {summary.low:.3f} to {summary.high:.3f} (mean {summary.mean:.3f}). "
        "A sinusoid has the same norm √(d/2) at every position; learned tables don't."
    )
    return Figure(norm_chart(summary.norms), summary.norms, f"{name}_norms"), note


def contrast_figure(matrix: np.ndarray, spread: ValueSpread, *, name: str) -> Figure:
    """The table with colours saturating at the 99th percentile of |value| (no export: the
    faithful heatmap beside it exports the same data)."""
    n, d = np.shape(matrix)
    chart = heatmap_chart(
        matrix,
        vmax=spread.p99,
        reduce="absmax",
        title=f"{n}×{d} table, more contrast",
        subtitle=[f"colours saturated at ±{spread.p99:.3g}"],
        value_title="PE[p, i]",
    )
    return Figure(chart, None, f"{name}_contrast")


def contrast_note(spread: ValueSpread, few: Outliers) -> str:
    """Why the contrast heatmap is shown first, with the outliers' size and place and the
    percentile the colours saturate at (MiniLM: two cells of ±1.87 against 99% within ±0.065)."""
    rows = ", ".join(str(r) for r in few.rows[:5]) + (" …" if len(few.rows) > 5 else "")
    return (
        f"Shown with more contrast by default: {few.count} outlier cell(s) of up to "
        f"±{spread.top:.3g} (position {rows}) would set the colour scale, while 99% of the "
        f"values lie within ±{spread.p99:.3g}, so on the faithful scale (below) almost every "
        f"cell is white. Here colours saturate at ±{spread.p99:.3g}; the {spread.beyond:.1%} of "
        "cells beyond it are full red or blue."
    )


def sin_cos_hands_figure(
    matrix: np.ndarray,
    columns: SinCosColumns,
    *,
    pairs: Sequence[int],
    current: int,
    wavelengths: np.ndarray | None,
    name: str,
) -> Figure:
    """The sin/cos pairs ``pairs`` (the first the main hand) of a table as clock hands at
    position ``current``, the subtitle giving each pair's columns and wavelength λ."""
    sines, cosines = columns
    lines = [
        f"pair {i} (dims {sines[i]}, {cosines[i]}): λ = {wavelengths[i]:,.4g}"
        for i in (pairs if wavelengths is not None else [])
    ]
    return unit_circle_figure(
        matrix,
        (int(sines[pairs[0]]), int(cosines[pairs[0]])),
        current=current,
        extra_pairs=[(int(sines[i]), int(cosines[i])) for i in pairs[1:]],
        labels=[f"pair {i}" for i in pairs],
        subtitle=[*lines, "λ: positions per full turn"] if lines else [],
        name=f"{name}-pairs",
    )


def coordinate_pair_figure(
    matrix: np.ndarray, dims: tuple[int, int] | None, *, current: int, name: str
) -> Figure:
    """Two columns ``dims`` of a table against each other, or (``dims=None``) its first two
    principal components with the variance each explains, one point per position."""
    if dims is not None:
        data, pair, titles, subtitle = matrix, dims, (f"dim {dims[0]}", f"dim {dims[1]}"), ""
    else:
        result = principal_pair(matrix)
        ratio = result.explained_variance_ratio
        data, pair, titles = result.scores, (0, 1), ("PC 1", "PC 2")
        subtitle = f"PC 1 explains {ratio[0]:.1%}, PC 2 {ratio[1]:.1%} of the variance"
    return unit_circle_figure(
        data,
        pair,
        current=current,
        circle=False,
        axis_titles=titles,
        labels=[f"{titles[0]} / {titles[1]}"],
        subtitle=subtitle,
        name=f"{name}-pair",
    )
