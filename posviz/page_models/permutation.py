"""The Permutation page's model: what /permutation shows of one run of two sentences.

:func:`permutation_page` takes the result (:func:`posviz.analysis.permutation.permutation_test`
on the bundled model) and returns a :class:`PermutationPage`: the verdict and hero, the three
metrics with their help, the sentence that reads them, the two similarity maps and the per-token
table, each computed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from posviz.analysis.headlines import Verdict, plain_table
from posviz.analysis.permutation import PermutationResult
from posviz.analysis.provenance import MINILM
from posviz.charts.experiments import similarity_chart
from posviz.charts.figure import Figure
from posviz.figures import permutation_hero
from posviz.references import cite

EXAMPLES = {
    "I do like coding / Do I like coding": ("I do like coding", "Do I like coding"),
    "Tom bit a dog / A dog bit Tom": ("Tom bit a dog", "A dog bit Tom"),
    "your own sentences": ("", ""),
}
DEPTHS = {"first self-attention block": None, "first full layer": 1, "all 6 layers": 6}

INTRO = (
    "Self-attention treats its input as a *set*: reorder the tokens and the outputs come out "
    "reordered the same way, each vector unchanged (the Stack Overflow answer). So without "
    "position information "
    '"Tom bit a dog" and "A dog bit Tom" get the same vectors (the cnblogs post). Here the bundled '
    "MiniLM's real token embeddings go through its real first attention block, once **without** "
    "and once **with** its position embeddings added."
)
HERO_NOTE = (
    "For each token of B: how far its output lies from the same token's output in A, without "
    "positions (grey, float rounding) and with them (blue). Log scale."
)
SIMILARITY_NOTE = (
    "Left: each output of B has an exact twin (cosine 1.000000) in A — the permutation. Right: "
    "with positions the twins are only similar. Computed by `posviz.analysis.permutation."
    "permutation_test` (token embeddings → embedding LayerNorm → `encoder.layer[0].attention`)."
)
SOURCES = "**Sources:** " + "; ".join(cite(k) for k in ("so_learnable", "cnblogs_2020"))


@dataclass(frozen=True)
class PermutationPage:
    """Everything /permutation shows for one run."""

    tokens_a: list[str]  # word pieces of A, as the model sees them
    tokens_b: list[str]
    verdict: Verdict
    hero: Figure
    metrics: tuple[tuple[str, str, str], ...]  # (label, value, help)
    reading: str  # what the metrics say
    similarity_without: Figure
    similarity_with: Figure
    per_token: pd.DataFrame


def hero_verdict(result: PermutationResult, verdict: Verdict) -> Verdict:
    """The verdict stating the quantity its hero plots: each token's Euclidean distance
    ‖out_B[i] − out_A[π(i)]‖₂ (the bars), largest without and with positions; the largest single
    element (what ``verdict`` quoted) stays in the evidence, named as such."""
    distances = result.per_token
    without = float(distances["distance_without_positions"].max())
    with_ = float(distances["distance_with_positions"].max())
    said = dict(verdict.evidence)
    evidence = (
        ("Without positions", said["Without positions"]),
        (
            "With positions",
            f"the same token's output lies up to {with_:.2f} away from its twin (Euclidean "
            f"distance, the longest bar above; {without:.1e} without positions)",
        ),
        ("Largest single element", f"{result.max_diff_with:.2f} with positions"),
    )
    sentence = (
        f"{verdict.sentence.rsplit(' with positions the same token differs', 1)[0]} with "
        f"positions the same token's output lies up to {with_:.2f} away from its twin "
        f"(Euclidean distance; largest single element {result.max_diff_with:.2f})."
    )
    numbers = {**verdict.numbers, "distance_without": without, "distance_with": with_}
    return Verdict(sentence, numbers, verdict.line, evidence, (*verdict.sources, MINILM))


def permutation_page(result: PermutationResult) -> PermutationPage:
    """The page's model of ``result``: its verdict states what its hero plots
    (:func:`hero_verdict`)."""
    r = result
    verdict, hero = permutation_hero(r)
    verdict = hero_verdict(r, verdict)
    metrics = (
        (
            "max |out_B − out_A[π]|, no positions",
            f"{r.max_diff_without:.1e}",
            "The largest absolute element of the difference (not a norm). Control: float32 "
            f"rounding at the outputs' size, ε₃₂·max|out_A| = {r.rounding_scale:.1e}.",
        ),
        (
            "max |out_B − out_A[π]|, with positions",
            f"{r.max_diff_with:.3f}",
            "The same largest absolute element, with MiniLM's position table added.",
        ),
        (
            "‖mean out_B − mean out_A‖₂, no / with",
            f"{r.pooled_diff_without:.1e} / {r.pooled_diff_with:.2f}",
            "Euclidean distance of the mean-pooled sentence vectors.",
        ),
    )
    reading = (
        f"Without positions every output of B equals the output of the same token in A to float "
        f"rounding: the largest difference, {r.max_diff_without:.1e}, is "
        f"{r.max_diff_without / r.rounding_scale:.1f}× the float32 rounding step at the "
        f"outputs' size ({r.rounding_scale:.1e}); with positions it is "
        f"{r.max_diff_with / r.rounding_scale:.0e}× that step. The computation is exact "
        "(no sampling), so there is no spread to show: the layer saw the same set, so it produced "
        "the same vectors, permuted. The "
        "mean-pooled sentence vectors — what a sentence-embedding model like MiniLM returns — are "
        "identical: the two sentences would mean the same. With positions added, the same token "
        "gets a different vector in each sentence."
    )
    maps = [
        Figure(
            similarity_chart(matrix, r.tokens_b, r.tokens_a, title=f"cosine(out_B, out_A), {how}"),
            matrix,
            name,
        )
        for matrix, how, name in (
            (r.similarity_without, "no positions", "similarity_no_positions"),
            (r.similarity_with, "with positions", "similarity_with_positions"),
        )
    ]
    return PermutationPage(
        tokens_a=list(r.tokens_a),
        tokens_b=list(r.tokens_b),
        verdict=verdict,
        hero=hero,
        metrics=metrics,
        reading=reading,
        similarity_without=maps[0],
        similarity_with=maps[1],
        per_token=plain_table(r.per_token),
    )
