"""Streamlit glue for the encoding-family pages (RoPE, ALiBi, T5, NoPE, ViT, compare).

Cached wrappers (keyed by primitives, bounded by ``posviz.settings``) and the shared "where do the
parameters come from" picker: a hand-written preset, a hub model's config.json, or manual values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import streamlit as st

from posviz.analysis import families
from posviz.analysis.comparison import CompareSettings, FamilyComparison, LearnedTable
from posviz.analysis.comparison import compare_families as _compare
from posviz.analysis.t5_numbers import T5_BIAS_KEYS
from posviz.encodings.families import presets_for
from posviz.encodings.rope import HEAD_DIM_STEP, MAX_HEAD_DIM, MIN_HEAD_DIM
from posviz.navigation import CONFIG_SOURCES, QK_CHOICES
from posviz.page_models import compare
from posviz.tables import fetch_config, read_named_tensor
from posviz.ui.cache import cached_data
from posviz.ui.loaders import cached_table
from posviz.ui.state import url_field, url_numbers, url_radio, url_select, url_text
from posviz.ui.text import safe_md
from posviz.urlparams import NumberField


@cached_data()
def cached_config(repo_id: str, revision: str = "") -> dict[str, Any]:
    """A hub model's config.json (``posviz.tables.fetch_config``), cached."""
    return fetch_config(repo_id, revision=revision or None)


@cached_data()
def cached_t5_bias(source: str, stack: str, revision: str = "") -> np.ndarray:
    """T5's learned ``relative_attention_bias.weight`` of block 0, ``(num_buckets, n_heads)``."""
    return np.asarray(read_named_tensor(source, T5_BIAS_KEYS[stack], revision=revision or None))


@cached_data(max_entries=8)
def cached_nope_demo(n: int, d: int, samples: int, seed: int) -> families.NopeDemo:
    """:func:`posviz.analysis.families.nope_demo`, cached."""
    return families.nope_demo(n, d, n_samples=samples, seed=seed)


@cached_data(max_entries=4)
def _learned_for_comparison(n_items: int) -> LearnedTable:
    return compare.learned_table(cached_table("bundled").matrix, n_items)


@cached_data(max_entries=8)
def _cached_comparison(
    chosen: tuple[str, ...],
    settings: CompareSettings,
    learned: LearnedTable | None,
    t5_bias: tuple[str, np.ndarray] | None,
) -> FamilyComparison:
    return _compare(chosen, settings=settings, learned=learned, t5_bias=t5_bias)


def family_comparison(
    chosen: list[str], *, settings: CompareSettings, t5_model: str = ""
) -> FamilyComparison:
    """:func:`posviz.analysis.comparison.compare_families` with the bundled learned table and,
    when ``t5_model`` is named, that model's learned T5 bias (inputs that cannot be read are
    errors: :func:`posviz.page_models.compare.comparison_inputs`); cached."""
    learned, t5_bias, errors = compare.comparison_inputs(
        chosen, settings, t5_model, learned=_learned_for_comparison,
        t5_bias=lambda model: cached_t5_bias(model, "encoder"),
    )  # fmt: skip
    return compare.with_errors(
        _cached_comparison(tuple(chosen), settings, learned, t5_bias), errors
    )


def show_family_errors(errors: dict[str, str]) -> None:
    """One error box per family left out; messages escaped (they may quote a typed model id)."""
    for family, message in errors.items():
        st.error(f"{family}: {safe_md(message, max_len=400)}", icon="⚠️")


def _hub_config(key: str) -> tuple[dict[str, Any] | None, str]:
    col1, col2 = st.columns([3, 1])
    with col1:
        repo = url_text(
            "Hub model id (or local model directory)",
            key=f"{key}_hub",
            default="",
            placeholder="e.g. meta-llama/Llama-3.1-8B",
        ).strip()
    with col2:
        revision = url_text("Revision", key=f"{key}_rev", default="", max_chars=80).strip()
    if not repo:
        st.info("Type a model id; posviz reads only its config.json.")
        return None, ""
    with st.spinner(f"Fetching {safe_md(repo, max_len=100)}/config.json …"):
        return cached_config(repo, revision), repo


def pick_config(family: str, *, key: str, default_preset: str) -> tuple[dict[str, Any] | None, str]:
    """Choose where a family's parameters come from; returns ``(config dict | None, label)``.

    ``None`` means "manual": the page reads its own widgets. Hub configs are fetched (cached) and
    may raise ``ValueError`` (offline, unknown id): call inside ``user_errors``. Widget keys:
    ``<key>_src``, ``<key>_preset``, ``<key>_hub``, ``<key>_rev``.
    """
    mode = url_radio(
        "Parameters from",
        list(CONFIG_SOURCES),
        key=f"{key}_src",
        default="preset",
        format_func=CONFIG_SOURCES.get,
    )
    if mode == "hub":
        return _hub_config(key)
    if mode == "manual":
        return None, "manual"
    presets = presets_for(family)
    name = url_select(
        "Preset",
        list(presets),
        key=f"{key}_preset",
        default=default_preset,
        help="Written out by hand from the models' config.json files; "
        "'illustrative' ones are not published configs.",
    )
    return dict(presets[name]), name


def head_dim_field(default: int) -> NumberField:
    """A RoPE-family page's head dimension (link key ``<prefix>hd``), in the encoding's limits."""
    return NumberField("Head dimension", "hd", MIN_HEAD_DIM, MAX_HEAD_DIM, default, HEAD_DIM_STEP)


def pick_qk(key: str, *, place: Any = None) -> tuple[bool, int]:
    """``(random, seed)``: q = k = all ones, or random q and k from a seed. Widgets ``<key>_qk``
    (in ``place``, a column, when given) and, for random ones, ``<key>_seed`` below it."""
    with place or contextlib.nullcontext():
        vectors = url_select("q and k", QK_CHOICES, key=f"{key}_qk", default=QK_CHOICES[0])
    seed = NumberField("Seed", "_seed", 0, 10_000, 0)
    return (True, url_field(seed, key_prefix=key)) if vectors == QK_CHOICES[1] else (False, 0)


def pick_head_and_length(
    key: str, n_heads: int, lengths: tuple[int, int, int], columns: Sequence[Any]
) -> tuple[int, int]:
    """A head of ``n_heads`` and a sequence length (``lengths``: lowest, highest, default) for a
    bias-matrix chart: sliders ``<key>_head`` and ``<key>_n`` in the first two ``columns``."""
    fields = (
        NumberField("Head", "_head", 0, max(n_heads - 1, 1), 0),
        NumberField("Sequence length", "_n", *lengths),
    )
    head, n_pos = url_numbers(fields, key_prefix=key, slider=True, columns=columns[:2])
    return min(head, n_heads - 1), n_pos
