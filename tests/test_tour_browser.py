"""The guided tour in Chromium (issue 37 item 6): from home's "Take the tour" link, each step is
done by the reader's own action (the keyboard on the Position slider, the Table box, a page link)
and its card says "Done" only once the page's link holds what the step asks, at 1440 × 900 and at
390 × 844, where the reader also asks for reduced motion: ▶ play is off and "Next position" steps
the position, in the link. On the process's shared default server; needs Chromium (see
tests/browser_support.py)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from browser_support import (
    DESKTOP,
    PHONE,
    new_page,
    wait_for_app,
    wait_for_charts,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posviz.navigation import page_spec
from posviz.page_models.tour import STEPS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETTLED = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: the tour card's text once it holds ``text`` (it is redrawn on every run: read it afresh)
CARD_SAYS = """text => { const c = document.querySelector('.st-key-tour');
    return !!c && c.innerText.includes(text); }"""
#: the position labels the visible hero draws ("position N")
HERO_LABELS = """() => [...document.querySelectorAll('.st-key-hero [data-testid=stVegaLiteChart]')]
    .filter(c => c.offsetParent !== null)
    .flatMap(c => [...c.querySelectorAll('svg.marks text')].map(t => t.textContent))
    .filter(t => /^position \\d+$/.test(t))"""


@pytest.fixture(scope="module")
def server(app_server):
    return app_server  # the process's shared default server (tests/conftest.py)


def _query(page) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.url).query, keep_blank_values=True))


def _drag_the_position(page) -> None:
    """The Position slider to its end (past 100 at the default 128 positions), by keyboard; once
    more if a rerun redrew the slider and dropped its focus (Streamlit's)."""
    control = page.locator('[data-testid="stSlider"] input[type="range"][aria-label="Position"]')
    for attempt in range(2):
        page.wait_for_selector(SETTLED, timeout=60_000)
        control.focus()
        page.keyboard.press("End")
        try:
            page.wait_for_function(CARD_SAYS, arg="Done", timeout=45_000)
            return
        except PlaywrightTimeout:
            if attempt:
                raise


def _pick_minilm_l3(page) -> None:
    box = page.locator('[data-testid="stSelectbox"] input[aria-label="Table"]')
    page.wait_for_selector(SETTLED, timeout=60_000)
    box.click()
    box.press_sequentially("MiniLM-L3")
    page.wait_for_selector('[role="option"]:has-text("MiniLM-L3")', timeout=10_000)
    page.keyboard.press("Enter")


#: what a reader does for a step, by the link parameter the step checks (a new step needs one)
ACTIONS = {"sin_pos": _drag_the_position, "lrn_a_src": _pick_minilm_l3}


def _nothing_moves_until_asked(page) -> None:
    """On /sinusoidal with ``prefers-reduced-motion``: ▶ play is off and the hero rests at the
    link's position; "Next position" moves it one step, in the link, without finishing the step."""
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    wait_for_charts(page)
    start = int(_query(page)["sin_pos"])
    plays = page.locator(".st-key-hero .vega-bindings input[type='checkbox']")
    assert plays.count() >= 1 and not any(box.is_checked() for box in plays.all())
    assert set(page.evaluate(HERO_LABELS)) == {f"position {start}"}
    page.get_by_role("button", name="Next position").click()
    moved = f"() => new URLSearchParams(location.search).get('sin_pos') === '{start + 1}'"
    page.wait_for_function(moved, timeout=30_000)
    page.wait_for_function(f"() => ({HERO_LABELS})().join() === 'position {start + 1}'")
    assert not page.evaluate(CARD_SAYS, "Done")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1440", "390"])
def test_the_tour_runs_end_to_end_on_the_readers_actions(browser, server, size) -> None:
    """At 1440 from home's link; on the phone from a shared link, where the reader also asks for
    reduced motion, steps the position with the button and ends the tour at its last step (the
    view stays, the tour leaves the link)."""
    phone = size == PHONE
    page = new_page(browser, size, reduced_motion="reduce" if phone else "no-preference")
    if phone:  # a shared link opens the tour at its step
        page.goto(f"{server}/sinusoidal?tour=1")
    else:  # home's way in
        page.goto(f"{server}/")
        wait_for_app(page, timeout_ms=120_000)
        page.get_by_role("link", name=re.compile(r"^Take the tour")).click()
    for number, step in enumerate(STEPS, start=1):
        spec = page_spec(step.page)
        page.wait_for_function(CARD_SAYS, arg=f"step {number} of {len(STEPS)}", timeout=120_000)
        assert urlsplit(page.url).path.endswith(f"/{spec.url_path}")
        assert _query(page)["tour"] == str(number)
        if step.param:  # not done before the reader acts (the check can fail)
            page.wait_for_selector(SETTLED, timeout=120_000)
            assert not page.evaluate(CARD_SAYS, "Done"), (number, page.url)
            if phone and step.param == "sin_pos":
                _nothing_moves_until_asked(page)
            ACTIONS[step.param](page)
        page.wait_for_function(CARD_SAYS, arg="Done", timeout=60_000)
        assert step.done(spec.key, _query(page)), (number, page.url)  # the link holds it
        if number < len(STEPS):
            page.locator(".st-key-tour").get_by_role("link", name=re.compile(r"^Next: ")).click()
    assert page.evaluate(CARD_SAYS, "last step")
    if phone:
        page.get_by_role("button", name="End tour").click()
        page.wait_for_function("() => !document.querySelector('.st-key-tour')", timeout=60_000)
        assert "tour" not in _query(page) and urlsplit(page.url).path.endswith("/inside_models")
    page.context.close()
