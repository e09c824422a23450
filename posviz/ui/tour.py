"""The guided tour's card (:mod:`posviz.page_models.tour`): ``page_top`` draws it, and
``next_question`` reruns once when the page's widgets, writing the link, finished the step."""

from __future__ import annotations

import streamlit as st

from posviz.page_models import tour
from posviz.ui.routes import page_link

_SHOWN = "tour_shown"  # (page, done) as the top of the page drew them in this run


def tour_link(link: tour.Link | None = None) -> None:
    """A tour link: by default the home page's way in (the first step's page, ``tour=1``)."""
    link = link or tour.start()
    page_link(link.page, label=link.label, icon=link.icon, query_params=link.query)


def tour_top() -> None:
    """The step's card at the top of the page (page_top's part)."""
    reading = tour.read(st.query_params.to_dict(), url=st.context.url or "")
    st.session_state[_SHOWN] = (reading.page, reading.card and reading.card.done)
    if reading.warning:
        st.warning(reading.warning, icon=":material/link:")
    if (card := reading.card) is not None:
        with st.container(border=True, key="tour"):
            st.markdown(card.markdown)
            with st.container(horizontal=True):
                for link in card.links:
                    tour_link(link)
                st.button("End tour", key="tour_end", icon=":material/close:",  # keeps the view
                          on_click=st.query_params.pop, args=(tour.TOUR.name, None))  # fmt: skip


def tour_end(page: str) -> None:
    """next_question's part: once the page wrote its link, a rerun if that changed the step."""
    shown = st.session_state.pop(_SHOWN, None)
    card = tour.read(st.query_params.to_dict(), page=page).card
    if shown and shown[0] == page and card is not None and card.done != shown[1]:
        if card.done:  # seen wherever the reader scrolled to act
            st.toast(f"{card.heading} done: the card at the top leads on.", icon="✅")
        st.rerun()
