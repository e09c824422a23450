"""ViT 2-D: each patch's position-embedding similarity to every other patch, tiled on the grid."""

import streamlit as st

from posviz.page_models import vit_grid as model
from posviz.ui import (
    NumberField,
    safe_md,
    show_chart,
    url_numbers,
    url_radio,
    url_select,
    user_errors,
)
from posviz.ui.answer import next_question, page_top, show_hero, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.loaders import cached_table, cached_vit_table
from posviz.ui.table_source import describe_table, pick_table, show_real_section

# the answer slot: the verdict and the hero, drawn once the table below is chosen
answer = page_top("ViT: position embeddings on the 2-D patch grid", model.INTRO)

SOURCES = {
    "synthetic": "Synthetic 2-D sin-cos grid (offline, labelled)",
    "dinov2": "DINOv2 ViT-S/14, a trained 37×37 grid (offline)",
    "model": "A model's table (hub ViT, upload, path)",
}
source = url_radio(
    "Table", list(SOURCES), key="vit_src", default="synthetic", format_func=SOURCES.get
)
table = None
if source == "synthetic":
    c1, c2, c3 = st.columns(3)
    sides = (
        NumberField("Grid rows h", "h", 2, 32, 14),
        NumberField("Grid columns w", "w", 2, 32, 14),
    )
    h, w = url_numbers(sides, key_prefix="vit_", slider=True, columns=[c1, c2])
    with c3:
        d = url_select("Width d", ["64", "128", "256", "768"], key="vit_d", default="256")
    with user_errors("Synthetic table"):
        table = cached_vit_table(h, w, int(d))
    st.info(model.SYNTHETIC_NOTE, icon="🧪")
elif source == "dinov2":
    with user_errors("DINOv2"):
        table = cached_table(model.DINOV2)
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
    show_hero(page.hero, key="vit_grid_chart", note=model.HERO_NOTE, width="content")

st.header("One patch, larger")
last = model.MAX_GRID_SIDE - 1
patch_at = (
    NumberField("Patch row", "r", 0, last, h // 2),
    NumberField("Patch column", "c", 0, last, w // 4),
)
row, col = url_numbers(patch_at, key_prefix="vit_", slider=True)
row, col = min(row, h - 1), min(col, w - 1)
patch, patch_text = page.patch(row, col)
st.markdown(patch_text)
show_chart(patch, key="vit_patch_chart")

if source == "dinov2":  # the real grid's cross against its controls, and its 16×16 resize
    with user_errors("DINOv2's grid"):
        section = cached_model(model.dinov2_section, model.table_cache_key(table), table)
        show_real_section(section, key="vit_dino")

next_question("pages/vit_grid.py")
