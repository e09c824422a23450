"""The sibling-diff page's model: two tables of one lineage compared row by row, and, for the two
bundled MiniLM checkpoints, what explains the rows that only shrank.

:func:`sibling_page` pairs :func:`posviz.analysis.sibling.sibling_diff` (numbers, verdict,
captions) with :mod:`posviz.charts.sibling` (the hero and the two tables side by side).
:func:`scale_explanation` tests the global-scale explanation on the MiniLM pair: the positions'
factor fitted again on the word-embedding rows, the token-type rows and the embedding LayerNorm
(each against the same matrix with its rows shuffled), and which model's rows moved, read from
the float16 grid (:func:`posviz.analysis.sibling.direction`). The page caches both
(:func:`posviz.ui.cache.cached_model`, keyed by :func:`page_key`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from posviz.analysis.headlines import Verdict
from posviz.analysis.provenance import MINILM, checkpoint, of_table
from posviz.analysis.sibling import (
    HERO_SERIES,
    ONLY_SCALED,
    SAME_SCALE,
    Direction,
    ScaleFit,
    SiblingDiff,
    direction,
    scale_fit,
    sibling_diff,
)
from posviz.charts.figure import Figure
from posviz.charts.sibling import sibling_hero_figure, side_by_side_figures
from posviz.charts.sibling_scale import percent, share_bars_figure
from posviz.models import bundled_tensor
from posviz.tables import PositionTable
from posviz.tables.bundled import BUNDLED_MODEL_ID, MINILM_L3, PACKAGED, verified_packaged_file
from posviz.tables.onnx_format import onnx_initializer
from posviz.tables.picker import table_cache_key

#: The hero's height (as :data:`posviz.ui.answer.HERO_HEIGHT`: the verdict and hero fit 900 px).
HERO_HEIGHT = 300
#: Table B's default: the bundled L3 sibling.
L3 = "bundled:" + MINILM_L3.name

INTRO = (
    "Two models fine-tuned from one parent carry two copies of one position table. Compare them "
    "row by row: a row that training moved points somewhere new; a row training never touched "
    "can at most have changed its length. The defaults are the two MiniLM checkpoints that ship "
    "with posviz (all-MiniLM-L6-v2 and paraphrase-MiniLM-L3-v2, both offline); any two tables "
    "of one shape work."
)
WHY_128 = (
    "**Why 128?** The all-MiniLM-L6-v2 model card (shipped in its package) says of its "
    "fine-tuning: \u201cThe sequence length was limited to 128 tokens.\u201d Positions 128 and "
    "beyond never occurred in those inputs. The boundary found above from the numbers alone sits "
    "exactly there. Rows 0\u2013127 were trained, and the two models moved them apart; the rows "
    "past them only changed length, all by one factor. This is the seam the learned page marks "
    "near row 128, and the real-weights answer to the lab's question whether rarely seen rows "
    "stay untrained."
)


@dataclass(frozen=True)
class SiblingPage:
    """What the page shows: the diff (verdict, numbers, captions) and its three figures."""

    diff: SiblingDiff
    hero: Figure
    tables: tuple[Figure, Figure]


#: the two checkpoints the global-scale explanation reads, by the SHA-256 each was checked against
_L3 = PACKAGED["paraphrase-MiniLM-L3-v2"]
_SOURCES = (MINILM, checkpoint(_L3.name, _L3.sha256))


def sibling_name(table: PositionTable) -> str:
    """A table named by what it is: the bundled one by its model, packaged ones by theirs."""
    if table.source == "bundled":
        return BUNDLED_MODEL_ID.split("/")[-1]
    if table.source.startswith("bundled:"):
        return table.source.removeprefix("bundled:")
    return table.label


def page_key(first: PositionTable, second: PositionTable) -> str:
    """What identifies the pair for the page's cache: both tables' content keys."""
    return f"{table_cache_key(first)}|{table_cache_key(second)}"


def sibling_page(tables: tuple[PositionTable, PositionTable]) -> SiblingPage:
    """The page's model for tables ``(A, B)``.

    Raises:
        ValueError: the tables' shapes differ.
    """
    first, second = tables
    names = (sibling_name(first), sibling_name(second))
    a, b = np.asarray(first.matrix), np.asarray(second.matrix)
    diff = sibling_diff(a, b, names=names)
    sources = (of_table(first), of_table(second))
    diff = replace(diff, verdict=replace(diff.verdict, sources=sources))
    hero = sibling_hero_figure(
        diff.rows,
        series=HERO_SERIES,
        seams=diff.seams,
        seam_labels=diff.seam_labels,
        threshold=ONLY_SCALED,
        title="How much did each row change?",
        height=HERO_HEIGHT,
    )
    stems = tuple(re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60] for name in names)
    left, right = side_by_side_figures(a, b, names=names, seams=diff.seams)
    left = Figure(left.chart, left.data, f"{stems[0]}_table")
    right = Figure(right.chart, right.data, f"{stems[1]}_table")
    return SiblingPage(diff, hero, (left, right))


def is_minilm_pair(first: PositionTable, second: PositionTable, page: SiblingPage) -> bool:
    """The two bundled MiniLM tables, with the seam at 128 found in the data (the page then
    says why 128 and tests the global-scale explanation)."""
    return first.source == "bundled" and second.source == L3 and page.diff.seams == (128,)


# ------------------------------------------------------------- the global-scale explanation

#: The matrices compared (name in the page, tensor name after ``embeddings.``).
MATRICES = (
    ("positions", "position_embeddings.weight"),
    ("word embeddings", "word_embeddings.weight"),
    ("token type", "token_type_embeddings.weight"),
    ("LayerNorm weight", "LayerNorm.weight"),
    ("LayerNorm bias", "LayerNorm.bias"),
)
#: An unrelated float32 matrix of L6 (its first layer's query weight): the float16 chance level.
UNRELATED = "encoder.layer.0.attention.self.query.weight"
_L3_PREFIX = "model.0.auto_model.embeddings."


def minilm_matrices() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{name: (L6, L3)}`` for :data:`MATRICES`, plus ``"unrelated"`` (L6's only), read from the
    two hash-checked bundled files (L6's safetensors, L3's ONNX export).

    Raises:
        ValueError: a file missing or failing its hash check (says how to reinstall it).
    """
    path = verified_packaged_file(MINILM_L3)
    out = {
        name: (
            bundled_tensor(f"embeddings.{tensor}"),
            onnx_initializer(path, _L3_PREFIX + tensor, where=MINILM_L3.name),
        )
        for name, tensor in MATRICES
    }
    out["unrelated"] = (bundled_tensor(UNRELATED), np.empty(0, np.float32))
    return out


