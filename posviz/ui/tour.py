"""The guided tour's card (:mod:`posviz.page_models.tour`): ``page_top`` draws it, and
``next_question`` reruns once when the page's widgets, writing the link, finished the step."""

from __future__ import annotations

import streamlit as st

from posviz.page_models import tour
from posviz.ui.routes import page_link

_SHOWN = "tour_shown"  # (page, done) as the top of the page drew them in this run


def _show(reading: tour.Reading) -> None:
    if reading.warning:
        st.warning(reading.warning, icon=":material/link:")
    if (card := reading.card) is not None:
        with st.container(border=True, key="tour"):
            st.markdown(card.markdown)
            with st.container(horizontal=True):
                for link in card.links:
                    page_link(link.page, label=link.label, icon=link.icon, query_params=link.query)
                st.button("End tour", key="tour_end", icon=":material/close:",  # keeps the view
                          on_click=st.query_params.pop, args=(tour.TOUR.name, None))  # fmt: skip


def tour_top() -> None:
    """The step's card at the top of the page (page_top's part)."""
    reading = tour.read(st.query_params.to_dict(), url=st.context.url or "")
    st.session_state[_SHOWN] = (reading.page, reading.card and reading.card.done)
    _show(reading)


def tour_end(page: str) -> None:
    """next_question's part: a rerun when the step's state changed; the card if none at the top."""
    shown = st.session_state.pop(_SHOWN, None)
    reading = tour.read(st.query_params.to_dict(), page=page)
    if shown is None or shown[0] != page:
        _show(reading)
    elif reading.card is not None and reading.card.done != shown[1]:
        st.rerun()


def tour_link() -> None:
    """The home page's way into the tour: the first step's page with ``tour=1``."""
    link = tour.start()
    page_link(link.page, label=link.label, icon=":material/tour:", query_params=link.query)
