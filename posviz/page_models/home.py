"""The home page's model: each "Start here" card's answer and the one chart its picture shows.

The two table pages are cheap, so their verdicts and hero charts are computed here at the page's
declared defaults (:attr:`posviz.navigation.PageSpec.params`), one chart each: the card shows one.
The experiment pages take seconds to a minute on a cold server, so their verdicts and hero charts
are stored in :mod:`posviz.data.answers` by ``scripts/make_home_answers.py`` (which runs the pages
themselves); ``tests/test_home_answers.py`` runs the pages again and fails when one differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posviz import export
from posviz.analysis.headlines import learned_verdict, sinusoid_verdict
from posviz.charts.figure import Figure
from posviz.charts.style import on_dark
from posviz.data.answers import ANSWERS
from posviz.encodings.sinusoidal import sinusoidal
from posviz.figures import learned_card, sinusoid_card
from posviz.lab.present import answer as lab_answer
from posviz.lab.present import figures as lab_figures
from posviz.navigation import START_HERE, PageSpec, guided_specs, lab_pages, page_spec
from posviz.page_models.learned import table_name
from posviz.page_models.markdown import safe_md
from posviz.references import cite
from posviz.tables import load_table

#: The pages whose answers are stored (too slow to compute on a cold server's home page).
STORED_PAGES = ("pages/probing.py", "pages/add_vs_concat.py", "pages/permutation.py")
#: The pages whose card is computed here: the learned one from the table the page shows first.
SINUSOID, LEARNED = "pages/sinusoidal.py", "pages/learned.py"


def _sinusoid() -> tuple[np.ndarray, float, str]:
    """The Sinusoid page's table, base and layout at its declared defaults."""
    defaults = {p.name: str(p.default) for p in page_spec(SINUSOID).params}
    base, layout = float(defaults["sin_base"]), defaults["sin_layout"]
    n, d = int(defaults["sin_n"]), int(defaults["sin_d"])
    return sinusoidal(n, d, base=base, layout=layout), base, layout


def answer(page: str, table: np.ndarray | None = None, *, name: str = "") -> str:
    """The line ``page`` opens with at its defaults, as the stored cards show theirs ("" when
    none is known); the learned page's needs its default ``table`` (and its ``name``). Builds no
    chart."""
    if page == SINUSOID:
        matrix, base, layout = _sinusoid()
        return sinusoid_verdict(matrix, base=base, layout=layout).first_line
    if page == LEARNED and table is not None:
        return learned_verdict(table, name=name).first_line
    return str(ANSWERS.get(page, {}).get("verdict", ""))


def picture(page: str, table: np.ndarray | None = None, *, height: int) -> Figure | None:
    """The one chart a computed card shows (``None``: the page's is stored, or no table)."""
    if page == SINUSOID:
        matrix, base, layout = _sinusoid()
        return sinusoid_card(matrix, base=base, layout=layout, height=height)
    if page == LEARNED and table is not None:
        return learned_card(table, height=height)
    return None


def stored_picture(page: str) -> dict[str, Any] | None:
    """The Vega-Lite spec of an experiment page's stored hero (``None``: none stored)."""
    return ANSWERS.get(page, {}).get("hero")


def default_table(page: str) -> tuple[np.ndarray | None, str, str]:
    """``(matrix, name, why not)``: the table the learned page shows first (the bundled MiniLM;
    an install without it gets the message that says how to add it)."""
    if page != LEARNED:
        return None, "", ""
    try:
        table = load_table("bundled")
    except ValueError as error:
        return None, "", str(error)
    return table.matrix, table_name(table), ""


def card_answer(page: str) -> str:
    """The verdict the page shows at its default settings ("" when none is known)."""
    matrix, name, why_not = default_table(page)
    return why_not or answer(page, matrix, name=name)


def card_line(spec: PageSpec) -> str:
    """A card's line (Markdown, escaped): what the page shows, then where its question comes
    from."""
    text = safe_md(spec.blurb, max_len=300)
    if spec.sources:
        text += " After " + " · ".join(cite(key) for key in spec.sources) + "."
    return text


def lab_card_line(study: str, result: Any) -> str:
    """A lab card's words: the stored answer's plain first sentence, or how long it takes."""
    if result is None:
        return lab_answer.index_line(study, None)
    return lab_answer.plain_answer(result)


def lab_picture(result: Any) -> Figure:
    """The chart that carries a stored lab answer: its default cell's hero."""
    return lab_figures.hero(result, lab_answer.cell_ids(result)[0]).figure


#: A card picture's size in CSS pixels (rendered at 2× for sharp screens).
THUMB_WIDTH, THUMB_HEIGHT = 360, 170


def card_spec(page: str, *, height: int) -> dict[str, Any] | None:
    """The Vega-Lite spec of a card's picture: the hero computed at the page's defaults (the two
    table pages, ``height`` px tall), else the stored one (``None``: there is none)."""
    if page not in (SINUSOID, LEARNED):
        return stored_picture(page)
    figure = picture(page, default_table(page)[0], height=height)
    return None if figure is None else export.chart_spec(figure.chart)


def card_thumbnail(page: str, *, dark: bool, hero_height: int) -> bytes | None:
    """A start-here card's picture: its page's hero (``hero_height`` px tall; a square one at
    the card's height) as a small PNG (:func:`thumbnail`)."""
    square = card_is_square(page)
    spec = card_spec(page, height=THUMB_HEIGHT if square else hero_height)
    return thumbnail(spec, dark=dark, square=square)


def card_is_square(page: str) -> bool:
    """Whether a card's picture is a square heatmap (the learned table's similarity matrix)."""
    return page == LEARNED


def thumbnail(spec: dict[str, Any] | None, *, dark: bool, square: bool = False) -> bytes | None:
    """A card's picture as a small PNG for the light or ``dark`` theme (``None``: no spec, or it
    cannot be drawn: the card still answers in words); ``square``: a square plot
    :data:`THUMB_HEIGHT` on a side, its legend beside it, centred in the card's width
    (:func:`card_is_square`; its spec drawn at that height, so the legend fits the plot)."""
    if spec is None:
        return None
    try:
        spec = on_dark(spec) if dark else spec
        if square:
            return export.thumbnail_png(spec, width=THUMB_WIDTH, height=THUMB_HEIGHT, plot=True)
        return export.thumbnail_png(spec, width=THUMB_WIDTH, height=THUMB_HEIGHT)
    except ValueError:
        return None


def more_pages() -> list[PageSpec]:
    """Every page of the guided path after the "Start here" cards, outside the lab (the lab's
    cards follow)."""
    lab = {spec.key for spec in lab_pages()}
    return [spec for spec in guided_specs()[START_HERE:] if spec.key not in lab]
