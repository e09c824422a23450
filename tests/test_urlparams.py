"""Link values parsed, checked and clamped (``posviz.urlparams``), and kept by the URL-synced
widgets (``posviz.ui.state``) when another setting changes their range."""

from __future__ import annotations

import pytest
from hostile_support import HOSTILE

from posviz import urlparams


def test_numbers_are_clamped_rounded_and_say_when() -> None:
    assert urlparams.parse_number("128", lo=1, hi=512, integer=True) == (128, False)
    assert urlparams.parse_number("127.6", lo=1, hi=512, integer=True) == (128, False)
    assert urlparams.parse_number("9000", lo=1, hi=512, integer=True) == (512, True)
    assert urlparams.parse_number("-3", lo=1, hi=512, integer=True) == (1, True)
    value, clamped = urlparams.parse_number("0.25", lo=0.0, hi=1.0, integer=False)
    assert (value, clamped) == (0.25, False) and isinstance(value, float)
    assert isinstance(urlparams.parse_number("7", lo=1, hi=9, integer=True)[0], int)


@pytest.mark.parametrize(
    ("raw", "message"),
    [("abc", "not a number; allowed 1…512."), ("1e400", "not a finite"), ("nan", "not a finite")],
)
def test_numbers_that_are_not_numbers_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        urlparams.parse_number(raw, lo=1, hi=512, integer=True)


def test_choices_list_what_is_allowed_through_show() -> None:
    assert urlparams.parse_choice("b", ["a", "b"]) == "b"
    with pytest.raises(ValueError, match=r"not one of \['a'\], \['b'\]\.$"):
        urlparams.parse_choice("c", ["a", "b"], show=lambda text: f"[{text}]")
    many = [str(i) for i in range(25)]
    with pytest.raises(ValueError, match="'19' and 5 more"):
        urlparams.parse_choice("x", many)


def test_select_slider_steps_match_by_text_and_name_their_range() -> None:
    steps = (100, 200, 300)
    assert urlparams.parse_step("200", steps) == 200
    with pytest.raises(ValueError, match="not one of the 3 values 100 … 300"):
        urlparams.parse_step("250", steps)


def test_multiple_choices_skip_empty_items_and_name_unknown_ones() -> None:
    assert urlparams.parse_choices("a,,b", ["a", "b"]) == ["a", "b"]
    assert urlparams.parse_choices("", ["a"]) == []
    with pytest.raises(ValueError, match=r"unknown choice\(s\) x, y\."):
        urlparams.parse_choices("a,x,y", ["a"])


@pytest.mark.parametrize(("raw", "value"), [("TRUE", True), ("on", True), ("0", False)])
def test_booleans(raw: str, value: bool) -> None:
    assert urlparams.parse_bool(raw) is value


def test_a_boolean_that_is_neither_is_refused() -> None:
    with pytest.raises(ValueError, match="expected true or false"):
        urlparams.parse_bool("maybe")


def test_integer_lists_keep_order_drop_duplicates_and_report_the_rest() -> None:
    numbers, rejected = urlparams.parse_int_list("3, 1,x,,3,99999,-1", lo=0, hi=511)
    assert numbers == [3, 1]
    assert rejected == ["x", "3", "99999", "-1"]
    note = urlparams.rejected_note(rejected, lo=0, hi=511)
    assert (
        note == "Ignored x, 3, 99999, -1: enter whole numbers from 0 to 511, separated by commas."
    )
    assert "and 2 more" in urlparams.rejected_note(list("abcdefg"), lo=0, hi=1)


def test_long_text_is_cut_with_a_note_and_values_are_written_back() -> None:
    assert urlparams.cut_note("abc", max_chars=3) is None
    assert urlparams.cut_note("a" * 1234, max_chars=200) == (
        "is 1,234 characters long; the box takes 200, so only the first 200 are used."
    )
    assert urlparams.link_text([1, 2, 3]) == "1,2,3"
    assert urlparams.link_text(("a", "b")) == "a,b"
    assert urlparams.link_text(0.5) == "0.5"


