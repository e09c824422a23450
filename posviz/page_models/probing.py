"""The Probing page's model: what /probing shows of its probes, computed once.

The page reads its tables through :mod:`posviz.ui` (:func:`probe_tables` names the ones it
probes: the chosen table, optionally with its set-aside rows, and its comparisons) and the probe
reports (:func:`posviz.ui.probing.run_probe_reports`); :func:`probing_page` takes the reports and
returns a :class:`ProbingPage`: the verdict, the hero, the results table and its verdicts, the
warnings the numbers call for and the two charts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posviz.analysis.headlines import Verdict, split_verdicts
from posviz.analysis.probe_numbers import Reports, interpolation_threshold, probe_results_frame
from posviz.analysis.probes import MIN_ROWS, with_set_aside_rows
from posviz.charts.figure import Figure
from posviz.encodings.sinusoidal import sinusoidal
from posviz.figures import probe_figures, probe_hero
from posviz.references import cite
from posviz.tables import PositionTable

__all__ = ["MIN_ROWS", "ProbingPage", "probe_tables", "probing_page"]

Matrices = dict[str, tuple[np.ndarray, np.ndarray | None]]

PROTOCOLS = {
    "even→odd (Jexus blog)": ("even", "odd"),
    "all→all (in-sample fit, not a held-out score)": ("all", "all"),
    "shuffled k-fold CV, rounded (Wang & Chen 2020)": ("kfold", "all"),
}
FITS = {
    "OLS (ordinary least squares, the papers')": "ols",
    "ridge, α tuned by grouped CV (on training rows only)": "cv",
    "ridge, fixed relative α (advanced)": "relative",
}
ORDER = {
    "held-out positions (leak-free)": "positions",
    "held-out pairs (Wang & Chen's published protocol; leaks positions)": "pairs",
    "off": None,
}
SINUSOID, BUNDLED = "sinusoid, same shape", "bundled MiniLM"
BUNDLED_NAME = "bundled MiniLM (512×384)"

INTRO = (
    "Does a position table *know* positions? Fit a **linear regression** from each row `PE[p]` to "
    "its index `p` and test it on rows it did not see. The Jexus blog post trained on even "
    "positions and tested on odd ones; Wang & Chen (EMNLP 2020, code MiuLab/PE-Study) used "
    "shuffled 5-fold cross-validation with rounded predictions. Every number below is shown with "
    "its spread (over 5 blocks of test positions, or over folds) and beside the same probe run "
    "the same way on a **random table** of the same shape and per-column scale: only a gap "
    "larger than the spread says the table holds position."
)
HERO_NOTE = (
    "Dot: mean absolute error in positions (lower is better); bar: ± one standard deviation over "
    "blocks of test positions or folds. Grey: a random table of the same shape and per-column "
    "scale, probed the same way."
)
IN_SAMPLE = (
    "all→all fits and scores the same rows: it measures how well a line *fits* the table, not "
    "whether it can read an unseen position. With as many columns as rows even a random table "
    "fits well (see its column). Use even→odd or k-fold for a held-out score."
)
RESULTS_NOTE = (
    "MAE: mean |predicted − actual| in positions (0 = perfect), mean ± std over 5 blocks of "
    "test positions (splits) or over folds (k-fold). R²: 1 = perfect, ≤ 0 = no better than "
    "guessing the mean. Order error: standardised logistic regression on [PE[i], PE[j]] "
    "predicting j > i, as many random pairs as positions, mean ± std over folds; 0.5 is chance. "
    "The verdict says a difference only where the 95% intervals of table and control do not "
    "overlap. **Reported (Jexus blog post, bert-base-cased, even→odd):** BERT's predictions are "
    "poor \"especially for the position > 400\"; RoBERTa's and GPT-2's are better."
)
READING = (
    "**Reading the charts.** Points on the dashed diagonal are read back exactly. The sinusoid "
    "sits on it: every row is a fixed function of `p`, and odd rows are interpolations of even "
    "ones. A learned table sits on it only where training gave the rows a consistent direction; "
    "where positions were rarely seen in training (BERT past ~400, per the Jexus blog post) the "
    "error grows."
)
SOURCES = "**Sources:** " + "; ".join(cite(k) for k in ("jexus_2020", "wang_chen_2020"))


def probe_tables(
    table: PositionTable,
    *,
    name: str,
    keep_padding: bool,
    compare: list[str],
    bundled: np.ndarray | None,
) -> tuple[Matrices, str]:
    """The named ``(matrix, labels)`` to probe: ``table`` (with its set-aside rows when
    ``keep_padding`` and it has some), then each comparison in ``compare`` (a sinusoid of its
    shape; the ``bundled`` matrix unless the table is it); and a note when there was nothing to
    keep. Raises ``ValueError`` for a table too short to hold positions out."""
    n, d = table.matrix.shape
    if n < MIN_ROWS:
        raise ValueError(
            f"{table.label} has {n} positions; a probe needs at least {MIN_ROWS} to hold some "
            "out. Pick a longer table."
        )
    matrix, labels, note = table.matrix, None, ""
    if keep_padding and any(a.values is not None for a in table.set_aside):
        matrix, labels = with_set_aside_rows(matrix, table.set_aside)
    elif keep_padding:
        note = "This table has no set-aside rows with values; probing its rows as they are."
    matrices: Matrices = {name: (matrix, labels)}
    if SINUSOID in compare:
        matrices[f"sinusoid ({n}×{d})"] = (sinusoidal(n, d), None)
    if BUNDLED in compare and table.source != "bundled" and bundled is not None:
        matrices[BUNDLED_NAME] = (bundled, None)
    return matrices, note


@dataclass(frozen=True)
class ProbingPage:
    """Everything /probing shows of its reports."""

    verdict: Verdict
    hero: Figure  # each table's MAE beside its control
    results: pd.DataFrame  # numbers only, one row per table
    verdicts: list[str]  # each table's verdicts, below the results
    crowded: list[str]  # tables whose OLS fit sits at the interpolation threshold
    predictions: Figure
    errors: Figure

    def crowded_warning(self) -> str:
        """Why OLS fits of :attr:`crowded` are unreliable (names as given: escape to show)."""
        return (
            "Some OLS fits have about as many training rows as columns "
            f"({', '.join(self.crowded)}): least squares is at its interpolation threshold and "
            'its test error blows up (double descent). Choose "ridge, α tuned by grouped CV" and '
            "compare."
        )


def probing_page(reports: Reports, *, matrices: Matrices) -> ProbingPage:
    """The page's model of ``reports`` (one per probed table, in order) of ``matrices``."""
    verdict, hero = probe_hero(reports)
    results, verdicts = split_verdicts(probe_results_frame(reports))
    predictions, errors = probe_figures(reports)
    return ProbingPage(
        verdict=verdict,
        hero=hero,
        results=results,
        verdicts=verdicts,
        crowded=list(interpolation_threshold(reports, matrices)),
        predictions=predictions,
        errors=errors,
    )
