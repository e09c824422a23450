"""Streamlit glue for the encoding-family pages (RoPE, ALiBi, T5, NoPE, ViT, compare).

Cached wrappers (keyed by primitives, bounded by ``posviz.settings``) and the shared "where do the
parameters come from" picker: a hand-written preset, a hub model's config.json, or manual values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from posviz.analysis import families, vit
from posviz.encodings.model_config import PRESETS, presets_for
from posviz.settings import settings
from posviz.tables import PositionTable
from posviz.ui.state import url_select, url_text

_LIMITS = settings()
SOURCES = {
    "preset": "Preset (hand-written config)",
    "hub": "Hub model's config.json",
    "manual": "Manual values",
}
T5_BIAS_KEYS = {
    "encoder": "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
    "decoder": "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
}


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_config(repo_id: str, revision: str = "") -> dict[str, Any]:
    """A hub model's config.json (``posviz.tables.hub.fetch_config``), cached."""
    from posviz.tables.hub import fetch_config

    return fetch_config(repo_id, revision=revision or None)


@st.cache_data(max_entries=_LIMITS.cache_entries, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_t5_bias(source: str, stack: str, revision: str = "") -> np.ndarray:
    """T5's learned ``relative_attention_bias.weight`` of block 0, ``(num_buckets, n_heads)``."""
    from posviz.tables.hub import read_named_tensor

    return np.asarray(read_named_tensor(source, T5_BIAS_KEYS[stack], revision=revision or None))


@st.cache_data(max_entries=8, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_nope_norms(n: int, d: int, samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    return families.causal_average_norms(n, d, n_samples=samples, seed=seed)


@st.cache_data(max_entries=8, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_margin(kind: str, n: int, params: tuple) -> np.ndarray:
    """Nearest-neighbour margins of a family's signal (see :func:`families.nearest_margin`)."""
    if kind == "angles":
        return families.nearest_margin(families.angle_signal(n, np.asarray(params)))
    if kind == "buckets":
        num_buckets, max_distance = params
        return families.nearest_margin(
            families.bucket_signal(n, num_buckets=num_buckets, max_distance=max_distance)
        )
    raise ValueError(f"unknown margin kind {kind!r}")


@st.cache_data(max_entries=4, ttl=_LIMITS.cache_ttl_seconds, show_spinner=False)
def cached_table_margin(source: str, n: int) -> np.ndarray:
    from posviz.ui.tables import cached_table

    return families.nearest_margin(cached_table(source).matrix[:n])


def bundled_table() -> PositionTable:
    """MiniLM-L6's learned table (offline), through the shared table cache."""
    from posviz.ui.tables import cached_table

    return cached_table("bundled")


def synthetic_vit_table(h: int, w: int, d_model: int) -> PositionTable:
    """A clearly labelled synthetic 2-D sin-cos table on an ``h×w`` grid (no checkpoint needed)."""
    return PositionTable(
        matrix=vit.sincos_2d_table(h, w, d_model),
        source=f"synthetic 2-D sin-cos {h}×{w}×{d_model}",
        kind="vit-2d",
        grid=(h, w),
        notes=(
            "synthetic: rows encode (row, column) with sin/cos, as MAE's fixed 2-D embedding; "
            "not a trained ViT",
        ),
    )


def pick_config(family: str, *, key: str, default_preset: str) -> tuple[dict[str, Any] | None, str]:
    """Choose where a family's parameters come from; returns ``(config dict | None, label)``.

    ``None`` means "manual": the page reads its own widgets. Hub configs are fetched (cached) and
    may raise ``ValueError`` (offline, unknown id): call inside ``user_errors``. Widget keys:
    ``<key>_src``, ``<key>_preset``, ``<key>_hub``, ``<key>_rev``.
    """
    mode = url_select(
        "Parameters from",
        list(SOURCES),
        key=f"{key}_src",
        default="preset",
        format_func=SOURCES.get,
        radio=True,
        horizontal=True,
    )
    if mode == "preset":
        names = list(presets_for(family))
        name = url_select(
            "Preset",
            names,
            key=f"{key}_preset",
            default=default_preset,
            help="Written out by hand from the models' config.json files; "
            "'illustrative' ones are not published configs.",
        )
        return PRESETS[name], name
    if mode == "hub":
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
        with st.spinner(f"Fetching {repo}/config.json …"):
            return cached_config(repo, revision), repo
    return None, "manual"
