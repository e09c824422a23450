"""Settings in a page link: query-parameter text parsed, checked and clamped, and written back.

Every shareable setting of the app lives in the URL as text (``?sin_n=128``). These functions turn
that text into a widget's value, or raise ``ValueError`` saying what is allowed (the app then shows
the message and uses the widget's default). A message may quote a value; ``show`` writes it (the
app passes its Markdown escaper, since link values are anyone's text).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar

T = TypeVar("T")
Show = Callable[[str], str]

#: link values meaning on / off (a checkbox or toggle).
TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off")
#: at most this many allowed choices are listed in a message.
LISTED_CHOICES = 20


class NumberField(NamedTuple):
    """A numeric setting of a page: its widget's label, its link key (after the page's prefix),
    the limits ``lo … hi`` a link value is clamped to, its default and its step (``None``: the
    widget's own)."""

    label: str
    key: str
    lo: float
    hi: float
    default: float
    step: float | None = None


def _as_is(text: str) -> str:
    return text


#: what a link parameter holds: a whole or decimal number, one choice, several (comma-separated),
#: a step of a select-slider, a boolean, a comma-separated list of whole numbers, free text, or an
#: id the page writes itself (no widget: a lab run's id).
ParamKind = Literal["int", "float", "choice", "choices", "step", "bool", "ints", "text", "id"]


@dataclass(frozen=True)
class Param:
    """One query parameter of a page, as data: the URL contract :meth:`parse` checks.

    Attributes:
        name: the link key (``sin_n``).
        kind: what it holds (:data:`ParamKind`).
        default: the link text the page writes when nothing is linked (``None``: computed from
            the page's other settings, e.g. a position slider's end).
        lo, hi: a number's limits (a list's, for ``ints``); ``None``: set by other settings.
        options: the allowed link values of a choice (``()``: set by the page's data, e.g. a
            preset list).
        when: ``(other parameter, value)`` pairs under which the page shows it (a hub source's
            model-id box); empty: shown at the page's defaults.
    """

    name: str
    kind: ParamKind
    default: str | None = None
    lo: float | None = None
    hi: float | None = None
    options: tuple[str, ...] = ()
    when: tuple[tuple[str, str], ...] = ()

    def parse(self, raw: str, *, show: Show = _as_is) -> Any:
        """``raw`` as this parameter's value, clamped to its limits (text as it is).

        Raises:
            ValueError: ``raw`` is not allowed (the message says what is).
        """
        lo = -math.inf if self.lo is None else self.lo
        hi = math.inf if self.hi is None else self.hi
        if self.kind in ("int", "float"):
            return parse_number(raw, lo=lo, hi=hi, integer=self.kind == "int")[0]
        if self.kind == "choice" and self.options:
            return parse_choice(raw, self.options, show=show)
        if self.kind == "choices" and self.options:
            return parse_choices(raw, self.options, show=show)
        if self.kind == "step" and self.options:
            return parse_step(raw, self.options, show=show)
        if self.kind == "bool":
            return parse_bool(raw)
        if self.kind == "ints":
            return parse_int_list(raw, lo=int(max(lo, -(2**63))), hi=int(min(hi, 2**63)))[0]
        return raw


def number(name: str, lo: float | None, hi: float | None, default: float | None) -> Param:
    """A number parameter: whole unless ``default`` (or a limit) is a ``float``."""
    decimal = any(isinstance(v, float) for v in (lo, hi, default))
    text = None if default is None else str(float(default) if decimal else int(default))
    return Param(name, "float" if decimal else "int", text, lo, hi)


def choice(name: str, options: Sequence[str], default: str | None, **kw: Any) -> Param:
    """A one-of parameter (``options`` empty: the page's data sets them)."""
    return Param(name, "choice", default, options=tuple(options), **kw)


def flag(name: str, default: bool | None) -> Param:
    """A checkbox or toggle, linked as ``true``/``false``."""
    return Param(name, "bool", None if default is None else str(default).lower())


def text(name: str, default: str | None = "", **kw: Any) -> Param:
    """A free-text parameter (a model id, a word)."""
    return Param(name, "text", default, **kw)


def int_list(name: str, lo: int | None, hi: int | None, default: Sequence[int] | None) -> Param:
    """A comma-separated list of whole numbers within ``lo … hi``."""
    return Param(name, "ints", None if default is None else link_text(list(default)), lo, hi)


def parse_number(raw: str, *, lo: float, hi: float, integer: bool) -> tuple[int | float, bool]:
    """``(value, clamped)``: ``raw`` as a number within ``lo … hi`` (rounded when ``integer``).

    A number outside the range is clamped to it (``clamped`` is then true: say so).

    Raises:
        ValueError: ``raw`` is not a number, or not a finite one.
    """
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"not a number; allowed {lo}…{hi}.") from None
    if not math.isfinite(value):
        raise ValueError(f"not a finite number; allowed {lo}…{hi}.")
    clamped = min(max(value, lo), hi)
    return (round(clamped) if integer else float(clamped)), clamped != value


