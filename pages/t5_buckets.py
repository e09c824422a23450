"""T5 relative position buckets, and a T5 model's learned per-bucket bias (Raffel et al. 2020)."""

import streamlit as st

from posviz.page_models import t5_buckets as model
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.families import cached_t5_bias, pick_config

st.title("T5 relative position buckets")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(model.INTRO)

num_buckets, max_distance = 32, 128  # T5's own defaults, used until a choice is made
raw, label = None, ""
with user_errors("T5 parameters"):
    raw, label = pick_config("t5", key="t5", default_preset="T5-small (8 heads, 32 buckets)")
    if raw is None and label == "manual":
        c1, c2 = st.columns(2)
        with c1:
            num_buckets = url_number(
                "num_buckets",
                key="t5_nb",
                min_value=model.MIN_BUCKETS,
                max_value=model.MAX_BUCKETS,
                default=32,
                step=2,
            )
        with c2:
            max_distance = url_number(
                "max_distance",
                key="t5_md",
                min_value=model.MIN_MAX_DISTANCE,
                max_value=model.MAX_DISTANCE,
                default=128,
                step=8,
            )
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
span = url_slider(
    "Relative positions ±",
    key="t5_span",
    min_value=16,
    max_value=model.MAX_SPAN,
    default=model.default_span(max_distance),
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

stack = url_select(
    "Spans for",
    ["bidirectional", "causal"],
    key="t5_spans",
    default="causal",
    radio=True,
    horizontal=True,
)
st.markdown(model.SPANS)
st.dataframe(page.span_table(bidirectional=stack == "bidirectional"), hide_index=True, height=280)

st.header("2 · A T5 model's learned bias")
st.markdown(model.LEARNED)
source = label if st.session_state.get("t5_src") == "hub" and raw is not None else ""
if not source:
    st.info(model.OFFLINE, icon="ℹ️")
    show_chart(page.index_figure(), key="t5_index_chart")
    next_question("pages/t5_buckets.py")
    st.stop()
table = None
which = url_select(
    "Stack", ["encoder", "decoder"], key="t5_stack", default="encoder", radio=True, horizontal=True
)
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
c1, c2 = st.columns(2)
with c1:
    head = url_slider(
        "Head", key="t5_head", min_value=0, max_value=max(table.shape[1] - 1, 1), default=0
    )
    head = min(head, table.shape[1] - 1)
with c2:
    n_pos = url_slider("Sequence length", key="t5_n", min_value=8, max_value=200, default=64)
head_chart, head_text = page.head_figure(table, head, n_pos, bidirectional=which == "encoder")
st.markdown(head_text)
show_chart(head_chart, key="t5_matrix_chart")

next_question("pages/t5_buckets.py")
