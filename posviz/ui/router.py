"""Make deep links (``/alibi?…``) go through ``app.py``'s router on a freshly started server.

Streamlit decides per process whether an app uses the old ``pages/`` directory mode: it assumes
so when a ``pages/`` folder sits next to the main script, until some session calls
``st.navigation``. So the very first visitor of a new server who arrives on a shared link gets
the page script run alone, with an auto-generated sidebar and no wide layout. Every page
imports ``posviz.ui``; when it finds that mode still on, it switches it off and reruns, and the
rerun goes through ``app.py`` like any other.
"""

from __future__ import annotations

import streamlit as st


def route_through_app() -> None:
    """Rerun under ``app.py``'s router if Streamlit is still in ``pages/`` directory mode."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without that class has no directory mode to undo
        return
    if PagesManager.uses_pages_directory and st.runtime.exists():
        PagesManager.uses_pages_directory = False
        st.rerun()
