"""Each page's answer in one plain line, computed from the numbers the page shows.

A :class:`Verdict` is a plain first line that states the answer (at most
:data:`FIRST_SENTENCE_WORDS` words, no formula), its evidence (the numbers, intervals and controls,
as short labelled items the page folds under the line), the whole paragraph (``sentence``: the
home page's cards and the README quote it) and the numbers it quotes (so the tests can pin them).
Nothing here is typed by hand: every number is recomputed from the table,
the probe report or the experiment result passed in, and the wording follows what the numbers
support ("no difference within the spread" included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from posviz.analysis.add_concat import ConcatReport
from posviz.analysis.evidence import Spread
from posviz.analysis.permutation import PermutationResult
from posviz.analysis.probes import ProbeReport
from posviz.analysis.provenance import Provenance, formula
from posviz.analysis.provenance import measured as measured_beside
from posviz.analysis.sincos import rotation_check_of
from posviz.analysis.stats import cosine_similarity_matrix, shift_similarity
from posviz.analysis.table_numbers import SHIFT_BUDGET
from posviz.encodings.rope import pair_regimes
from posviz.encodings.sinusoidal import Layout, sinusoid_wavelengths
from posviz.encodings.t5 import t5_relative_bucket

#: The longest plain first sentence a verdict may open with (issue 23: read in ten seconds).
FIRST_SENTENCE_WORDS = 15

#: Terms a verdict may use after its plain first sentence, each with the definition a reader
#: gets on hover (:attr:`Verdict.terms`).
GLOSSARY = {
    "R²": "R² (coefficient of determination): the share of the variance a fit explains; 1 is "
    "perfect, 0 is no better than predicting the mean.",
    "MAE": "MAE (mean absolute error): the average size of a prediction's miss, here in positions.",
    "OLS": "OLS (ordinary least squares): the straight-line fit that minimises the summed "
    "squared misses.",
    "N(0, ": "N(0, σ²): a normal (Gaussian) distribution with mean 0 and standard deviation σ.",
    "‖": "‖v‖: the length (Euclidean norm) of the vector v, √(v₁² + … + v_d²).",
    "cos(": "cos(u, v): cosine similarity, u·v / (‖u‖‖v‖): 1 for the same direction, 0 for "
    "perpendicular vectors.",
    "PCA": "PCA (principal component analysis): the directions along which the rows vary most.",
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")

#: Characters that mark a formula: a verdict's first line has none of them (its evidence may).
FORMULA_CHARS = frozenset("²=‖·×±√θσπ≈<>^∑∫⟨⟩…")

#: One item of a verdict's evidence: a short label and what was measured (may hold a formula).
Evidence = tuple[str, str]


def first_sentence(text: str) -> str:
    """``text`` up to its first full stop, question or exclamation mark followed by a space (a
    decimal point such as 6.28 does not end a sentence)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


_CLAUSE_END = re.compile(r"(?<=[;:])\s")


def _clauses(text: str) -> tuple[str, ...]:
    """``text`` cut into its sentences and its ``;``- and ``:``-separated clauses, each once, in
    order."""
    sentences = _SENTENCE_END.split(text.strip())
    parts = [c.strip().rstrip(".;:") for s in sentences for c in _CLAUSE_END.split(s)]
    return tuple(dict.fromkeys(p for p in parts if p))


@dataclass(frozen=True)
class Verdict:
    """A page's answer.

    Attributes:
        sentence: the whole paragraph (Markdown-safe plain text: a plain first sentence, then the
            numbers), as the home page's cards and the README quote it.
        numbers: the numbers it quotes, by name.
        line: the plain first line the page shows (at most :data:`FIRST_SENTENCE_WORDS` words,
            no :data:`FORMULA_CHARS`); empty: the paragraph's first sentence.
        evidence: ``(label, text)`` items holding every number of the paragraph, each clause once,
            shown folded under the line; empty: the paragraph's other clauses, unlabelled.
        sources: where its numbers come from (:mod:`posviz.analysis.provenance`), set by the
            code that computed them; a page adds what only it knows (a checkpoint's hash).
    """

    sentence: str
    numbers: dict[str, float] = field(default_factory=dict)
    line: str = ""
    evidence: tuple[Evidence, ...] = ()
    sources: tuple[Provenance, ...] = ()

    @property
    def first_sentence(self) -> str:
        """The plain opening sentence (:func:`first_sentence`)."""
        return first_sentence(self.sentence)

    @property
    def first_line(self) -> str:
        """The line the page opens with: :attr:`line`, else the paragraph's first sentence."""
        return self.line or self.first_sentence

    @property
    def folded(self) -> tuple[Evidence, ...]:
        """The evidence under the first line: :attr:`evidence`, else the paragraph's clauses
        after its first sentence, unlabelled."""
        if self.evidence:
            return self.evidence
        rest = self.sentence.strip()[len(self.first_sentence) :]
        return tuple(("", clause) for clause in _clauses(rest))

    @property
    def terms(self) -> list[str]:
        """Definitions (:data:`GLOSSARY`) of the terms the verdict uses, in glossary order."""
        text = " ".join([self.sentence, *(f"{k} {v}" for k, v in self.folded)])
        return [definition for term, definition in GLOSSARY.items() if term in text]

    @classmethod
    def fold(cls, text: str, numbers: dict[str, float] | None = None) -> Verdict:
        """A verdict from a paragraph alone: its first sentence as the line, the rest as
        evidence (for answers computed elsewhere as text, such as p-RoPE's)."""
        return cls(text, dict(numbers or {}))


