"""ViT 2-D: each patch's position-embedding similarity to every other patch, tiled on the grid."""

import streamlit as st

from posviz.analysis.family_inputs import synthetic_vit_table
from posviz.analysis.headlines import vit_verdict
from posviz.analysis.vit import MAX_GRID_SIDE, display_tiles, patch_similarity_grid
from posviz.charts.families import heatmap_figure, patch_grid_figure
from posviz.references import cite
from posviz.ui import safe_md, show_chart, url_select, url_slider, user_errors
from posviz.ui.answer import answer_slot, next_question, show_hero, show_verdict
from posviz.ui.table_source import describe_table, pick_table

st.title("ViT: position embeddings on the 2-D patch grid")
answer = answer_slot()  # the verdict and the hero, drawn once the table below is chosen
st.markdown(
    "A Vision Transformer cuts the image into an *h×w* grid of patches and learns one position "
    "vector per patch (plus one for the CLS token, set aside here). Tile (*r*, *c*) below shows "
    "the cosine similarity of patch (*r*, *c*)'s vector to every patch's vector, drawn as a small "
    f"*h×w* image at that place — the figure of {cite('dosovitskiy_2021')} (Fig. 7 centre). "
    "In trained "
    "ViTs each tile lights up around its own location, with row and column structure: the 1-D "
    "table has learned 2-D geometry."
)

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
        table = synthetic_vit_table(h, w, int(d))
    st.info(
        "**Synthetic, not a trained model:** half of each row's vector encodes the patch row and "
        "half the column with sines and cosines (MAE's fixed 2-D embedding). No ViT checkpoint is "
        "bundled offline; choose *A model's table* for e.g. google/vit-base-patch16-224.",
        icon="🧪",
    )
else:
    table = pick_table("Table source", key="vit_t", default="hub")
if table is None:
    st.stop()
describe_table(table)
if table.grid is None:
    st.error(
        f"{safe_md(table.label, max_len=120)} has no 2-D patch grid (kind `{table.kind}`): "
        "this view needs a ViT-style table (config with image_size and patch_size). Use the "
        "Learned tables page for 1-D tables.",
        icon="⚠️",
    )
    st.stop()

similarity = None
with user_errors("Patch similarity"):
    similarity = patch_similarity_grid(table.matrix, table.grid)
if similarity is None:
    st.stop()
h, w = table.grid
tiles, stride = display_tiles(similarity)
if stride > 1:
    st.caption(
        f"{h}×{w} grid: drawing every {stride}ᵗʰ patch's tile ({tiles.shape[0]}×"
        f"{tiles.shape[1]} tiles) to keep the figure light; the export has all of them."
    )
with answer:
    name = "the synthetic 2-D sin-cos table" if source == "synthetic" else table.label
    show_verdict(vit_verdict(similarity, name=name))
    show_hero(
        patch_grid_figure(similarity, tiles),
        key="vit_grid_chart",
        note="Tile (r, c): the cosine of patch (r, c)'s position vector with every patch's, "
        "drawn at that patch's place (yellow: alike). A bright cross through each tile's own "
        "place means the table encodes the patch's row and column.",
    )

st.header("One patch, larger")
c1, c2 = st.columns(2)
with c1:
    row = min(
        url_slider(
            "Patch row", key="vit_r", min_value=0, max_value=MAX_GRID_SIDE - 1, default=h // 2
        ),
        h - 1,
    )
with c2:
    col = min(
        url_slider(
            "Patch column", key="vit_c", min_value=0, max_value=MAX_GRID_SIDE - 1, default=w // 4
        ),
        w - 1,
    )
st.markdown(f"Cosine similarity of patch ({row}, {col}) to every patch of the {h}×{w} grid.")
show_chart(
    heatmap_figure(
        similarity[row, col],
        name=f"vit_patch_{row}_{col}",
        x_title="patch column",
        y_title="patch row",
        color_title="cosine",
        height=420,
    ),
    key="vit_patch_chart",
)

next_question("pages/vit_grid.py")
