"""RoPE: rotation of query/key pairs, the score vs distance, and context-extension scalings."""

import numpy as np
import streamlit as st

from posviz.charts.families import lines_chart, rope_circle_chart, rope_wavelength_chart
from posviz.encodings.model_config import RopeConfig, rope_config_from_dict
from posviz.encodings.rope import (
    PAIRINGS,
    pair_regimes,
    rope_decay_bound,
    rope_scores,
)
from posviz.ui import (
    show_chart,
    url_checkbox,
    url_int_list,
    url_number,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.families import pick_config

st.title("RoPE: rotary position embedding")
st.markdown(
    "Llama, Mistral, Qwen, GPT-NeoX and GPT-J store no position table. Each query and key is cut "
    "into 2-D pairs and pair *i* is **rotated** by the angle *p·θᵢ* at position *p*, with "
    "θᵢ = base^(−2i/d) (Su et al. 2021, RoFormer). Because rotations compose, the score between a "
    "query at *m* and a key at *n* depends only on *m − n*. Context-extension scalings change θᵢ; "
    "they are computed here exactly as `transformers/modeling_rope_utils.py` does."
)

MANUAL_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")  # longrope needs per-pair lists


def manual_config() -> RopeConfig:
    c1, c2, c3 = st.columns(3)
    with c1:
        head_dim = url_number(
            "Head dimension", key="rope_hd", min_value=1, max_value=10000, default=128, step=1
        )
        base = url_number(
            "Base (rope_theta)",
            key="rope_base",
            min_value=1.0,
            max_value=1e9,
            default=10000.0,
            step=1000.0,
        )
    with c2:
        partial = url_slider(
            "Partial rotary factor",
            key="rope_prf",
            min_value=0.05,
            max_value=1.0,
            default=1.0,
            step=0.05,
        )
        rope_type = url_select(
            "Scaling (rope_type)", MANUAL_TYPES, key="rope_type", default="default"
        )
    with c3:
        factor = url_number(
            "factor", key="rope_factor", min_value=1.0, max_value=256.0, default=8.0, step=1.0
        )
        original = url_number(
            "original_max_position_embeddings",
            key="rope_orig",
            min_value=16,
            max_value=1_048_576,
            default=8192,
            step=1024,
        )
    scaling = None
    if rope_type != "default":
        scaling = {
            "rope_type": rope_type,
            "factor": factor,
            "original_max_position_embeddings": original,
        }
        if rope_type == "llama3":
            scaling |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    return RopeConfig(
        model_type="manual",
        head_dim=head_dim,
        partial_rotary_factor=partial,
        base=base,
        scaling=scaling,
        pairing="rotate_half",
        # dynamic NTK rescales past the trained context; the others declare the extended one
        max_position_embeddings=int(original * factor)
        if scaling and rope_type != "dynamic"
        else original,
    )


config = freqs = None
with user_errors("Model parameters"):
    raw, label = pick_config(
        "rope", key="rope", default_preset="Llama-3.1-8B (llama3 scaling, config.json)"
    )
    if label == "":
        st.stop()
    config = manual_config() if raw is None else rope_config_from_dict(raw)
    seq_len = None
    if config.scaling and config.scaling["rope_type"] in ("dynamic", "longrope"):
        seq_len = url_number(
            "Current sequence length (dynamic NTK / LongRoPE switch)",
            key="rope_seq",
            min_value=1,
            max_value=4_194_304,
            default=int(config.max_position_embeddings or 4096) * 2,
            step=1024,
        )
    freqs = config.frequencies(seq_len=seq_len)
if config is None or freqs is None:
    st.stop()

st.caption(
    f"**{label}** · head_dim {freqs.head_dim} · rotated dims {freqs.rotary_dim} "
    f"({freqs.rotary_dim // 2} pairs) · base {freqs.base:,.0f} · scaling `{freqs.rope_type}`"
    + (f" · attention factor {freqs.attention_factor:.4f}" if freqs.attention_factor != 1 else "")
    + (f" · context {config.max_position_embeddings:,}" if config.max_position_embeddings else "")
)
for note in config.notes:
    st.caption(f"Note: {note}.")

st.header("1 · Frequencies, and what the scaling did to each pair")
regimes = pair_regimes(freqs)
counts = {name: int((regimes == name).sum()) for name in ("kept", "smoothed", "interpolated")}
st.markdown(
    "Each dot is one rotary pair: its wavelength 2π/θ′ (tokens per full turn) after scaling; the "
    "dashed grey curve is the unscaled wavelength. Pairs that turn many times within the original "
    "context are **kept**; slow pairs, which never completed a turn in training, are "
    "**interpolated** (θ divided by the factor, so long sequences reuse angles seen in training); "
    "llama3 and YaRN blend in between (**smoothed**). "
    f"Here: {counts['kept']} kept, {counts['smoothed']} smoothed, "
    f"{counts['interpolated']} interpolated."
)
show_chart(
    rope_wavelength_chart(freqs),
    key="rope_wave_chart",
    data=np.column_stack([freqs.original_inv_freq, freqs.inv_freq]),
    name="rope_inv_freq",
)

st.header("2 · A query pair rotating as the position advances")
st.markdown(
    "Take a query whose pair *i* is the unit vector (1, 0). At position *p* RoPE turns it by "
    "*p·θᵢ*: fast pairs spin like a seconds hand, slow pairs barely move. The sinusoid's "
    '"clock hands" are added to the input; RoPE\'s multiply (rotate) the query and key instead.'
)
n_pairs = freqs.inv_freq.size
c1, c2 = st.columns([2, 1])
with c1:
    position = url_slider("Position p", key="rope_pos", min_value=0, max_value=4096, default=12)
with c2:
    chosen = url_int_list(
        "Pairs to show",
        key="rope_pairs",
        default=[0, 1, n_pairs // 4, n_pairs - 1],
        min_value=0,
        max_value=n_pairs - 1,
        max_items=6,
    )
if chosen:
    show_chart(
        rope_circle_chart(position, freqs.inv_freq, chosen),
        key="rope_circle_chart",
        name="rope_circle",
        width="content",
    )
    st.dataframe(
        {
            "pair": chosen,
            "θ (rad/token)": [f"{freqs.inv_freq[i]:.3g}" for i in chosen],
            "wavelength": [f"{2 * np.pi / freqs.inv_freq[i]:,.0f}" for i in chosen],
            f"turns at p={position}": [
                f"{position * freqs.inv_freq[i] / (2 * np.pi):,.3f}" for i in chosen
            ],
        },
        hide_index=True,
    )

st.header("3 · Score between a fixed query and key vs their distance")
c1, c2, c3 = st.columns(3)
with c1:
    max_dist = url_slider(
        "Distances up to",
        key="rope_maxd",
        min_value=16,
        max_value=262_144,
        step=16,
        default=min(2 * (freqs.original_context or 4096), 262_144),
    )
with c2:
    vectors = url_select(
        "q and k", ["q = k = all ones", "random q, k"], key="rope_qk", default="q = k = all ones"
    )
with c3:
    pairing = url_select(
        "Pairing",
        PAIRINGS,
        key="rope_pairing",
        default=config.pairing,
        help="rotate_half pairs dim i with i + d/2 (Llama, NeoX); "
        "rotate_every_two pairs 2i with 2i+1 (GPT-J, RoFormer).",
    )
seed = 0
if vectors.startswith("random"):
    seed = url_number("Seed", key="rope_seed", min_value=0, max_value=10_000, default=0)
rng = np.random.default_rng(seed)
q = np.ones(freqs.head_dim) if vectors.startswith("q = k") else rng.standard_normal(freqs.head_dim)
k = q if vectors.startswith("q = k") else rng.standard_normal(freqs.head_dim)
# every distance up to 512, then 1500 geometrically spaced: light, and alias-free on a log axis
far = np.geomspace(512, max(max_dist, 512), 1500).astype(int)
distances = np.unique(np.concatenate([np.arange(min(max_dist, 512) + 1), far]))
distances = distances[distances <= max_dist]
series = {"unscaled θ": rope_scores(q, k, distances, freqs.original_inv_freq, pairing=pairing)}
if freqs.rope_type != "default":
    series[f"{freqs.rope_type} θ′"] = rope_scores(
        q, k, distances, freqs.inv_freq, pairing=pairing, attention_factor=freqs.attention_factor
    )
st.markdown(
    "⟨R_m q, R_0 k⟩ for a query *m* tokens after the key — identical to ⟨R_{n+m} q, R_n k⟩ for "
    "any *n*. With q = k the score starts at ‖q‖² and, as fast pairs dephase, oscillates at a "
    "lower level; the scaled frequencies stretch the curve so that long distances look like the "
    "short ones seen in training (YaRN's curve includes its attention factor, squared). "
    "Non-rotary dims (partial rotary) are not rotated and add a constant."
)
show_chart(
    lines_chart(
        distances,
        series,
        x_title="distance m = query − key (tokens)",
        y_title="score q·k after rotation",
        rule_x=freqs.original_context,
        rule_label="original context",
        log_x=True,
    ),
    key="rope_score_chart",
    data=np.column_stack([distances, *series.values()]),
    name="rope_scores",
)

st.subheader("RoFormer's long-term decay bound")
show_bound = url_checkbox(
    "Also with the scaled frequencies",
    key="rope_bound_scaled",
    default=freqs.rope_type != "default",
)
bound = {"unscaled θ": rope_decay_bound(distances, freqs.original_inv_freq)}
if show_bound and freqs.rope_type != "default":
    bound[f"{freqs.rope_type} θ′"] = rope_decay_bound(distances, freqs.inv_freq)
st.markdown(
    "Su et al. (§3.4.3, Fig. 2) bound the score by Abel summation: "
    "|Σᵢ hᵢ e^{imθᵢ}| ≤ maxᵢ|hᵢ₊₁ − hᵢ| · Σⱼ |Sⱼ| with Sⱼ = Σ_{i<j} e^{imθᵢ}. The curve is the "
    "relative upper bound (1/(d/2)) Σⱼ |Sⱼ|: it starts at (d/2 + 1)/2 and decays with distance — "
    "RoPE's built-in preference for nearby tokens."
)
show_chart(
    lines_chart(
        distances,
        bound,
        x_title="relative distance m (tokens)",
        y_title="relative upper bound",
        log_x=True,
    ),
    key="rope_bound_chart",
    data=np.column_stack([distances, *bound.values()]),
    name="rope_decay_bound",
)
st.caption(
    "Pairings: rotate_half and rotate_every_two are the same rotation up to a fixed permutation of "
    "the head's dimensions, so scores are identical once weights are permuted accordingly (tested)."
)
