"""T5 relative position buckets, and a T5 model's learned per-bucket bias (Raffel et al. 2020)."""

import streamlit as st

from posviz.analysis import t5_views as views
from posviz.analysis.headlines import bucket_index_matrix, t5_verdict
from posviz.charts.families import bucket_figure, heatmap_figure
from posviz.encodings.families import parse_config
from posviz.encodings.t5 import MAX_BUCKETS, MAX_DISTANCE, MIN_BUCKETS, MIN_MAX_DISTANCE
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.families import cached_t5_bias, pick_config

st.title("T5 relative position buckets")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(
    "T5 has no position vectors. Every attention logit gets a learned scalar per head, looked up "
    "by the **bucket** of the relative position key − query: one bucket per distance for short "
    "distances, logarithmically wider buckets up to `max_distance`, and a single bucket for "
    f"everything further ({cite('raffel_2020')}, §2.1). The function is "
    "`T5Attention._relative_position_bucket` from transformers, reproduced exactly."
)

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
                min_value=MIN_BUCKETS,
                max_value=MAX_BUCKETS,
                default=32,
                step=2,
            )
        with c2:
            max_distance = url_number(
                "max_distance",
                key="t5_md",
                min_value=MIN_MAX_DISTANCE,
                max_value=MAX_DISTANCE,
                default=128,
                step=8,
            )
    elif raw is not None:
        parsed = parse_config("t5", raw)
        num_buckets, max_distance = parsed.num_buckets, parsed.max_distance
if raw is None and label != "manual":
    st.caption("Showing T5's defaults (32 buckets, max_distance 128) until a model is read.")
settings_ok = False
with user_errors("Bucket settings"):
    views.check_bucket_settings(num_buckets=num_buckets, max_distance=max_distance)
    settings_ok = True
if not settings_ok:
    st.stop()

st.header("1 · Bucket vs relative position")
span = url_slider(
    "Relative positions ±",
    key="t5_span",
    min_value=16,
    max_value=views.MAX_SPAN,
    default=views.default_span(max_distance),
)
kw = {"num_buckets": num_buckets, "max_distance": max_distance}
st.markdown(
    f"{num_buckets} buckets, max_distance {max_distance}. Bidirectional attention spends half the "
    "buckets on keys after the query (upper half) and half on keys before; causal attention spends "
    "all of them looking back, and every later key lands in bucket 0. Distance 0 is bucket 0; "
    "from max_distance on the bucket no longer changes."
)
relative, curves = views.bucket_curves(span, **kw)
with answer:
    show_verdict(t5_verdict(relative, curves["causal (decoder)"], max_distance=max_distance))
    show_hero(
        bucket_figure(relative, curves),
        key="t5_bucket_chart",
        note="The bucket each relative position key − query falls in: one per distance near the "
        "query, ever wider further away, one for everything beyond max_distance.",
    )
st.markdown("The chart at the top of the page shows these buckets for ± the span chosen here.")

stack = url_select(
    "Spans for",
    ["bidirectional", "causal"],
    key="t5_spans",
    default="causal",
    radio=True,
    horizontal=True,
)
st.markdown(
    "Which distances share a bucket (the model cannot tell them apart). The widest bucket is cut "
    "at the edge of the window: it holds every distance beyond too."
)
st.dataframe(
    views.span_table(span, bidirectional=stack == "bidirectional", **kw),
    hide_index=True,
    height=280,
)

st.header("2 · A T5 model's learned bias")
st.markdown(
    "Only block 0 stores `relative_attention_bias` (num_buckets × heads); every layer reuses it. "
    "Pick a hub T5 (e.g. `google-t5/t5-small`, as *Hub model's config.json* above) and posviz "
    "range-reads that one tensor."
)
source = label if st.session_state.get("t5_src") == "hub" and raw is not None else ""
if not source:
    st.info(
        "No learned bias to show offline: posviz ships no T5 weights. Below is what the learned "
        "bias is indexed by instead, the bucket of "
        "every (query, key) pair. Each head adds its own learned scalar per bucket to that "
        "logit. To see a real checkpoint's values, choose “Hub model's config.json” above with "
        "a T5 id such as `google-t5/t5-small` (needs access to the Hugging Face hub, or the "
        "model in the local cache).",
        icon="ℹ️",
    )
    show_chart(
        heatmap_figure(
            bucket_index_matrix(32, bidirectional=True, **kw),
            name="t5_bucket_index",
            x_title="key position",
            y_title="query position",
            color_title="bucket",
            scheme="viridis",
            height=360,
        ),
        key="t5_index_chart",
    )
    next_question("pages/t5_buckets.py")
    st.stop()
table = None
which = url_select(
    "Stack", ["encoder", "decoder"], key="t5_stack", default="encoder", radio=True, horizontal=True
)
with user_errors("Reading the learned bias"), st.spinner("Reading one tensor …"):
    table = views.check_bias_table(
        cached_t5_bias(source, which, st.session_state.get("t5_rev", "")),
        num_buckets=num_buckets,
        source="the model",
    )
if table is None:
    st.info(
        "The learned bias is unavailable (offline, or no such tensor); the bucket views above "
        "do not need it."
    )
    next_question("pages/t5_buckets.py")
    st.stop()
show_chart(
    heatmap_figure(
        table.T,
        name="t5_relative_attention_bias",
        x_title="bucket",
        y_title="head",
        color_title="bias",
        scheme="redblue",
        domain_mid=0.0,
        height=260,
    ),
    key="t5_table_chart",
)
c1, c2 = st.columns(2)
with c1:
    head = url_slider(
        "Head", key="t5_head", min_value=0, max_value=max(table.shape[1] - 1, 1), default=0
    )
    head = min(head, table.shape[1] - 1)
with c2:
    n_pos = url_slider("Sequence length", key="t5_n", min_value=8, max_value=200, default=64)
st.markdown(
    f"Head {head}: the bias added to each (query, key) logit — constant along diagonals, "
    "flat beyond the buckets' reach."
)
show_chart(
    heatmap_figure(
        views.head_bias(
            table, n_pos, head, bidirectional=which == "encoder", max_distance=max_distance
        ),
        name=f"t5_bias_head{head}",
        x_title="key position",
        y_title="query position",
        color_title="bias",
        scheme="redblue",
        domain_mid=0.0,
        height=420,
    ),
    key="t5_matrix_chart",
)

next_question("pages/t5_buckets.py")
