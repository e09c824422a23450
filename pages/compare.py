"""Compare encoding families on the same axes: similarity, distinguishability, extrapolation."""

import streamlit as st

from posviz.page_models import compare as model
from posviz.ui import (
    NumberField,
    show_chart,
    url_field,
    url_multiselect,
    url_numbers,
    url_select,
    url_text,
    user_errors,
)
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.families import family_comparison, show_family_errors

# the answer slot: the verdict and the hero, drawn once the families below are compared
answer = page_top("Compare families", model.INTRO)

chosen = url_multiselect(
    "Families",
    model.compared_families(),
    key="cmp_fam",
    default=list(model.compared_families()),
    format_func=model.family_label,
)
with st.expander("Settings", expanded=False):
    c1, c2, c3 = st.columns(3)
    trained, n, d_sin = url_numbers(
        (
            NumberField("Trained length L", "L", 16, 4096, 512, 16),
            NumberField("Distances / positions shown", "n", 32, 4096, 1536, 32),
            NumberField("Sinusoid width d", "dsin", 8, 1024, 384, 8),
        ),
        key_prefix="cmp_",
        slider=True,
        columns=[c1],
    )
    with c2:
        head_dim = url_field(NumberField("RoPE head dim", "cmp_hd", 8, 256, 64, 8), slider=True)
        base = url_field(NumberField("RoPE base", "cmp_base", 2.0, 1e9, 10000.0, 1000.0))
        scaling = url_select("RoPE scaling", model.SCALINGS, key="cmp_scal", default="yarn")
        factor = url_field(NumberField("Scaling factor", "cmp_fac", 1.0, 64.0, 4.0, 1.0))
    heads, buckets, max_distance = url_numbers(
        (
            NumberField("ALiBi heads", "heads", model.MIN_HEADS, model.MAX_HEADS, 8, 1),
            NumberField("T5 buckets", "nb", model.MIN_BUCKETS, model.MAX_BUCKETS, 32, 2),
            NumberField(
                "T5 max_distance", "md", model.MIN_MAX_DISTANCE, model.MAX_DISTANCE, 128, 8
            ),
        ),
        key_prefix="cmp_",
        columns=[c3],
    )
    with c3:
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
