"""Each page's hero: its verdict and the chart that shows it, built from the page's settings.

Cached by the settings' values (``posviz.ui.cache.cached_data``); verdicts and figures come from
:mod:`posviz.figures` (the table pages' linked heroes from :mod:`posviz.charts.heroes`). Nothing is
computed here.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from posviz import figures
from posviz.analysis.headlines import Verdict
from posviz.charts.figure import Figure
from posviz.charts.heroes import WIDE_HERO_MIN, LinkedHero
from posviz.page_models.learned import LearnedPage, table_name
from posviz.tables import PositionTable
from posviz.tables.picker import table_cache_key
from posviz.ui.answer import HERO_HEIGHT
from posviz.ui.cache import cached_data
from posviz.ui.display import show_chart
from posviz.ui.loaders import cached_sinusoidal

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
    or tall as the page's width allows, each with its Export menu, and a caption."""
    st.html(_WIDE_OR_TALL)
    with st.container(key="hero"):
        for shape, figure in (("wide", hero.wide), ("tall", hero.tall)):
            with st.container(key=f"hero_{shape}"):
                show_chart(figure, key=f"{key}_{shape}", description=note)
        if note:
            st.caption(note)


@cached_data()
def sinusoid_hero(
    n: int, d: int, base: float, layout: str, current: int
) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated table and the clock hands (:func:`posviz.figures.sinusoid_hero`)."""
    table = cached_sinusoidal(n, d, base, layout)
    return figures.sinusoid_hero(
        table, base=base, layout=layout, current=current, height=HERO_HEIGHT
    )


@cached_data()
def _matrix_summary(cache_key: str, _matrix: np.ndarray) -> figures.TableSummary:
    """:func:`posviz.figures.table_summary`, computed once for both heroes of a table."""
    return figures.table_summary(_matrix)


@cached_data()
def learned_hero(cache_key: str, name: str, _matrix: np.ndarray) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated similarity matrix and the PCA path (with ▶ play) of a table."""
    summary = _matrix_summary(cache_key, _matrix)
    return figures.learned_hero(_matrix, summary, name=name, height=HERO_HEIGHT)


def learned_hero_for(table: PositionTable) -> tuple[Verdict, Figure, Figure]:
    """:func:`learned_hero` of a loaded table (cached by the table's identity)."""
    return learned_hero(table_cache_key(table), table_name(table), table.matrix)
