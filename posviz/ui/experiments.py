"""Cached wrappers for the experiment pages: model handles once per process, results per input.

``st.cache_resource`` holds models and the big read-only arrays (shared, never mutated);
``st.cache_data`` holds results, keyed by primitives and bounded by ``posviz.settings``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from posviz.settings import settings

_LIMITS = settings()
_DATA = {"max_entries": _LIMITS.cache_entries, "ttl": _LIMITS.cache_ttl_seconds}


@st.cache_resource(show_spinner="Loading the bundled MiniLM model (once)…")
def bundled_model() -> Any:
    """The bundled MiniLM (``posviz.models.LoadedModel``), SHA-256 verified, loaded once."""
    from posviz.models import load_bundled_model

    return load_bundled_model()


@st.cache_resource(show_spinner="Loading the model from the Hugging Face hub/cache…", max_entries=2)
def hub_model(model_id: str) -> Any:
    """A hub model (``LoadedModel``); at most two are kept in memory."""
    from posviz.models import load_hub_model

    return load_hub_model(model_id)


@st.cache_resource(show_spinner=False)
def bundled_arrays() -> tuple[np.ndarray, np.ndarray]:
    """``(word_embeddings (30522, 384), position_embeddings (512, 384))`` of the bundled model."""
    from posviz.models import bundled_position_embeddings, bundled_word_embeddings

    return bundled_word_embeddings(), bundled_position_embeddings()


@st.cache_resource(show_spinner=False)
def bundled_tokenizer() -> Any:
    """The bundled WordPiece tokenizer (no padding/truncation), loaded once."""
    from posviz.models import bundled_tokenizer as load

    tokenizer = load()
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@st.cache_resource(show_spinner="Decomposing the word-embedding table (once)…")
def bundled_word_axes() -> tuple[np.ndarray, np.ndarray]:
    """Principal axes and explained-variance fractions of MiniLM's word embeddings."""
    from posviz.analysis.add_concat import principal_axes

    return principal_axes(bundled_arrays()[0])


@st.cache_data(show_spinner=False, **_DATA)
def concat_report(table: str, n_positions: int, fraction: float) -> pd.DataFrame:
    """``concat_hypothesis`` of a position table against MiniLM's word embeddings, as a frame.

    ``table``: ``"learned"`` (MiniLM's rows ``0…n−1``), ``"sinusoid"`` (width 384) or ``"random"``
    (Gaussian with the learned table's std, seed 0).
    """
    from posviz.analysis.add_concat import concat_hypothesis
    from posviz.encodings.sinusoidal import sinusoidal

    words, learned = bundled_arrays()
    if table == "learned":
        matrix = learned[:n_positions].astype(np.float64)
    elif table == "sinusoid":
        matrix = sinusoidal(n_positions, words.shape[1])
    else:
        matrix = np.random.default_rng(0).normal(0, learned.std(), (n_positions, words.shape[1]))
    report = concat_hypothesis(matrix, words, fraction=fraction, word_axes=bundled_word_axes())
    return report.frame()


@st.cache_data(show_spinner=False, **_DATA)
def probe_table(
    matrix: np.ndarray,
    train: str,
    test: str,
    folds: int,
    alpha: float,
    seed: int,
    with_labels: np.ndarray | None = None,
) -> tuple[pd.DataFrame, float, float, str, int]:
    """``probe_positions`` → (per-position frame, MAE, R², protocol text, n_train)."""
    from posviz.analysis.probes import probe_positions

    result = probe_positions(
        matrix, train=train, test=test, folds=folds, alpha=alpha, seed=seed, positions=with_labels
    )
    protocol = result.protocol + (", rounded" if result.rounded else "")
    return result.frame(), result.mae, result.r2, protocol, result.n_train


@st.cache_data(show_spinner=False, **_DATA)
def relative_probe(matrix: np.ndarray, folds: int, seed: int, n_pairs: int | None) -> float:
    """``probe_relative_order(...).error_rate``."""
    from posviz.analysis.probes import probe_relative_order

    return probe_relative_order(matrix, folds=folds, seed=seed, n_pairs=n_pairs).error_rate


@st.cache_data(show_spinner=False, **_DATA)
def permutation(sentence_a: str, sentence_b: str, layers: int | None, special_tokens: bool) -> Any:
    """``permutation_test`` on the bundled model (a frozen dataclass of arrays and a frame)."""
    from posviz.analysis.permutation import permutation_test

    loaded = bundled_model()
    return permutation_test(
        loaded.model,
        loaded.tokenizer,
        sentence_a,
        sentence_b,
        layers=layers,
        special_tokens=special_tokens,
    )


def _zeroed_copy(model: Any) -> Any:
    """A deep copy of ``model`` with its position table zeroed (the cached one stays untouched)."""
    import copy

    import torch

    from posviz.models import additive_position_modules

    clone = copy.deepcopy(model)
    _, position = additive_position_modules(clone)
    with torch.no_grad():
        position.weight.zero_()
    return clone


@st.cache_data(show_spinner=False, **_DATA)
def layer_probe(model_id: str, text: str, window: int, zero_positions: bool) -> pd.DataFrame:
    """Per-layer probe scores for the bundled model (``model_id == "bundled"``) or a hub model.

    No Streamlit element is touched in here (a cached function must not write to outside
    containers); the page shows an ``st.status`` around the call instead.
    """
    from posviz.analysis.layers import layer_position_probe

    loaded = bundled_model() if model_id == "bundled" else hub_model(model_id)
    model = _zeroed_copy(loaded.model) if zero_positions else loaded.model
    result = layer_position_probe(model, loaded.tokenizer, text, window=window)
    scores = result.scores.copy()
    short = "MiniLM-L6 (bundled)" if model_id == "bundled" else model_id
    scores["model"] = short + (", positions zeroed" if zero_positions else "")
    scores["train_tokens"] = result.n_train_tokens
    scores["test_tokens"] = result.n_test_tokens
    return scores
