"""The nn.Embedding page's model: what /embedding_lookup shows of its two checks, computed once.

:func:`lookup_page` takes the lookup check (:func:`posviz.analysis.embedding_lookup
.lookup_vs_onehot` on a real table) and the training demo (:func:`posviz.analysis
.embedding_lookup.train_a_few_steps`), either ``None`` when its inputs were refused, and returns
a :class:`LookupPage`: the check's table and sentences, the demo's metrics, the verdict (when
both ran) and the hero.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from posviz.analysis.embedding_lookup import LookupCheck, TrainingDemo
from posviz.analysis.headlines import Verdict, lookup_verdict
from posviz.analysis.lookup_numbers import lookup_frame
from posviz.charts.experiments import training_change_chart
from posviz.charts.figure import Figure
from posviz.references import cite

LEARNED, SINUSOID = "MiniLM's learned position table (512 × 384)", "sinusoid (512 × 384)"
#: dimensions of each looked-up row shown in the check's table.
SHOWN = 6
#: the training demo's table: rows × width.
DEMO_ROWS, DEMO_WIDTH = 16, 8

INTRO = (
    '`nn.Embedding` is "just a table of vectors": its input is a row index, its output is that '
    "row — the same as multiplying a one-hot vector by the matrix. BERT's learned "
    "positions and the Transformer's sinusoid are both such a table; they differ only in whether "
    "training may change the rows."
)
TRAINING = (
    "A learned table is an `nn.Embedding` with `requires_grad=True`; the static sinusoid is "
    "`nn.Embedding.from_pretrained(PE, freeze=True)`. Both feed one shared linear read-out that "
    "must predict `p / n` from the row; a few SGD steps run on the chosen positions only."
)
HERO_NOTE = (
    "How far each row of a 16-row table moved in a few SGD steps. Solid: rows looked up in "
    "training; faded: rows never looked up (they stay exactly where they were)."
)
TRAINED_ROWS = (
    "Only the learned rows that were looked up moved; the rows not looked up are the "
    "control and changed by exactly 0. A row gets a gradient only when its position occurs "
    "in the batch (each step moves it by −lr × its gradient, which the tests check against "
    "the closed form), so each row is trained independently — why BERT's rarely used rows "
    "past ~400 stay poorly trained, per the Jexus blog post. The frozen sinusoid has "
    "`requires_grad=False` and no trainable parameters; it needs no storage beyond its "
    "formula, which is what the Transformer authors gained."
)
SOURCES = "**Sources:** " + "; ".join(
    cite(k) for k in ("so_nn_embedding", "jexus_2020", "vaswani_2017")
)


@dataclass(frozen=True)
class LookupPage:
    """Everything /embedding_lookup shows; a part is ``None`` when its check did not run."""

    difference: str | None  # max |lookup − one-hot product|, as the metric shows it
    rows: pd.DataFrame | None  # one row per looked-up id
    rows_caption: str | None
    metrics: tuple[tuple[str, str], ...]  # the demo's (label, value) metrics
    verdict: Verdict | None  # when both checks ran
    hero: Figure | None  # how far each row moved in training


def lookup_page(check: LookupCheck | None, demo: TrainingDemo | None) -> LookupPage:
    """The page's model of the lookup ``check`` and the training ``demo``."""
    difference = rows = caption = hero = verdict = None
    metrics: tuple[tuple[str, str], ...] = ()
    if check is not None:
        difference = "0 (bit for bit)" if check.max_abs_diff == 0 else f"{check.max_abs_diff:.1e}"
        rows = lookup_frame(check, shown=SHOWN)
        n_rows, width = check.onehot.shape[1], check.lookup.shape[1]
        caption = (
            f"Each one-hot row has a single 1 among {n_rows} columns; multiplying it by the "
            f"{n_rows} × {width} matrix adds up one row and zeros, so the result is "
            f"the looked-up row bit for bit (first {SHOWN} of {width} dimensions shown). A "
            "lookup just skips the multiplications by zero."
        )
    if demo is not None:
        grad, params = demo.requires_grad, demo.trainable_parameters
        metrics = (
            ("requires_grad: learned / sinusoid", f"{grad['learned']} / {grad['sinusoid']}"),
            ("trainable table parameters", f"{params['learned']} / {params['sinusoid']}"),
            ("toy loss, first → last step", f"{demo.losses[0]:.3f} → {demo.losses[-1]:.3f}"),
        )
        hero = Figure(
            training_change_chart(demo.changes),
            demo.changes[["learned_change", "sinusoid_change"]].to_numpy(),
            "rows_changed_by_training",
        )
        if check is not None:
            verdict = lookup_verdict(check.max_abs_diff, demo.changes)
    return LookupPage(difference, rows, caption, metrics, verdict, hero)
