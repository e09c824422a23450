"""Add vs concatenate: how a word embedding and a position embedding share one vector."""

import numpy as np
import pandas as pd
import streamlit as st

from posviz.analysis.add_concat import (
    dimension_magnitudes,
    last_dimensions_table,
    word_position_cloud,
)
from posviz.charts.experiments import cloud_chart, magnitude_chart
from posviz.encodings.sinusoidal import sinusoidal
from posviz.references import cite
from posviz.ui import show_chart, url_number, url_select, url_slider, url_text, user_errors
from posviz.ui.experiments import bundled_arrays, bundled_tokenizer, concat_report

LEARNED, SINUSOID = "MiniLM's learned position table", "sinusoid of the same width (384)"
VIEWS = {"first two dimensions (the cnblogs post's picture)": "dims", "PCA of the cloud": "pca"}

st.title("Add vs concatenate")
st.markdown(
    'A transformer *adds* the position vector to the word vector. The cnblogs post "Transformer '
    'Position Encoding" draws the sum as a '
    "cloud of points around the word; tensor2tensor issue #1591 conjectures that the sum is "
    '"effectively a '
    'concatenation": position uses a few directions, words use the others. Here both are checked '
    "on the bundled MiniLM's real word-embedding table (30 522 × 384) and its learned position "
    "table (512 × 384), next to a sinusoid of the same width."
)

word_embeddings, learned_table = bundled_arrays()
tokenizer = bundled_tokenizer()

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

encoding = tokenizer.encode(word, add_special_tokens=False) if word else None
if not word or not encoding.ids:
    st.error("Type a word (letters or digits), e.g. `coding` or `transformers`.", icon="⚠️")
    st.stop()
pieces = list(encoding.tokens)
if len(pieces) > 1:
    st.info(
        f"**{word!r} is not one token** in MiniLM's 30 522-piece WordPiece vocabulary; the "
        f"tokenizer splits it into {' + '.join(f'`{p}`' for p in pieces)}. Each piece has its "
        "own row; pick the one to use."
    )
    piece = url_select("Word piece", pieces, key="avc_piece", default=pieces[0])
else:
    piece = pieces[0]
token_id = encoding.ids[pieces.index(piece)]
word_vector = word_embeddings[token_id].astype(np.float64)
table = learned_table[:n] if source == LEARNED else sinusoidal(n, 384)
st.caption(
    f"Token `{piece}` = id {token_id}; ‖WE‖ = {np.linalg.norm(word_vector):.3f}; "
    f"mean ‖PE[p]‖ over positions = {np.linalg.norm(table, axis=1).mean():.3f}."
)

st.subheader("The word, moved by each position")
with user_errors("Cloud"):
    view = VIEWS[view_name]
    cloud = word_position_cloud(word_vector, table, view=view, dims=(int(dx), int(dy)))
    axes = ("PC 1", "PC 2") if view == "pca" else (f"dimension {dx}", f"dimension {dy}")
    show_chart(
        cloud_chart(
            cloud, title=f"{piece!r} + PE[p], p = 0…{n - 1}", x_title=axes[0], y_title=axes[1]
        ),
        key="avc_cloud",
        data=cloud[["x", "y"]].to_numpy(),
        name="word_plus_position",
    )
    st.markdown(
        "Each dot is the word's vector plus one position's vector (colour = position); the red "
        "cross is the word alone. With the sinusoid, a sin/cos pair of dimensions puts the dots on "
        "a unit circle around the word (the cnblogs post's clock hand). MiniLM's learned "
        "positions make a "
        "small cloud instead: they are far smaller than 1 in every dimension."
    )

st.subheader("How big is each part, dimension by dimension?")
magnitudes = dimension_magnitudes(table, word_embeddings, word_vector)
show_chart(
    magnitude_chart(magnitudes),
    key="avc_mag",
    data=magnitudes.drop(columns="dimension").to_numpy(),
    name="magnitudes",
)
st.markdown(
    f"PE's spread over positions vs WE's spread over the vocabulary, per dimension (median: PE "
    f"{magnitudes.pe_std.median():.3f}, WE {magnitudes.we_std.median():.3f}). Where PE's line is "
    "low, adding the position barely changes the word there."
)

st.subheader("Is the sum effectively a concatenation?")
kinds = {LEARNED: "learned", SINUSOID: "sinusoid", "random Gaussian (control)": "random"}
reports = {}
with user_errors("Subspace analysis"):
    for name, kind in kinds.items():
        reports[name] = concat_report(kind, int(n), float(fraction))
if len(reports) == len(kinds):
    merged = reports[LEARNED].rename(columns={"value": LEARNED})
    for name in list(kinds)[1:]:
        merged[name] = reports[name]["value"]
    st.dataframe(merged, hide_index=True, width="stretch")
    st.markdown(
        "How to read this: the principal subspace of a table is the fewest directions holding "
        f"{fraction:.0%} of its variance. If position and word information were simply "
        "concatenated, PE's variance would lie *outside* the words' subspace (share far below the "
        "random-subspace baseline) and the principal angles would be near 90°. A random table "
        "lands on the baseline. Computed over positions 0…n−1 and all 30 522 word rows."
    )

st.subheader("tensor2tensor #1591's table: how much do the last sinusoid dimensions move?")
st.markdown(
    "For `d_model = 512` and 128 positions, the values of late dimensions at positions 0, 64 and "
    "127. tensor2tensor issue #1591 argues these barely move, so words can use them undisturbed."
)
layout_rows = []
for layout in ("interleaved", "tensor2tensor"):
    frame = last_dimensions_table(
        sinusoidal(128, 512, layout=layout), dims=(-1, -2, -16, -17, -128, -256)
    )
    frame.insert(0, "layout", layout)
    layout_rows.append(frame)
st.dataframe(
    pd.concat(layout_rows, ignore_index=True),
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
    f"MiniLM's word embeddings vary by ~{np.median(word_embeddings.std(axis=0)):.3f} (std) per "
    "dimension; tensor2tensor issue #1591 quotes BERT's as roughly within [−2, 2]."
)
st.markdown("**Sources:** " + "; ".join(cite(k) for k in ("t2t_1591", "cnblogs_2020")))
