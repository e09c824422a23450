"""The home page's "Start here" path: one card per question, each with the page's own verdict at
its default settings and a thumbnail rendered from the page's hero chart.

The two table pages are cheap, so their verdicts and heroes are computed here as the pages do
(:mod:`posviz.ui.heroes`). The experiment pages take seconds to a minute on a cold server, so
their verdicts and hero charts, as the pages draw them with their defaults, are stored in
:mod:`posviz.data.answers` by ``scripts/make_home_answers.py`` (which runs the pages themselves);
``tests/test_home_answers.py`` runs the pages again and fails when a stored answer differs.
Thumbnails are rendered on the server by vl-convert, once per process.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from posviz import export
from posviz.data.answers import ANSWERS
from posviz.navigation import GUIDED_PATH, START_HERE
from posviz.tables import load_table
from posviz.ui.cache import cached_resource
from posviz.ui.heroes import learned_hero_for, sinusoid_hero
from posviz.ui.text import safe_md

#: The pages whose answers are stored (too slow to compute on a cold server's home page).
STORED_PAGES = ("pages/probing.py", "pages/add_vs_concat.py", "pages/permutation.py")

#: Thumbnail width in CSS pixels (rendered at 2× for sharp screens).
THUMB_WIDTH = 360
THUMB_HEIGHT = 170


def _live(page: str) -> tuple[str, Any] | None:
    """Verdict and hero chart of the pages cheap enough to compute at their defaults here."""
    if page == "pages/sinusoidal.py":
        verdict, table, _clock = sinusoid_hero(128, 512, 10000.0, "interleaved", 10)
        return verdict.sentence, table.chart
    if page == "pages/learned.py":
        try:
            table = load_table("bundled")
        except ValueError as error:  # e.g. an install without the offline MiniLM: say how
            return str(error), None
        verdict, similarity, _path = learned_hero_for(table)
        return verdict.sentence, similarity.chart
    return None


def card_answer(page: str) -> str:
    """The verdict the page shows at its default settings ("" when none is known)."""
    live = _live(page)
    if live is not None:
        return live[0]
    return str(ANSWERS.get(page, {}).get("verdict", ""))


@cached_resource(show_spinner=False)
def card_thumbnail(page: str) -> bytes | None:
    """PNG of the page's hero chart at its defaults, small (``None`` when there is none)."""
    live = _live(page)
    if live is not None:
        spec = export.chart_spec(live[1]) if live[1] is not None else None
    else:
        spec = ANSWERS.get(page, {}).get("hero")
    if spec is None:
        return None
    try:
        return export.thumbnail_png(spec, width=THUMB_WIDTH, height=THUMB_HEIGHT)
    except ValueError:
        return None  # a card without its picture still answers


def start_here_cards() -> None:
    """The first :data:`START_HERE` questions as cards, in reading order on any width."""
    path = GUIDED_PATH[:START_HERE]
    slots = []
    for row in (path[:3], path[3:6]):  # row by row, so a phone stacks them 1, 2, 3, …
        if row:
            slots += list(st.columns(3, gap="medium"))[: len(row)]
    pictures = []
    for number, ((page, question), slot) in enumerate(zip(path, slots, strict=True), start=1):
        with slot, st.container(border=True, key=f"card_{number}"):
            st.markdown(f"**{number} · {safe_md(question, max_len=200)}**")
            pictures.append((page, question, st.empty()))
            st.caption(safe_md(card_answer(page), max_len=600))
            st.page_link(page, label="Open the answer", icon=":material/arrow_forward:")
    for page, question, place in pictures:  # the text first, then the pictures as they render
        png = card_thumbnail(page)
        if png is not None:  # alt text: screen readers announce what the picture answers
            place.image(png, width="stretch", alt=f"The chart that answers: {question}")
