"""RoPE: rotation of query/key pairs, the score vs distance, and context-extension scalings."""

import streamlit as st

from posviz.page_models import rope as model
from posviz.ui import (
    NumberField,
    show_chart,
    url_checkbox,
    url_field,
    url_int_list,
    url_numbers,
    url_select,
    url_slider,
    user_errors,
)
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.families import head_dim_field, pick_config, pick_qk
from posviz.ui.text import safe_md

# the answer slot: the verdict and the hero, drawn once the model below is chosen
answer = page_top("RoPE: rotary position embedding", model.INTRO)


def manual_config():
    c1, c2, c3 = st.columns(3)
    head_dim, base = url_numbers(
        (
            head_dim_field(128),
            NumberField("Base (rope_theta)", "base", 1.0, 1e9, 10000.0, 1000.0),
        ),
        key_prefix="rope_",
        columns=[c1],
        helps={"hd": "Even: RoPE rotates pairs of dimensions."},
    )
    with c2:
        partial = url_field(
            NumberField("Partial rotary factor", "rope_prf", 0.05, 1.0, 1.0, 0.05), slider=True
        )
        rope_type = url_select(
            "Scaling (rope_type)", model.MANUAL_ROPE_TYPES, key="rope_type", default="default"
        )
    factor, original = url_numbers(
        (
            NumberField("factor", "factor", 1.0, 256.0, 8.0, 1.0),
            NumberField("original_max_position_embeddings", "orig", 16, 1_048_576, 8192, 1024),
        ),
        key_prefix="rope_",
        columns=[c3],
    )
    return model.manual_config(
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
    config = manual_config() if raw is None else model.config_of(raw)
    seq_len = None
    if model.needs_sequence_length(config):
        longest = min(int(config.max_position_embeddings or 4096) * 2, 4_194_304)
        switch = "Current sequence length (dynamic NTK / LongRoPE switch)"
        seq_len = url_field(NumberField(switch, "rope_seq", 1, 4_194_304, longest, 1024))
    freqs = config.frequencies(seq_len=seq_len)
if config is None or freqs is None:
    st.stop()

page = model.rope_page(freqs, name=label.split(" (")[0] or "this model")
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="rope_wave_chart", note=model.HERO_NOTE)

st.caption(model.rope_caption(label, config, freqs))
for note in config.notes:
    st.caption(f"Note: {safe_md(note, max_len=300)}.")

st.header("1 · Frequencies, and what the scaling did to each pair")
st.markdown(page.regimes)

st.header("2 · A query pair rotating as the position advances")
st.markdown(model.ROTATING)
n_pairs = page.n_pairs
c1, c2 = st.columns([2, 1])
with c1:
    position = url_slider("Position p", key="rope_pos", min_value=0, max_value=4096, default=12)
with c2:
    chosen = url_int_list(
        "Pairs to show",
        key="rope_pairs",
        default=model.default_pairs(n_pairs),
        min_value=0,
        max_value=n_pairs - 1,
        max_items=6,
    )
if chosen:
    circle, pair_table = page.circle(position, chosen)
    show_chart(circle, key="rope_circle_chart", width="content")
    st.dataframe(pair_table, hide_index=True)

st.header("3 · Score between a fixed query and key vs their distance")
c1, c2, c3 = st.columns(3)
with c1:
    farthest = model.default_max_distance(freqs)
    max_dist = url_field(
        NumberField("Distances up to", "rope_maxd", 16, model.MAX_SCORE_DISTANCE, farthest, 16),
        slider=True,
    )
random_qk, seed = pick_qk("rope", place=c2)
with c3:
    pairing = url_select(
        "Pairing",
        model.PAIRINGS,
        key="rope_pairing",
        default=config.pairing,
        help="rotate_half pairs dim i with i + d/2 (Llama, NeoX); "
        "rotate_every_two pairs 2i with 2i+1 (GPT-J, RoFormer).",
    )
st.markdown(model.SCORES)
show_chart(
    page.scores(int(max_dist), random=random_qk, seed=seed, pairing=pairing),
    key="rope_score_chart",
)

st.subheader("RoFormer's long-term decay bound")
show_bound = url_checkbox(
    "Also with the scaled frequencies",
    key="rope_bound_scaled",
    default=freqs.rope_type != "default",
)
st.markdown(model.BOUND)
show_chart(page.bound(int(max_dist), scaled=show_bound), key="rope_bound_chart")
st.caption(model.PAIRINGS_NOTE)

next_question("pages/rope.py")
