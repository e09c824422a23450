"""URL-synced widgets: every shareable setting lives in ``st.query_params`` under its widget key.

A page calls e.g. ``url_slider("Positions", key="sin_n", ...)``. On the first run of a session the
widget is seeded from the URL (``?sin_n=128``); a value that is not a number, out of range or not an
allowed choice is replaced by the default or clamped, and the user is told what was wrong and what
the limits are. After every run the current value is written back so a copied link reproduces the
view.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from posviz.ui.text import safe_md

T = TypeVar("T")


def _warn(message: str) -> None:
    st.warning(message, icon=":material/link:")


def _seed(key: str, parse: Callable[[str], Any], default: Any) -> None:
    """Put the URL's value (or the default) into session state before the widget is created."""
    if key in st.session_state:
        return
    raw = st.query_params.get(key)
    if raw is None:
        st.session_state[key] = default
        return
    try:
        st.session_state[key] = parse(raw)
    except ValueError as exc:
        # The value came from a link: escaped so it cannot open a code span or draw a link.
        shown = safe_md(raw, max_len=60)
        _warn(f"Link parameter {key} = “{shown}” ignored: {exc} Using {safe_md(repr(default))}.")
        st.session_state[key] = default


def _number_parser(kind: type, lo: float, hi: float, key: str) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"not a number; allowed {lo}…{hi}.") from None
        if not math.isfinite(value):
            raise ValueError(f"not a finite number; allowed {lo}…{hi}.")
        clamped = min(max(value, lo), hi)
        if clamped != value:
            _warn(
                f"Link parameter {key} = “{safe_md(raw, max_len=60)}” is outside {lo}…{hi}; "
                f"using {kind(clamped)}."
            )
        return kind(round(clamped)) if kind is int else kind(clamped)

    return parse


def _cut(raw: str, *, key: str, max_chars: int) -> str:
    """``raw`` cut to ``max_chars`` characters, saying so when it was longer."""
    if len(raw) > max_chars:
        _warn(
            f"Link parameter {key} is {len(raw):,} characters long; the box takes {max_chars}, "
            f"so only the first {max_chars} are used."
        )
    return raw[:max_chars]


def _publish(key: str, value: Any) -> None:
    text = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    if st.query_params.get(key) != text:
        st.query_params[key] = text


def _url_numeric(
    widget: Callable[..., T],
    label: str,
    key: str,
    min_value: T,
    max_value: T,
    default: T,
    step: T | None,
    help: str | None,
    kwargs: dict[str, Any],
) -> T:
    """A numeric ``widget`` (slider or number box) seeded from and published to the URL."""
    kind = float if isinstance(default, float) else int
    _seed(key, _number_parser(kind, min_value, max_value, key), kind(default))
    value = widget(
        label, min_value=min_value, max_value=max_value, step=step, key=key, help=help, **kwargs
    )
    _publish(key, value)
    return value


def url_slider(
    label: str,
    *,
    key: str,
    min_value: T,
    max_value: T,
    default: T,
    step: T | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """A slider whose value is read from and written to the URL under ``key``."""
    return _url_numeric(st.slider, label, key, min_value, max_value, default, step, help, kwargs)


def url_number(
    label: str,
    *,
    key: str,
    min_value: T,
    max_value: T,
    default: T,
    step: T | None = None,
    help: str | None = None,
    **kwargs: Any,
) -> T:
    """A number box whose value is read from and written to the URL under ``key``."""
    return _url_numeric(
        st.number_input, label, key, min_value, max_value, default, step, help, kwargs
    )


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

    def parse(raw: str) -> str:
        if raw not in options:
            allowed = ", ".join(safe_md(repr(option), max_len=40) for option in options[:20])
            more = f" and {len(options) - 20} more" if len(options) > 20 else ""
            raise ValueError(f"not one of {allowed}{more}.")
        return raw

    _seed(key, parse, default)
    widget = st.radio if radio else st.selectbox
    value = widget(label, options, key=key, help=help, **kwargs)
    _publish(key, value)
    return value


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
    by_text = {str(option): option for option in options}

    def parse(raw: str) -> T:
        if raw not in by_text:
            first, last = safe_md(str(options[0])), safe_md(str(options[-1]))
            raise ValueError(f"not one of the {len(options)} values {first} … {last}.")
        return by_text[raw]

    _seed(key, parse, fallback)
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

    def parse(raw: str) -> list[str]:
        chosen = [item for item in raw.split(",") if item]
        unknown = [item for item in chosen if item not in options]
        if unknown:
            shown = ", ".join(safe_md(item, max_len=40) for item in unknown[:5])
            raise ValueError(f"unknown choice(s) {shown}.")
        return chosen

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
    _seed(key, lambda raw: _cut(raw, key=key, max_chars=max_chars), ",".join(map(str, default)))
    raw = st.text_input(label, key=key, help=help, max_chars=max_chars)
    values: list[int] = []
    bad: list[str] = []
    for item in raw.replace(" ", "").split(","):
        if not item:
            continue
        try:
            number = int(item)
        except ValueError:
            bad.append(item)
            continue
        if min_value <= number <= max_value and number not in values:
            values.append(number)
        else:
            bad.append(item)
    if bad:
        st.warning(
            f"Ignored {', '.join(safe_md(item, max_len=20) for item in bad[:5])}"
            f"{f' and {len(bad) - 5} more' if len(bad) > 5 else ''}: enter whole numbers from "
            f"{min_value} to {max_value}, separated by commas."
        )
    if len(values) > max_items:
        st.info(f"Showing the first {max_items} of {len(values)} entries.")
        values = values[:max_items]
    _publish(key, raw)
    return values


def url_checkbox(
    label: str, *, key: str, default: bool, help: str | None = None, toggle: bool = False
) -> bool:
    """A checkbox (or toggle) synced with the URL as ``true``/``false``."""

    def parse(raw: str) -> bool:
        if raw.lower() in ("true", "1", "yes", "on"):
            return True
        if raw.lower() in ("false", "0", "no", "off"):
            return False
        raise ValueError("expected true or false.")

    _seed(key, parse, default)
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

    _seed(key, lambda raw: _cut(raw, key=key, max_chars=max_chars), default)
    value = st.text_input(label, key=key, max_chars=max_chars, help=help, **kwargs)
    _publish(key, value)
    return value