@dataclass(frozen=True)
class ScaleExplanation:
    """Is one global factor behind the rows that only shrank, and whose rows shrank?"""

    factor: float  # the positions' factor (L3 = factor × L6 on their only-scaled rows)
    fits: tuple[ScaleFit, ...]  # one per matrix of MATRICES
    positions: Direction
    words: Direction
    scale_verdict: Verdict
    direction_verdict: Verdict
    scale_figure: Figure
    fp16_figure: Figure
    scale_caption: str
    fp16_caption: str


def _count(n: int) -> str:
    return f"{n:,}"


def _scale_verdict(fits: tuple[ScaleFit, ...], factor: float) -> Verdict:
    same = [f for f in fits if f.same_factor(factor)]
    other = [f for f in fits if not f.same_factor(factor)]
    shared = {"positions", "word embeddings", "token type"} <= {f.name for f in same}
    line = (
        f"One factor, {factor:.5f}, scales L3's untouched position, word and token-type rows alike."
        if shared
        else f"The positions' factor {factor:.5f} does not carry over to the other embeddings."
    )
    evidence = [
        (
            f.name,
            f"{_count(f.scaled_rows)} of {_count(f.rows)} row{'s' if f.rows != 1 else ''} only "
            "scaled"
            + (f", by {f.scale:.5f} (left {f.residual:.1e})" if f.scaled_rows else "")
            + f"; with the rows shuffled {_count(f.control_rows)}.",
        )
        for f in fits
    ]
    evidence.append((
        "rule",
        f"A row only scaled when less than {ONLY_SCALED:.0%} of it is left after its own best "
        f"scale; \u201cthe same factor\u201d is within {SAME_SCALE:.0e} of {factor:.5f}.",
    ))  # fmt: skip
    if other:
        left = ", ".join(f"{f.name} {f.median_left:.1%}" for f in other)
        evidence.append((
            "not the factor",
            f"left after each row's own best scale (median): {left}: they changed direction, "
            "not only length, so they did not just shrink with the rest.",
        ))  # fmt: skip
    evidence.append((
        "a guess",
        "One factor on every row that got no gradient is what decoupled weight decay "
        "(θ ← θ·(1 − ηλ) each step) would leave, and LayerNorm is usually exempt from decay; "
        "the training logs are not shipped, so this stays a guess the numbers agree with.",
    ))  # fmt: skip
    numbers = {f"{f.name} scaled rows": float(f.scaled_rows) for f in fits} | {"factor": factor}
    return Verdict(line + " " + " ".join(t for _, t in evidence), numbers, line, tuple(evidence),
                   _SOURCES)  # fmt: skip


