"""p-RoPE: RoPE with only its fastest frequencies kept (Barbero et al. 2025)."""

import streamlit as st

from posviz.page_models import p_rope as model
from posviz.ui import NumberField, show_chart, url_field, url_numbers, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import head_dim_field, pick_config, pick_qk
from posviz.ui.text import safe_md

# the answer slot: the verdict and the hero, drawn once the settings below are read
answer = page_top("p-RoPE: RoPE without its slowest frequencies", model.INTRO)


def manual_config():
    c1, c2, c3 = st.columns(3)
    head_dim, base = url_numbers(
        (head_dim_field(256), NumberField("Base (rope_theta)", "base", 2.0, 1e9, 10000.0, 1000.0)),
        key_prefix="prope_",
        columns=[c1, c2],
        helps={"hd": "Even: pairs of dimensions rotate together."},
    )
    with c3:
        lo, hi = model.MIN_FRACTION, model.MAX_FRACTION
        rotated = NumberField("p (share of pairs rotated)", "prope_p", lo, hi, 0.25, 0.05)
        fraction = url_field(rotated, slider=True)
    return model.manual_config(head_dim=head_dim, base=base, fraction=fraction)


config = None
with user_errors("p-RoPE parameters"):
    raw, label = pick_config("p_rope", key="prope", default_preset=model.GEMMA4)
    if label == "":
        st.stop()
    config = manual_config() if raw is None else model.config_of(raw)
if config is None:
    st.stop()
context = model.context_length(config)
farthest = min(2 * context, model.MAX_SCORE_DISTANCE)
max_dist = url_field(
    NumberField("Distances up to", "prope_maxd", 16, model.MAX_SCORE_DISTANCE, farthest, 16),
    slider=True,
)
page = cached_model(model.p_rope_page, f"prope:{config!r}", config, max_distance=int(max_dist))
st.caption(f"**{safe_md(label, max_len=120)}** · {page.description}")
for note in config.notes:
    st.caption(f"Note: {safe_md(note, max_len=300)}.")
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="prope_band_chart", note=model.HERO_NOTE)

st.header("Score between a fixed query and key vs their distance")
random_qk, seed = pick_qk("prope")
st.markdown(model.SCORES)
show_chart(page.scores(random=random_qk, seed=seed), key="prope_score_chart")

st.header("Every pair")
st.dataframe(page.pairs, hide_index=True, height=300)

next_question("pages/p_rope.py")
