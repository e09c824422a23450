"""URL-synced widgets: every shareable setting lives in ``st.query_params`` under its widget key.

A page calls e.g. ``url_slider("Positions", key="sin_n", ...)``. On the first run of a session the
widget is seeded from the URL (``?sin_n=128``, parsed by :mod:`posviz.urlparams`); a value that is
not a number, out of range or not an allowed choice is replaced by the default or clamped, and the
user is told what was wrong and what the limits are. After every run the current value is written
back so a copied link reproduces the page.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from posviz import urlparams
from posviz.ui.text import safe_md

T = TypeVar("T")


def _warn(message: str) -> None:
    st.warning(message, icon=":material/link:")


def _shown(max_len: int) -> urlparams.Show:
    """How a link's value is quoted in a message: escaped, so it cannot open markup."""
    return functools.partial(safe_md, max_len=max_len)


def _seed(key: str, parse: Callable[[str], Any], default: Any) -> None:
    """Put the URL's value (or the default) into session state before the widget is created."""
    if key in st.session_state:
        return
    raw = st.query_params.get(key)
    value = default
    if raw is not None:
        try:
            value = parse(raw)
        except ValueError as exc:
            _warn(
                f"Link parameter {key} = “{safe_md(raw, max_len=60)}” ignored: {exc} "
                f"Using {safe_md(repr(default))}."
            )
    st.session_state[key] = value


def _cut(key: str, max_chars: int) -> Callable[[str], str]:
    """A parser keeping the first ``max_chars`` characters, saying so when it cuts."""

    def parse(raw: str) -> str:
        if note := urlparams.cut_note(raw, max_chars=max_chars):
            _warn(f"Link parameter {key} {note}")
        return raw[:max_chars]

    return parse


def _publish(key: str, value: Any) -> None:
    text = urlparams.link_text(value)
    if st.query_params.get(key) != text:
        st.query_params[key] = text


def _url_numeric(widget: Callable[..., T], label: str, **options: Any) -> T:
    """A numeric ``widget`` (slider or number box) seeded from and published to the URL."""
    key, default = options["key"], options.pop("default")
    lo, hi = options["min_value"], options["max_value"]
    integer = not isinstance(default, float)

    def parse(raw: str) -> int | float:
        value, clamped = urlparams.parse_number(raw, lo=lo, hi=hi, integer=integer)
        if clamped:
            _warn(
                f"Link parameter {key} = “{safe_md(raw, max_len=60)}” is outside {lo}…{hi}; "
                f"using {value}."
            )
        return value

    _seed(key, parse, int(default) if integer else float(default))
    kept = st.session_state[key]  # new bounds (a longer table) clamp it; Streamlit would reset it
    st.session_state[key] = type(kept)(min(max(kept, lo), hi))
    value = widget(label, **options)
    _publish(key, value)
    return value


def url_slider(label: str, *, key: str, min_value: T, max_value: T, default: T, **kwargs: Any) -> T:
    """A slider whose value is read from and written to the URL under ``key``.

    ``default`` sets the type (an ``int`` slider unless it is a ``float``); ``step``, ``help`` and
    Streamlit's other slider options pass through.
    """
    bounds = {"min_value": min_value, "max_value": max_value, "default": default}
    return _url_numeric(st.slider, label, key=key, **bounds, **kwargs)


def url_number(label: str, *, key: str, min_value: T, max_value: T, default: T, **kwargs: Any) -> T:
    """A number box whose value is read from and written to the URL under ``key`` (options as
    for :func:`url_slider`)."""
    bounds = {"min_value": min_value, "max_value": max_value, "default": default}
    return _url_numeric(st.number_input, label, key=key, **bounds, **kwargs)


def url_field(
    field: urlparams.NumberField, *, key_prefix: str = "", slider: bool = False, **kwargs: Any
) -> Any:
    """The URL-synced number box (or slider) a field describes, keyed ``<key_prefix><field.key>``;
    ``help``, ``format`` and the widget's other options pass through."""
    bounds = {"min_value": field.lo, "max_value": field.hi, "default": field.default}
    widget = url_slider if slider else url_number
    return widget(field.label, key=f"{key_prefix}{field.key}", step=field.step, **bounds, **kwargs)


