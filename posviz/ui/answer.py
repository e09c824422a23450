"""The frame of every page: its answer first, its hero chart, and the way on to the next question.

``answer_slot()`` reserves the top of the page (above the controls) so the verdict and the hero can
be drawn once the controls below have been read; ``show_verdict`` writes the answer's first line
and its folded evidence into a box marked ``st-key-verdict`` and ``show_hero`` the chart into
``st-key-hero`` (the browser tests find them by these classes); ``next_question`` ends the page
with a link along the guided path. The guided tour's card (:mod:`posviz.page_models.tour`) is
drawn by ``page_top``; ``next_question`` reruns once when the page, writing its link, did the step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import streamlit as st

from posviz.analysis.headlines import Verdict
from posviz.analysis.provenance import badges
from posviz.charts.figure import Figure
from posviz.navigation import HOME, guided_path
from posviz.page_models import tour
from posviz.ui.display import show_chart
from posviz.ui.routes import page_link
from posviz.ui.text import safe_md

#: Large charts (the hero's heatmap at full width) stay this tall at most, so the verdict and the
#: hero fit the first screen of a 1440×900 window.
HERO_HEIGHT = 300


def answer_slot() -> st.delta_generator.DeltaGenerator:
    """A container at this point of the page, filled later by :func:`show_verdict`/`show_hero`."""
    return st.container()


def page_top(title: str, intro: str) -> st.delta_generator.DeltaGenerator:
    """A page's title, its :func:`answer_slot` (returned) and its introduction, in this order."""
    st.title(title)
    _tour_top()  # the guided tour's card, when the link holds a step
    answer = answer_slot()
    st.markdown(intro)
    return answer


def show_verdict(verdict: Verdict | str) -> None:
    """The page's answer: its plain first line in bold (escaped: it may quote a table's name),
    then its evidence folded in an "Evidence" expander directly under it (the numbers,
    intervals and controls, one labelled item a line), so the hero follows the line on the first
    screen; the terms the evidence uses (R², MAE, ‖…‖ …) are defined in the line's hover help.

    A plain string (the lab's answers, generated in :mod:`posviz.lab`) is shown whole, as its
    generator wrote it."""
    if isinstance(verdict, Verdict):
        line, evidence, terms = verdict.first_line, verdict.folded, verdict.terms
    else:
        line, evidence, terms = verdict, (), Verdict(verdict).terms
    sources = badges(verdict.sources) if isinstance(verdict, Verdict) else []
    with st.container(key="verdict"):
        st.markdown(
            f"**{safe_md(line, max_len=900)}**"
            + "".join(f" :gray-badge[{safe_md(b)}]" for b in sources),
            help="\n\n".join(terms) if terms else None,
        )
        if evidence:
            with st.expander("Evidence", expanded=False):
                st.markdown(
                    "\n".join(
                        f"- **{safe_md(label, max_len=80)}:** {safe_md(text, max_len=400)}"
                        if label
                        else f"- {safe_md(text, max_len=400)}"
                        for label, text in evidence
                    )
                )


def show_hero(figure: Figure, *, key: str, note: str = "", width: str = "stretch") -> None:
    """The page's hero chart (with its Export menu) and an optional caption of what to notice."""
    with st.container(key="hero"):
        show_chart(figure, key=key, width=width, description=note)
        if note:
            st.caption(note)


@contextlib.contextmanager
def waiting(what: str) -> Iterator[None]:
    """A spinner with a sentence saying what the section waits for (never an empty heading)."""
    with st.spinner(what, show_time=True):
        yield


def next_question(page: str) -> None:
    """End the page with "Next question →" along the guided path (the last page wraps home);
    ``page`` is the page's key (its script, or a generated lab page's URL segment)."""
    path = guided_path()
    keys = [key for key, _ in path]
    _tour_end(page)  # the link is written: the tour's step rechecked
    st.divider()
    if page not in keys or keys.index(page) == len(keys) - 1:
        page_link(HOME, label="Back to the start", icon=":material/home:")
        return
    key, question = path[keys.index(page) + 1]
    page_link(key, label=f"Next question → {question}", icon=":material/arrow_forward:")


_SHOWN = "tour_shown"  # (page, done) as the top drew them this run; "End tour" keeps the view


def tour_link(link: tour.Link | None = None) -> None:
    """A tour link: by default the home page's way in (the first step's page, ``tour=1``)."""
    link = link or tour.start()
    page_link(link.page, label=link.label, icon=link.icon, query_params=link.query)


def _tour_top() -> None:
    """The step's card at the top of the page (page_top's part)."""
    reading = tour.read(st.query_params.to_dict(), url=st.context.url or "")
    st.session_state[_SHOWN] = (reading.page, reading.card and reading.card.done)
    if reading.warning:
        st.warning(reading.warning, icon=":material/link:")
    if (card := reading.card) is not None:
        with st.container(border=True, key="tour"):
            st.markdown(card.markdown)
            with st.container(horizontal=True, vertical_alignment="center"):
                for link in card.links:
                    tour_link(link)
                st.button("End tour", key="tour_end", icon=":material/close:", type="tertiary",
                          on_click=st.query_params.pop, args=(tour.TOUR.name, None))  # fmt: skip


def _tour_end(page: str) -> None:
    """next_question's part: once the page wrote its link, a rerun if that changed the step."""
    shown = st.session_state.pop(_SHOWN, None)
    card = tour.read(st.query_params.to_dict(), page=page).card
    if shown and shown[0] == page and card is not None and card.done != shown[1]:
        if card.done:  # seen wherever the reader scrolled to act
            st.toast(f"{card.heading} done: the card at the top leads on.", icon="✅")
        st.rerun()