def parse_choice(raw: str, options: Sequence[str], *, show: Show = _as_is) -> str:
    """``raw`` when it is one of ``options``.

    Raises:
        ValueError: it is not; the message lists the first :data:`LISTED_CHOICES` options.
    """
    if raw in options:
        return raw
    allowed = ", ".join(show(repr(option)) for option in options[:LISTED_CHOICES])
    more = len(options) - LISTED_CHOICES
    raise ValueError(f"not one of {allowed}{f' and {more} more' if more > 0 else ''}.")


def parse_step(raw: str, options: Sequence[T], *, show: Show = _as_is) -> T:
    """The option of a select-slider whose text (``str(option)``) is ``raw``.

    Raises:
        ValueError: none is; the message names the range of values.
    """
    by_text = {str(option): option for option in options}
    if raw not in by_text:
        first, last = show(str(options[0])), show(str(options[-1]))
        raise ValueError(f"not one of the {len(options)} values {first} … {last}.")
    return by_text[raw]


def parse_choices(raw: str, options: Sequence[str], *, show: Show = _as_is) -> list[str]:
    """A comma-separated list of ``options`` (empty items skipped).

    Raises:
        ValueError: an item is not an option; the message names up to five of them.
    """
    chosen = [item for item in raw.split(",") if item]
    unknown = [item for item in chosen if item not in options]
    if unknown:
        raise ValueError(f"unknown choice(s) {', '.join(show(item) for item in unknown[:5])}.")
    return chosen


def parse_bool(raw: str) -> bool:
    """``True`` for :data:`TRUE` words, ``False`` for :data:`FALSE` ones (any case).

    Raises:
        ValueError: anything else.
    """
    if raw.lower() in TRUE:
        return True
    if raw.lower() in FALSE:
        return False
    raise ValueError("expected true or false.")


def parse_int_list(raw: str, *, lo: int, hi: int) -> tuple[list[int], list[str]]:
    """``(numbers, rejected)``: the distinct whole numbers within ``lo … hi`` of a comma-separated
    list, in the order given, and the items that are not (spaces ignored, empty items skipped)."""
    numbers: list[int] = []
    rejected: list[str] = []
    for item in raw.replace(" ", "").split(","):
        if not item:
            continue
        try:
            number = int(item)
        except ValueError:
            rejected.append(item)
            continue
        if lo <= number <= hi and number not in numbers:
            numbers.append(number)
        else:
            rejected.append(item)
    return numbers, rejected


def rejected_note(rejected: Sequence[str], *, lo: int, hi: int, show: Show = _as_is) -> str:
    """What :func:`parse_int_list` ignored, naming up to five items, and what to type instead."""
    more = f" and {len(rejected) - 5} more" if len(rejected) > 5 else ""
    return (
        f"Ignored {', '.join(show(item) for item in rejected[:5])}{more}: enter whole numbers "
        f"from {lo} to {hi}, separated by commas."
    )


def cut_note(raw: str, *, max_chars: int) -> str | None:
    """Why a text value is cut to ``max_chars`` characters (``None``: it fits)."""
    if len(raw) <= max_chars:
        return None
    return (
        f"is {len(raw):,} characters long; the box takes {max_chars}, so only the first "
        f"{max_chars} are used."
    )


def link_text(value: Any) -> str:
    """A widget's value as it is written into the link (a list comma-separated)."""
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