# --- every hostile link value through every parser (each page's one bad link: test_hostile_links)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_parser_takes_every_hostile_value_or_says_what_is_allowed(name: str) -> None:
    """A hostile value is parsed to an allowed value or refused with a message naming what is
    allowed; never another exception, never a value out of range."""
    raw = HOSTILE[name]
    for integer in (True, False):
        try:
            value, clamped = urlparams.parse_number(raw, lo=1, hi=512, integer=integer)
        except ValueError as exc:
            assert "allowed 1…512." in str(exc)
        else:
            assert 1 <= value <= 512 and isinstance(value, int if integer else float)
            assert clamped == (float(raw) != value)
    options = ["sinusoid", "learned", "rope"]
    for parse in (urlparams.parse_choice, urlparams.parse_step):
        try:
            assert parse(raw, options) in options
        except ValueError as exc:
            assert "not one of" in str(exc) and "sinusoid" in str(exc)
    try:
        chosen = urlparams.parse_choices(raw, options)
    except ValueError as exc:
        assert str(exc).startswith("unknown choice(s) ") and str(exc).count(",") <= 4
    else:
        assert set(chosen) <= set(options) and (chosen or not raw.strip(","))
    try:
        assert urlparams.parse_bool(raw) in (True, False)
    except ValueError as exc:
        assert str(exc) == "expected true or false."
    numbers, rejected = urlparams.parse_int_list(raw, lo=0, hi=63)
    assert all(0 <= n <= 63 for n in numbers) and len(set(numbers)) == len(numbers)
    items = [item for item in raw.replace(" ", "").split(",") if item]
    assert len(numbers) + len(rejected) == len(items)  # each item kept once or named
    if rejected:
        assert "whole numbers from 0 to 63" in urlparams.rejected_note(rejected, lo=0, hi=63)
    note = urlparams.cut_note(raw, max_chars=200)
    assert (note is None) == (len(raw) <= 200)
    if note:
        assert f"{len(raw):,} characters" in note


# --- every page's declared parameters (posviz.navigation: PageSpec.params) ---------------------


def _declared():
    from posviz.navigation import all_pages, page_params

    return [(spec.url_path, p) for spec in all_pages() for p in page_params(spec)]


def test_declared_parameters_are_unique_and_their_defaults_are_allowed() -> None:
    """No two pages share a link key (a link opens one page's settings), each default passes
    its own parameter's check, and a ``when`` names a parameter of the same page."""
    from posviz.navigation import all_pages, page_params

    names = [p.name for _, p in _declared()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    for spec in all_pages():
        own = {p.name: p for p in page_params(spec)}
        for param in own.values():
            if param.default is not None and param.kind != "id":
                assert param.parse(param.default) is not None, (spec.url_path, param)
            for other, value in param.when:
                assert other in own, (spec.url_path, param.name, other)
                if own[other].options:
                    assert value in own[other].options, (spec.url_path, param.name, value)


@pytest.mark.parametrize("name", ["nan", "huge", "list", "unknown", "markup"])
def test_every_declared_parameter_takes_a_hostile_value_or_says_what_is_allowed(name) -> None:
    """The one check the app runs on a link value, per declared parameter: clamped into its
    limits, or a ValueError with a message; never another exception."""
    for page, param in _declared():
        try:
            value = param.parse(HOSTILE[name])
        except ValueError as exc:
            assert str(exc), (page, param.name)
            continue
        if param.kind in ("int", "float"):
            assert (param.lo is None or value >= param.lo) and (
                param.hi is None or value <= param.hi
            ), (page, param.name, value)
        if param.kind == "choice" and param.options:
            assert value in param.options


# --- one setting never resets another (issue 37): a slider whose range another setting sets ----


def _range_follows_length() -> None:
    """A page whose Position and largest-offset sliders end where its length slider says."""
    from posviz.ui.state import url_number, url_slider

    n = url_slider("Positions", key="n", min_value=1, max_value=512, default=128)
    url_slider("Position", key="pos", min_value=0, max_value=n - 1, default=10)
    url_slider("Largest offset", key="kmax", min_value=1, max_value=max(n - 1, 2), default=n - 1)
    url_number("Scale", key="scale", min_value=0.5, max_value=n / 8, default=2.0)


def test_changing_a_range_clamps_the_other_settings_instead_of_resetting_them() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_range_follows_length).run()
    assert (at.slider(key="kmax").value, at.number_input(key="scale").value) == (127, 2.0)
    at.slider(key="pos").set_value(77)
    at.number_input(key="scale").set_value(12.5).run()
    at.slider(key="n").set_value(256).run()  # a longer range: every value is kept
    kept = {"pos": 77, "kmax": 127, "n": 256}
    assert {key: at.slider(key=key).value for key in kept} == kept
    assert at.number_input(key="scale").value == 12.5
    assert {key: at.query_params[key] for key in kept} == {k: str(v) for k, v in kept.items()}
    at.slider(key="n").set_value(64).run()  # a shorter one: each clamped to its new end
    clamped = {"pos": 63, "kmax": 63, "n": 64}
    assert {key: at.slider(key=key).value for key in clamped} == clamped
    assert at.number_input(key="scale").value == 8.0
    assert at.query_params["pos"] == "63" and not at.exception
