"""Sinusoidal encodings: the table, its dimensions, its clock hands, which dimensions move, and
why similarity depends only on distance. Every control is mirrored in the URL (``sin_*``)."""

import streamlit as st

from posviz.analysis.sinusoid_columns import column_label
from posviz.encodings.sinusoidal import (
    MAX_D_MODEL,
    MAX_POSITIONS,
    SINUSOID_LAYOUTS,
    pair_columns,
    sinusoid_wavelengths,
)
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_verdict
from posviz.ui.circle_view import unit_circle_view
from posviz.ui.heatmap_view import heatmap_view
from posviz.ui.heroes import (
    show_linked_hero,
    sinusoid_hero,
    sinusoid_linked_hero,
    why_sin_and_cos,
)
from posviz.ui.line_views import dimensions_view, shift_similarity_view, variance_view
from posviz.ui.loaders import cached_sinusoidal
from posviz.ui.sinusoid_views import slow_columns_view

MAX_BASE_UI = 1e9

st.title("Sinusoidal position encodings")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(
    "The original Transformer adds to the token at position *p* a fixed vector "
    "PE(p): pairs of sin and cos waves, one pair per frequency, from fast (one turn every "
    "2π ≈ 6.3 positions) to very slow (one turn every ≈ 2π·base positions). "
    "`PE[p, 2i] = sin(p / base^(2i/d))`, `PE[p, 2i+1] = cos(p / base^(2i/d))` "
    f"({cite('vaswani_2017')}, §3.5). Move the sliders; the URL keeps every setting, so a copied "
    "link reproduces this view."
)

cols = st.columns([3, 3, 2, 3])
with cols[0]:
    n = url_slider(
        "Positions (sequence length)",
        key="sin_n",
        min_value=1,
        max_value=MAX_POSITIONS,
        default=128,
    )
with cols[1]:
    d = url_slider(
        "Width d_model (even)", key="sin_d", min_value=2, max_value=MAX_D_MODEL, default=512, step=2
    )
with cols[2]:
    base = url_number(
        "Base",
        key="sin_base",
        min_value=1.01,
        max_value=MAX_BASE_UI,
        default=10000.0,
        format="%g",
        help="10000 in the paper; RoPE-style long-context models use larger bases.",
    )
with cols[3]:
    layout = url_select(
        "Layout",
        SINUSOID_LAYOUTS,
        key="sin_layout",
        default="interleaved",
        radio=True,
        horizontal=True,
    )
st.caption(
    f"Limits: 1 … {MAX_POSITIONS} positions; even width 2 … {MAX_D_MODEL}; "
    f"1 < base ≤ {MAX_BASE_UI:g}. Tables larger than 1024 on a side are shown as a reduced "
    "overview that says so, with zoom to any window drawn 1:1."
)

with st.expander("How the three layouts differ"):
    st.markdown(
        "| layout | columns | frequencies ω_i | used by |\n"
        "|---|---|---|---|\n"
        "| **interleaved** | sin, cos, sin, cos, … (pair i in columns 2i, 2i+1) | "
        "base^(−2i/d) | the paper; HF `create_sinusoidal_embeddings` (DistilBERT, XLM) |\n"
        "| **split** | all sines, then all cosines (pair i in columns i, d/2+i) | "
        "base^(−2i/d) — the same | Marian |\n"
        "| **tensor2tensor** | split | exp(−i·ln(base)/(d/2−1)): timescales from exactly 1 "
        "to exactly base | tensor2tensor `get_timing_signal_1d`, Whisper, fairseq (M2M-100, "
        "NLLB) |\n\n"
        "*interleaved* and *split* hold **the same numbers**: one is a permutation of the "
        "other's columns, so a model would learn the same thing from either. *tensor2tensor* "
        "uses **a different set of frequencies**: its slowest pair turns once every 2π·base "
        "positions instead of 2π·base^((d−2)/d), and every pair in between is a little slower."
    )

