"""The guided tour: a few steps, each finished by the reader's own action, read from the link.

A step names a page, what to do there (≤ 15 words) and what to look at once it is done. It is done
when the page's link holds what the step asks: a query parameter the page declares
(:attr:`posviz.navigation.PageSpec.params`) at a value (``sin_pos`` ≥ 100, ``lrn_a_src`` =
``minilm-l3``), or, for a step without a parameter, the page being open. Nothing is timed and
nothing is sent anywhere: the check reads the query parameters the page itself writes.

The tour's own state is the link too: ``tour=<step>`` (:data:`posviz.navigation.TOUR`, 1-based),
so a shared link reopens the same step. :func:`card` says what the page shows for it: the step,
whether it is done, and the links on (the next step's page with the next ``tour``, or a skip);
the page adds "End tour" (``posviz.ui.answer``). :func:`problems` checks every step against the
page registry (a renamed parameter fails ``tests/test_tour.py``, not the tour).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from posviz.navigation import TOUR, page_params, page_spec
from posviz.urlparams import parse_number

#: The instruction's limit, in words (a phone's card is two lines).
MAX_WORDS = 15


@dataclass(frozen=True)
class Step:
    """One step: on ``page`` (a page key), set ``param`` to ``equals`` or to ``at_least`` or more
    (no ``param``: opening the page is the action); ``look`` says what to look at once done."""

    page: str
    instruction: str
    look: str
    param: str = ""
    equals: str | None = None
    at_least: float | None = None

    def done(self, page: str, query: Mapping[str, str]) -> bool:
        """Whether the reader on ``page`` (its key) with this link (``query``) did the step."""
        if page_spec(page).key != page_spec(self.page).key:
            return False
        if not self.param:
            return True
        raw = query.get(self.param)
        if raw is None or self.equals is not None:
            return raw is not None and raw == self.equals
        try:
            value = parse_number(raw, lo=-math.inf, hi=math.inf, integer=False)[0]
        except ValueError:
            return False
        return self.at_least is not None and value >= self.at_least


#: The tour, in order: a sinusoid's clock, a second real table, and real heads' first-token sink.
STEPS: tuple[Step, ...] = (
    Step(
        "pages/sinusoidal.py",
        "Drag the Position slider past 100 and watch the clock hands.",
        "Each hand turns at its own speed: pair 0 fastest, each later pair slower.",
        param="sin_pos",
        at_least=100,
    ),
    Step(
        "pages/learned.py",
        "In the Table box below the charts, pick MiniLM-L3.",
        "The answer and the hero now read MiniLM-L3's table: its similarities and its path.",
        param="lrn_a_src",
        equals="minilm-l3",
    ),
    Step(
        "pages/inside_models.py",
        "Open the sink question: which heads attend to the first token?",
        "The answer's first-token heads, then the Head classes chart at every window length.",
    ),
)


@dataclass(frozen=True)
class Link:
    """A link the card offers: to ``page`` (a key) with ``query`` as its whole query string."""

    page: str
    label: str
    query: Mapping[str, str]
    icon: str = ":material/arrow_forward:"


@dataclass(frozen=True)
class Card:
    """What a page shows for the tour's step: ``heading`` ("Tour · step 2 of 3"), the step's
    ``instruction``, whether it is ``done``, a ``status`` line and the ``links`` on (the page
    adds "End tour": the same view without ``tour``)."""

    heading: str
    instruction: str
    done: bool
    status: str
    links: tuple[Link, ...]

    @property
    def markdown(self) -> str:
        """The card's text as Markdown (all of it posviz's own words: nothing to escape)."""
        status = self.status.replace("✓ Done.", "**✓ Done.**", 1)
        return f"**{self.heading}** · {self.instruction}" + (f"\n\n{status}" if status else "")


@dataclass(frozen=True)
class Reading:
    """What a link says of the tour on a page: the open ``page`` (its key; ``None``: unknown),
    its step's ``card`` (``None``: no tour in the link), and a ``warning`` for a bad ``tour``."""

    page: str | None
    card: Card | None = None
    warning: str = ""