def _direction_verdict(pos: Direction, words: Direction, factor: float) -> Verdict:
    both = pos.shrunk == words.shrunk == "B"
    line = (
        "L3's rows shrank: L6's untouched rows sit exactly on the float16 grid, L3's do not."
        if both
        else "The float16 grid does not tell which model's rows moved here."
    )
    p = {name: percent(getattr(pos, name)) for name in ("a_scaled", "b_scaled", "a_moved")}
    w = {name: percent(getattr(words, name)) for name in ("a_scaled", "b_scaled", "a_moved")}
    evidence = (
        ("positions", f"L6's only-scaled entries on the float16 grid: {p['a_scaled']}; L3's "
         f"same entries {p['b_scaled']}; L6's moved rows {p['a_moved']}."),
        ("word embeddings", f"L6 {w['a_scaled']}, L3 {w['b_scaled']}; L6's moved rows "
         f"{w['a_moved']}."),
        ("premise", f"L6's only-scaled entries × {factor:.5f}, in float32: "
         f"{percent(pos.scaled_again)} on the grid (positions), {percent(words.scaled_again)} "
         "(words): scaling leaves the grid."),
        ("chance level", f"an unrelated float32 matrix of L6 (layer 0's query weight): "
         f"{percent(pos.unrelated)} on the grid."),
        ("so", "the side on the grid is the one that was not multiplied: L3 = "
         f"{factor:.5f} × L6 on those rows, not L6 = L3 / {factor:.5f}."),
    )  # fmt: skip
    numbers = {"L6 on grid": pos.a_scaled, "L3 on grid": pos.b_scaled}
    return Verdict(line + " " + " ".join(t for _, t in evidence), numbers, line, evidence, _SOURCES)


def _scale_figure(fits: tuple[ScaleFit, ...], factor: float) -> Figure:
    rows = []
    for f in fits:
        same = f.same_factor(factor)
        rows.append(
            (
                f"{f.name} ({_count(f.rows)} row{'s' if f.rows != 1 else ''})",
                "evidence",
                f.scaled_rows / f.rows,
                f"{_count(f.scaled_rows)}" + (f" × {f.scale:.5f}" if same else ""),
            )
        )
        rows.append((f"{f.name}, rows shuffled", "control", f.control_rows / f.rows,
                     _count(f.control_rows)))  # fmt: skip
    frame = pd.DataFrame(rows, columns=["item", "kind", "share", "label"])
    return share_bars_figure(
        frame,
        title="L3 rows that are L6's rows scaled",
        x_title="share of the matrix's rows",
        name="sibling_scale_rows",
    )


