"""Learned position tables: a real model's table in every view, optionally next to a second one."""

import streamlit as st

from posviz.tables.picker import comparison_default
from posviz.ui import safe_md, url_checkbox, url_select, user_errors
from posviz.ui.answer import answer_slot, next_question, show_verdict, waiting
from posviz.ui.heroes import learned_hero_for, learned_linked_hero_for, show_linked_hero
from posviz.ui.learned_views import FULL_WIDTH_VIEWS, TABLE_VIEWS, show_view, view_controls
from posviz.ui.table_source import describe_table, pick_table

st.title("Learned position tables")
answer = answer_slot()  # the verdict and the hero, drawn once the table below is chosen
st.markdown(
    "BERT, GPT-2, RoBERTa and friends do not compute positions from a formula: they *learn* a "
    "table, one vector per position, added to the token embedding. Here is that table from a real "
    "model — MiniLM-L6 ships with posviz and works offline; any hub model with a learned table is "
    "read in seconds (only its header and this one tensor are fetched). Compare it with a sinusoid "
    "of the same width to see what training found on its own."
)

left, right = st.columns([1, 3])
with left:
    compare = url_checkbox("Compare side by side", key="lrn_cmp", default=True, toggle=True)
with right:
    view = url_select(
        "View",
        list(TABLE_VIEWS),
        key="lrn_view",
        default="heatmap",
        radio=True,
        horizontal=True,
        format_func=TABLE_VIEWS.get,
    )
options = view_controls(view, key="lrn")  # PCA axes/angle: shared by both sides

columns = st.columns(2) if compare else [st.container()]
with columns[0]:
    first = pick_table("Table", key="lrn_a")
second = None
if compare:
    with columns[1]:
        second = pick_table("Compare with", key="lrn_b", default=comparison_default(first))

for column, table in zip(columns, (first, second), strict=False):
    with column:
        if table is not None:
            describe_table(table)

with answer, user_errors("Summary"):
    if first is not None:
        with waiting("Comparing every position with every other one …"):
            verdict, _similarity, _path = learned_hero_for(first)
        show_verdict(verdict)
        show_linked_hero(
            learned_linked_hero_for(first),
            key="lrn_hero",
            note="Red: the two positions point the same way; blue: opposite ways. The path: "
            "the positions on the table's first two principal components, in order (colour = "
            "position). Point at a row of the matrix or a dot on the path, or press ▶ play: "
            "the crossed row and column and the ringed dot follow the same position.",
        )

# Each side's own widgets (zoom window, dimensions, threshold …) live under lrn_a_… / lrn_b_…,
# so a copied link reproduces both tables' views. Image views (every cell one pixel) get the full
# width, one table under the other; the other views sit side by side.
stacked = view in FULL_WIDTH_VIEWS
if stacked:
    places = [st.container() for _ in columns]
else:  # a fresh row, so both sides' charts start at the same height
    places = st.columns(2) if compare else [st.container()]
for place, table, side in zip(places, (first, second), ("a", "b"), strict=False):
    with place:
        if table is None:
            continue
        if stacked and compare:
            st.markdown(f"#### {safe_md(table.label, max_len=120)}")
        show_view(table, view, options, key_prefix=f"lrn_{side}_")

next_question("pages/learned.py")
