"""Model handles, loaded once per process and shared read-only between sessions.

``cached_resource`` keeps them (never mutate one: every session sees the same object); the
experiments' results are cached per input by the page modules that use them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posviz.analysis.add_concat import principal_axes
from posviz.governor import heavy_work
from posviz.models import (
    LoadedModel,
    bundled_position_embeddings,
    bundled_word_embeddings,
    load_bundled_model,
    load_hub_model,
)
from posviz.models import bundled_tokenizer as load_bundled_tokenizer
from posviz.ui.cache import cached_resource


# No spinner of its own: every caller's waiting() spinner says what it waits for (loading
# included); Streamlit's cache spinner, nested in it, drew over the permutation page's intro.
@cached_resource(show_spinner=False)
def bundled_model() -> LoadedModel:
    """The bundled MiniLM, SHA-256 verified, loaded once."""
    return load_bundled_model()


@cached_resource(show_spinner="Loading the model from the Hugging Face hub/cache…", max_entries=2)
def hub_model(model_id: str) -> LoadedModel:
    """A hub model; at most two are kept in memory."""
    return load_hub_model(model_id)


def loaded_model(model_id: str) -> LoadedModel:
    """The bundled model for ``model_id == "bundled"``, else that hub model."""
    return bundled_model() if model_id == "bundled" else hub_model(model_id)


@cached_resource(show_spinner=False)
def bundled_arrays() -> tuple[np.ndarray, np.ndarray]:
    """``(word_embeddings (30522, 384), position_embeddings (512, 384))`` of the bundled model."""
    return bundled_word_embeddings(), bundled_position_embeddings()


@cached_resource(show_spinner=False)
def bundled_tokenizer() -> Any:
    """The bundled WordPiece tokenizer (no padding/truncation), loaded once."""
    tokenizer = load_bundled_tokenizer()
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@cached_resource(show_spinner=False)  # inside its caller's waiting() (see above)
def bundled_word_axes() -> tuple[np.ndarray, np.ndarray]:
    """Principal axes and explained-variance fractions of MiniLM's word embeddings."""
    with heavy_work(renice=False):
        return principal_axes(bundled_arrays()[0])
