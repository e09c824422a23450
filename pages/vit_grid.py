"""ViT 2-D: each patch's position-embedding similarity to every other patch, tiled on the grid."""

import streamlit as st

from posviz.page_models import vit_grid as model
from posviz.ui import safe_md, show_chart, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.loaders import cached_vit_table
from posviz.ui.table_source import describe_table, pick_table

st.title("ViT: position embeddings on the 2-D patch grid")
answer = answer_slot()  # the verdict and the hero, drawn once the table below is chosen
st.markdown(model.INTRO)

source = url_select(
    "Table",
    ["synthetic", "model"],
    key="vit_src",
    default="synthetic",
    radio=True,
    horizontal=True,
    format_func={
        "synthetic": "Synthetic 2-D sin-cos grid (offline, labelled)",
        "model": "A model's table (hub ViT, upload, path)",
    }.get,
)
table = None
if source == "synthetic":
    c1, c2, c3 = st.columns(3)
    with c1:
        h = url_slider("Grid rows h", key="vit_h", min_value=2, max_value=32, default=14)
    with c2:
        w = url_slider("Grid columns w", key="vit_w", min_value=2, max_value=32, default=14)
    with c3:
        d = url_select("Width d", ["64", "128", "256", "768"], key="vit_d", default="256")
    with user_errors("Synthetic table"):
        table = cached_vit_table(h, w, int(d))
    st.info(model.SYNTHETIC_NOTE, icon="🧪")
else:
    table = pick_table("Table source", key="vit_t", default="hub")
if table is None:
    st.stop()
describe_table(table)
if (reason := model.no_grid_reason(table)) is not None:
    st.error(safe_md(reason, max_len=400), icon="⚠️")
    st.stop()

page = None
with user_errors("Patch similarity"):
    name = model.SYNTHETIC_NAME if source == "synthetic" else table.label
    page = cached_model(model.vit_page, model.table_cache_key(table), table, name=name)
if page is None:
    st.stop()
h, w = page.grid
if page.thinned:
    st.caption(page.thinned)
with answer:
    show_verdict(page.verdict)
    show_hero(page.hero, key="vit_grid_chart", note=model.HERO_NOTE)

st.header("One patch, larger")
c1, c2 = st.columns(2)
with c1:
    row = min(
        url_slider(
            "Patch row", key="vit_r", min_value=0, max_value=model.MAX_GRID_SIDE - 1, default=h // 2
        ),
        h - 1,
    )
with c2:
    col = min(
        url_slider(
            "Patch column",
            key="vit_c",
            min_value=0,
            max_value=model.MAX_GRID_SIDE - 1,
            default=w // 4,
        ),
        w - 1,
    )
patch, patch_text = page.patch(row, col)
st.markdown(patch_text)
show_chart(patch, key="vit_patch_chart")

next_question("pages/vit_grid.py")
