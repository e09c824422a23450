"""The NoPE page's model: what /nope shows of one uniform-causal-attention demo, computed once.

:func:`nope_page` takes the demo (:func:`posviz.analysis.families.nope_demo`: output norms and
the position read back from them) and returns the verdict, the hero and the read-out chart.
"""

from __future__ import annotations

from dataclasses import dataclass

from posviz.analysis.families import NopeDemo
from posviz.analysis.headlines import Verdict, nope_verdict
from posviz.charts.families import lines_figure
from posviz.charts.figure import Figure
from posviz.references import cite

INTRO = (
    "Take the position encoding away. Self-attention without a mask is **permutation "
    "equivariant**: shuffle the input tokens and the outputs are shuffled the same way, so the "
    "model cannot know the order (see the permutation page). A **causal** mask changes that: token "
    "*i* can only attend to tokens 0…*i*, so how many tokens it sees — and hence its position — "
    "leaks into its output. Decoder-only models trained with no encoding at all (NoPE) still learn "
    "position this way and can match learned or rotary encodings."
)
UNIFORM = (
    "If a head attends equally to everything it can see, its output at position *i* is the mean "
    "of *i + 1* token vectors. For random tokens with unit-variance entries, "
    "E‖hᵢ‖² = d/(i + 1): the norm shrinks like 1/√(i+1), so position is readable from the output "
    f"alone — the mechanism {cite('haviv_2022')} propose. Without the mask every output is the "
    "mean of all *n* tokens: one vector, no position at all."
)
HERO_NOTE = (
    "Uniform causal attention over random tokens: the output norm at each position, measured and "
    "in theory, against the same attention without a mask."
)
READOUT = (
    "Invert the relation: p̂ = d/‖hᵢ‖² − 1. From one sequence the read-out tracks the true "
    "position for early tokens and grows noisy later (the norm changes ever more slowly); "
    "averaged over sequences it is close. NoPE's positional signal is strong near the start "
    "and fades with length, one reason its extrapolation is debated."
)
LITERATURE = (
    f"- {cite('haviv_2022')}, Findings of EMNLP — causal NoPE models are competitive, "
    "bidirectional (masked LM) ones are not; probes recover position from the activations.\n"
    "- Kazemnejad, Padhi, Natesan Ramamurthy, Das & Reddy (2023), *The Impact of Positional "
    "Encoding on Length Generalization in Transformers*, NeurIPS — NoPE can represent absolute and "
    "relative position in theory and length-generalizes better than RoPE/ALiBi/T5 on their "
    "reasoning tasks.\n"
    "- The other pages: the **ALiBi**, **T5** and **RoPE** pages show what each encoding adds on "
    "top of this mask-only signal; **Compare families** puts them on the same axes."
)


@dataclass(frozen=True)
class NopePage:
    """Everything /nope shows for one demo."""

    verdict: Verdict
    hero: Figure  # output norm per position, measured and in theory, with and without the mask
    readout: Figure  # the position read back from the norm


def nope_page(demo: NopeDemo) -> NopePage:
    """The page's model of ``demo`` (:func:`posviz.analysis.families.nope_demo`)."""
    return NopePage(
        verdict=nope_verdict(demo.positions, demo.norms),
        hero=lines_figure(
            demo.positions,
            demo.norms,
            name="nope_norms",
            x_title="position i",
            y_title="output norm ‖hᵢ‖",
            log_x=True,
        ),
        readout=lines_figure(
            demo.positions,
            demo.readout,
            name="nope_readout",
            x_title="true position i",
            y_title="position read from the norm",
        ),
    )
