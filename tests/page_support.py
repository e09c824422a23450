"""Every page rendered once per test process at its defaults, shared by the modules that read a
page's first render (``tests/test_pages.py``: it runs and writes its declared parameters;
``tests/test_exports.py``: every chart it hands to the Export menu exports; ``tests/
test_chart_hygiene.py``: its charts and tables). Each of them used to render every page itself:
the same first render, three times per worker (the suite's largest repeated cost)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from conftest import app_test


@dataclass
class Rendered:
    """A page's first render: the AppTest (read, never run again) and what the page handed to
    the Export menu (``(key, chart, data, name)`` per chart, in order)."""

    at: Any
    offered: list[tuple[str, Any, Any, str]] = field(default_factory=list)


@functools.cache
def rendered_page(key: str) -> Rendered:
    """The page ``key`` opened as a fresh browser would, once per process; the Export menu is
    drawn as always, and each chart given to it is recorded."""
    from posviz.ui import display

    offered: list[tuple[str, Any, Any, str]] = []
    menu = display.export_menu

    def recording(chart, *, key, data, name):
        offered.append((key, chart, data, name))
        return menu(chart, key=key, data=data, name=name)

    display.export_menu = recording
    try:
        at = app_test(key, timeout=600)
    finally:
        display.export_menu = menu
    return Rendered(at, offered)
