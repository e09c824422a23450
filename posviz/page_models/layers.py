"""The Layers page's model: what /layers shows of one layer-by-layer probe, computed once.

:func:`layers_page` takes the probe's scores (one row per layer:
:func:`posviz.analysis.layers.probe_layers` through ``posviz.ui.probing``), optionally the same
probe with the position table zeroed, and returns a :class:`LayersPage`: the verdict, the hero,
the three metrics, the error chart, the story and the table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from posviz.analysis.headlines import Verdict, layers_verdict, plain_table
from posviz.analysis.layer_numbers import layer_frames
from posviz.analysis.provenance import MINILM
from posviz.charts.experiments import layer_chart
from posviz.charts.figure import Figure
from posviz.data.texts import ALL_TEXTS, TEXTS, corpus
from posviz.references import cite

__all__ = ["ALL_TEXTS", "TEXTS", "LayersPage", "corpus", "layers_page"]

BUNDLED = "bundled MiniLM-L6 (offline)"
HUB = "a Hugging Face model (cache or online)"
OWN_TEXT = "paste your own text"
INTRO = (
    "BERT-style models add position embeddings **once**, at the input. Is the position "
    "still in the token's vector after 1, 2, … 6 layers of attention? Run the model on real text, "
    "take every layer's hidden states, fit a linear (ridge) regression from a token's vector to "
    "its position in the window, and score it on held-out text. R² = 1: the position can be read "
    "off exactly; R² ≈ 0: no better than guessing the middle."
)
HERO_NOTE = (
    "R² of a linear probe of the token's position, layer by layer (1 = read exactly; dashed: 0, "
    "where the shuffled-position control sits)."
)


@dataclass(frozen=True)
class LayersPage:
    """Everything /layers shows for one probe (and its ablation)."""

    verdict: Verdict
    hero: Figure  # R² per layer
    metrics: tuple[tuple[str, str, str | None], ...]  # (label, value, help)
    errors: Figure  # mean absolute error per layer, against chance
    story: str  # what it shows, with its sources
    table: pd.DataFrame  # every number, one row per layer (and run)


def _with_minilm(verdict: Verdict) -> Verdict:
    """The probe's verdict with the model it read (the bundled MiniLM-L6, by its hash)."""
    return replace(verdict, sources=(*verdict.sources, MINILM))


def layers_page(scores: pd.DataFrame, *, zeroed: pd.DataFrame | None, window: int) -> LayersPage:
    """The page's model of ``scores`` (and ``zeroed``, the ablation, or ``None``) on windows of
    ``window`` tokens."""
    both = layer_frames(scores, zeroed)
    first, last = scores.iloc[0], scores.iloc[-1]
    best = scores.loc[scores.r2.idxmax()]
    metrics: list[tuple[str, str, str | None]] = [
        (
            "R² at the input (layer 0)",
            f"{first.r2:.2f} ± {first.r2_std:.2f}",
            "mean ± std over blocks of held-out windows; control (positions shuffled within each "
            f"window, probed the same way): {first.control_r2:.2f} ± {first.control_r2_std:.2f}",
        ),
        (
            f"R² after the last layer ({int(last.layer)})",
            f"{last.r2:.2f} ± {last.r2_std:.2f}",
            "mean ± std over blocks of held-out windows; control (positions shuffled within each "
            f"window): {last.control_r2:.2f} ± {last.control_r2_std:.2f}",
        ),
    ]
    if zeroed is None:
        metrics.append(
            (
                "shuffled-position control, every layer",
                f"|R²| ≤ {scores.control_r2.abs().max():.3f}",
                "The same probe with position labels shuffled within each window: no position "
                "to find, so R² should sit at 0 within its spread.",
            )
        )
    else:
        metrics.append(("largest |R²| with positions zeroed", f"{zeroed.r2.abs().max():.3f}", None))
    story = (
        f"**What it shows.** {scores.model.iloc[0]}: on {int(first.train_tokens)} training and "
        f"{int(first.test_tokens)} held-out tokens (windows of {window}), the position is readable "
        f"at the input with R² {first.r2:.2f} ± {first.r2_std:.2f} (typical error "
        f"{first.mae:.1f} positions; guessing gives {first.chance_mae:.1f}), best after layer "
        f"{int(best.layer)} (R² {best.r2:.2f} ± {best.r2_std:.2f}), and after the last layer R² "
        f"{last.r2:.2f} ± {last.r2_std:.2f}; with the position labels shuffled within each window "
        f"(the control) R² is {last.control_r2:.2f} ± {last.control_r2_std:.2f}. Spreads are over "
        "5 blocks of held-out windows; the ridge penalty is chosen by CV grouped over blocks of "
        "consecutive windows (they overlap, so leave-one-token-out would leak). Position is added "
        "once and never re-added, yet later layers still carry it: attention mixes it into every "
        "token's vector, as the answer to the Stack Overflow question "
        + cite("so_learnable")
        + " says (after "
        + cite("amir_2021")
        + ", §3.1)."
    )
    if zeroed is not None:
        story += (
            f" With the position table zeroed, every layer scores at chance (|R²| ≤ "
            f"{zeroed.r2.abs().max():.3f}): without positions the model cannot tell where a token "
            "is."
        )
    return LayersPage(
        verdict=_with_minilm(layers_verdict(scores)),
        hero=Figure(
            layer_chart(both, metric="r2"), plain_table(both[["layer", "r2", "mae"]]), "layer_probe"
        ),
        metrics=tuple(metrics),
        errors=Figure(
            layer_chart(both, metric="mae"),
            both[["layer", "mae", "chance_mae"]].to_numpy(),
            "layer_probe_mae",
        ),
        story=story,
        table=plain_table(both),
    )
