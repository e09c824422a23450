"""The guided tour's steps (posviz.page_models.tour): each is checked against the page registry,
is done only when the link holds what it asks, and the cards lead from one step to the next."""

from __future__ import annotations

import dataclasses

import pytest

from posviz.navigation import TOUR, page_spec
from posviz.page_models import tour
from posviz.page_models.tour import STEPS, Step

SIN, LRN, INSIDE = "pages/sinusoidal.py", "pages/learned.py", "pages/inside_models.py"


def _target(step: Step) -> dict[str, str]:
    """A link that does ``step``: its parameter at its target (nothing for a page visit)."""
    if not step.param:
        return {}
    value = step.equals if step.equals is not None else str(int(step.at_least or 0))
    return {step.param: value}


def test_every_step_names_a_known_page_and_a_parameter_it_declares() -> None:
    assert tour.problems() == []
    assert len(STEPS) >= 3 and {step.page for step in STEPS} >= {SIN, LRN, INSIDE}


@pytest.mark.parametrize(
    ("change", "found"),
    [
        ({"param": "sin_position"}, "declares no 'sin_position'"),  # a renamed parameter
        ({"page": "pages/sinusoid.py"}, "No page"),  # a renamed page
        ({"at_least": 10_000_000.0, "param": "rope_pos", "page": "pages/rope.py"}, "clamped"),
        ({"equals": "minilm-l9", "at_least": None, "param": "lrn_a_src", "page": LRN}, "never"),
        ({"equals": "x"}, "one target"),  # both targets
        ({"instruction": "word " * 16}, "16 words"),
    ],
)
def test_a_step_the_registry_does_not_back_is_a_problem(monkeypatch, change, found) -> None:
    monkeypatch.setattr(tour, "STEPS", (dataclasses.replace(STEPS[0], **change), *STEPS[1:]))
    problems = tour.problems()
    assert len(problems) == 1 and problems[0].startswith("step 1:") and found in problems[0]


def test_a_step_is_done_only_when_the_link_holds_what_it_asks() -> None:
    drag, switch, visit = STEPS[:3]
    assert drag.param == "sin_pos" and drag.at_least == 100
    assert not drag.done(SIN, {})
    assert not drag.done(SIN, {"sin_pos": "99"})
    assert not drag.done(SIN, {"sin_pos": "nan"}) and not drag.done(SIN, {"sin_pos": "ten"})
    assert drag.done(SIN, {"sin_pos": "100"}) and drag.done(SIN, {"sin_pos": "127"})
    assert not drag.done(LRN, {"sin_pos": "120"})  # the right value on another page
    assert drag.done("sinusoidal", {"sin_pos": "100"})  # a page named by its URL segment
    assert switch.done(LRN, {"lrn_a_src": "minilm-l3"})
    assert not switch.done(LRN, {"lrn_a_src": "bundled"}) and not switch.done(LRN, {})
    assert visit.done(INSIDE, {}) and not visit.done(LRN, {})


def test_a_card_offers_skip_while_to_do_and_the_next_step_once_done() -> None:
    todo = tour.card(1, SIN, {"tour": "1", "sin_pos": "10"})
    assert not todo.done and todo.heading == f"Tour · step 1 of {len(STEPS)}"
    assert todo.instruction == STEPS[0].instruction and "Done" not in todo.markdown
    (skip,) = todo.links  # and the page's own "End tour" button
    assert (skip.page, dict(skip.query)) == (STEPS[1].page, {"tour": "2"})
    assert skip.label == "Skip this step"

    done = tour.card(1, SIN, {"tour": "1", "sin_pos": "110"})
    assert done.done and "**✓ Done.**" in done.markdown and STEPS[0].look in done.markdown
    (nxt,) = done.links
    assert (nxt.page, dict(nxt.query)) == (STEPS[1].page, {"tour": "2"})
    assert STEPS[1].instruction in nxt.label


def test_a_card_on_another_page_leads_to_the_step() -> None:
    away = tour.card(2, SIN, {"tour": "2"})
    assert not away.done and page_spec(LRN).title in away.status
    (go,) = away.links
    assert (go.page, dict(go.query)) == (LRN, {"tour": "2"})


def test_the_tour_runs_from_home_to_its_last_step_by_doing_each_step() -> None:
    link, seen = tour.start(), []
    while True:
        number = tour.step_number(link.query[TOUR.name])
        step = STEPS[number - 1]
        assert link.page == step.page  # every link leads to the page where its step is done
        query = {TOUR.name: str(number), **_target(step)}
        card = tour.card(number, link.page, query)
        assert card.done, (number, query)
        assert not tour.card(number, link.page, {TOUR.name: str(number)}).done or not step.param
        seen.append(number)
        onward = [x for x in card.links if TOUR.name in x.query]
        if not onward:
            assert "last step" in card.status
            break
        (link,) = onward
    assert seen == list(range(1, len(STEPS) + 1))


def test_the_link_names_the_page_and_step_and_a_bad_step_is_said() -> None:
    base = "http://127.0.0.1:8501"
    assert tour.open_page(f"{base}/sinusoidal") == SIN
    assert tour.open_page(f"{base}/posviz/learned/") == LRN  # behind a proxy's path prefix
    assert tour.open_page(f"{base}/") is None and tour.open_page(f"{base}/nowhere") is None
    assert tour.read({}, url=f"{base}/sinusoidal") == tour.Reading(None)  # no tour, no look-up
    assert tour.read({}, page=SIN) == tour.Reading(SIN)
    reading = tour.read({"tour": "1", "sin_pos": "100"}, url=f"{base}/sinusoidal")
    assert reading.card is not None and reading.card.done and not reading.warning
    assert tour.read({"tour": "1"}, url=f"{base}/").card is None  # no page known: no card
    bad = tour.read({"tour": "nan"}, page=SIN)
    assert bad.card is None and "tour ignored" in bad.warning and "finite" in bad.warning
    assert tour.step_number("0") == 1 and tour.step_number("99") == len(STEPS)
    with pytest.raises(ValueError, match="not a number"):
        tour.step_number("<b>")
