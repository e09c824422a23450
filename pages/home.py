"""Landing page: a "Start here" path through the questions people ask, then the rest."""

import streamlit as st

import posviz.ui  # noqa: F401  (routes a deep link through app.py on a fresh server)
from posviz.navigation import GUIDED_PATH, START_HERE
from posviz.references import cite
from posviz.ui.home_cards import start_here_cards
from posviz.ui.lab import question_cards

st.title("Where is the position in a transformer?")
st.markdown(
    "Self-attention treats its input as a **set**: shuffle the tokens and the outputs shuffle "
    "with them. Positional encodings are how order gets in. posviz shows them on **real "
    "models** and runs the experiments people argue about, live, each number beside a control. "
    "Everything works offline on a real learned table (`sentence-transformers/all-MiniLM-L6-v2`, "
    "a 6-layer BERT, 512 positions × 384 dimensions)."
)

st.subheader("Start here")
st.caption(
    "Five questions in reading order. Each card's answer is what its page computes with its "
    "default settings; the picture is that page's first chart."
)
start_here_cards()

#: what the pages after the "Start here" path show, with their sources
MORE = {
    "pages/layers.py": "A leak-free probe of the position at every layer of MiniLM, beside a "
    "shuffled-position control. The question of " + cite("so_learnable") + ".",
    "pages/embedding_lookup.py": "A lookup is one-hot × table, and one SGD step moves only the "
    "rows looked up. After " + cite("so_nn_embedding") + ".",
    "pages/rope.py": "RoPE rotates queries and keys; context-extension scalings exactly as "
    "transformers does them.",
    "pages/alibi.py": "ALiBi's per-head linear biases, for any head count.",
    "pages/t5_buckets.py": "T5's relative-position buckets and a checkpoint's learned bias.",
    "pages/nope.py": "What a causal mask alone leaks about position.",
    "pages/vit_grid.py": "Each patch's similarity to every other patch, tiled on the patch grid.",
    "pages/compare.py": "Similarity vs distance, distinguishability and extrapolation of every "
    "family on the same axes.",
}

st.subheader("More questions")
for page, question in GUIDED_PATH[START_HERE:]:
    with st.container(border=True):
        st.page_link(page, label=question, icon=":material/arrow_forward:")
        st.caption(MORE.get(page, ""))

st.subheader("Questions only training can answer")
st.markdown(
    "What if the model had a learned table instead of a sinusoid, concatenated instead of added, "
    "re-injected position at every layer, or met longer sequences than it trained on? The lab "
    "trains tiny transformers live on this server's CPU, several seeds each with a control, and "
    "answers with error bars."
)
question_cards()

st.caption(
    "Every view's settings live in its URL: copy the address bar to share exactly what you see. "
    "The same functions are a notebook API (`import posviz`) and a CLI (`python -m posviz --help`)."
)
