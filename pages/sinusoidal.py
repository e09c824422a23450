"""Sinusoidal encodings: the table, its dimensions, its clock hands, which dimensions move, and
why similarity depends only on distance. Every control is mirrored in the URL (``sin_*``)."""

import streamlit as st

from posviz.page_models import sinusoidal as model
from posviz.ui import NumberField, url_field, url_numbers, url_radio, user_errors
from posviz.ui.answer import next_question, page_top, show_verdict
from posviz.ui.cache import cached_model
from posviz.ui.circle_view import position_slider, unit_circle_view
from posviz.ui.display import show_charts_side_by_side
from posviz.ui.heatmap_view import heatmap_view
from posviz.ui.heroes import show_linked_hero
from posviz.ui.line_views import dimensions_view, shift_similarity_view, variance_view
from posviz.ui.loaders import cached_sinusoidal, cached_table
from posviz.ui.table_source import show_real_section

# the answer slot: the verdict and the hero, drawn once the settings below are read
answer = page_top("Sinusoidal position encodings", model.INTRO)

cols = st.columns([3, 3, 2, 3])
n, d = url_numbers(
    (
        NumberField("Positions (sequence length)", "n", 1, model.MAX_POSITIONS, 128),
        NumberField("Width d_model (even)", "d", 2, model.MAX_D_MODEL, 512, 2),
    ),
    key_prefix="sin_",
    slider=True,
    columns=cols[:2],
)
with cols[2]:
    base = url_field(
        NumberField("Base", "sin_base", 1.01, model.MAX_BASE, 10000.0),
        format="%g",
        help="10000 in the paper; RoPE-style long-context models use larger bases.",
    )
with cols[3]:
    layout = url_radio("Layout", model.SINUSOID_LAYOUTS, key="sin_layout", default="interleaved")
st.caption(model.LIMITS)

with st.expander("How the three layouts differ"):
    st.markdown(model.LAYOUTS)

table = None
with user_errors("Encoding"):
    model.check_width(d)
    table = cached_sinusoidal(int(n), int(d), float(base), layout)

if table is None:
    st.stop()

key = f"sin:{n}:{d}:{base!r}:{layout}"
page = cached_model(model.sinusoid_page, key, table, base=float(base), layout=layout)
with answer:  # the verdict, the page's one position control (the link's), the hero it moves
    show_verdict(page.verdict)
    position = position_slider(len(table), key="sin_pos", default=model.DEFAULT_POSITION)
    hero = cached_model(
        model.sinusoid_hero, key, table, base=float(base), layout=layout, position=position
    )
    show_linked_hero(hero, key="sin_hero", note=model.HERO_NOTE)
    st.caption(model.HERO_NOTE)

st.header("Why sin *and* cos?")
st.markdown(page.why_text)
show_charts_side_by_side(
    (page.why_alone, "sin_why_alone"), (page.why_both, "sin_why_both"), spec=[3, 2], gap="medium"
)
st.markdown(page.rotation_text)

st.markdown(page.summary)

heatmap_view(
    table,
    key_prefix="sin_",
    cache_key=key,
    title="The whole table",
    name=page.name,
    prose=model.HEATMAP_PROSE,
)

dimensions_view(
    table,
    key_prefix="sin_",
    default_dims=page.default_dims,
    dim_label=page.dim_label,
    name=page.name,
    prose=model.DIMENSIONS_PROSE,
)

unit_circle_view(
    table,
    key_prefix="sin_",
    pairs_are_sin_cos=True,
    sin_cos_columns=(page.sin_columns, page.cos_columns),
    wavelengths=page.wavelengths,
    name=page.name,
    position=position,
)

active = variance_view(table, key_prefix="sin_", name=page.name)

st.subheader("Do the last dimensions barely change?")
st.markdown(model.SLOW_COLUMNS_INTRO)
st.dataframe(page.slow_columns.style.format(precision=5), hide_index=True)
st.markdown(model.slow_columns_note(active, page.d))

shift_similarity_view(table, key_prefix="sin_", name=page.name, prose=model.SHIFT_PROSE)

# a real model that stores this formula (offline, hash-checked): Whisper tiny.en's encoder
if missing := model.whisper_missing():
    st.info(missing)
else:
    with user_errors("Whisper's tables"):
        whisper = (cached_table(model.WHISPER_ENCODER), cached_table(model.WHISPER_DECODER))
        show_real_section(
            cached_model(model.whisper_section, "whisper", whisper), key="sin_whisper"
        )

next_question("pages/sinusoidal.py")
