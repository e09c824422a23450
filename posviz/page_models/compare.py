"""The Compare page's model: what /compare shows of one family comparison, computed once.

:func:`compare_page` takes the comparison (:class:`~posviz.analysis.comparison.FamilyComparison`,
through :func:`posviz.ui.families.family_comparison`) and returns a :class:`ComparePage`: the
verdict, the hero (unseen fraction), the similarity and margin charts, their prose and the
summary table, each built once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from posviz.analysis.comparison import (
    MAX_MARGIN_ITEMS,
    SCALINGS,
    CompareSettings,
    FamilyComparison,
    LearnedTable,
    compared_families,
    family_label,
)
from posviz.analysis.family_inputs import learned_comparison_table
from posviz.analysis.headlines import Verdict, compare_verdict, shown_table
from posviz.analysis.provenance import Provenance, formula
from posviz.charts.families import lines_figure, rows_figure
from posviz.charts.figure import Figure
from posviz.encodings.alibi import MAX_HEADS, MIN_HEADS
from posviz.encodings.families import FAMILIES
from posviz.encodings.t5 import MAX_BUCKETS, MAX_DISTANCE, MIN_BUCKETS, MIN_MAX_DISTANCE
from posviz.references import cite

__all__ = [
    "LEARNED_LABEL",
    "MAX_BUCKETS",
    "MAX_DISTANCE",
    "MAX_HEADS",
    "MIN_BUCKETS",
    "MIN_HEADS",
    "MIN_MAX_DISTANCE",
    "SCALINGS",
    "ComparePage",
    "CompareSettings",
    "compare_page",
    "compared_families",
    "family_label",
]

INTRO = (
    "Every family gives the model a signal for a position (sinusoid, learned: a vector added to "
    "the token) or for a distance (RoPE: rotation angles; ALiBi: a logit penalty; T5: a bucket). "
    "Here they are reduced to the same three questions, over the same distances, with a trained "
    "length *L* marked: how similar is distance *k* to distance 0; can neighbouring positions be "
    "told apart; and how much of the signal beyond *L* was never seen in training."
)
HERO_NOTE = (
    "The share of each family's signal at distance k that training up to L never produced "
    "(section 3 below says how each is measured). Each family has its own dash, so lines lying "
    "on top of each other still show."
)
SIMILARITY = (
    "Sinusoid and learned: mean cosine of the vectors at *p* and *p + k*. RoPE: cosine between a "
    "vector rotated to *p* and to *p + k* — the same kernel as the sinusoid for the same "
    "frequencies. ALiBi (and T5 with a model): the factor its bias multiplies a key's attention "
    "weight by, *k* tokens back, averaged over heads. All are 1 at *k* = 0. "
)
T5_WITHOUT_MODEL = (
    "T5 without a model has no fixed shape (its biases are learned); name a T5 model in the "
    "settings to add it."
)
BEYOND = (
    "Fraction of the signal at *k* that training up to *L* never produced. Sinusoid/RoPE: share of "
    "frequency pairs whose angle lies outside the arc they covered in training (fast pairs turned "
    "full circles and are always familiar; slow ones were not). The learned table simply ends. "
    "ALiBi's penalties grow past anything seen, yet only make far keys weaker — "
    f"{cite('press_2022')} show it extrapolates. T5's last bucket covers every distance beyond "
    "max_distance."
)
SUMMARY = "**Summary** (numbers from the charts above; blank: not defined for the family)"


@dataclass(frozen=True)
class ComparePage:
    """Everything /compare shows for one comparison; a chart is ``None`` with nothing to draw."""

    verdict: Verdict
    hero: Figure | None  # unseen fraction against distance
    similarity: Figure | None
    margin_text: str
    margin: Figure | None
    summary: object | None  # the summary table, styled (numbers typed, verdict columns first)


def _formulas(summary: pd.DataFrame) -> tuple[Provenance, ...]:
    """Each compared family's formula, cited from its registry entry (the families shown)."""
    shown = set(summary["family"]) if "family" in summary else set()
    return tuple(
        formula(spec.references[0])
        for spec in FAMILIES.values()
        if spec.label in shown and spec.references
    )


