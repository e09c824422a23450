"""The table pages' linked heroes: drawn wide or tall as the page's width allows.

The learned hero at a position is cached by the table's identity and the position; the heroes
themselves come from the page models (:mod:`posviz.charts.heroes`). Nothing is computed here.
"""

from __future__ import annotations

import streamlit as st

from posviz.charts.heroes import WIDE_HERO_MIN, LinkedHero
from posviz.charts.linked import next_position
from posviz.page_models.learned import LearnedPage, table_name
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart

__all__ = ["learned_hero_at", "show_linked_hero", "table_name"]

#: The wide hero shows where the hero's own box is at least WIDE_HERO_MIN pixels wide, the tall
#: one elsewhere: a CSS container query, so an open sidebar or a phone counts as it should.
_WIDE_OR_TALL = f"""<style>
.st-key-hero {{ container-type: inline-size; }}
@container (width < {WIDE_HERO_MIN}px) {{ .st-key-hero_wide {{ display: none !important; }} }}
@container (width >= {WIDE_HERO_MIN}px) {{ .st-key-hero_tall {{ display: none !important; }} }}
</style>"""


@cached_data()
def learned_hero_at(cache_key: str, position: int, *, _page: LearnedPage) -> LinkedHero:
    """:meth:`posviz.page_models.learned.LearnedPage.hero_at`, cached by the table's identity
    and the position."""
    return _page.hero_at(position)


def show_linked_hero(hero: LinkedHero, *, key: str, note: str = "") -> None:
    """The page's linked hero in the ``st-key-hero`` box (the browser tests find it), drawn wide
    or tall as the page's width allows, each with its Export menu, ``note`` its description.
    The page's Position slider (``<prefix>pos``, in the link) comes before it; "Next position"
    steps it (one ▶ play tick, for a reader who wants no animation)."""
    st.html(_WIDE_OR_TALL)
    with st.container(key="hero"):
        for shape, figure in (("wide", hero.wide), ("tall", hero.tall)):
            with st.container(key=f"hero_{shape}"):
                show_chart(figure, key=f"{key}_{shape}", description=note)
    position, stepping = f"{key.removesuffix('hero')}pos", getattr(hero.wide.chart, "stepping", 0)
    if position in st.session_state and stepping:
        st.button("Next position", key=f"{position}_step", icon=":material/skip_next:",
                  on_click=lambda: st.session_state.update({position: next_position(
                      st.session_state[position], *stepping)}))  # fmt: skip
