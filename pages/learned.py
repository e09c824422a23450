"""Learned position tables: a real model's table in every view, optionally next to a second one."""

import streamlit as st

from posviz.page_models import learned as model
from posviz.ui import safe_md, url_checkbox, url_select, user_errors
from posviz.ui.answer import next_question, page_top, show_verdict, waiting
from posviz.ui.cache import cached_model
from posviz.ui.circle_view import position_slider
from posviz.ui.heroes import learned_hero_at, show_linked_hero
from posviz.ui.learned_views import FULL_WIDTH_VIEWS, TABLE_VIEWS, show_view, view_controls
from posviz.ui.loaders import cached_table
from posviz.ui.table_source import describe_table, pick_table, show_real_section

# the answer slot: the verdict and the hero, drawn once the table below is chosen
answer = page_top("Learned position tables", model.INTRO)

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
        second = pick_table("Compare with", key="lrn_b", default=model.comparison_default(first))

for column, table in zip(columns, (first, second), strict=False):
    with column:
        if table is not None:
            describe_table(table)

page, position = None, None
with user_errors("Summary"):
    if first is not None:
        with answer, waiting("Comparing every position with every other one …"):
            key = model.table_cache_key(first)
            page = cached_model(model.learned_page, key, first)
        with answer:  # the verdict, the page's one position control, the hero it moves
            show_verdict(page.verdict)
            position = position_slider(page.n, key="lrn_pos", default=page.start_position)
            show_linked_hero(
                learned_hero_at(key, position, _page=page), key="lrn_hero", note=model.HERO_NOTE
            )
            st.caption(model.HERO_NOTE)
            if page.summary.seam is not None:  # issue 24: where a seam comes from
                st.page_link(
                    "pages/sibling_diff.py",
                    label="Why a seam? What fine-tuning changed, row by row",
                    icon=":material/difference:",
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
        # each table a section (h2) holding its view (h3): no heading level skipped
        st.header(safe_md(table.label, max_len=120))
        show_view(table, view, options, key_prefix=f"lrn_{side}_", position=position)

# a real model's table with an echo (offline, hash-checked), with the controls it must beat
if first is not None and first.source == model.WHISPER_DECODER:
    with user_errors("Whisper's decoder"):
        tables = (first, cached_table(model.MINILM))
        section = cached_model(model.echo_section, "whisper-echo", tables)
        show_real_section(section, key="lrn_whisper")
else:
    st.info(model.ECHO_POINTER, icon=":material/graphic_eq:")

next_question("pages/learned.py")
