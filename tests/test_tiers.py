"""The test tiers (tests/conftest.py): a test that reaches ``app_test`` is a page test, through a
helper of its module too; any other unmarked test is in the fast tier."""

from __future__ import annotations

import pytest
from conftest import _reaches_a_page, app_test


def _open_rope():
    return app_test("pages/rope.py")


def _through_a_helper():
    return _open_rope()


def _arithmetic():
    return sum(range(3))


def test_reaching_app_test_directly_or_through_a_helper_makes_a_page_test():
    helpers = globals()  # by name: naming the helpers here would make this a page test itself
    assert _reaches_a_page(helpers["_open_rope"], set())
    assert _reaches_a_page(helpers["_through_a_helper"], set())
    assert not _reaches_a_page(helpers["_arithmetic"], set())


def test_an_unmarked_unit_test_is_in_the_fast_tier(request):
    assert request.node.get_closest_marker("fast") is not None
    assert request.node.get_closest_marker("page") is None


@pytest.mark.slow
def test_a_test_marked_slow_is_in_no_other_tier(request):
    assert request.node.get_closest_marker("fast") is None
    assert request.node.get_closest_marker("page") is None