def url_numbers(
    fields: Sequence[urlparams.NumberField],
    *,
    key_prefix: str,
    slider: bool = False,
    columns: Sequence[Any] | None = None,
    helps: dict[str, str] | None = None,
) -> list[Any]:
    """One :func:`url_field` per field, side by side: in ``columns`` (in turn) or one new column
    each; ``helps`` holds help texts by field key."""
    places = columns or st.columns(len(fields))
    values = []
    for index, field in enumerate(fields):
        with places[index % len(places)]:
            help = (helps or {}).get(field.key)
            values.append(url_field(field, key_prefix=key_prefix, slider=slider, help=help))
    return values


def url_select(
    label: str,
    options: Sequence[str],
    *,
    key: str,
    default: str,
    help: str | None = None,
    radio: bool = False,
    **kwargs: Any,
) -> str:
    """A selectbox (or radio) over strings, synced with the URL under ``key``."""
    _seed(key, functools.partial(urlparams.parse_choice, options=options, show=_shown(40)), default)
    value = (st.radio if radio else st.selectbox)(label, options, key=key, help=help, **kwargs)
    _publish(key, value)
    return value


def url_radio(label: str, options: Sequence[str], *, key: str, default: str, **kwargs: Any) -> str:
    """:func:`url_select` as a row of radio buttons (``help``, ``format_func`` … pass through)."""
    return url_select(
        label, options, key=key, default=default, radio=True, horizontal=True, **kwargs
    )


def url_select_slider(
    label: str,
    options: Sequence[T],
    *,
    key: str,
    default: T | None = None,
    help: str | None = None,
) -> T:
    """A select-slider over ``options`` (e.g. training steps), synced with the URL under ``key``.

    The URL holds ``str(option)``; a linked value that is not an option falls back to
    ``default`` (the last option when none is given) with a message naming the allowed range.

    Raises:
        ValueError: ``options`` is empty.
    """
    if not options:
        raise ValueError(f"The slider {label!r} has no options to choose from.")
    fallback = options[-1] if default is None else default
    _seed(key, functools.partial(urlparams.parse_step, options=options, show=_shown(80)), fallback)
    value = st.select_slider(label, options=list(options), key=key, help=help)
    _publish(key, value)
    return value


def url_multiselect(
    label: str,
    options: Sequence[str],
    *,
    key: str,
    default: Sequence[str],
    help: str | None = None,
    **kwargs: Any,
) -> list[str]:
    """A multiselect over strings, synced with the URL as a comma-separated list."""
    parse = functools.partial(urlparams.parse_choices, options=options, show=_shown(40))
    _seed(key, parse, list(default))
    value = st.multiselect(label, options, key=key, help=help, **kwargs)
    _publish(key, value)
    return value


def url_int_list(
    label: str,
    *,
    key: str,
    default: Sequence[int],
    min_value: int,
    max_value: int,
    max_items: int = 12,
    help: str | None = None,
) -> list[int]:
    """A text box holding comma-separated integers (e.g. dimensions to plot), synced with the URL.

    Invalid entries are reported and dropped; the rest is kept.
    """
    max_chars = 1000  # a dozen numbers fit many times over; a pasted essay does not
    _seed(key, _cut(key, max_chars), ",".join(map(str, default)))
    raw = st.text_input(label, key=key, help=help, max_chars=max_chars)
    values, rejected = urlparams.parse_int_list(raw, lo=min_value, hi=max_value)
    if rejected:
        st.warning(urlparams.rejected_note(rejected, lo=min_value, hi=max_value, show=_shown(20)))
    if len(values) > max_items:
        st.info(f"Showing the first {max_items} of {len(values)} entries.")
        values = values[:max_items]
    _publish(key, raw)
    return values


def url_checkbox(
    label: str, *, key: str, default: bool, help: str | None = None, toggle: bool = False
) -> bool:
    """A checkbox (or toggle) synced with the URL as ``true``/``false``."""
    _seed(key, urlparams.parse_bool, default)
    value = (st.toggle if toggle else st.checkbox)(label, key=key, help=help)
    _publish(key, "true" if value else "false")
    return value


def url_text(
    label: str,
    *,
    key: str,
    default: str,
    max_chars: int = 200,
    help: str | None = None,
    **kwargs: Any,
) -> str:
    """A text box synced with the URL (trimmed, at most ``max_chars`` characters)."""
    _seed(key, _cut(key, max_chars), default)
    value = st.text_input(label, key=key, max_chars=max_chars, help=help, **kwargs)
    _publish(key, value)
    return value
