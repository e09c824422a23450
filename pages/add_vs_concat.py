"""Add vs concatenate: how a word embedding and a position embedding share one vector."""

import streamlit as st

from posviz.analysis.add_concat_views import last_dimensions_frame
from posviz.figures import cloud_figure
from posviz.references import cite
from posviz.ui import (
    safe_md,
    show_chart,
    url_number,
    url_select,
    url_slider,
    url_text,
    user_errors,
)
from posviz.ui.add_vs_concat import (
    concat_hero,
    concat_inputs,
    concat_reports,
    concat_sizes,
    magnitude_figure,
    word_pieces,
)
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict, waiting

LEARNED, SINUSOID = "MiniLM's learned position table", "sinusoid of the same width (384)"
VIEWS = {"first two dimensions (the cnblogs post's picture)": "dims", "PCA of the cloud": "pca"}

st.title("Add vs concatenate")
answer = answer_slot()  # the verdict and the hero, drawn once the settings below are read
st.markdown(
    'A transformer *adds* the position vector to the word vector. The cnblogs post "Transformer '
    'Position Encoding" draws the sum as a '
    "cloud of points around the word; tensor2tensor issue #1591 conjectures that the sum is "
    '"effectively a '
    'concatenation": position uses a few directions, words use the others. Here both are checked '
    "on the bundled MiniLM's real word-embedding table (30 522 × 384) and its learned position "
    "table (512 × 384), next to a sinusoid of the same width."
)

left, right = st.columns(2)
with left:
    word = url_text("Word", key="avc_word", default="coding", max_chars=40).strip()
    source = url_select("Position table", [LEARNED, SINUSOID], key="avc_pe", default=LEARNED)
    n = url_slider("Positions 0…n−1", key="avc_n", min_value=2, max_value=512, default=128)
with right:
    view_name = url_select("2-D view", list(VIEWS), key="avc_view", default=next(iter(VIEWS)))
    c1, c2 = st.columns(2)
    with c1:
        dx = url_number("x dimension", key="avc_dx", min_value=0, max_value=383, default=0)
    with c2:
        dy = url_number("y dimension", key="avc_dy", min_value=0, max_value=383, default=1)
    fraction = url_slider(
        "Variance that defines a subspace",
        key="avc_frac",
        min_value=0.5,
        max_value=0.99,
        default=0.9,
        step=0.01,
    )

with answer, user_errors("Subspace analysis"):
    with waiting(
        "Finding the principal directions of MiniLM's 30 522 word embeddings and of its "
        "positions (about 40 s the first time on this server, then cached) …"
    ):
        verdict, hero = concat_hero(int(n), float(fraction))
    show_verdict(verdict)
    show_hero(
        hero,
        key="avc_hero",
        note="Dot: the share of the table's position variance inside the words' principal "
        "subspace; grey: the same share for random subspaces of that size (bar: ± one standard "
        "deviation over 50 of them). Far below grey: positions and words use different "
        "directions, as a concatenation would.",
    )

pieces, ids = word_pieces(word) if word else ((), ())
if not pieces:
    st.error("Type a word (letters or digits), e.g. `coding` or `transformers`.", icon="⚠️")
    st.stop()
if len(pieces) > 1:
    st.info(
        f"**{safe_md(word, max_len=40)} is not one token** in MiniLM's 30 522-piece WordPiece "
        f"vocabulary; the tokenizer splits it into {' + '.join(safe_md(p) for p in pieces)}. "
        "Each piece has its own row; pick the one to use."
    )
    piece = url_select("Word piece", list(pieces), key="avc_piece", default=pieces[0])
else:
    piece = pieces[0]
token_id = ids[pieces.index(piece)]
word_vector, table = concat_inputs(token_id, "learned" if source == LEARNED else "sinusoid", n)
sizes = concat_sizes(word_vector, table)
st.caption(
    f"Token {safe_md(piece)} = id {token_id}; ‖WE‖₂ = {sizes['word_norm']:.3f}; "
    f"mean ‖PE[p]‖₂ over positions = {sizes['mean_position_norm']:.3f}."
)

st.subheader("The word, moved by each position")
with user_errors("Cloud"):
    with waiting("Adding every position to the word …"):
        cloud = cloud_figure(
            word_vector, table, view=VIEWS[view_name], dims=(int(dx), int(dy)), piece=piece
        )
    show_chart(cloud, key="avc_cloud")
    st.markdown(
        "Each dot is the word's vector plus one position's vector (colour = position); the red "
        "cross is the word alone. With the sinusoid, a sin/cos pair of dimensions puts the dots on "
        "a unit circle around the word (the cnblogs post's clock hand). MiniLM's learned "
        "positions make a "
        "small cloud instead: they are far smaller than 1 in every dimension."
    )

st.subheader("How big is each part, dimension by dimension?")
with waiting("Measuring every dimension's spread over 30 522 words and the positions …"):
    magnitudes, pe_median, we_median = magnitude_figure(word_vector, table)
show_chart(magnitudes, key="avc_mag")
st.markdown(
    f"PE's spread over positions vs WE's spread over the vocabulary, per dimension (median: PE "
    f"{pe_median:.3f}, WE {we_median:.3f}). Where PE's line is "
    "low, adding the position barely changes the word there."
)

st.subheader("Is the sum effectively a concatenation?")
with user_errors("Subspace analysis"):
    with waiting("Measuring the same subspaces for a random table of the same scale …"):
        report = concat_reports(int(n), float(fraction))
    st.table(report, border="horizontal", hide_index=True)
    st.markdown(
        "How to read this: the principal subspace of a table is the fewest directions holding "
        f"{fraction:.0%} of its variance. If position and word information were simply "
        "concatenated, PE's variance would lie *outside* the words' subspace (share far below "
        "the share inside random subspaces of the same size, mean ± std over 50 of them) and the "
        "principal angles would be larger than between random subspaces (in high dimension those "
        "are already near 90°). A random table lands on the baselines. Computed over positions "
        "0…n−1 and all 30 522 word rows."
    )

st.subheader("tensor2tensor #1591's table: how much do the last sinusoid dimensions move?")
st.markdown(
    "For `d_model = 512` and 128 positions, the values of late dimensions at positions 0, 64 and "
    "127. tensor2tensor issue #1591 argues these barely move, so words can use them undisturbed."
)
st.dataframe(
    last_dimensions_frame(),
    hide_index=True,
    width="stretch",
    column_config={
        c: st.column_config.NumberColumn(format="%.6f")
        for c in ("PE[0]", "PE[64]", "PE[127]", "max change")
    },
)
st.caption(
    "interleaved: sin on even, cos on odd dimensions (Vaswani et al. 2017); tensor2tensor: all "
    "sines then all cosines with timescales from 1 to 10⁴ (`get_timing_signal_1d`). For scale: "
    f"MiniLM's word embeddings vary by ~{sizes['word_std_median']:.3f} (std) per "
    "dimension; tensor2tensor issue #1591 quotes BERT's as roughly within [−2, 2]."
)
st.markdown("**Sources:** " + "; ".join(cite(k) for k in ("t2t_1591", "cnblogs_2020")))

next_question("pages/add_vs_concat.py")
