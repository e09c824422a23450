"""Every page of the app, from the registry (``posviz.navigation.all_pages``), opened directly in
AppTest: it runs without an exception or error and shows its title, twice (the second visitor
replays every cached result), and writes exactly the query parameters its ``PageSpec`` declares,
with their declared defaults and limits. This is the one "every page renders" sweep; other page
tests (the hostile-link ones included) read the declared parameters instead of rendering."""

from __future__ import annotations

import pytest
from conftest import ROOT, app_test, assert_no_exception, page_hash
from page_support import rendered_page

from posviz.navigation import HOME, all_pages, page_params, shown_at_defaults


@pytest.mark.parametrize("spec", all_pages(), ids=lambda spec: spec.url_path)
def test_every_page_runs_and_runs_again_from_the_cache(spec):
    if not spec.study:
        assert (ROOT / spec.path).is_file(), f"{spec.path} is in posviz/navigation.py but missing"
    for visit in ("first", "second"):
        # the first visit is the process's shared first render (page_support), the second a new one
        at = rendered_page(spec.key).at if visit == "first" else app_test(spec.key, timeout=180)
        assert_no_exception(at)
        titles = [t.value for t in (*at.title, *at.header)]
        assert titles, f"{spec.key}: no title on the {visit} visit"
        assert not at.error, [e.value for e in at.error]
        if visit == "first":
            _assert_writes_its_declared_parameters(spec, at)
    if spec.key != HOME:  # opened itself, not the home page: its title is the registry's
        assert at._finished_page_script_hash == page_hash(spec.key)


def _assert_writes_its_declared_parameters(spec, at) -> None:
    """The URL after a first visit holds the parameters declared for the page's defaults, each at
    its declared default; a number widget spans its declared limits."""
    declared = {p.name: p for p in shown_at_defaults(page_params(spec))}
    written = {key: at.query_params[key] for key in at.query_params}
    assert set(written) == set(declared), (
        f"{spec.key}: undeclared or missing {set(written) ^ set(declared)}"
    )
    for name, param in declared.items():
        if param.default is not None:
            assert written[name] == param.default, (spec.key, name, written[name], param.default)
    for widget in (*at.slider, *at.number_input):
        param = declared.get(widget.key)
        if param is not None and param.lo is not None:
            assert float(widget.min) == param.lo, (spec.key, widget.key, widget.min, param.lo)
        if param is not None and param.hi is not None:
            assert float(widget.max) == param.hi, (spec.key, widget.key, widget.max, param.hi)


def test_app_default_page_is_home():
    at = app_test()
    assert_no_exception(at)
    assert any("position" in t.value.lower() for t in at.title)


def test_a_page_opens_directly_without_the_home_page():
    """app_test opens the page under test (not home, then a switch): the home page's cards never
    render, and a study page generated without a script opens by its URL segment too."""
    home = {t.value for t in app_test().title}
    for key in ("pages/rope.py", "lab_learned"):
        at = app_test(key)
        assert_no_exception(at)
        assert at._finished_page_script_hash == page_hash(key)
        assert not home & {t.value for t in at.title}
    with pytest.raises(ValueError, match="No page"):
        app_test("pages/no_such_page.py")


def test_every_page_file_is_registered_with_its_docstring_title():
    """Lab pages are titled by their docstring's first line (after "Position lab: ")."""
    import ast

    registered = {spec.path: spec for spec in all_pages() if not spec.study}
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert on_disk == set(registered), on_disk ^ set(registered)
    for path, spec in registered.items():
        if path.startswith("pages/lab"):
            doc = ast.get_docstring(ast.parse((ROOT / path).read_text())) or ""
            head, _, question = doc.splitlines()[0].rstrip(".").partition(": ")
            expected = head if path == "pages/lab.py" else question  # index: "Position lab"
            assert spec.title == expected, (path, spec.title, expected)
    assert len({spec.url_path for spec in all_pages()}) == len(all_pages())
