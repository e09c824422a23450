"""Permutation equivariance: without positions, attention cannot tell word order apart."""

import streamlit as st

from posviz.page_models import permutation as model
from posviz.ui import safe_md, url_checkbox, url_select, url_text, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.cache import cached_model
from posviz.ui.display import show_charts_side_by_side
from posviz.ui.model_experiments import permutation

EXAMPLES, DEPTHS = model.EXAMPLES, model.DEPTHS

# the answer slot: the verdict and the hero, drawn once the sentences below are read
answer = page_top("Permutation equivariance", model.INTRO)

example = url_select("Example", list(EXAMPLES), key="perm_ex", default=list(EXAMPLES)[1])
default_a, default_b = EXAMPLES[example]
boxes = (  # each sentence box: its label, link key, the example's sentence, its own default
    ("Sentence A", "perm_a", default_a, "the cat sat"),
    ("Sentence B (same words, another order)", "perm_b", default_b, "sat the cat"),
)
typed = []
for column, (label, link_key, given, own) in zip(st.columns(2), boxes, strict=True):
    with column:
        typed.append(
            url_text(label, key=link_key, default=given or own, max_chars=120, disabled=bool(given))
        )
sentence_a, sentence_b = typed
if default_a:
    sentence_a, sentence_b = default_a, default_b
c3, c4 = st.columns(2)
with c3:
    depth = url_select(
        "Run through", list(DEPTHS), key="perm_depth", default="first self-attention block"
    )
with c4:
    special = url_checkbox(
        "Add [CLS] … [SEP] as the model does",
        key="perm_special",
        default=True,
        help="They stay at both ends in A and B.",
    )

page = None
with answer, user_errors():
    with waiting("Running both sentences through MiniLM's attention (loading it the first time) …"):
        result = permutation(sentence_a, sentence_b, DEPTHS[depth], special)
    key = f"perm:{sentence_a}:{sentence_b}:{depth}:{special}"
    page = cached_model(model.permutation_page, key, result)
    show_verdict(page.verdict)
    show_hero(page.hero, key="perm_bar", note=model.HERO_NOTE)
if page is None:
    st.stop()

st.markdown(
    f"Word pieces — A: {' · '.join(safe_md(t) for t in page.tokens_a)}; "
    f"B: {' · '.join(safe_md(t) for t in page.tokens_b)}."
)
for column, (label, value, help_text) in zip(st.columns(3), page.metrics, strict=True):
    column.metric(label, value, help=help_text)
st.markdown(page.reading)
show_charts_side_by_side(
    (page.similarity_without, "perm_sim0"), (page.similarity_with, "perm_sim1")
)
st.caption(model.SIMILARITY_NOTE)
st.dataframe(page.per_token, hide_index=True, width="stretch")
st.markdown(model.SOURCES)

next_question("pages/permutation.py")
