"""NoPE: what a transformer knows about position when nothing encodes it."""

import streamlit as st

from posviz.page_models import nope as model
from posviz.ui import show_chart, url_number, url_slider, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import cached_nope_demo

# the answer slot: the verdict and the hero, drawn once the settings below are read
answer = page_top("NoPE: no position encoding", model.INTRO)
st.page_link(
    "pages/permutation.py", label="Permutation equivariance, measured on a model", icon="🔀"
)

st.header("The simplest case: uniform causal attention")
st.markdown(model.UNIFORM)
c1, c2, c3, c4 = st.columns(4)
with c1:
    n = url_slider("Positions", key="nope_n", min_value=8, max_value=1024, default=256)
with c2:
    d = url_slider("Width d", key="nope_d", min_value=8, max_value=1024, default=64)
with c3:
    samples = url_slider("Random sequences", key="nope_s", min_value=1, max_value=256, default=32)
with c4:
    seed = url_number("Seed", key="nope_seed", min_value=0, max_value=10_000, default=0)

with user_errors("NoPE demo"):
    demo = cached_nope_demo(n, d, samples, seed)
    page = cached_model(model.nope_page, f"nope:{n}:{d}:{samples}:{seed}", demo)
    with answer:
        show_verdict(page.verdict)
        show_hero(page.hero, key="nope_norm_chart", note=model.HERO_NOTE)
    st.markdown("The chart at the top of the page shows these norms for the settings above.")

    st.subheader("Reading the position back")
    st.markdown(model.READOUT)
    show_chart(page.readout, key="nope_read_chart")

st.header("Literature")
st.markdown(model.LITERATURE)

next_question("pages/nope.py")
