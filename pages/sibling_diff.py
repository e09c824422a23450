"""What did fine-tuning change? Two tables of one lineage: which rows moved, which only scaled."""

import streamlit as st

from posviz.page_models import sibling_diff as model
from posviz.ui import safe_md, user_errors
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict, waiting
from posviz.ui.cache import cached_model
from posviz.ui.display import show_chart, show_charts_side_by_side
from posviz.ui.routes import page_link
from posviz.ui.table_source import describe_table, pick_table

# the answer slot: the verdict and the hero, drawn once both tables are chosen
answer = page_top("What did fine-tuning change?", model.INTRO)

left, right = st.columns(2)
with left:
    first = pick_table("Table A", key="sib_a", default="bundled")
with right:
    second = pick_table("Table B (compared with A)", key="sib_b", default=model.L3)
for column, table in ((left, first), (right, second)):
    with column:
        if table is not None:
            describe_table(table)

page = None
with answer, user_errors("Sibling diff"):
    if first is not None and second is not None:
        with waiting("Comparing every row of B with the same row of A …"):
            page = cached_model(model.sibling_page, model.page_key(first, second), (first, second))
        show_verdict(page.diff.verdict)
        # captions quote the tables' names (file names, hub ids): escaped like any user text
        show_hero(page.hero, key="sib_hero", note=safe_md(page.diff.captions["hero"], max_len=900))

if page is not None:
    st.header("Against unrelated tables")
    st.dataframe(page.diff.evidence, hide_index=True)
    st.caption(safe_md(page.diff.captions["evidence"], max_len=900))
    if model.is_minilm_pair(first, second, page):
        st.markdown(model.WHY_128)
        st.subheader("Why did the untouched rows shrink, and whose?")
        with user_errors("The global-scale test"):
            with waiting("Fitting the factor on both models' other embeddings …"):
                why = cached_model(model.minilm_explanation, "minilm-l6-l3", None)
            for verdict, figure, caption, key in (
                (why.scale_verdict, why.scale_figure, why.scale_caption, "sib_scale"),
                (why.direction_verdict, why.fp16_figure, why.fp16_caption, "sib_fp16"),
            ):
                st.markdown(f"**{safe_md(verdict.first_line, max_len=200)}**")
                with st.expander("Evidence", expanded=False):
                    items = (f"- **{label}:** {safe_md(text, max_len=400)}"
                             for label, text in verdict.evidence)  # fmt: skip
                    st.markdown("\n".join(items))
                show_chart(figure, key=key, description=caption)
                st.caption(caption)
    st.header("The two tables side by side")
    show_charts_side_by_side(*zip(page.tables, ("sib_table_a", "sib_table_b"), strict=True))
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
