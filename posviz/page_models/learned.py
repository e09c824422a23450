"""The Learned page's model: what /learned shows of a loaded position table, computed once.

:func:`learned_page` takes the table (a :class:`~posviz.tables.PositionTable`) and returns a
:class:`LearnedPage`: the verdict, the similarity of the first positions, the seam (if any), the
first two principal components and the position the hero starts at. :meth:`LearnedPage.hero_at`
draws the linked hero (similarity matrix and PCA path) at the page's one position from those
numbers, so moving the position computes nothing again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from posviz import figures
from posviz.analysis.echo import (
    WHISPER_PROMPT_SHIFT,
    best_shifts,
    find_echo,
    most_similar_beyond,
    row_norms,
    shuffled_rows,
)
from posviz.analysis.headlines import Verdict, learned_verdict
from posviz.analysis.provenance import of_table
from posviz.charts.families import lines_figure
from posviz.charts.figure import Figure
from posviz.charts.heroes import LinkedHero
from posviz.references import cite
from posviz.tables import PositionTable
from posviz.tables.picker import comparison_default, table_cache_key

__all__ = [
    "ECHO_POINTER",
    "HERO_NOTE",
    "INTRO",
    "MINILM",
    "WHISPER_DECODER",
    "Finding",
    "LearnedPage",
    "RealSection",
    "comparison_default",
    "echo_section",
    "learned_page",
    "table_cache_key",
    "table_name",
]

INTRO = (
    "BERT, GPT-2, RoBERTa and friends do not compute positions from a formula: they *learn* a "
    "table, one vector per position, added to the token embedding. Here is that table from a real "
    "model — MiniLM-L6 ships with posviz and works offline; any hub model with a learned table is "
    "read in seconds (only its header and this one tensor are fetched). Compare it with a sinusoid "
    "of the same width to see what training found on its own."
)
HERO_NOTE = (
    "Red: the two positions point the same way; blue: opposite ways. The path: the positions on "
    "the table's first two principal components, in order (colour = position). The Position "
    "slider moves the crossed row and column and the ringed dot together, and the link keeps it. "
    "Pointing at the matrix or a dot previews its position; ▶ play animates, and stopped returns "
    "to the slider's position."
)


def table_name(table: PositionTable) -> str:
    """How a verdict names a table: the bundled one by its model, others by their label."""
    return "MiniLM-L6 (bundled)" if table.source == "bundled" else table.label


@dataclass(frozen=True)
class LearnedPage:
    """Everything /learned shows above its views for one table."""

    n: int  # positions in the table
    verdict: Verdict
    summary: figures.TableSummary  # similarity of the first positions, seam, PCA

    @property
    def start_position(self) -> int:
        """Where the hero starts when the link names no position: the seam's end, else 0."""
        edges = self.summary.edges
        return edges[1] if edges else 0

    def hero_at(self, position: int) -> LinkedHero:
        """The similarity matrix and the PCA path linked at ``position`` (clamped to the table)."""
        return figures.learned_linked_hero(
            self.summary, n_positions=self.n, current=min(max(int(position), 0), self.n - 1)
        )


def learned_page(table: PositionTable) -> LearnedPage:
    """The page's model of ``table``: its verdict
    (:func:`~posviz.analysis.headlines.learned_verdict`) and the numbers its hero draws
    (:func:`posviz.figures.table_summary`), each computed once."""
    matrix = table.matrix
    return LearnedPage(
        n=len(matrix),
        verdict=replace(
            learned_verdict(matrix, name=table_name(table)), sources=(of_table(table),)
        ),
        summary=figures.table_summary(matrix),
    )


# ------------------------------------------------- a real model's echo: Whisper tiny.en's decoder


@dataclass(frozen=True)
class Finding:
    """One chart and the sentence that states what it shows (under the chart, and read aloud)."""

    figure: Figure
    description: str


@dataclass(frozen=True)
class RealSection:
    """A section on a real checkpoint: its answer in plain words first, then each chart."""

    title: str
    lead: str  # Markdown
    findings: tuple[Finding, ...]
    caveat: str = ""


#: the sources the echo section reads (both offline, hash-checked)
WHISPER_DECODER = "bundled:whisper-tiny.en-decoder"
MINILM = "bundled"
ECHO_POINTER = (
    "A real learned table with an echo: choose **Bundled Whisper tiny.en decoder** as the Table "
    "above ([open it](learned?lrn_a_src=whisper-decoder)) to see Whisper's decoder tested "
    "against its shuffled rows and MiniLM-L6."
)


def _padded(values: np.ndarray, length: int) -> np.ndarray:
    out = np.full(length, np.nan)
    out[: min(length, len(values))] = values[:length]
    return out


