"""Streamlit's pages, built from :mod:`posviz.navigation`: a page script, or a lab study's page
generated from the study list (a callable: no script file per study).

``app.py`` hands :func:`navigation_pages` to ``st.navigation``, with the function that draws a
study's page (``posviz.ui.lab.question_page``, which links back through this module, so it is
passed in rather than imported); any link to a page goes through
:func:`page_link` (or :func:`page_target`), which accepts the page's key (``"pages/rope.py"``, or
a generated page's URL segment ``"lab_learned"``), so a link never needs to know which kind of
page it points to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from posviz.navigation import HOME, PageSpec, page_spec, sections

StudyPage = Callable[[str], None]


def _linked_only(study_id: str) -> None:
    """A link's page object is never run (Streamlit runs the one ``st.navigation`` holds)."""
    raise RuntimeError(f"the page of lab study {study_id!r} runs from app.py's navigation")


def _study_page(study_id: str, draw: StudyPage) -> Callable[[], None]:
    """The callable Streamlit runs for a lab study's page: ``draw(study_id)``."""

    def page() -> None:
        draw(study_id)

    page.__name__ = page.__qualname__ = f"lab_{study_id}"
    return page


def streamlit_page(spec: PageSpec, draw: StudyPage = _linked_only) -> st.Page:
    """The ``st.Page`` of one page: its script, or a generated study page drawn by ``draw``."""
    target: str | Callable[[], None] = _study_page(spec.study, draw) if spec.study else spec.path
    return st.Page(
        target, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=spec.key == HOME
    )


def navigation_pages(draw_study: StudyPage) -> dict[str, list[st.Page]]:
    """Every page by navigation section, for ``st.navigation``; ``draw_study(study_id)`` draws
    a lab study's page."""
    return {
        section: [streamlit_page(spec, draw_study) for spec in specs]
        for section, specs in sections().items()
    }


def sidebar_links() -> None:
    """The sidebar's page list, by section (app.py hides Streamlit's, whose ``ul`` holds the
    section ``div``s: axe's ``list`` / ``listitem`` rules, serious). Plain links; Streamlit
    draws the current page's bold on a shaded row."""
    for section, specs in sections().items():
        st.sidebar.markdown(f"**{section}**")
        for spec in specs:
            with st.sidebar:
                page_link(spec.key, label=spec.title, icon=spec.icon)


def page_target(key: str) -> str | st.Page:
    """What ``st.page_link`` takes for the page with this key.

    Raises:
        ValueError: no such page.
    """
    spec = page_spec(key)
    return streamlit_page(spec) if spec.study else spec.path


def page_link(
    key: str,
    *,
    label: str,
    icon: str | None = None,
    query_params: Mapping[str, str] | None = None,
) -> None:
    """``st.page_link`` to the page with this key (a script or a generated page alike)."""
    st.page_link(page_target(key), label=label, icon=icon, query_params=query_params)