def _sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits without an exponent for everyday sizes."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    places = max(0, digits - 1 - int(np.floor(np.log10(abs(value)))))
    return f"{value:,.{min(places, 6)}f}"


# --------------------------------------------------------------------------- sinusoid


def verdict_rows(n_positions: int) -> int:
    """Rows of the sinusoid :func:`sinusoid_verdict` reads: ``n_positions``, at least 3 (the
    rotation check for ``k = 1`` needs two consecutive pairs)."""
    return max(n_positions - 1, 2) + 1


def sinusoid_verdict(
    table: np.ndarray,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    n_positions: int | None = None,
) -> Verdict:
    """Wavelengths, the shift-as-rotation identity and the distance-only similarity, measured on
    ``table``: a float64 sinusoid of this ``base`` and ``layout``
    (:func:`posviz.encodings.sinusoidal.sinusoidal`) whose first ``n_positions`` rows (default:
    all) are shown, with at least :func:`verdict_rows` rows.

    The rotation is checked for ``k = 1`` on every consecutive pair of the ``n_positions`` rows
    shown (:func:`~posviz.analysis.sincos.rotation_check_of`); the similarity's dependence on
    ``p`` is the widest spread over ``p`` of ``cos(PE(p), PE(p+k))``, for ``k`` up to 64 (fewer
    where that would pass :data:`~posviz.analysis.table_numbers.SHIFT_BUDGET` multiply-adds:
    ``k ≤ 2`` on an 8192 × 8192 table; 0 up to float rounding for a sinusoid). Why both sin and
    cos: ``sin a = sin(π − a)`` (Vaswani et al. 2017, §3.5 for the rotation;
    :mod:`posviz.analysis.sincos`).
    """
    n_positions = len(table) if n_positions is None else int(n_positions)
    d_model = np.shape(table)[1]
    wavelengths = sinusoid_wavelengths(d_model, base=base, layout=layout)
    check = rotation_check_of(
        table, 1, n_positions=max(n_positions - 1, 2), base=base, layout=layout
    )
    numbers = {
        "pairs": d_model // 2,
        "fastest_wavelength": float(wavelengths[0]),
        "slowest_wavelength": float(wavelengths[-1]),
        "rotation_error": check.pair_error,
    }
    if n_positions >= 2:
        reach = min(n_positions - 1, 64, max(1, SHIFT_BUDGET // (n_positions * d_model)))
        shifts = shift_similarity(table[:n_positions], reach)
        numbers["similarity_spread_over_p"] = float(np.nanmax(shifts.max - shifts.min))
    sentence = (
        "Every position gets its own set of clock hands, so only distance sets similarity. "
        "Why sin and cos: a sine alone is ambiguous (sin a = sin(π − a) gives two positions "
        "the same value), its cosine tells them apart, and the pair turns a shift into a "
        f"rotation. The {d_model // 2} sin/cos pairs turn from once every "
        f"{_sig(wavelengths[0])} to once every {_sig(wavelengths[-1])} positions; moving k "
        "positions turns every hand by a fixed angle, so how alike two positions are depends "
        "only on their distance (checked at every p, to "
        f"{max(check.pair_error, numbers.get('similarity_spread_over_p', 0.0)):.0e})"
    )
    worst = max(check.pair_error, numbers.get("similarity_spread_over_p", 0.0))
    evidence = (
        ("Clock hands", f"{d_model // 2} sin/cos pairs, turning from once every "
         f"{_sig(wavelengths[0])} to once every {_sig(wavelengths[-1])} positions"),
        ("A shift is a rotation", "moving k positions turns every hand by a fixed angle"),
        ("Checked", f"similarity depends only on distance at every p, to {worst:.0e}"),
        ("Why sin and cos", "a sine alone is ambiguous (sin a = sin(π − a) gives two positions "
         "the same value); its cosine tells them apart"),
    )  # fmt: skip
    line = "Each position gets its own clock hands, so only distance sets similarity."
    return Verdict(sentence + ".", numbers, line, evidence, (formula("vaswani_2017", "§3.5"),))


# --------------------------------------------------------------------------- learned tables


@dataclass(frozen=True)
class Seam:
    """Consecutive positions where a table's neighbour similarity drops far below its usual."""

    first: int  # the seam lies between ``first`` and ``last`` (inclusive)
    last: int
    lowest: float  # the lowest cos(PE(p), PE(p+1)) in it
    typical: float  # the median over the table's interior


#: A neighbour cosine counts as a seam when it sits this many robust spreads (MAD) below the median.
SEAM_MADS = 8.0
#: Rows this close to either end are left out of seam detection (first and last rows are special:
#: row 0 carries [CLS]-like outliers, the last rows were rarely trained).
EDGE_ROWS = 3


def neighbour_cosines(matrix: np.ndarray) -> np.ndarray:
    """``cos(PE(p), PE(p+1))`` for ``p = 0 … n−2``, shape ``(n−1,)``."""
    table = np.asarray(matrix, dtype=np.float64)
    a, b = table[:-1], table[1:]
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.divide((a * b).sum(axis=1), norms, out=np.zeros(len(a)), where=norms > 0)


def find_seam(matrix: np.ndarray) -> Seam | None:
    """The run of interior neighbour pairs whose cosine falls :data:`SEAM_MADS` MADs below the
    median, around the lowest one; ``None`` when no pair does (a sinusoid has none)."""
    cosines = neighbour_cosines(matrix)
    inner = np.arange(EDGE_ROWS, len(cosines) - EDGE_ROWS)
    if inner.size < 3:
        return None
    values = cosines[inner]
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median)))
    low = values < median - SEAM_MADS * max(mad, 1e-9)
    if not low.any():
        return None
    at = int(np.argmin(np.where(low, values, np.inf)))
    start = stop = at
    while start > 0 and low[start - 1]:
        start -= 1
    while stop < len(low) - 1 and low[stop + 1]:
        stop += 1
    return Seam(
        first=int(inner[start]),
        last=int(inner[stop]) + 1,
        lowest=float(values[at]),
        typical=median,
    )


