"""What did fine-tuning change? Two tables of one lineage: which rows moved, which only scaled."""

import streamlit as st

from posviz.ui import safe_md, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.routes import page_link
from posviz.ui.sibling_view import show_side_by_side, sibling_page_for
from posviz.ui.table_source import describe_table, pick_table

L3 = "bundled:paraphrase-MiniLM-L3-v2"

# the answer slot: the verdict and the hero, drawn once both tables are chosen
answer = page_top(
    "What did fine-tuning change?",
    "Two models fine-tuned from one parent carry two copies of one position table. Compare them "
    "row by row: a row that training moved points somewhere new; a row training never touched "
    "can at most have changed its length. The defaults are the two MiniLM checkpoints that ship "
    "with posviz (all-MiniLM-L6-v2 and paraphrase-MiniLM-L3-v2, both offline); any two tables "
    "of one shape work.",
)

left, right = st.columns(2)
with left:
    first = pick_table("Table A", key="sib_a", default="bundled")
with right:
    second = pick_table("Table B (compared with A)", key="sib_b", default=L3)
for column, table in ((left, first), (right, second)):
    with column:
        if table is not None:
            describe_table(table)

page = None
with answer, user_errors("Sibling diff"):
    if first is not None and second is not None:
        with waiting("Comparing every row of B with the same row of A …"):
            page = sibling_page_for(first, second)
        show_verdict(page.diff.verdict)
        # captions quote the tables' names (file names, hub ids): escaped like any user text
        show_hero(page.hero, key="sib_hero", note=safe_md(page.diff.captions["hero"], max_len=900))

if page is not None:
    st.subheader("Against unrelated tables")
    st.dataframe(page.diff.evidence, hide_index=True)
    st.caption(safe_md(page.diff.captions["evidence"], max_len=900))
    if first.source == "bundled" and second.source == L3 and page.diff.seams == (128,):
        st.markdown(
            "**Why 128?** The all-MiniLM-L6-v2 model card (shipped in its package) says of its "
            "fine-tuning: \u201cThe sequence length was limited to 128 tokens.\u201d Positions 128 "
            "and beyond never occurred in those inputs. The boundary found above from the numbers "
            "alone sits exactly there. Rows 0\u2013127 were trained, and the two models moved them "
            "apart; the rows past them only changed length, all by one factor. This is the seam "
            "the learned page marks near row 128, and the real-weights answer to the lab's "
            "question whether rarely seen rows stay untrained."
        )
    st.subheader("The two tables side by side")
    show_side_by_side(page)
    st.caption(
        f"A = {safe_md(page.diff.names[0], max_len=80)} and B = "
        f"{safe_md(page.diff.names[1], max_len=80)} on one colour scale; the horizontal rules mark "
        "where rows switch between moved and only scaled."
    )

st.page_link("pages/learned.py", label="The seam on the learned page", icon=":material/grid_on:")
page_link(
    "lab_rare_rows",
    label="The lab's question: are rarely-seen rows untrained?",
    icon=":material/visibility_off:",
)
next_question("pages/sibling_diff.py")
