"""Every patch of a library's private internals, in one place, each with a test that fails loudly
when an upgrade no longer needs or allows it (``tests/test_compat.py``).

1. ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory`` (Streamlit 1.67): a class
   flag set per process to "a ``pages/`` folder sits next to the main script" until some session
   calls ``st.navigation``. Until then a page script is run on its own, so the very first visitor
   of a fresh server who arrives on a deep link (``/alibi?…``) gets that page without ``app.py``'s
   router: an auto-generated sidebar and no wide layout. No public option turns the old mode off
   (renaming ``pages/`` would, at the cost of every page's path). Every page imports
   ``posviz.ui``, whose import calls :func:`route_through_app`: it clears the flag and reruns, and
   the rerun goes through ``app.py`` (the project's start commands clear the flag first:
   :mod:`posviz.ui.launch`). A page generated without a script (a lab
   study's, ``posviz.ui.routes``) is unknown to the old mode, which runs ``app.py`` as its main
   page instead, so the rerun names the page the link asked for (``RerunData``'s page name and
   hash, as the browser sent them), not the page that ran.
2. ``altair.utils.schemapi._PropertySetter`` (Altair 5.5): the method syntax
   (``alt.X(...).scale(...)``) uses one descriptor per property shared by every thread;
   ``__get__`` stores the encoding on the descriptor and ``__call__`` copies whatever is stored
   there. Streamlit runs each session in its own thread, so two sessions drawing at once can swap
   encodings (the load test in tests/load caught a line chart carrying another chart's legend).
   :func:`make_altair_setters_thread_safe` binds the encoding per access instead.
3. ``streamlit.elements.vega_charts._altair_globals_lock``: the lock Streamlit holds while it
   touches Altair's global registries; exports (rendered in download threads) and the home
   cards' thumbnails share it as :data:`ALTAIR_LOCK` (the default lock of
   ``posviz.export.chart_spec`` from this module's import on).
4. ``streamlit.runtime.scriptrunner.get_script_run_ctx`` and ``Runtime.is_active_session``: which
   browser session runs this script, and whether it is still connected. A queued probe or a lab
   run polls :func:`session_active` to stop once its tab is closed (no public API says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from altair.utils import schemapi
from streamlit.elements.vega_charts import _altair_globals_lock
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

from posviz import export

#: Streamlit's lock around Altair's global registries (see 3. above); every spec posviz builds
#: takes it too (one registry, one lock).
ALTAIR_LOCK = _altair_globals_lock
export.share_altair_lock(ALTAIR_LOCK)

#: Altair's own ``_PropertySetter.__get__``, kept so the test can show the race it causes.
ALTAIR_ORIGINAL_GET: Callable[..., Any] = schemapi._PropertySetter.__get__


class _BoundSetter:
    """``encoding.prop`` bound to one encoding: calling it returns a copy with ``prop`` set."""

    __slots__ = ("obj", "prop")

    def __init__(self, prop: str, obj: object) -> None:
        self.prop, self.obj = prop, obj

    def __call__(self, *args: object, **kwargs: object) -> object:
        copy = self.obj.copy()
        copy[self.prop] = args[0] if args else kwargs
        return copy


def _bound_get(self: Any, obj: object, cls: type) -> object:
    return self if obj is None else _BoundSetter(self.prop, obj)


def make_altair_setters_thread_safe() -> None:
    """Make Altair's method syntax safe when sessions draw in several threads. Idempotent.

    Binding per access also skips the docstring rebuilding Altair's ``__get__`` does on every call.
    """
    setter = schemapi._PropertySetter
    if getattr(setter, "_posviz_thread_safe", False):
        return
    setter.__get__ = _bound_get
    setter._posviz_thread_safe = True


def leave_pages_directory_mode() -> None:
    """Old ``pages/`` mode off before any session (:mod:`posviz.ui.launch`)."""
    PagesManager.uses_pages_directory = False


def route_through_app() -> None:
    """Rerun under ``app.py``'s router if Streamlit is still in ``pages/`` directory mode, on the
    page the link asked for."""
    if PagesManager.uses_pages_directory and st.runtime.exists():
        PagesManager.uses_pages_directory = False
        ctx = get_script_run_ctx()
        if ctx is None:
            st.rerun()
        asked = ctx.pages_manager
        raise RerunException(
            RerunData(
                query_string=ctx.query_string,
                page_script_hash=asked.intended_page_script_hash or "",
                page_name=asked.intended_page_name or "",
                context_info=ctx.context_info,
            )
        )


def current_session_id() -> str:
    """The id of the Streamlit session running this script ("" outside a script run)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def session_active(session_id: str) -> bool:
    """False only when a real server says the session is gone (closed tab, lost connection).

    Safe from any thread (``Runtime.is_active_session`` is). AppTest and bare scripts have no
    runtime, and an unknown id ("") is no evidence: both count as active.
    """
    if not session_id or not st.runtime.exists():
        return True
    return st.runtime.get_instance().is_active_session(session_id)


def this_session_gone() -> bool:
    """Whether the browser session of this script has closed (queued work then gives up)."""
    return not session_active(current_session_id())