def half_similarity_distance(matrix: np.ndarray, *, max_shift: int = 256) -> int | None:
    """The smallest offset ``k`` at which the mean ``cos(PE(p), PE(p+k))`` over ``p`` drops
    below half its value at ``k = 1``; ``None`` if it never does within ``max_shift``."""
    n = np.shape(matrix)[0]
    if n < 3:
        return None
    result = shift_similarity(np.asarray(matrix), min(max_shift, n - 1))
    mean = np.asarray(result.mean)
    below = np.flatnonzero(mean[1:] < 0.5 * mean[1]) + 1
    return int(below[0]) if below.size else None


#: A table label's trailing shape, " (512×384)", left out of a first line (× is notation).
_SHAPE = re.compile(r"\s*\(\d+×\d+\)$")


def learned_verdict(matrix: np.ndarray, *, name: str) -> Verdict:
    """What a learned table encodes: neighbours alike, how fast that fades, any seam, outliers;
    a plain first sentence (:data:`FIRST_SENTENCE_WORDS`), then the numbers."""
    table = np.asarray(matrix, dtype=np.float64)
    cosines = neighbour_cosines(table)
    typical = float(np.median(cosines))
    half = half_similarity_distance(table)
    seam = find_seam(table)
    magnitude = np.abs(table)
    top, p99 = float(magnitude.max()), float(np.quantile(magnitude, 0.99))
    numbers: dict[str, float] = {"neighbour_cosine_median": typical, "max_abs": top, "p99": p99}
    evidence: list[Evidence] = [("Neighbours", f"median cos(PE(p), PE(p+1)) = {typical:.2f}")]
    if typical > 0.5:
        sentence = (
            f"In {name}, nearby positions look alike. It learned a table in which neighbouring "
            f"positions point the same way (median cos(PE(p), PE(p+1)) = {typical:.2f})"
        )
    else:
        sentence = (
            f"In {name}, nearby positions are not much alike. The median cos(PE(p), PE(p+1)) "
            f"is {typical:.2f}"
        )
    if half is not None:
        numbers["half_similarity_distance"] = half
        sentence += f" and the similarity halves within {half} positions"
        evidence.append(("Fading", f"the similarity halves within {half} positions"))
    if seam is not None:
        numbers |= {"seam_first": seam.first, "seam_last": seam.last, "seam_cosine": seam.lowest}
        sentence += (
            f"; a seam runs between positions {seam.first} and {seam.last}, where the "
            f"neighbour cosine falls to {seam.lowest:.2f}"
        )
        evidence.append(
            ("Seam", f"between positions {seam.first} and {seam.last}: neighbour cosine "
             f"{seam.lowest:.2f}")
        )  # fmt: skip
    if p99 > 0 and top > 4 * p99:
        row = int(np.unravel_index(int(np.argmax(magnitude)), magnitude.shape)[0])
        numbers["outlier_row"] = row
        sentence += f"; a few values reach ±{top:.2f} (row {row}) while 99% stay within ±{p99:.3f}"
        evidence.append(("Outliers", f"a few values reach ±{top:.2f} (row {row}); 99% stay "
                         f"within ±{p99:.3f}"))  # fmt: skip
    alike = "look alike" if typical > 0.5 else "are not much alike"
    short = _SHAPE.sub("", name)  # its shape (n×d) is told in the evidence, not the line
    line = f"In {short}, nearby positions {alike}."
    if short != name:
        evidence.insert(0, ("Table", name))
    return Verdict(sentence + ".", numbers, line, tuple(evidence))


