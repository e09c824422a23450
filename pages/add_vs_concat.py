"""Add vs concatenate: how a word embedding and a position embedding share one vector."""

import streamlit as st

from posviz.page_models import add_vs_concat as model
from posviz.ui import (
    safe_md,
    show_chart,
    url_number,
    url_select,
    url_slider,
    url_text,
    user_errors,
)
from posviz.ui.add_vs_concat import concat_results, word_pieces, word_view
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.cache import cached_model

LEARNED, SINUSOID, VIEWS = model.LEARNED, model.SINUSOID, model.VIEWS

# the answer slot: the verdict and the hero, drawn once the settings below are read
answer = page_top("Add vs concatenate", model.INTRO)

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
        reports = concat_results(int(n), float(fraction), ("learned", "sinusoid"))
    page = cached_model(model.concat_page, f"avc:{n}:{fraction}", reports, n_positions=int(n))
    show_verdict(page.verdict)
    show_hero(page.hero, key="avc_hero", note=model.HERO_NOTE)

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
words = None
with (
    user_errors("Cloud"),
    waiting("Adding every position to the word, measuring every dimension's spread …"),
):
    words = word_view(
        token_id,
        "learned" if source == LEARNED else "sinusoid",
        int(n),
        piece=piece,
        view=VIEWS[view_name],
        dims=(int(dx), int(dy)),
    )
if words is None:
    st.stop()
st.caption(f"Token {safe_md(piece)} = id {token_id}; {words.sizes}")

st.header("The word, moved by each position")
show_chart(words.cloud, key="avc_cloud")
st.markdown(model.CLOUD_NOTE)

st.header("How big is each part, dimension by dimension?")
show_chart(words.magnitudes, key="avc_mag")
st.markdown(words.magnitudes_text)

report = None
# measured before its heading is drawn: no heading waits empty while the spinner is delayed
with (
    user_errors("Subspace analysis"),
    waiting("Measuring the same subspaces for a random table of the same scale …"),
):
    kinds = tuple(model.REPORT_TABLES.values())
    report, how_to_read = model.concat_report(
        concat_results(int(n), float(fraction), kinds), fraction=float(fraction)
    )
if report is not None:
    st.header("Is the sum effectively a concatenation?")
    st.table(report, border="horizontal", hide_index=True)
    st.markdown(how_to_read)

st.header("tensor2tensor #1591's table: how much do the last sinusoid dimensions move?")
st.markdown(model.T2T)
st.dataframe(
    words.t2t_table,
    hide_index=True,
    width="stretch",
    column_config={
        c: st.column_config.NumberColumn(format="%.6f") for c in model.T2T_NUMBER_COLUMNS
    },
)
st.caption(words.t2t_caption)
st.markdown(model.SOURCES)

next_question("pages/add_vs_concat.py")
