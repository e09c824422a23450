"""The experiment pages' figures: a result drawn by its chart, with the data its Export menu offers.

``posviz.analysis`` computes and ``posviz.charts`` draws arrays it is given; these functions sit
one layer above both and pair each chart with its export data (a
:class:`posviz.charts.figure.Figure`), and each page's verdict with its hero chart.
"""

from __future__ import annotations

import numpy as np

from posviz.analysis import add_concat_views
from posviz.analysis.add_concat import ConcatReport, word_position_cloud
from posviz.analysis.headlines import (
    Verdict,
    concat_hero_frame,
    concat_verdict,
    permutation_verdict,
    plain_table,
    probe_hero_frame,
    probe_verdict,
)
from posviz.analysis.permutation import PermutationResult
from posviz.analysis.probe_views import Reports, probe_chart_frame
from posviz.charts.experiments import (
    cloud_chart,
    evidence_chart,
    magnitude_chart,
    permutation_chart,
    predicted_vs_actual_chart,
    probe_error_chart,
)
from posviz.charts.figure import Figure


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
    result = add_concat_views.magnitudes(table, words, word_vector)
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