@dataclass(frozen=True)
class Outliers:
    """The cells that set a heatmap's colour scale while the rest sit near zero."""

    count: int  # cells with |value| > ratio × the 99th percentile of |value|
    rows: tuple[int, ...]  # the positions they sit in
    top: float  # max |value|
    p99: float  # 99th percentile of |value|


def outliers(matrix: np.ndarray, *, ratio: float = 4.0) -> Outliers:
    """Cells beyond ``ratio`` 99th percentiles of ``|matrix|`` (MiniLM: 2 cells, both in row 0)."""
    magnitude = np.abs(np.asarray(matrix, dtype=np.float64))
    p99 = float(np.quantile(magnitude, 0.99))
    big = magnitude > ratio * p99 if p99 > 0 else np.zeros_like(magnitude, dtype=bool)
    rows = tuple(int(r) for r in np.unique(np.nonzero(big)[0]))
    return Outliers(int(big.sum()), rows, float(magnitude.max()), p99)


def similarity_summary(matrix: np.ndarray) -> np.ndarray:
    """The position × position cosine matrix the learned page's hero draws (float32)."""
    return cosine_similarity_matrix(np.asarray(matrix)).astype(np.float32)


# --------------------------------------------------------------------------- experiments


def probe_verdict(name: str, report: ProbeReport) -> Verdict:
    """Can a line read the position back? The probe's MAE beside the random table's."""
    value, control = report.mae.value, report.mae.control
    numbers = {
        "mae": value.mean,
        "mae_std": value.std,
        "control_mae": control.mean,
        "control_mae_std": control.std,
    }
    pair = (
        f"{_sig(value.mean)} ± {_sig(value.std)} positions off, against "
        f"{_sig(control.mean)} ± {_sig(control.std)} for a random table probed the same way"
    )
    evidence: tuple[Evidence, ...] = (
        ("Linear probe, held-out positions", f"{_sig(value.mean)} ± {_sig(value.std)} "
         "positions off"),
        ("Control", f"{_sig(control.mean)} ± {_sig(control.std)} positions off for a random "
         "table probed the same way"),
    )  # fmt: skip
    if report.mae.better():
        sentence = (
            f"Yes for {name}: a straight-line readout recovers each token's position. "
            f"A linear probe reads held-out positions back {pair}."
        )
    elif report.mae.differs():
        sentence = (
            f"No for {name}: a straight-line readout does worse than on random numbers. "
            f"The probe does worse than on a random table ({pair})."
        )
    else:
        sentence = (
            f"Not measurably for {name}: a readout does no better than on random numbers. "
            f"The probe is {pair}, no difference within the spread."
        )
        evidence += (("Difference", "none within the spread"),)
    return Verdict(sentence, numbers, first_sentence(sentence), evidence,
                   (measured_beside("a random table probed the same way"),))  # fmt: skip


