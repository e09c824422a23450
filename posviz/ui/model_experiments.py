"""Cached glue of the pages that run the bundled model's parts: permutation equivariance and the
``nn.Embedding`` lookup."""

from __future__ import annotations

from posviz.analysis.embedding_lookup import (
    LookupCheck,
    TrainingDemo,
    lookup_vs_onehot,
    train_a_few_steps,
)
from posviz.analysis.lookup_numbers import lookup_table
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


@cached_data(max_entries=16)
def training_demo(rows: int, width: int, steps: int, used: tuple[int, ...]) -> TrainingDemo:
    """``train_a_few_steps`` on a ``rows × width`` table (CPU, deterministic), cached."""
    return train_a_few_steps(rows, width, steps=steps, used=used)
