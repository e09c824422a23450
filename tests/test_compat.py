"""The private-library patches of ``posviz.ui.compat``: each still needed, and still possible.

When an upgrade makes one of these fail, read the module docstring of ``posviz/ui/compat.py``:
either the library fixed the bug (remove the patch) or moved its internals (redo the patch).
"""

from __future__ import annotations

import inspect
import threading

import altair as alt
import pytest
from altair.utils import schemapi
from conftest import ROOT
from streamlit.runtime import pages_manager
from streamlit.runtime.scriptrunner import script_runner

from posviz.ui import compat


def test_streamlit_still_has_the_pages_directory_flag_and_consults_it():
    assert "uses_pages_directory" in vars(pages_manager.PagesManager)
    # the script runner still runs a page on its own (old MPA mode) while the flag is set
    assert "PagesManager.uses_pages_directory" in inspect.getsource(script_runner)


def test_without_the_patch_a_fresh_server_starts_in_pages_directory_mode(monkeypatch):
    """The bug: our app has ``pages/`` next to app.py, so a new process assumes the old mode."""
    monkeypatch.setattr(pages_manager.PagesManager, "uses_pages_directory", None)
    pages_manager.PagesManager(str(ROOT / "app.py"))
    assert pages_manager.PagesManager.uses_pages_directory is True


def test_the_launcher_leaves_the_mode_before_the_first_session(monkeypatch):
    """What ``python -m posviz.ui.launch`` does before Streamlit starts: the first session's
    page manager then keeps the mode off (it only decides when the flag is still unset)."""
    monkeypatch.setattr(pages_manager.PagesManager, "uses_pages_directory", None)
    compat.leave_pages_directory_mode()
    pages_manager.PagesManager(str(ROOT / "app.py"))
    assert pages_manager.PagesManager.uses_pages_directory is False


def test_route_through_app_does_nothing_outside_a_server(monkeypatch):
    monkeypatch.setattr(pages_manager.PagesManager, "uses_pages_directory", True)
    compat.route_through_app()  # no runtime: no rerun, flag left as is
    assert pages_manager.PagesManager.uses_pages_directory is True


def _race(get) -> tuple[dict, dict]:
    """Two encodings' ``.scale`` taken before either is called, as two threads can do."""
    setter = vars(alt.X)["scale"]
    assert isinstance(setter, schemapi._PropertySetter)
    x_a, x_b = alt.X("a:Q"), alt.X("b:Q")
    scale_a = get(setter, x_a, alt.X)
    scale_b = get(setter, x_b, alt.X)
    return scale_a(zero=False).to_dict(), scale_b(zero=True).to_dict()


def test_altair_setter_without_the_patch_shares_state_between_callers():
    first, _ = _race(compat.ALTAIR_ORIGINAL_GET)
    # unpatched, the descriptor remembers the *last* encoding it was read from: "a" got "b"'s field
    assert first["field"] == "b", "Altair fixed _PropertySetter: remove the compat patch"


def test_altair_setter_with_the_patch_binds_each_encoding():
    compat.make_altair_setters_thread_safe()
    assert schemapi._PropertySetter.__get__ is compat._bound_get
    first, second = _race(schemapi._PropertySetter.__get__)
    assert (first["field"], first["scale"]) == ("a", {"zero": False})
    assert (second["field"], second["scale"]) == ("b", {"zero": True})
    # and the usual method syntax still works, in many threads at once
    results: list[dict] = []

    def draw(i: int) -> None:
        results.append(alt.X(f"f{i}:Q").scale(domain=[0, i]).to_dict())

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["scale"]["domain"][1] for r in results) == list(range(16))
    assert all(r["field"] == f"f{r['scale']['domain'][1]}" for r in results)


def test_streamlit_still_has_the_altair_globals_lock():
    assert hasattr(compat.ALTAIR_LOCK, "acquire") and hasattr(compat.ALTAIR_LOCK, "release")


@pytest.mark.parametrize("module", ["posviz/ui/exports.py", "posviz/ui/__init__.py", "app.py"])
def test_no_private_patch_outside_compat(module):
    text = (ROOT / module).read_text()
    assert "_PropertySetter" not in text and "uses_pages_directory =" not in text


def test_streamlit_still_says_which_session_runs_and_whether_it_is_alive():
    from streamlit.runtime import Runtime

    assert callable(compat.get_script_run_ctx)
    assert callable(Runtime.is_active_session)
    assert "session_id" in inspect.signature(Runtime.is_active_session).parameters


def test_session_active_asks_the_runtime_only_about_known_sessions(monkeypatch):
    class Runtime:
        @staticmethod
        def is_active_session(session_id: str) -> bool:
            return session_id == "open"

    assert compat.session_active("closed")  # no runtime (AppTest, bare script): no evidence
    monkeypatch.setattr(compat.st.runtime, "exists", lambda: True)
    monkeypatch.setattr(compat.st.runtime, "get_instance", lambda: Runtime)
    assert compat.session_active("open")
    assert not compat.session_active("closed")
    assert compat.session_active("")  # outside a script run there is no session to ask about
    assert compat.current_session_id() == ""
    assert not compat.this_session_gone()


def _names_used(path) -> set[str]:
    """Every name a module imports, reads or looks up as an attribute (docstrings aside)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name.rsplit(".", 1)[-1])
    return names


def test_session_internals_are_read_only_in_compat():
    internals = {"get_script_run_ctx", "is_active_session"}
    readers = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "posviz").rglob("*.py"))
        if _names_used(path) & internals
    ]
    assert readers == ["posviz/ui/compat.py"]