def concat_verdict(report: ConcatReport, *, name: str, n_positions: int) -> Verdict:
    """Is adding effectively concatenating? PE's variance inside the words' subspace vs random."""
    inside, random = report.pe_in_we, report.pe_in_random
    numbers = {"pe_in_we": inside, "k_we": report.k_we, "k_pe": report.k_pe}
    share = f"{inside:.1%} of {name}'s position variance (positions 0…{n_positions - 1})"
    if random is None:
        chance = report.pe_in_we_chance
        numbers["chance"] = chance
        evidence = (
            ("Words' subspace", f"{share} lies in the words' {report.k_we}-dimensional "
             "principal subspace"),
            ("Chance", f"a random subspace of that size would hold {chance:.1%}"),
        )  # fmt: skip
        return Verdict(
            f"{'More' if inside > chance else 'Less'} of the position signal lies along the "
            f"words' main directions than chance. {share} lies in the words' "
            f"{report.k_we}-dimensional principal subspace, where a "
            f"random subspace of that size would hold {chance:.1%}.",
            numbers,
            f"{'More' if inside > chance else 'Less'} of the position signal lies along the "
            "words' main directions than chance.",
            evidence,
            (measured_beside("a random subspace of that size"),),
        )
    numbers |= {"random_mean": random.mean, "random_std": random.std}
    against = f"{random.mean:.1%} ± {random.std:.1%} for random subspaces of that size"
    if inside < random.mean - 2 * random.std:
        plain = "Mostly apart: positions and words use different directions."
        lead = "Only"
        tail = "so the sum behaves much like a concatenation"
    elif inside > random.mean + 2 * random.std:
        plain = "Not apart: positions share the words' main directions."
        lead = "Here"
        tail = "so positions share the words' main directions"
    else:
        plain = "No clear separation between position and word directions."
        lead = "Here"
        tail = "no difference within the spread"
    return Verdict(
        f"{plain} {lead} {share} lies in the words' {report.k_we}-dimensional principal subspace, "
        f"against {against}; {tail}.",
        numbers,
        plain,
        (
            ("Words' subspace", f"{share} lies in the words' {report.k_we}-dimensional "
             "principal subspace"),
            ("Control", against),
            ("Reading", tail.removeprefix("so ")),
        ),
        (measured_beside("random subspaces of that size"),),
    )  # fmt: skip


def permutation_verdict(result: PermutationResult) -> Verdict:
    """Same vectors, permuted, without positions; different with them."""
    steps = result.max_diff_without / result.rounding_scale if result.rounding_scale else np.nan
    numbers = {
        "max_diff_without": result.max_diff_without,
        "max_diff_with": result.max_diff_with,
        "rounding_steps": float(steps),
    }
    words = [  # the sentences as typed: no [CLS]/[SEP], word pieces joined
        " ".join(t for t in tokens if not (t.startswith("[") and t.endswith("]"))).replace(
            " ##", ""
        )
        for tokens in (result.tokens_a, result.tokens_b)
    ]
    a, b = words
    return Verdict(
        "Because attention sees its input as a set: without positions, order is invisible. "
        f"Without positions “{a}” and “{b}” give the same vectors, permuted (largest "
        f"difference {result.max_diff_without:.1e}, "
        f"{steps:.1f} float32 rounding steps); with positions the same token differs by up "
        f"to {result.max_diff_with:.2f}.",
        numbers,
        "Attention sees its input as a set: without positions, order is invisible.",
        (
            ("Without positions", f"“{a}” and “{b}” give the same vectors, permuted: largest "
             f"difference {result.max_diff_without:.1e}, {steps:.1f} float32 rounding steps"),
            ("With positions", f"the same token differs by up to {result.max_diff_with:.2f} "
             "(largest single element)"),
        ),
        (measured_beside("the same model with its position table zeroed"),),
    )  # fmt: skip


def layers_verdict(scores: Any) -> Verdict:
    """Does the position survive the layers? R² at the input and after the last layer."""
    first, last = scores.iloc[0], scores.iloc[-1]
    numbers = {
        "r2_input": float(first.r2),
        "r2_input_std": float(first.r2_std),
        "r2_last": float(last.r2),
        "r2_last_std": float(last.r2_std),
        "control_last": float(last.control_r2),
        "last_layer": int(last.layer),
    }
    readable = last.r2 - 2 * last.r2_std > last.control_r2 + 2 * last.control_r2_std
    plain = (
        "Yes: every layer still knows where each token sits."
        if readable
        else "Not measurably: the last layer no longer shows where tokens sit."
    )
    return Verdict(
        f"{plain} A leak-free linear probe reads a token's position with R² "
        f"{first.r2:.2f} ± {first.r2_std:.2f} at the input and {last.r2:.2f} ± "
        f"{last.r2_std:.2f} after layer {int(last.layer)}, against {last.control_r2:.2f} ± "
        f"{last.control_r2_std:.2f} with the positions shuffled.",
        numbers,
        plain,
        (
            ("Input", f"R² {first.r2:.2f} ± {first.r2_std:.2f}"),
            (f"After layer {int(last.layer)}", f"R² {last.r2:.2f} ± {last.r2_std:.2f}"),
            ("Control", f"R² {last.control_r2:.2f} ± {last.control_r2_std:.2f} with the "
             "positions shuffled"),
            ("Probe", "a leak-free linear probe reads each token's position"),
        ),
        (measured_beside("the same probe with the positions shuffled"),),
    )  # fmt: skip


