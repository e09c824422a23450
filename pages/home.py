"""Landing page: a "Start here" path through the questions people ask, then every other page.

Every card comes from the registries (``posviz.navigation``: the family registry, the lab's
study list): a new family or study appears here without an edit.
"""

import streamlit as st

import posviz.ui  # noqa: F401  (routes a deep link through app.py on a fresh server)
from posviz.ui.answer import tour_link
from posviz.ui.home_cards import lab_cards, more_questions, start_here_cards

st.title("Where is the position in a transformer?")
st.markdown(
    "Self-attention treats its input as a **set**: shuffle the tokens and the outputs shuffle "
    "with them. Positional encodings are how order gets in. posviz shows them on **real "
    "models** and runs the experiments people argue about, live, each number beside a control. "
    "Everything works offline, on real checkpoints of each family: MiniLM-L6 and -L3 (learned "
    "tables), Whisper tiny.en (a learned decoder table beside a sinusoid encoder), DINOv2 "
    "ViT-S/14 (a 37 × 37 patch grid), MPNet (T5-style relative buckets) and SmolLM2-135M (RoPE)."
)
tour_link()  # the guided tour: three steps, each done by the reader's own action

st.header("Start here")
st.caption(
    "Five questions in reading order. Each card's answer is what its page computes with its "
    "default settings; the picture is that page's first chart."
)
start_here_cards()

st.header("More questions")
more_questions()

st.header("Questions only training can answer")
st.markdown(
    "What if the model had a learned table instead of a sinusoid, concatenated instead of added, "
    "re-injected position at every layer, or met longer sequences than it trained on? The lab "
    "trains tiny transformers live on this server's CPU, several seeds each with a control, and "
    "answers with error bars. Each card's answer is read from the run stored at the question's "
    "default settings; the picture is its page's first chart."
)
lab_cards()

st.caption(
    "Every view's settings live in its URL: copy the address bar to share exactly what you see. "
    "The same functions are a notebook API (`import posviz`) and a CLI (`python -m posviz --help`)."
)
