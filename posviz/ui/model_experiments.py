"""Cached glue of the pages that run the bundled model's parts: permutation equivariance and the
``nn.Embedding`` lookup."""

from __future__ import annotations

from posviz.analysis.embedding_lookup import LookupCheck, lookup_vs_onehot
from posviz.analysis.headlines import Verdict, permutation_verdict, plain_table
from posviz.analysis.lookup_views import lookup_table
from posviz.analysis.permutation import PermutationResult, permutation_test
from posviz.charts.experiments import permutation_chart
from posviz.charts.figure import Figure
from posviz.ui.cache import cached_data
from posviz.ui.model_handles import bundled_arrays, bundled_model


@cached_data()
def permutation(
    sentence_a: str, sentence_b: str, layers: int | None, special_tokens: bool
) -> PermutationResult:
    """``permutation_test`` on the bundled model (a frozen dataclass of arrays and a frame)."""
    loaded = bundled_model()
    return permutation_test(
        loaded.model,
        loaded.tokenizer,
        sentence_a,
        sentence_b,
        layers=layers,
        special_tokens=special_tokens,
    )


def lookup_check(table: str, ids: tuple[int, ...]) -> LookupCheck:
    """``lookup_vs_onehot`` on MiniLM's learned table (``"learned"``) or the 512 × 384 sinusoid."""
    return lookup_vs_onehot(lookup_table(table, learned=bundled_arrays()[1]), list(ids))


def permutation_hero(result: PermutationResult) -> tuple[Verdict, Figure]:
    """The page's verdict and its hero: each token's two outputs' distance, without vs with."""
    distances = result.per_token[["distance_without_positions", "distance_with_positions"]]
    figure = Figure(permutation_chart(result.per_token), plain_table(distances), "permutation")
    return permutation_verdict(result), figure
