"""The home page's "Start here" path: one card per question, each with the page's own verdict at
its default settings and a thumbnail of the page's hero chart (both from
:mod:`posviz.page_models.home`: computed for the two table pages, stored for the experiments).
Thumbnails are rendered on the server by vl-convert, once per process.

The lab's cards (:func:`lab_cards`) carry each study's stored answer at its preset (its plain
first sentence) and a thumbnail of the chart that carries it, replayed from the stored run; a
study not stored yet says how long it takes, under the first start's progress line.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from posviz import export
from posviz.lab import LabResult
from posviz.navigation import START_HERE, PageSpec, guided_path, lab_pages
from posviz.page_models import home
from posviz.page_models.home import STORED_PAGES, card_answer, card_line
from posviz.page_models.lab import asked_in
from posviz.ui.answer import HERO_HEIGHT
from posviz.ui.cache import cached_resource
from posviz.ui.lab import default_results
from posviz.ui.lab_runs import warmup_notice
from posviz.ui.routes import page_link
from posviz.ui.text import safe_md

__all__ = ["STORED_PAGES", "card_answer", "card_thumbnail", "lab_cards", "start_here_cards"]


@cached_resource(show_spinner=False)
def card_thumbnail(page: str, dark: bool = False) -> bytes | None:
    """PNG of the page's hero chart at its defaults, small, for the light or ``dark`` theme
    (``None`` when there is none)."""
    return home.card_thumbnail(page, dark=dark, hero_height=HERO_HEIGHT)


def start_here_cards() -> None:
    """The first :data:`START_HERE` questions as cards, in reading order on any width."""
    path = guided_path()[:START_HERE]
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
            page_link(page, label="Open the answer", icon=":material/arrow_forward:")
    for page, question, place in pictures:  # the text first, then the pictures as they render
        pngs, key = (card_thumbnail(page), card_thumbnail(page, dark=True)), page.split("/")[-1]
        _picture(place, pngs, f"The chart that answers: {question}", key=key.removesuffix(".py"))


def _picture(place: Any, pngs: tuple[bytes | None, ...], alt: str, *, key: str) -> None:
    """A card's light and dark pictures; PAGE_STYLE shows the one of the browser's colour scheme
    (the alt text: what the picture answers)."""
    with place.container():
        for theme, png in zip(("thumblight", "thumbdark"), pngs, strict=True):
            if png is not None:
                st.container(key=f"{theme}_{key}").image(png, width="stretch", alt=alt)


def more_questions() -> None:
    """Every page of the guided path after the "Start here" cards, outside the lab (the lab's
    cards follow), as a link with what the page shows."""
    for spec in home.more_pages():
        with st.container(border=True):
            page_link(spec.key, label=spec.question or spec.title, icon=":material/arrow_forward:")
            st.caption(card_line(spec))


@cached_resource(show_spinner=False)
def lab_thumbnail(run_id: str, _result: LabResult, dark: bool = False) -> bytes | None:
    """PNG of the chart that carries a stored lab answer (its default cell's hero), small, for
    the light or ``dark`` theme; one per run id (a stored run never changes)."""
    return home.thumbnail(export.chart_spec(home.lab_picture(_result).chart), dark=dark)


def lab_cards(*, columns: int = 2) -> None:
    """The lab's pages as cards: each study with its stored answer (or how long it takes, under
    the first start's progress line) and its answer's chart, then the index and paper checks."""
    warmup_notice()  # "Computing the stored answers: 4 of 9 …" while the first start runs
    pages = lab_pages()
    studies = [spec for spec in pages if spec.study]
    answers = default_results()
    cells = st.columns(columns, gap="medium")
    pictures: list[tuple[PageSpec, Any, Any]] = []
    for index, spec in enumerate(studies):
        result = answers.get(spec.study)
        with cells[index % columns].container(border=True, key=f"lab_card_{spec.study}"):
            page_link(spec.key, label=spec.title, icon=":material/science:")
            st.caption(safe_md(home.lab_card_line(spec.study, result), max_len=400))
            if result is not None:
                pictures.append((spec, result, st.empty()))
            st.caption(asked_in(spec.sources))
    for spec in pages:
        if not spec.study:
            with st.container(border=True):
                page_link(spec.key, label=spec.question or spec.title, icon=spec.icon)
                st.caption(card_line(spec))
    for spec, result, place in pictures:  # the words first, then the pictures as they render
        pngs = tuple(lab_thumbnail(result.run_id, result, dark) for dark in (False, True))
        _picture(place, pngs, f"The chart that answers: {spec.title}", key=spec.url_path)