table = None
with user_errors("Encoding"):
    if d % 2:
        raise ValueError(
            f"d_model={d} is odd: sinusoidal encodings use sin/cos pairs, so the width must be "
            f"even; use {d - 1} or {d + 1}."
        )
    table = cached_sinusoidal(int(n), int(d), float(base), layout)
    wavelengths = sinusoid_wavelengths(d, base=base, layout=layout)
    sin_cols, cos_cols = pair_columns(d, layout=layout)

if table is None:
    st.stop()

tag = f"sin:{n}:{d}:{base!r}:{layout}"
name = f"sinusoidal-{n}x{d}-{layout}"
with answer:
    verdict, _table, _clock = sinusoid_hero(int(n), int(d), float(base), layout, 10)
    show_verdict(verdict)
    show_linked_hero(
        sinusoid_linked_hero(int(n), int(d), float(base), layout, 10),
        key="sin_hero",
        note="Positions run down, dimensions across (blue −1, white 0, red +1). Point at a row "
        "of the table or a dot on the clock, or press ▶ play: the outlined row and the hands "
        "follow the same position.",
    )

st.subheader("Why sin *and* cos?")
alone, both, why = why_sin_and_cos(int(n), int(d), float(base), layout)
hit, check = why.collision, why.check
st.markdown(
    f"A sine alone is ambiguous: sin a = sin(π − a), so within one turn two positions share "
    f"each value. In pair {why.pair} positions {hit.first} and {hit.second} have "
    f"sines {hit.sine_first:+.3f} and {hit.sine_second:+.3f}; only their cosines, "
    f"{hit.cosine_first:+.2f} and {hit.cosine_second:+.2f}, tell them apart."
)
c1, c2 = st.columns([3, 2], gap="medium")
with c1:
    show_chart(alone, key="sin_why_alone")
with c2:
    show_chart(both, key="sin_why_both")
st.markdown(
    f"The pair also turns a shift into a rotation: PE(p + k) = R(k)·PE(p), one fixed 2×2 "
    f"rotation per pair whatever p is. Checked on this table for k = {check.shift}: the largest "
    f"error over every position and column is {check.pair_error:.1e} (float rounding). The "
    f"sines alone admit no such map: the best fixed factor per frequency still misses by up to "
    f"{check.sine_only_error:.2f}. A fixed linear map of PE(p) giving PE(p + k) is what lets "
    "attention read relative positions from a dot product."
)

st.markdown(
    f"**PE** is a {n}×{d} table: {d // 2} sin/cos pairs with wavelengths from "
    f"{wavelengths[0]:.3g} to {wavelengths[-1]:,.0f} positions."
)

heatmap_view(
    table,
    key_prefix="sin_",
    cache_key=tag,
    title="The whole table",
    name=name,
    prose="Positions run down, dimensions across; colour is the value (blue −1, white 0, red "
    "+1). On the left the fast pairs flicker from row to row; to the right they slow down until "
    "the last columns are almost constant: sines stay near 0, cosines near 1. In the split "
    "layouts the same picture appears twice side by side (sines, then cosines).",
)


dimensions_view(
    table,
    key_prefix="sin_",
    default_dims=sorted({0, d // 8, d // 4, d // 2, d - 2}),
    dim_label=lambda j: column_label(d, j, layout=layout),
    name=name,
    prose="Each line is one column read down the positions. Low columns oscillate quickly, "
    "high columns barely move: column j of pair i has wavelength 2π·base^(2i/d).",
)

unit_circle_view(
    table,
    key_prefix="sin_",
    pairs_are_sin_cos=True,
    sin_cos_columns=(sin_cols, cos_cols),
    wavelengths=wavelengths,
    name=name,
)

active = variance_view(table, key_prefix="sin_", name=name)


slow_columns_view(table, layout=layout, active=active)

shift_similarity_view(
    table,
    key_prefix="sin_",
    name=name,
    prose="For every offset k: the similarity of PE(p) and PE(p + k), computed for **every** p. "
    "For sinusoids PE(p)·PE(p+k) = Σᵢ cos(ωᵢ·k), which does not contain p: each pair is "
    "rotated by the same angle ωᵢ·k wherever you start. So the band (min … max over p) has zero "
    "width — the similarity depends only on the distance, which lets attention read relative "
    "position from a dot product.",
)

next_question("pages/sinusoidal.py")
