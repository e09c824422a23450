"""T5 relative position buckets, and a T5 model's learned per-bucket bias (Raffel et al. 2020)."""

import streamlit as st

from posviz.page_models import t5_buckets as model
from posviz.ui import NumberField, show_chart, url_field, url_numbers, url_radio, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import cached_t5_bias, pick_config, pick_head_and_length
from posviz.ui.loaders import cached_table
from posviz.ui.table_source import show_real_section

# the answer slot: the verdict and the hero, drawn once the settings below are read
answer = page_top("T5 relative position buckets", model.INTRO)

num_buckets, max_distance = 32, 128  # T5's own defaults, used until a choice is made
raw, label = None, ""
with user_errors("T5 parameters"):
    raw, label = pick_config("t5", key="t5", default_preset="T5-small (8 heads, 32 buckets)")
    if raw is None and label == "manual":
        buckets = NumberField("num_buckets", "nb", model.MIN_BUCKETS, model.MAX_BUCKETS, 32, 2)
        distance = NumberField(
            "max_distance", "md", model.MIN_MAX_DISTANCE, model.MAX_DISTANCE, 128, 8
        )
        num_buckets, max_distance = url_numbers((buckets, distance), key_prefix="t5_")
    elif raw is not None:
        num_buckets, max_distance = model.settings_of(raw)
if raw is None and label != "manual":
    st.caption("Showing T5's defaults (32 buckets, max_distance 128) until a model is read.")
settings_ok = False
with user_errors("Bucket settings"):
    model.check_settings(num_buckets, max_distance)
    settings_ok = True
if not settings_ok:
    st.stop()

st.header("1 · Bucket vs relative position")
usual = model.default_span(max_distance)
span = url_field(
    NumberField("Relative positions ±", "t5_span", 16, model.MAX_SPAN, usual), slider=True
)
page = cached_model(
    model.t5_page, f"t5:{num_buckets}:{max_distance}", num_buckets,
    max_distance=max_distance, span=span,
)  # fmt: skip
st.markdown(page.buckets_text)
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="t5_bucket_chart", note=model.HERO_NOTE)
st.markdown("The chart at the top of the page shows these buckets for ± the span chosen here.")

stack = url_radio("Spans for", ["bidirectional", "causal"], key="t5_spans", default="causal")
st.markdown(model.SPANS)
st.dataframe(page.span_table(bidirectional=stack == "bidirectional"), hide_index=True, height=280)

st.header("2 · A T5 model's learned bias")
st.markdown(model.LEARNED)
source = label if st.session_state.get("t5_src") == "hub" and raw is not None else ""
if not source:
    st.info(model.OFFLINE, icon="ℹ️")
    show_chart(page.index_figure(), key="t5_index_chart")
    with user_errors("MPNet's bias"):  # a real T5-style table, offline (posviz's data)
        mpnet = cached_table(model.MPNET)
        show_real_section(cached_model(model.mpnet_section, "mpnet", mpnet), key="t5_mpnet")
    next_question("pages/t5_buckets.py")
    st.stop()
table = None
which = url_radio("Stack", ["encoder", "decoder"], key="t5_stack", default="encoder")
with user_errors("Reading the learned bias"), st.spinner("Reading one tensor …"):
    table = page.bias_table(cached_t5_bias(source, which, st.session_state.get("t5_rev", "")))
if table is None:
    st.info(
        "The learned bias is unavailable (offline, or no such tensor); the bucket views above "
        "do not need it."
    )
    next_question("pages/t5_buckets.py")
    st.stop()
show_chart(page.bias_figure(table), key="t5_table_chart")
st.markdown(model.findings_text(table, max_distance=max_distance, bidirectional=which == "encoder"))
head, n_pos = pick_head_and_length("t5", table.shape[1], (8, 200, 64), st.columns(2))
head_chart, head_text = page.head_figure(table, head, n_pos, bidirectional=which == "encoder")
st.markdown(head_text)
show_chart(head_chart, key="t5_matrix_chart")

next_question("pages/t5_buckets.py")
