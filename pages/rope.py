"""RoPE: rotation of query/key pairs, the score vs distance, and context-extension scalings."""

import streamlit as st

from posviz.analysis import rope_views as views
from posviz.analysis.headlines import rope_verdict
from posviz.charts.families import lines_figure, rope_circle_figure, rope_wavelength_figure
from posviz.encodings.families import parse_config
from posviz.encodings.model_config import RopeConfig
from posviz.encodings.rope import (
    HEAD_DIM_STEP,
    MANUAL_ROPE_TYPES,
    MAX_HEAD_DIM,
    MIN_HEAD_DIM,
    PAIRINGS,
)
from posviz.references import cite
from posviz.ui import (
    show_chart,
    url_checkbox,
    url_int_list,
    url_number,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import pick_config, rope_caption
from posviz.ui.text import safe_md

st.title("RoPE: rotary position embedding")
answer = answer_slot()  # the verdict and the hero, drawn once the model below is chosen
st.markdown(
    "Llama, Mistral, Qwen, GPT-NeoX and GPT-J store no position table. Each query and key is cut "
    "into 2-D pairs and pair *i* is **rotated** by the angle *p·θᵢ* at position *p*, with "
    f"θᵢ = base^(−2i/d) ({cite('su_2021')}). Because rotations compose, the score between a "
    "query at *m* and a key at *n* depends only on *m − n*. Context-extension scalings change θᵢ; "
    "they are computed here exactly as `transformers/modeling_rope_utils.py` does."
)


def manual_config() -> RopeConfig:
    c1, c2, c3 = st.columns(3)
    with c1:
        head_dim = url_number(
            "Head dimension",
            key="rope_hd",
            min_value=MIN_HEAD_DIM,
            max_value=MAX_HEAD_DIM,
            default=128,
            step=HEAD_DIM_STEP,
            help="Even: RoPE rotates pairs of dimensions.",
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
            "Scaling (rope_type)", MANUAL_ROPE_TYPES, key="rope_type", default="default"
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
    return views.manual_rope_config(
        head_dim=head_dim,
        base=base,
        partial_rotary_factor=partial,
        rope_type=rope_type,
        factor=factor,
        original_context=original,
    )


config = freqs = None
with user_errors("Model parameters"):
    raw, label = pick_config(
        "rope", key="rope", default_preset="Llama-3.1-8B (llama3 scaling, config.json)"
    )
    if label == "":
        st.stop()
    config = manual_config() if raw is None else parse_config("rope", raw)
    seq_len = None
    if views.needs_sequence_length(config):
        seq_len = url_number(
            "Current sequence length (dynamic NTK / LongRoPE switch)",
            key="rope_seq",
            min_value=1,
            max_value=4_194_304,
            default=min(int(config.max_position_embeddings or 4096) * 2, 4_194_304),
            step=1024,
        )
    freqs = config.frequencies(seq_len=seq_len)
if config is None or freqs is None:
    st.stop()

with answer:
    show_verdict(rope_verdict(freqs, name=label.split(" (")[0] or "this model"))
    show_hero(
        rope_wavelength_figure(freqs),
        key="rope_wave_chart",
        note="Each dot is one rotary pair: how many tokens it takes to turn once (log scale), "
        "coloured by what the scaling did to it; dashed: before scaling.",
    )

st.caption(rope_caption(label, config, freqs))
for note in config.notes:
    st.caption(f"Note: {safe_md(note, max_len=300)}.")

st.header("1 · Frequencies, and what the scaling did to each pair")
counts = views.regime_counts(freqs)
st.markdown(
    "Each dot is one rotary pair: its wavelength 2π/θ′ (tokens per full turn) after scaling; the "
    "dashed grey curve is the unscaled wavelength. Pairs that turn many times within the original "
    "context are **kept**; slow pairs, which never completed a turn in training, are "
    "**interpolated** (θ divided by the factor, so long sequences reuse angles seen in training); "
    "llama3 and YaRN blend in between (**smoothed**). "
    f"Here: {counts['kept']} kept, {counts['smoothed']} smoothed, "
    f"{counts['interpolated']} interpolated (the chart at the top of the page)."
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
        default=views.default_pairs(n_pairs),
        min_value=0,
        max_value=n_pairs - 1,
        max_items=6,
    )
if chosen:
    show_chart(
        rope_circle_figure(position, freqs.inv_freq, chosen),
        key="rope_circle_chart",
        width="content",
    )
    st.dataframe(views.pair_table(freqs, chosen, position), hide_index=True)

st.header("3 · Score between a fixed query and key vs their distance")
c1, c2, c3 = st.columns(3)
with c1:
    max_dist = url_slider(
        "Distances up to",
        key="rope_maxd",
        min_value=16,
        max_value=views.MAX_SCORE_DISTANCE,
        step=16,
        default=views.default_max_distance(freqs),
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
random_qk = vectors.startswith("random")
seed = 0
if random_qk:
    seed = url_number("Seed", key="rope_seed", min_value=0, max_value=10_000, default=0)
q, k = views.probe_vectors(freqs.head_dim, random=random_qk, seed=seed)
distances = views.score_distances(max_dist)
st.markdown(
    "⟨R_m q, R_0 k⟩ for a query *m* tokens after the key — identical to ⟨R_{n+m} q, R_n k⟩ for "
    "any *n*. With q = k the score starts at ‖q‖² and, as fast pairs dephase, oscillates at a "
    "lower level; the scaled frequencies stretch the curve so that long distances look like the "
    "short ones seen in training (YaRN's curve includes its attention factor, squared). "
    "Non-rotary dims (partial rotary) are not rotated and add a constant."
)
show_chart(
    lines_figure(
        distances,
        views.score_curves(freqs, distances, q=q, k=k, pairing=pairing),
        name="rope_scores",
        x_title="distance m = query − key (tokens)",
        y_title="score q·k after rotation",
        rule_x=freqs.original_context,
        rule_label="original context",
        log_x=True,
    ),
    key="rope_score_chart",
)

st.subheader("RoFormer's long-term decay bound")
show_bound = url_checkbox(
    "Also with the scaled frequencies",
    key="rope_bound_scaled",
    default=freqs.rope_type != "default",
)
st.markdown(
    "Su et al. (§3.4.3, Fig. 2) bound the score by Abel summation: "
    "|Σᵢ hᵢ e^{imθᵢ}| ≤ maxᵢ|hᵢ₊₁ − hᵢ| · Σⱼ |Sⱼ| with Sⱼ = Σ_{i<j} e^{imθᵢ}. The curve is the "
    "relative upper bound (1/(d/2)) Σⱼ |Sⱼ|: it starts at (d/2 + 1)/2 and decays with distance — "
    "RoPE's built-in preference for nearby tokens."
)
show_chart(
    lines_figure(
        distances,
        views.decay_bound_curves(freqs, distances, scaled=show_bound),
        name="rope_decay_bound",
        x_title="relative distance m (tokens)",
        y_title="relative upper bound",
        log_x=True,
    ),
    key="rope_bound_chart",
)
st.caption(
    "Pairings: rotate_half and rotate_every_two are the same rotation up to a fixed permutation of "
    "the head's dimensions, so scores are identical once weights are permuted accordingly (tested)."
)

next_question("pages/rope.py")