def compare_page(result: FamilyComparison, *, trained: int) -> ComparePage:
    """The page's model of ``result`` with the trained length ``trained`` marked."""
    rule = {"rule_x": trained, "rule_label": f"L = {trained}", "dashed": True}
    hero = similarity = margin = None
    if result.unseen:
        hero = rows_figure(  # one row per family: in one plot five of seven lay on 0 or 1
            result.distances,
            result.unseen,
            name="compare_unseen",
            x_title="distance / position k",
            y_title="unseen fraction",
            rule_x=trained,
            rule_label=f"L = {trained}",
        )
    if result.similarity:
        similarity = lines_figure(
            result.distances,
            result.similarity,
            name="compare_similarity",
            x_title="distance k (tokens)",
            y_title="similarity to k = 0",
            log_x=True,
            **rule,
        )
    if result.margin:
        margin = lines_figure(
            result.margin_items,
            result.margin,
            name="compare_margin",
            x_title="position / distance",
            y_title="nearest-other margin (symlog)",
            y_scale="symlog",
            log_x=True,
            **rule,
        )
    margin_text = (
        f"For each of the first {result.margin_items.size} positions/distances: 1 − the highest "
        "cosine with any *other* one in the window. 0 means some other position looks identical "
        "to the model's signal. T5's wide buckets give 0 (all distances in a bucket are one "
        "signal). Scaling RoPE lowers its margin — interpolated pairs turn more slowly, so "
        "neighbours crowd together (a little for YaRN/llama3, which keep the fast pairs; most for "
        "linear). ALiBi's signal is one number per head, −m_h·k, so a cosine does not apply: "
        "neighbouring distances always differ by exactly m_h in the logit."
    )
    summary: pd.DataFrame = result.summary
    return ComparePage(
        verdict=replace(compare_verdict(summary, trained=trained), sources=_formulas(summary)),
        hero=hero,
        similarity=similarity,
        margin_text=margin_text,
        margin=margin,
        summary=None if summary.empty else shown_table(summary, first=("family", "beyond L")),
    )


LEARNED_LABEL = "Learned (MiniLM)"


def learned_table(matrix: np.ndarray, n_items: int) -> LearnedTable:
    """The bundled learned table as the comparison reads it (its first ``n_items`` rows)."""
    return learned_comparison_table(matrix, n_items=n_items, label=LEARNED_LABEL)


def comparison_inputs(
    chosen: list[str],
    settings: CompareSettings,
    t5_model: str,
    *,
    learned: Callable[[int], LearnedTable],
    t5_bias: Callable[[str], np.ndarray],
) -> tuple[LearnedTable | None, tuple[str, np.ndarray] | None, dict[str, str]]:
    """``(learned table, (T5 model, its bias), errors)`` a comparison of ``chosen`` needs, read
    through ``learned(n_items)`` and ``t5_bias(model)``. A table or bias that cannot be read
    (offline, unknown id) is an error by name, like a family's bad setting; the rest still run."""
    errors: dict[str, str] = {}
    table = bias = None
    if "learned" in chosen:
        try:
            table = learned(min(settings.n_distances, MAX_MARGIN_ITEMS))
        except ValueError as exc:
            errors[LEARNED_LABEL] = str(exc)
    if "t5" in chosen and t5_model:
        try:
            bias = (t5_model, t5_bias(t5_model))
        except ValueError as exc:
            errors["T5 model"] = str(exc)
    return table, bias, errors


def with_errors(result: FamilyComparison, errors: dict[str, str]) -> FamilyComparison:
    """``result`` with the inputs' ``errors`` added to the families' own."""
    return dataclasses.replace(result, errors={**result.errors, **errors}) if errors else result
