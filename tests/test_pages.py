"""Every page of the app runs through AppTest without an exception and says something."""

from __future__ import annotations

import pytest
from conftest import ROOT, app_test, assert_no_exception

from posviz.ui import all_pages


@pytest.mark.parametrize("spec", all_pages(), ids=lambda spec: spec.url_path)
def test_every_page_runs(spec):
    assert (ROOT / spec.path).is_file(), f"{spec.path} is in posviz/navigation.py but missing"
    at = app_test(spec.path, timeout=180)
    assert_no_exception(at)
    assert at.title or at.header, f"{spec.path} shows no title"
    assert not at.error, [e.value for e in at.error]


def test_app_default_page_is_home():
    at = app_test()
    assert_no_exception(at)
    assert any("position" in t.value.lower() for t in at.title)


def test_every_page_file_is_registered_with_its_docstring_title():
    """Lab pages are titled by their docstring's first line (after "Position lab: ")."""
    import ast

    registered = {spec.path: spec for spec in all_pages()}
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert on_disk == set(registered), on_disk ^ set(registered)
    for path, spec in registered.items():
        if path.startswith("pages/lab"):
            doc = ast.get_docstring(ast.parse((ROOT / path).read_text())) or ""
            head, _, question = doc.splitlines()[0].rstrip(".").partition(": ")
            expected = head if path == "pages/lab.py" else question  # index: "Position lab"
            assert spec.title == expected, (path, spec.title, expected)
    assert len({spec.url_path for spec in registered.values()}) == len(registered)