def echo_section(tables: tuple[PositionTable, PositionTable]) -> RealSection:
    """Whisper tiny.en's decoder table against two controls: its own rows shuffled, MiniLM-L6.

    Every number in the text is computed here from the tables (:mod:`posviz.analysis.echo`).
    """
    decoder, minilm = tables
    dec = find_echo(decoder.matrix)
    shuf = find_echo(shuffled_rows(decoder.matrix, seed=0))
    mini = find_echo(minilm.matrix)
    norms = row_norms(decoder.matrix)
    twin = most_similar_beyond(decoder.matrix, 0, min_distance=100)
    c = dec.curve
    length = max(dec.limit, mini.limit)
    k = np.arange(1, length + 1)
    curves = lines_figure(
        k,
        {
            "Whisper decoder": _padded(c[: dec.limit], length),
            "its rows shuffled (control)": _padded(shuf.curve[: shuf.limit], length),
            "MiniLM-L6 (control)": _padded(mini.curve[: mini.limit], length),
        },
        name="whisper_decoder_cosine_by_distance",
        x_title="distance k",
        y_title="mean cos(row p, row p + k)",
        rule_x=float(WHISPER_PROMPT_SHIFT),
        rule_label="224",
        height=300,
    )
    curve_text = (
        f"Mean cosine of rows p and p + k. Whisper's falls to {dec.dip:.2f} at k = {dec.dip_at} "
        f"and comes back to {dec.peak:.2f} at k = {dec.peak_at} (it was {c[9]:.2f} at k = 10): "
        f"a rise of {dec.prominence:.2f}. Shuffled, its rows rise by {shuf.prominence:.2f} (no "
        f"echo). MiniLM-L6's curve undulates too (a rise of {mini.prominence:.2f}), so a rise "
        "alone is not the echo; the next chart is."
    )
    dec_match = best_shifts(decoder.matrix, low=dec.shift - 60, high=dec.shift + 60)
    mini_match = best_shifts(minilm.matrix, low=mini.shift - 60, high=mini.shift + 60)
    rows = max(len(dec_match.shifts), len(mini_match.shifts))
    shifts = lines_figure(
        np.arange(rows),
        {
            "Whisper decoder": _padded(dec_match.shifts.astype(float), rows),
            "MiniLM-L6 (control)": _padded(mini_match.shifts.astype(float), rows),
        },
        name="best_match_shift",
        x_title="row p",
        y_title="shift s of the most similar row p + s",
        height=260,
    )
    shift_text = (
        f"For each row p, the shift s (within ±60 of each table's peak) whose row p + s is most "
        f"like row p. Whisper: {dec.alignment:.0%} of its {len(dec_match.shifts)} rows find it "
        f"at s = {dec.shift} ± 2 — one shifted copy. MiniLM-L6: {mini.alignment:.0%} at its "
        f"commonest shift, {mini.shift}; its matches scatter."
    )
    norm_chart = lines_figure(
        np.arange(len(norms.norms)),
        {"row norm": norms.norms},
        name="whisper_decoder_row_norms",
        x_title="position",
        y_title="‖row‖",
        rule_x=float(WHISPER_PROMPT_SHIFT),
        rule_label="224",
        height=240,
    )
    norm_text = (
        f"Row norms. Row 0 is {norms.ratio(0):.2f}× the median ({norms.median:.3f}); the next "
        f"largest is row {norms.top_rows[1]} ({norms.ratio(norms.top_rows[1]):.2f}×)."
    )
    controls = [name for name, e in (("its rows shuffled", shuf), ("MiniLM-L6", mini)) if e.is_echo]
    control_text = (
        "Neither control does: the same rows shuffled, or MiniLM-L6's table."
        if not controls
        else f"Careful: {' and '.join(controls)} pass the same test."
    )
    verdict = (
        "**Whisper's text decoder learned a table with an echo.**"
        if dec.is_echo
        else "**By this test, Whisper's text decoder shows no echo.**"
    )
    second = norms.top_rows[1]
    agrees = second == WHISPER_PROMPT_SHIFT and twin == WHISPER_PROMPT_SHIFT
    weights_text = (
        f"What the weights can test agrees: row {second} has the largest norm after row 0, and "
        f"of all rows 100 or more after row 0, row {twin} is the most like it."
        if agrees
        else f"The weights do not single out row {WHISPER_PROMPT_SHIFT}: the largest norm after "
        f"row 0 is row {second}'s, and the row most like row 0 beyond 100 is row {twin}."
    )
    lead = (
        f"{verdict} Rows p and p + k grow less alike up to k ≈ {dec.dip_at}, then alike again "
        f"near k = {dec.peak_at}: {dec.alignment:.0%} of rows find their closest later row "
        f"{dec.shift} ± 2 positions on. {control_text} Row 0's norm is {norms.ratio(0):.1f}× "
        "the median row's.\n\n"
        "*A hypothesis, not a fact:* Whisper's decoding can put up to 223 tokens of previous "
        "text after a `<|startofprev|>` marker before the transcript, so a full prompt starts "
        "the transcript at position 224 where an empty one starts it at 0; p and p + 224 would "
        f"then often hold the same place in a transcript. {weights_text} What they cannot show "
        f"is how often training used a full prompt ({cite('radford_2022')})."
    )
    return RealSection(
        title="A real learned table with an echo: Whisper tiny.en's decoder",
        lead=lead,
        findings=(
            Finding(curves, curve_text),
            Finding(shifts, shift_text),
            Finding(norm_chart, norm_text),
        ),
        caveat=decoder.notes[0] if decoder.notes else "",
    )
