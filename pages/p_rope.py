"""p-RoPE: RoPE with only its fastest frequencies kept (Barbero et al. 2025)."""

import streamlit as st

from posviz.page_models import p_rope as model
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import pick_config
from posviz.ui.text import safe_md

st.title("p-RoPE: RoPE without its slowest frequencies")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(model.INTRO)


def manual_config():
    c1, c2, c3 = st.columns(3)
    with c1:
        head_dim = url_number(
            "Head dimension",
            key="prope_hd",
            min_value=model.MIN_HEAD_DIM,
            max_value=model.MAX_HEAD_DIM,
            default=256,
            step=model.HEAD_DIM_STEP,
            help="Even: pairs of dimensions rotate together.",
        )
    with c2:
        base = url_number(
            "Base (rope_theta)",
            key="prope_base",
            min_value=2.0,
            max_value=1e9,
            default=10000.0,
            step=1000.0,
        )
    with c3:
        fraction = url_slider(
            "p (share of pairs rotated)",
            key="prope_p",
            min_value=model.MIN_FRACTION,
            max_value=model.MAX_FRACTION,
            default=0.25,
            step=0.05,
        )
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
max_dist = url_slider(
    "Distances up to",
    key="prope_maxd",
    min_value=16,
    max_value=model.MAX_SCORE_DISTANCE,
    step=16,
    default=min(2 * context, model.MAX_SCORE_DISTANCE),
)
page = cached_model(model.p_rope_page, f"prope:{config!r}", config, max_distance=int(max_dist))
st.caption(f"**{safe_md(label, max_len=120)}** · {page.description}")
for note in config.notes:
    st.caption(f"Note: {safe_md(note, max_len=300)}.")
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="prope_band_chart", note=model.HERO_NOTE)

st.header("Score between a fixed query and key vs their distance")
vectors = url_select(
    "q and k", ["q = k = all ones", "random q, k"], key="prope_qk", default="q = k = all ones"
)
seed = 0
if vectors.startswith("random"):
    seed = url_number("Seed", key="prope_seed", min_value=0, max_value=10_000, default=0)
st.markdown(model.SCORES)
show_chart(page.scores(random=vectors.startswith("random"), seed=seed), key="prope_score_chart")

st.header("Every pair")
st.dataframe(page.pairs, hide_index=True, height=300)

next_question("pages/p_rope.py")