def open_page(url: str) -> str | None:
    """The key of the page at ``url`` (the browser's address, no query), by its last segment;
    ``None``: the address names no page (the bare root, or a path the app does not know)."""
    segment = urlsplit(url).path.rstrip("/").rpartition("/")[2]
    try:
        return page_spec(segment).key if segment else None
    except ValueError:
        return None


def read(query: Mapping[str, str], *, page: str | None = None, url: str = "") -> Reading:
    """The tour on ``page`` (a key; else the page at ``url``) with the link ``query``."""
    raw = query.get(TOUR.name)
    if raw is None:  # no tour: the page is not even looked up (every page's run reads this)
        return Reading(page)
    page = page or open_page(url)
    if page is None:
        return Reading(page)
    try:
        number = step_number(raw)
    except ValueError as exc:
        return Reading(page, warning=f"Link parameter tour ignored: {exc} Start it from home.")
    return Reading(page, card(number, page, query))


def step_number(raw: str) -> int:
    """The step a link's ``tour`` value opens (1-based, clamped to the tour).

    Raises:
        ValueError: ``raw`` is not a number (the message says what is allowed).
    """
    value, _clamped = parse_number(raw, lo=TOUR.lo or 1, hi=len(STEPS), integer=True)
    return int(value)


def _go(number: int, label: str) -> Link:
    return Link(STEPS[number - 1].page, label, {TOUR.name: str(number)})


def card(number: int, page: str, query: Mapping[str, str]) -> Card:
    """The card for step ``number`` (1-based) on ``page`` (its key) with the page's link
    ``query``: done (look here, then the next step), to do here (skip), or on another page."""
    step, total = STEPS[number - 1], len(STEPS)
    heading = f"Tour · step {number} of {total}"
    if page_spec(page).key != page_spec(step.page).key:
        where = page_spec(step.page).title
        return Card(heading, step.instruction, False, f"This step is on {where}.",
                    (_go(number, f"Go to {where}"),))  # fmt: skip
    last = number == total
    if step.done(page, query):
        on = () if last else (_go(number + 1, f"Next: {STEPS[number].instruction}"),)
        status = f"✓ Done. {step.look}" + (" That was the last step." if last else "")
        return Card(heading, step.instruction, True, status, on)
    skip = () if last else (_go(number + 1, "Skip this step"),)
    return Card(heading, step.instruction, False, "", skip)


def start() -> Link:
    """The home page's way in: the first step's page with ``tour=1``."""
    return dataclasses.replace(
        _go(1, "Take the tour: three steps, each done by your own action"), icon=":material/tour:"
    )


def problems() -> list[str]:
    """Every step checked against the page registry: its page exists, its parameter is declared
    on it, its target passes the parameter's own check, its instruction is short enough."""
    found = []
    for number, step in enumerate(STEPS, start=1):
        try:
            spec = page_spec(step.page)
        except ValueError as exc:
            found.append(f"step {number}: {exc}")
            continue
        words = len(step.instruction.split())
        if words > MAX_WORDS:
            found.append(f"step {number}: {words} words; keep it to {MAX_WORDS}")
        if not step.param:
            continue
        declared = {p.name: p for p in page_params(spec)}
        if step.param not in declared:
            found.append(f"step {number}: {spec.url_path} declares no {step.param!r}")
            continue
        if (step.equals is None) == (step.at_least is None):
            found.append(f"step {number}: give {step.param} one target, equals or at_least")
            continue
        target = step.equals if step.equals is not None else str(step.at_least)
        try:
            kept = declared[step.param].parse(target)
        except ValueError as exc:
            found.append(f"step {number}: {step.param}={target!r} is never allowed: {exc}")
            continue
        if step.at_least is not None and kept != step.at_least:
            found.append(f"step {number}: {step.param} is clamped to {kept}, below {target}")
    return found