def _fp16_figure(pos: Direction, words: Direction, factor: float) -> Figure:
    rows = [
        ("L6, positions 128–511", "evidence", pos.a_scaled),
        ("L3, the same rows", "evidence", pos.b_scaled),
        ("L6, positions 0–127 (moved)", "evidence", pos.a_moved),
        ("L6, word rows only scaled", "evidence", words.a_scaled),
        ("L3, the same word rows", "evidence", words.b_scaled),
        (f"L6 rows × {factor:.5f} (premise)", "control", pos.scaled_again),
        ("unrelated L6 matrix (chance)", "control", pos.unrelated),
    ]
    frame = pd.DataFrame(rows, columns=["item", "kind", "share"])
    frame["label"] = [percent(v) for v in frame["share"]]
    return share_bars_figure(
        frame,
        title="Entries exactly on the float16 grid",
        x_title="share of entries (log)",
        name="sibling_fp16_grid",
        log=True,
    )


def _scale_caption(fits: tuple[ScaleFit, ...], factor: float) -> str:
    by = {f.name: f for f in fits}
    shuffled = max(f.control_rows for f in fits)
    norm_rows = by["LayerNorm weight"].scaled_rows + by["LayerNorm bias"].scaled_rows
    return (
        f"The same factor {factor:.5f} scales {_count(by['positions'].scaled_rows)} position rows, "
        f"{_count(by['word embeddings'].scaled_rows)} word rows and "
        f"{_count(by['token type'].scaled_rows)} of {by['token type'].rows} token-type rows of L3 "
        f"against L6; with L3's rows shuffled "
        + (f"at most {_count(shuffled)} rows of a matrix line up" if shuffled else "none line up")
        + f"; the embedding LayerNorm has {norm_rows} such rows."
        " Blue: rows paired as the models pair them (a row counts when less than 1 % "
        "is left after its own best scale); grey: the shuffled control."
    )


def _fp16_caption(pos: Direction, words: Direction, factor: float) -> str:
    return (
        f"L6's untouched position rows are {percent(pos.a_scaled)} on the float16 grid, L3's same "
        f"rows {percent(pos.b_scaled)} (words: {percent(words.a_scaled)} vs "
        f"{percent(words.b_scaled)}); L6's rows × {factor:.5f} land on it "
        f"{percent(pos.scaled_again)} of the time and an unrelated float32 matrix "
        f"{percent(pos.unrelated)}: L3's rows are the ones that were multiplied. Log axis; blue: "
        "the two models' rows, grey: the premise and the chance level."
    )


def scale_explanation(matrices: dict[str, tuple[np.ndarray, np.ndarray]]) -> ScaleExplanation:
    """The global-scale test and the float16 direction on ``matrices``
    (:func:`minilm_matrices`'s layout: ``{name: (L6, L3)}`` and ``"unrelated"``)."""
    fits = tuple(scale_fit(*matrices[name], name=name) for name, _ in MATRICES)
    factor = fits[0].scale
    unrelated = matrices["unrelated"][0]
    pos, words = (
        direction(*matrices[f.name], f.only_scaled, factor=factor, unrelated=unrelated)
        for f in fits[:2]
    )
    return ScaleExplanation(
        factor, fits, pos, words,
        _scale_verdict(fits, factor), _direction_verdict(pos, words, factor),
        _scale_figure(fits, factor), _fp16_figure(pos, words, factor),
        _scale_caption(fits, factor), _fp16_caption(pos, words, factor),
    )  # fmt: skip


def minilm_explanation(_: object = None) -> ScaleExplanation:
    """:func:`scale_explanation` of the two bundled MiniLM checkpoints (reads both files)."""
    return scale_explanation(minilm_matrices())
