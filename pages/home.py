"""Landing page: the questions people ask about positional encodings, each linked to its answer."""

import streamlit as st

import posviz.ui  # noqa: F401  (routes a deep link through app.py on a fresh server)
from posviz.references import cite
from posviz.ui.lab import question_cards

st.title("Where is the position in a transformer?")
st.markdown(
    "Self-attention treats its input as a **set**: shuffle the tokens and the outputs shuffle "
    "with them. "
    "Positional encodings are how order gets in. posviz shows them on **real models** — the "
    "sinusoid "
    "of *Attention Is All You Need*, the learned tables of BERT-style models, and the relative "
    "schemes "
    "(RoPE, ALiBi, T5) of today's models — and runs the experiments people argue about, live. "
    "Everything works offline on a real learned table (`sentence-transformers/all-MiniLM-L6-v2`, a "
    "6-layer BERT, 512 positions × 384 dimensions)."
)

QUESTIONS = [
    (
        "What does the sinusoidal encoding look like, and why sines *and* cosines?",
        "pages/sinusoidal.py",
        "Heatmap, sin/cos pairs as clock hands on the unit circle, which dimensions actually move.",
    ),
    (
        "What has a learned positional embedding learned?",
        "pages/learned.py",
        "A real table (MiniLM offline; BERT, RoBERTa, GPT-2, OPT, ViT from the hub): "
        "similarity, PCA "
        "trajectory, norms, side by side with a sinusoid.",
    ),
    (
        "Can you read the position back out of a position vector?",
        "pages/probing.py",
        "Yes for MiniLM: a linear probe trained on even positions misses odd ones by 21.5 ± 2.6 "
        "positions, against 182 ± 32 for a random table; a sinusoid is read back exactly. After "
        + cite("jexus_2020")
        + " and "
        + cite("wang_chen_2020")
        + ".",
    ),
    (
        "Why add the position to the word embedding instead of concatenating?",
        "pages/add_vs_concat.py",
        "MiniLM's positions mostly avoid the words' main directions: 4.1% of their variance lies "
        "in the words' principal subspace, against 68.7 ± 1.0% for random subspaces of that "
        "size. The question is " + cite("t2t_1591") + ".",
    ),
    (
        "Why does a transformer need positions at all?",
        "pages/permutation.py",
        "Without positions, “Tom bit a dog” and “A dog bit Tom” give the same vectors, permuted, "
        "to float rounding through MiniLM's real attention block; with positions they differ "
        "(up to 0.92). As argued in " + cite("so_learnable") + ".",
    ),
    (
        "Positions are added once at the input — do later layers still know them?",
        "pages/layers.py",
        "Yes: a leak-free probe reads the position at every layer of MiniLM (R² 0.98 at the "
        "input, 0.46 ± 0.07 after layer 6; shuffled-position control 0.00), weaker in the last "
        "layers. The question of " + cite("so_learnable") + ".",
    ),
    (
        "Why does BERT use `nn.Embedding` for positions?",
        "pages/embedding_lookup.py",
        "Because a lookup is one-hot × table (bit for bit), and training moves only the rows "
        "that were looked up (the others by exactly 0). After " + cite("so_nn_embedding") + ".",
    ),
    (
        "Llama has no position table. Where did the positions go?",
        "pages/rope.py",
        "RoPE rotates queries and keys; context-extension scalings exactly as transformers does "
        "them.",
    ),
    (
        "How do BLOOM, MPT and T5 encode position?",
        "pages/alibi.py",
        "ALiBi's per-head linear biases; T5's relative buckets on their own page.",
    ),
    (
        "Does a vision transformer learn a 2-D grid of positions?",
        "pages/vit_grid.py",
        "Each patch's similarity to every other patch, tiled on the patch grid (the ViT paper's "
        "figure).",
    ),
    (
        "How do the families compare, and what happens beyond the trained length?",
        "pages/compare.py",
        "Similarity vs distance, distinguishability of positions, extrapolation, on the same axes.",
    ),
]

left, right = st.columns(2)
for index, (question, page, answer) in enumerate(QUESTIONS):
    with (left if index % 2 == 0 else right).container(border=True):
        st.markdown(f"**{question}**")
        st.caption(answer)
        st.page_link(page, label="Open the view", icon=":material/arrow_forward:")

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