def lookup_verdict(max_abs_diff: float, changes: Any) -> Verdict:
    """A lookup is one-hot × table; training moves only the rows looked up."""
    moved = changes[changes.used]["learned_change"]
    still = changes[~changes.used]["learned_change"]
    numbers = {
        "max_abs_diff": float(max_abs_diff),
        "moved_min": float(moved.min()) if len(moved) else 0.0,
        "unused_max": float(still.abs().max()) if len(still) else 0.0,
    }
    exact = "bit for bit" if max_abs_diff == 0 else f"to within {max_abs_diff:.1e}"
    return Verdict(
        "Because a lookup just picks a row, and training moves only rows it picked. "
        f"A lookup is one-hot × table ({exact}), and training moves only the rows that "
        f"were looked up: {len(moved)} rows moved (by at least {numbers['moved_min']:.2g}), the "
        f"other {len(still)} by exactly {numbers['unused_max']:g}.",
        numbers,
        "A lookup just picks a row, and training moves only rows it picked.",
        (
            ("Lookup", f"one-hot × table ({exact})"),
            ("Rows looked up", f"{len(moved)} moved, by at least {numbers['moved_min']:.2g}"),
            ("Other rows", f"{len(still)} moved by exactly {numbers['unused_max']:g}"),
        ),
        (measured_beside("the rows never looked up"),),
    )


# --------------------------------------------------------------------------- hero frames


def spread_rows(items: list[tuple[str, str, Spread]]) -> pd.DataFrame:
    """``(label, entity, spread)`` items as the frame of :func:`posviz.charts.experiments.
    evidence_chart`: ``label, entity, mean, low, high`` with low/high = mean ∓ std."""
    return pd.DataFrame(
        [
            {
                "label": label,
                "entity": entity,
                "mean": s.mean,
                "low": s.mean - s.std,
                "high": s.mean + s.std,
            }
            for label, entity, s in items
        ]
    )


def probe_hero_frame(reports: list[tuple[str, ProbeReport]]) -> pd.DataFrame:
    """Each probed table's MAE beside its own random control (mean ± std over blocks/folds)."""
    items: list[tuple[str, str, Spread]] = []
    for name, report in reports:
        items.append((name, name, report.mae.value))
        items.append((f"random table like {name}", "random", report.mae.control))
    return spread_rows(items)


def concat_hero_frame(reports: list[tuple[str, ConcatReport]]) -> pd.DataFrame:
    """Each table's share of position variance inside the words' principal subspace, beside the
    share inside random subspaces of that size (mean ± std over the report's random draws)."""
    items: list[tuple[str, str, Spread]] = []
    for name, report in reports:
        share = report.pe_in_we
        items.append((name, name, Spread(share, 0.0, 1, share, share)))
        if report.pe_in_random is not None:
            items.append((f"random subspaces, {name}", "random", report.pe_in_random))
    return spread_rows(items)


