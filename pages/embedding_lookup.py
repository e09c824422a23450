"""nn.Embedding is a table: a lookup is a one-hot vector times a matrix (Stack Overflow)."""

import streamlit as st

from posviz.page_models import embedding_lookup as model
from posviz.ui import url_int_list, url_select, url_slider, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.model_experiments import lookup_check, training_demo

# the answer slot: the verdict and the hero, drawn once both checks below have run
answer = page_top("nn.Embedding is a table", model.INTRO)

st.header("Lookup = one-hot × matrix, on a real table")
c1, c2 = st.columns(2)
with c1:
    which = url_select(
        "Table", [model.LEARNED, model.SINUSOID], key="emb_table", default=model.LEARNED
    )
with c2:
    ids = url_int_list(
        "Positions to look up",
        key="emb_ids",
        default=[0, 1, 7, 511],
        min_value=0,
        max_value=511,
        max_items=8,
    )
check = None
with user_errors():
    check = lookup_check("learned" if which == model.LEARNED else "sinusoid", tuple(ids))
lookup_area = st.container()  # filled once the model below has both checks

st.header('What "trained" changes')
st.markdown(model.TRAINING)
c1, c2 = st.columns(2)
with c1:
    steps = url_slider("SGD steps", key="emb_steps", min_value=1, max_value=50, default=5)
with c2:
    used = url_int_list(
        "Positions seen in training",
        key="emb_used",
        default=[0, 1, 2, 3, 4, 5],
        min_value=0,
        max_value=15,
        max_items=16,
    )
demo = None
with user_errors():
    demo = training_demo(model.DEMO_ROWS, model.DEMO_WIDTH, int(steps), tuple(used))

page = model.lookup_page(check, demo)  # both inputs are cached; the model only arranges them
with answer:
    if page.verdict is not None:
        show_verdict(page.verdict)
    if page.hero is not None:
        show_hero(page.hero, key="emb_train", note=model.HERO_NOTE)
with lookup_area:
    if page.rows is not None:
        st.metric(
            "max |nn.Embedding(ids) − one_hot(ids) @ W|",
            page.difference,
            help="The largest absolute element of the difference (not a norm).",
        )
        st.dataframe(page.rows, hide_index=True, width="stretch")
        st.caption(page.rows_caption)
if page.metrics:
    for column, (label, value) in zip(st.columns(3), page.metrics, strict=True):
        column.metric(label, value)
    st.markdown(model.TRAINED_ROWS)
st.markdown(model.SOURCES)

next_question("pages/embedding_lookup.py")
