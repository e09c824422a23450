"""How the load harness names a wrong chart: which chart differs from the reference, and where."""

from __future__ import annotations


def test_a_wrong_chart_is_named_by_its_place_and_first_difference() -> None:
    from loadtest import chart_difference

    want = [('{"mark": "line", "x": 1}', "aaa"), ('{"mark": "rect"}', "bbb")]
    assert chart_difference(want[:1], want) == "1 charts, reference 2"
    moved = [('{"mark": "line", "x": 2}', "aaa"), want[1]]
    said = chart_difference(moved, want)
    assert said.startswith("chart 1 of 2: spec differs at 22:") and 'x": 2}' in said
    assert chart_difference([want[0], ('{"mark": "rect"}', "ccc")], want) == (
        "chart 2 of 2: same spec, other data"
    )
