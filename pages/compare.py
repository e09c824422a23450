"""Compare encoding families on the same axes: similarity, distinguishability, extrapolation."""

import streamlit as st

from posviz.page_models import compare as model
from posviz.ui import (
    show_chart,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    url_text,
    user_errors,
)
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import family_comparison, show_family_errors

st.title("Compare families")
answer = answer_slot()  # the verdict and the hero, drawn once the families below are compared
st.markdown(model.INTRO)

chosen = url_multiselect(
    "Families",
    model.compared_families(),
    key="cmp_fam",
    default=list(model.compared_families()),
    format_func=model.family_label,
)
with st.expander("Settings", expanded=False):
    c1, c2, c3 = st.columns(3)
    with c1:
        trained = url_slider(
            "Trained length L", key="cmp_L", min_value=16, max_value=4096, default=512, step=16
        )
        n = url_slider(
            "Distances / positions shown",
            key="cmp_n",
            min_value=32,
            max_value=4096,
            default=1536,
            step=32,
        )
        d_sin = url_slider(
            "Sinusoid width d", key="cmp_dsin", min_value=8, max_value=1024, default=384, step=8
        )
    with c2:
        head_dim = url_slider(
            "RoPE head dim", key="cmp_hd", min_value=8, max_value=256, default=64, step=8
        )
        base = url_number(
            "RoPE base", key="cmp_base", min_value=2.0, max_value=1e9, default=10000.0, step=1000.0
        )
        scaling = url_select("RoPE scaling", model.SCALINGS, key="cmp_scal", default="yarn")
        factor = url_number(
            "Scaling factor", key="cmp_fac", min_value=1.0, max_value=64.0, default=4.0, step=1.0
        )
    with c3:
        heads = url_number(
            "ALiBi heads",
            key="cmp_heads",
            min_value=model.MIN_HEADS,
            max_value=model.MAX_HEADS,
            default=8,
            step=1,
        )
        buckets = url_number(
            "T5 buckets",
            key="cmp_nb",
            min_value=model.MIN_BUCKETS,
            max_value=model.MAX_BUCKETS,
            default=32,
            step=2,
        )
        max_distance = url_number(
            "T5 max_distance",
            key="cmp_md",
            min_value=model.MIN_MAX_DISTANCE,
            max_value=model.MAX_DISTANCE,
            default=128,
            step=8,
        )
        t5_model = url_text(
            "T5 model for its learned bias (optional)",
            key="cmp_t5",
            default="",
            placeholder="google-t5/t5-small",
        ).strip()

if not chosen:
    st.info("Pick at least one family.")
    st.stop()

settings = model.CompareSettings(
    trained_length=trained,
    n_distances=n,
    sinusoid_width=d_sin,
    rope_head_dim=head_dim,
    rope_base=base,
    rope_scaling=scaling,
    rope_factor=factor,
    alibi_heads=heads,
    t5_buckets=buckets,
    t5_max_distance=max_distance,
)
result = None
with user_errors("Comparison"):
    result = family_comparison(chosen, settings=settings, t5_model=t5_model)
if result is None:
    st.stop()
show_family_errors(result.errors)
page = model.compare_page(result, trained=trained)  # the comparison is cached in posviz.ui
with answer:
    show_verdict(page.verdict)
    if page.hero is not None:
        show_hero(page.hero, key="cmp_unseen_chart", note=model.HERO_NOTE)

st.header("1 · Similarity vs relative distance")
st.markdown(model.SIMILARITY + (model.T5_WITHOUT_MODEL if "t5" in chosen and not t5_model else ""))
if page.similarity is not None:
    show_chart(page.similarity, key="cmp_sim_chart")

st.header("2 · Distinguishability")
st.markdown(page.margin_text)
if page.margin is not None:
    show_chart(page.margin, key="cmp_margin_chart")

st.header("3 · Beyond the trained length")
st.markdown(model.BEYOND)
st.markdown("The chart at the top of the page shows these fractions.")

if page.summary is not None:
    st.markdown(model.SUMMARY)
    st.dataframe(page.summary, hide_index=True)

next_question("pages/compare.py")