def split_verdicts(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A results table without its long verdict columns, and those verdicts as lines of text
    (a sentence in a table cell is cut to the column's width)."""
    columns = [c for c in frame.columns if "verdict" in str(c)]
    lines = [
        f"{row['table']}: {row[c]}" if "table" in frame else str(row[c])
        for _, row in frame.iterrows()
        for c in columns
    ]
    return frame.drop(columns=columns), lines


def plain_table(frame: pd.DataFrame, *, first: tuple[str, ...] = ()) -> pd.DataFrame:
    """``frame`` with ``snake_case`` column names as words and the columns named in ``first``
    (after renaming; the verdict columns) moved to the front, in that order.

    Every column keeps its type: a missing number stays NaN (mixing "—" into a number column
    made Arrow fail and Streamlit fall back to 16-digit text); :func:`shown_table` draws it.
    """
    renamed = frame.rename(columns=lambda c: str(c).replace("_", " ") if "_" in str(c) else c)
    front = [c for c in first if c in renamed.columns]
    return renamed[front + [c for c in renamed.columns if c not in front]]


def shown_table(
    frame: pd.DataFrame, *, first: tuple[str, ...] = (), digits: int = 3
) -> pd.io.formats.style.Styler:
    """:func:`plain_table` styled to show: non-integer numbers to ``digits`` significant digits
    (as the verdicts quote them), missing cells as "—"; the data underneath keeps its types."""
    table = plain_table(frame, first=first)
    floats = [c for c in table.columns if pd.api.types.is_float_dtype(table[c])]
    return table.style.format(lambda v: _sig(v, digits), subset=floats, na_rep="—").format(
        na_rep="—", subset=[c for c in table.columns if c not in floats]
    )


# --------------------------------------------------------------------------- families


def rope_verdict(freqs: Any, *, name: str) -> Verdict:
    """Where RoPE's positions went: into rotation speeds, and what a scaling did to them."""
    wavelengths = np.asarray(freqs.wavelength)
    regimes = {"kept": 0, "smoothed": 0, "interpolated": 0}
    for regime in pair_regimes(freqs):
        regimes[str(regime)] = regimes.get(str(regime), 0) + 1
    numbers = {
        "pairs": int(wavelengths.size),
        "fastest": float(wavelengths.min()),
        "slowest": float(wavelengths.max()),
        **{k: float(v) for k, v in regimes.items()},
    }
    sentence = (
        "Into rotations: each query and key is turned by an angle growing with position. "
        f"{name} turns each of its {wavelengths.size} query/key pairs by p·θᵢ, "
        f"from one turn every {_sig(wavelengths.min())} tokens to one every "
        f"{_sig(wavelengths.max())}, so a query·key score depends only on their distance"
    )
    evidence: list[Evidence] = [
        ("Pairs", f"{name} turns each of its {wavelengths.size} query/key pairs by p·θᵢ"),
        ("Speeds", f"from one turn every {_sig(wavelengths.min())} tokens to one every "
         f"{_sig(wavelengths.max())}"),
        ("Hence", "a query·key score depends only on their distance"),
    ]  # fmt: skip
    if freqs.rope_type != "default":
        sentence += (
            f"; its {freqs.rope_type} scaling keeps {regimes['kept']} pairs, smooths "
            f"{regimes['smoothed']} and interpolates {regimes['interpolated']}"
        )
        evidence.append(
            (f"{freqs.rope_type} scaling", f"keeps {regimes['kept']} pairs, smooths "
             f"{regimes['smoothed']}, interpolates {regimes['interpolated']}")
        )  # fmt: skip
    line = "Into rotations: each query and key is turned by an angle growing with position."
    return Verdict(sentence + ".", numbers, line, tuple(evidence), (formula("su_2021", "eq. 15"),))


def alibi_verdict(slopes: np.ndarray) -> Verdict:
    """ALiBi: one fixed linear penalty per head, steep to gentle, as half-attention distances."""
    values = np.asarray(slopes, dtype=np.float64)
    halves = np.log(2) / values  # the distance at which exp(−m·k) halves a key's weight
    numbers = {"heads": int(values.size), "steepest": float(values.max()),
               "gentlest": float(values.min()), "half_near": float(halves.min()),
               "half_far": float(halves.max())}  # fmt: skip
    return Verdict(
        "With no position vectors at all: attention is simply penalised for distance. "
        f"Each of the {values.size} heads subtracts m·distance "
        f"from its attention logits, so a key's weight halves every {_sig(halves.min())} tokens "
        f"for the steepest head (m = {_sig(values.max())}) and every {_sig(halves.max())} for "
        f"the gentlest (m = {_sig(values.min())}).",
        numbers,
        "No position vectors at all: attention is simply penalised for distance.",
        (
            ("Heads", f"{values.size}, each subtracting m·distance from its attention logits"),
            ("Steepest head", f"m = {_sig(values.max())}: a key's weight halves every "
             f"{_sig(halves.min())} tokens"),
            ("Gentlest head", f"m = {_sig(values.min())}: halves every "
             f"{_sig(halves.max())} tokens"),
        ),
        (formula("press_2022", "§3"),),
    )  # fmt: skip


def t5_verdict(relative: np.ndarray, buckets: np.ndarray, *, max_distance: int) -> Verdict:
    """T5: a learned scalar per bucket of relative distance; exact near, logarithmic far.

    ``buckets`` is the causal curve (keys at or before the query, ``relative ≤ 0``).
    """
    rel = np.asarray(relative)
    behind = rel <= 0
    distances, back = -rel[behind], np.asarray(buckets)[behind]
    order = np.argsort(distances)
    distances, back = distances[order], back[order]
    shared = np.flatnonzero(np.r_[back[1:] == back[:-1], False])  # a bucket holding 2+ distances
    exact = int(distances[shared[0]] - 1) if shared.size else int(distances.max())
    numbers = {"buckets_seen": int(np.unique(back).size), "exact_up_to": exact,
               "max_distance": int(max_distance)}  # fmt: skip
    return Verdict(
        "By buckets of relative distance: near distances are exact, far ones grouped. "
        f"Looking back, distances 0 … {exact} each get their "
        f"own bucket, farther ones share logarithmically wider buckets, and from {max_distance} "
        "tokens on all distances share one; each head learns one bias per bucket.",
        numbers,
        "By buckets of relative distance: near distances are exact, far ones grouped.",
        (
            ("Exact", f"looking back, distances 0 … {exact} each get their own bucket"),
            ("Farther", "logarithmically wider buckets, shared"),
            ("Farthest", f"from {max_distance} tokens on, all distances share one bucket"),
            ("Learned", "one bias per bucket, per head"),
        ),
        (formula("raffel_2020", "§2.1"),),
    )


def bucket_index_matrix(
    n_positions: int, *, bidirectional: bool, num_buckets: int, max_distance: int
) -> np.ndarray:
    """``(n, n)``: the bucket T5 looks up for query ``i`` and key ``j`` (``key − query``)."""
    grid = np.arange(n_positions)
    relative = grid[None, :] - grid[:, None]
    return t5_relative_bucket(
        relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    ).astype(np.float64)


def nope_verdict(positions: np.ndarray, norms: dict[str, np.ndarray]) -> Verdict:
    """NoPE: the causal mask alone makes the output norm fall with position."""
    measured = next(v for k, v in norms.items() if k.startswith("causal: measured"))
    first, last = float(measured[0]), float(measured[-1])
    numbers = {"norm_first": first, "norm_last": last, "last_position": int(positions[-1])}
    return Verdict(
        "A causal mask alone leaks it: each output averages a different number of tokens. "
        f"With uniform attention the output at position i averages "
        f"i + 1 tokens, so its norm falls from {first:.2f} at position 0 to {last:.2f} at "
        f"position {int(positions[-1])}, and the position can be read back from it; without the "
        "mask every position gets the same vector.",
        numbers,
        "A causal mask alone leaks position: each output averages a different number of tokens.",
        (
            ("Uniform attention", "the output at position i averages i + 1 tokens"),
            ("Norm", f"falls from {first:.2f} at position 0 to {last:.2f} at position "
             f"{int(positions[-1])}, so the position can be read back from it"),
            ("Control", "without the mask every position gets the same vector"),
        ),
        (measured_beside("the same attention without the causal mask"),),
    )  # fmt: skip


def vit_verdict(similarity: np.ndarray, *, name: str) -> Verdict:
    """ViT: is a patch more similar to its own row and column than to the rest of the grid?"""
    sim = np.asarray(similarity, dtype=np.float64)
    h, w = sim.shape[:2]
    r, c, r2, c2 = np.indices(sim.shape)
    other = (r != r2) | (c != c2)
    line = other & ((r == r2) | (c == c2))
    rest = other & (r != r2) & (c != c2)
    in_line, elsewhere = float(sim[line].mean()), float(sim[rest].mean()) if rest.any() else 0.0
    numbers = {"same_row_or_column": in_line, "elsewhere": elsewhere, "rows": h, "columns": w}
    lead = "Yes" if in_line > elsewhere + 0.05 else "Not clearly"
    plain = (
        "patches resemble their own row and column most."
        if lead == "Yes"
        else "rows and columns stand out little."
    )
    return Verdict(
        f"{lead} for {name}: {plain} On its {h}×{w} grid a patch's position vector has mean cosine "
        f"{in_line:.2f} with the patches of its own row or column, against {elsewhere:.2f} with "
        "all the others.",
        numbers,
        f"{lead} for {name}: {plain}",
        (
            ("Grid", f"{h}×{w} patches"),
            ("Own row or column", f"mean cosine {in_line:.2f}"),
            ("All other patches", f"mean cosine {elsewhere:.2f}"),
        ),
    )


def compare_verdict(summary: pd.DataFrame, *, trained: int) -> Verdict:
    """Families on one axis: which keep a familiar signal at twice the trained length."""
    column = next((c for c in summary.columns if str(c).startswith("unseen at k=")), None)
    if column is None or summary.empty:
        return Verdict("Pick at least one family to compare.")
    rows = summary[["family", column]].dropna()
    familiar = [str(f) for f, u in zip(rows["family"], rows[column], strict=True) if u < 0.05]
    unseen = [f"{f} {u:.0%}" for f, u in zip(rows["family"], rows[column], strict=True)
              if u >= 0.05]  # fmt: skip
    numbers = {str(f): float(u) for f, u in zip(rows["family"], rows[column], strict=True)}
    parts = []
    if familiar:
        parts.append(f"{', '.join(familiar)} stay within what training produced")
    if unseen:
        parts.append(f"the others meet signals training never produced ({', '.join(unseen)})")
    if familiar and unseen:
        plain = "Past the trained length, some encodings stay familiar and others meet new signals."
    elif familiar:
        plain = (
            "Past the trained length, every chosen encoding stays within what it was trained on."
        )
    else:
        plain = "Past the trained length, every chosen encoding meets signals it never saw."
    evidence: list[Evidence] = [("Measured at", f"twice the trained length L = {trained}")]
    if familiar:
        evidence.append(("Familiar", f"{', '.join(familiar)} stay within what training produced"))
    if unseen:
        evidence.append(("Signals training never produced", ", ".join(unseen)))
    return Verdict(
        f"{plain} At twice the trained length L = {trained}: " + "; ".join(parts) + ".",
        numbers,
        plain,
        tuple(evidence),
    )
