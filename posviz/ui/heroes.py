"""Each page's hero: its verdict and the chart that shows it, built from the page's settings.

Cached by the settings' values (``posviz.ui.cache.cached_data``); the numbers come from
:mod:`posviz.analysis.headlines`, the charts from :mod:`posviz.charts`. Nothing is computed here.
"""

from __future__ import annotations

import numpy as np

from posviz.analysis.headlines import (
    Verdict,
    find_seam,
    learned_verdict,
    similarity_summary,
    sinusoid_verdict,
)
from posviz.analysis.sincos import SinCosPanel, sincos_panel
from posviz.analysis.table_views import principal_pair
from posviz.charts.circle import unit_circle_figure
from posviz.charts.figure import Figure
from posviz.charts.heatmap import MAX_SIDE_1TO1, Annotation, heatmap_chart
from posviz.charts.sincos import sine_cosine_chart, sine_only_chart
from posviz.charts.trajectory import pca_trajectory_chart
from posviz.encodings.sinusoidal import pair_columns, sinusoid_wavelengths
from posviz.tables import PositionTable
from posviz.ui.answer import HERO_HEIGHT
from posviz.ui.cache import cached_data
from posviz.ui.loaders import cached_sinusoidal, table_cache_key

#: hands on the sinusoid's hero clock: pair indices as fractions of d/2, fast to slow.
HERO_PAIRS = (0.0, 1 / 16, 1 / 8, 1 / 4)


@cached_data()
def sinusoid_hero(
    n: int, d: int, base: float, layout: str, current: int
) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated table and the clock hands (with ▶ play) for these settings."""
    table = cached_sinusoidal(n, d, base, layout)
    verdict = sinusoid_verdict(n, d, base=base, layout=layout)
    wavelengths = sinusoid_wavelengths(d, base=base, layout=layout)
    sin_cols, cos_cols = pair_columns(d, layout=layout)
    slow_at = d // 2 - 1
    notes = [  # short labels: they must not collide on a phone-wide chart
        Annotation("fast", label_at=(0, n * 0.12)),
        Annotation("slow", label_at=(int(sin_cols[slow_at * 3 // 4]), n * 0.12), align="center"),
    ]
    heat = heatmap_chart(
        table,
        title=f"PE: {n} positions × {d} dimensions",
        subtitle=[
            f"fast pairs turn every {wavelengths[0]:.3g} positions,",
            f"the slowest every {wavelengths[slow_at]:,.0f}",
        ],
        value_title="PE[p, i]",
        height=min(HERO_HEIGHT, max(160, n)),
        annotations=notes,
    )
    pairs = sorted({min(int(f * (d // 2)), d // 2 - 1) for f in HERO_PAIRS})
    clock = unit_circle_figure(
        table,
        (int(sin_cols[pairs[0]]), int(cos_cols[pairs[0]])),
        extra_pairs=[(int(sin_cols[i]), int(cos_cols[i])) for i in pairs[1:]],
        labels=[f"pair {i}: λ {wavelengths[i]:,.3g}" for i in pairs],
        current=min(current, n - 1),
        size=HERO_HEIGHT,
        animate=True,
        title="Clock hands at different speeds",
        name=f"sinusoidal-{n}x{d}-hands",
    )
    return verdict, Figure(heat, np.asarray(table), f"sinusoidal-{n}x{d}-{layout}"), clock


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
def learned_hero(cache_key: str, name: str, _matrix: np.ndarray) -> tuple[Verdict, Figure, Figure]:
    """Verdict, the annotated similarity matrix and the PCA path (with ▶ play) of a table."""
    verdict = learned_verdict(_matrix, name=name)
    m = min(len(_matrix), MAX_SIDE_1TO1)
    similarity = similarity_summary(_matrix[:m])
    notes = [Annotation("diagonal: p = q", label_at=(m * 0.47, m * 0.53), align="right")]
    seam = find_seam(_matrix[:m])
    if seam is not None:
        edge = seam.last
        notes += [
            Annotation(f"seam at {seam.first}–{seam.last}", x=edge, y=0, x2=edge, y2=m),
            Annotation("", x=0, y=edge, x2=m, y2=edge),
        ]
    shown = f"positions 0…{m - 1} of {len(_matrix)}" if m < len(_matrix) else ""
    heat = heatmap_chart(
        similarity,
        vmax=1.0,
        title="Which positions look alike?",
        subtitle=["cos(PE(p), PE(q))", *([shown] if shown else [])],
        x_title="position q",
        y_title="position p",
        value_title="cosine",
        height=HERO_HEIGHT + 60,
        square=True,
        renderer="svg",
        annotations=notes,
    )
    pca = principal_pair(_matrix)
    ratio = pca.explained_variance_ratio
    path = pca_trajectory_chart(
        pca.scores,
        explained=ratio,
        title="Positions as a path (PCA)",
        current=int(seam.last) if seam is not None else 0,
        height=HERO_HEIGHT,
    )
    return (
        verdict,
        Figure(heat, similarity, "cosine_similarity"),
        Figure(path, pca.scores, "pca_trajectory"),
    )


def table_name(table: PositionTable) -> str:
    """How a verdict names a table: the bundled one by its model, others by their label."""
    return "MiniLM-L6 (bundled)" if table.source == "bundled" else table.label


def learned_hero_for(table: PositionTable) -> tuple[Verdict, Figure, Figure]:
    """:func:`learned_hero` of a loaded table (cached by the table's identity)."""
    return learned_hero(table_cache_key(table), table_name(table), table.matrix)
