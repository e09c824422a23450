"""Cached glue of the pages that run the bundled model's parts: permutation equivariance and the
``nn.Embedding`` lookup."""

from __future__ import annotations

from posviz.analysis.embedding_lookup import LookupCheck, lookup_vs_onehot
from posviz.analysis.lookup_views import lookup_table
from posviz.analysis.permutation import PermutationResult, permutation_test
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
