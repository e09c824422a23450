"""Each page's hero: its verdict and the chart that shows it, built from the page's settings.

Cached by the settings' values (``posviz.ui.cache.cached_data``); the numbers come from
:mod:`posviz.analysis`, the charts from :mod:`posviz.charts` (the table pages' linked heroes from
:mod:`posviz.charts.heroes`). Nothing is computed here.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from posviz.analysis.headlines import (
    Seam,
    Verdict,
    find_seam,
    learned_verdict,
    similarity_summary,
    sinusoid_verdict,
)
from posviz.analysis.sincos import SinCosPanel, sincos_panel
from posviz.analysis.stats import PCAResult
from posviz.analysis.table_views import principal_pair
from posviz.charts.figure import Figure
from posviz.charts.heatmap import MAX_SIDE_1TO1
from posviz.charts.heroes import (
    WIDE_HERO_MIN,
    LinkedHero,
    pca_path_figure,
    similarity_figure,
    similarity_linked,
    sinusoid_clock_figure,
    sinusoid_linked,
    sinusoid_table_figure,
)
from posviz.charts.sincos import sine_cosine_chart, sine_only_chart
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


def show_linked_hero(hero: LinkedHero, *, key: str, note: str = "") -> None:
    """The page's linked hero in the ``st-key-hero`` box (the browser tests find it), drawn wide
    or tall as the page's width allows, each with its Export menu, and a caption."""
    st.html(_WIDE_OR_TALL)
    with st.container(key="hero"):
        for shape, figure in (("wide", hero.wide), ("tall", hero.tall)):
            with st.container(key=f"hero_{shape}"):
                show_chart(figure, key=f"{key}_{shape}")
        if note:
            st.caption(note)


@cached_data()
def sinusoid_hero(
    n: int, d: int, base: float, layout: str, current: int
) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated table and the clock hands (with ▶ play) for these settings."""
    table = cached_sinusoidal(n, d, base, layout)
    heat = sinusoid_table_figure(
        table, base=base, layout=layout, height=min(HERO_HEIGHT, max(160, n))
    )
    clock = sinusoid_clock_figure(
        table, base=base, layout=layout, current=current, size=HERO_HEIGHT
    )
    return sinusoid_verdict(n, d, base=base, layout=layout), heat, clock


@cached_data()
def sinusoid_linked_hero(n: int, d: int, base: float, layout: str, current: int) -> LinkedHero:
    """The table and the clock hands linked (:func:`posviz.charts.heroes.sinusoid_linked`)."""
    table = cached_sinusoidal(n, d, base, layout)
    return sinusoid_linked(table, base=base, layout=layout, current=min(current, n - 1))


@cached_data()
def why_sin_and_cos(n: int, d: int, base: float, layout: str) -> tuple[Figure, Figure, SinCosPanel]:
    """The "why sin and cos?" panel: sine alone vs the pair, and the rotation check."""
    panel = sincos_panel(n, d, base=base, layout=layout)
    hit = panel.collision
    positions = (hit.first, hit.second)
    alone = sine_only_chart(panel.sines, pair=panel.pair, positions=positions, height=260)
    both = sine_cosine_chart(
        panel.sines, panel.cosines, pair=panel.pair, positions=positions, height=260
    )
    return (
        Figure(alone, panel.sines, f"sine-alone-pair{panel.pair}"),
        Figure(both, panel.data, f"sine-cosine-pair{panel.pair}"),
        panel,
    )


@cached_data()
def _matrix_summary(
    cache_key: str, _matrix: np.ndarray
) -> tuple[np.ndarray, Seam | None, PCAResult]:
    """Similarity of the first positions (at most 1:1 size), their seam, and the PCA path:
    computed once for both heroes of a table."""
    first = _matrix[:MAX_SIDE_1TO1]
    return similarity_summary(first), find_seam(first), principal_pair(_matrix)


@cached_data()
def learned_hero(cache_key: str, name: str, _matrix: np.ndarray) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated similarity matrix and the PCA path (with ▶ play) of a table."""
    similarity, seam, pca = _matrix_summary(cache_key, _matrix)
    edges = (seam.first, seam.last) if seam is not None else None
    matrix = similarity_figure(
        similarity, n_positions=len(_matrix), seam=edges, height=HERO_HEIGHT + 60
    )
    path = pca_path_figure(
        pca.scores,
        explained=pca.explained_variance_ratio,
        current=edges[1] if edges else 0,
        height=HERO_HEIGHT,
    )
    return learned_verdict(_matrix, name=name), matrix, path


@cached_data()
def learned_linked_hero(cache_key: str, _matrix: np.ndarray) -> LinkedHero:
    """The similarity matrix and the PCA path linked, starting at the seam if there is one
    (:func:`posviz.charts.heroes.similarity_linked`)."""
    similarity, seam, pca = _matrix_summary(cache_key, _matrix)
    edges = (seam.first, seam.last) if seam is not None else None
    return similarity_linked(
        similarity,
        pca.scores,
        n_positions=len(_matrix),
        seam=edges,
        explained=pca.explained_variance_ratio,
        current=edges[1] if edges else 0,
    )


def table_name(table: PositionTable) -> str:
    """How a verdict names a table: the bundled one by its model, others by their label."""
    return "MiniLM-L6 (bundled)" if table.source == "bundled" else table.label


def learned_hero_for(table: PositionTable) -> tuple[Verdict, Figure, Figure]:
    """:func:`learned_hero` of a loaded table (cached by the table's identity)."""
    return learned_hero(table_cache_key(table), table_name(table), table.matrix)


def learned_linked_hero_for(table: PositionTable) -> LinkedHero:
    """:func:`learned_linked_hero` of a loaded table (cached by the table's identity)."""
    return learned_linked_hero(table_cache_key(table), table.matrix)
