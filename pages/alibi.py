"""ALiBi: per-head linear biases on the attention logits (Press et al. 2022)."""

import streamlit as st

from posviz.page_models import alibi as model
from posviz.ui import NumberField, show_chart, url_field, url_select, url_slider, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import pick_config, pick_head_and_length

# the answer slot: the verdict and the hero, drawn once the head count below is read
answer = page_top("ALiBi: attention with linear biases", model.INTRO)

slopes = None
n_heads = 0
with user_errors("ALiBi parameters"):
    raw, label = pick_config("alibi", key="alb", default_preset="BLOOM-560m (ALiBi, 16 heads)")
    if label == "":
        st.stop()
    if raw is None:
        heads = NumberField("Number of heads", "alb_heads", model.MIN_HEADS, model.MAX_HEADS, 12, 1)
        n_heads = url_field(heads, help="Any count; non-powers of two interleave.")
    else:
        n_heads = model.heads_of(raw)
    slopes = model.alibi_slopes(n_heads)
if slopes is None:
    st.stop()

page = cached_model(model.alibi_page, f"alibi:{n_heads}", slopes)
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="alb_hero_chart", note=model.HERO_NOTE)

st.header("1 · The slopes")
st.markdown(page.slopes_text)
show_chart(page.slopes_chart, key="alb_slopes_chart")
st.dataframe(page.slope_table, hide_index=True, height=min(300, 38 + 35 * n_heads))

st.header("2 · The bias matrix of one head")
c1, c2, c3 = st.columns(3)
head, n_pos = pick_head_and_length("alb", n_heads, (4, 128, 32), (c1, c2))
with c3:
    variant = url_select(
        "Variant",
        ["causal", "symmetric"],
        key="alb_var",
        default="causal",
        radio=True,
        help="causal: decoder (BLOOM, MPT); symmetric: −m·|i − j| "
        "both ways, for bidirectional encoders.",
    )
bias, bias_text = page.bias(head, n_pos, causal=variant == "causal")
st.markdown(bias_text)
show_chart(bias, key="alb_bias_chart")

st.header("3 · Where each head can look")
max_d = url_slider("Distances up to", key="alb_maxd", min_value=8, max_value=4096, default=256)
decay, decay_text = page.decay(max_d)
st.markdown(decay_text)
show_chart(decay, key="alb_decay_chart")

next_question("pages/alibi.py")
