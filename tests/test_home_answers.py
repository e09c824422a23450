"""The home page's cards show what their pages compute with their defaults.

The experiment pages' answers are stored (``posviz.data.answers``, written by
``scripts/make_home_answers.py``) because they take up to a minute on a cold server; here each page
runs again in AppTest with its defaults and its verdict and hero chart must match the stored ones.
"""

from __future__ import annotations

import math

import pytest
from answer_support import page_answer
from conftest import app_test, assert_no_exception

from posviz.data.answers import ANSWERS
from posviz.navigation import START_HERE, guided_path
from posviz.ui.home_cards import STORED_PAGES, card_answer

REGENERATE = "the page's answer changed: run scripts/make_home_answers.py and commit the result"


def _close(a, b, path="") -> None:
    """Equal structures, numbers within a relative 1e-6 or an absolute 1e-5 (BLAS may round the
    last digits: a distance of 2e-6 between near-identical vectors is rounding alone)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {set(a) ^ set(b)}"
        for key in a:
            _close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-5), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.slow
@pytest.mark.parametrize("page", STORED_PAGES)
def test_stored_answers_are_what_the_pages_show_by_default(page):
    at = app_test(page, timeout=900)
    assert_no_exception(at)
    shown = page_answer(at)
    assert shown["verdict"] == ANSWERS[page]["verdict"], REGENERATE
    _close(shown["hero"], ANSWERS[page]["hero"], page)


@pytest.mark.slow
def test_every_start_here_card_has_an_answer():
    for page, _question in guided_path()[:START_HERE]:
        assert page in STORED_PAGES or page in ("pages/sinusoidal.py", "pages/learned.py")
        assert len(card_answer(page)) > 40, page


def test_home_page_without_the_offline_table_says_how_to_get_it(monkeypatch):
    """An install without the bundled MiniLM (the core + app extras of the wheel) still draws the
    home page: the learned-table card says how to install it instead of raising."""
    from posviz.page_models import home
    from posviz.tables import bundled
    from posviz.ui import home_cards

    def missing(source: str, **_kwargs):
        assert source == "bundled"
        bundled.bundled_model_dir()  # the real check, made to fail below
        raise AssertionError("bundled_model_dir should have raised")

    def not_installed():
        raise ValueError("The offline default model is not installed. Run `pip install x`.")

    monkeypatch.setattr(home, "load_table", missing)
    monkeypatch.setattr(bundled, "bundled_model_dir", not_installed)
    home_cards.card_thumbnail.clear()  # a picture cached by an earlier test would hide it
    try:
        assert "not installed" in card_answer("pages/learned.py")
        at = app_test("pages/home.py")
        assert_no_exception(at)
        assert any("not installed" in c.value for c in at.caption)
    finally:
        home_cards.card_thumbnail.clear()  # later tests get the learned card's picture back
