"""A family and a lab study added at run time reach every view that lists them, no list edited.

The fake family is registered the one way a real one is: an entry in the family registry
(``posviz.encodings.families.FAMILIES``) and its page script; the fake study is one entry in the
lab's study list (``posviz.lab.studies.presets.QUESTIONS``). Both are monkeypatched in and gone
after each
test. Then its page, Compare, the lab, the guided path, the home page and both hygiene lists
must show them. docs/ARCHITECTURE.md's recipes name exactly these pieces.

The fake page lives in a copy of the app's root made of links (``app.py`` and every page, plus the
fake page's script), so the repository's ``pages/`` is never written to.
"""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
from conftest import ROOT

# posviz.analysis.comparison reads its family list from the registry when first imported:
# imported here, before a test registers the fake family, so the fake one never stays in it.
import posviz.analysis.comparison  # noqa: F401
from posviz.charts.style import PALETTE, entity_color
from posviz.encodings.families import (
    FAMILIES,
    ComparisonSignal,
    FamilySpec,
    LabMechanism,
    Nav,
    compared_families,
    lab_schemes,
)
from posviz.encodings.sinusoidal import sinusoid_frequencies, sinusoidal
from posviz.lab.engine.config import ModelConfig
from posviz.lab.studies.presets import LEARNED_VS_SINUSOID, QUESTIONS, Variant
from posviz.navigation import (
    HOME,
    START_HERE,
    all_pages,
    explorer_pages,
    guided_path,
    lab_pages,
    page_spec,
)

FAKE_ID = "fakeformer"
FAKE_PAGE = "pages/fakeformer.py"
FAKE_STUDY = "fake_study"
#: the fake family's page: the NoPE page's layout (a family page starts as a copy of another)
FAKE_PAGE_SOURCE = (ROOT / "pages" / "nope.py").read_text(encoding="utf-8")
#: small enough to train the fake study's whole sweep in seconds on 2 cores (as test_lab_pages)
TINY = {"seeds": 2, "steps": 4, "width": 8, "heads": 2, "layers": 1, "batch": 4, "eval_batch": 8}


def _half_sinusoid(rows: int, width: int) -> np.ndarray:
    return 0.5 * sinusoidal(rows, width, dtype=np.float32)


FAKE = FamilySpec(
    FAKE_ID,
    "Fakeformer",
    "posviz.encodings.sinusoidal",
    FAKE_PAGE,
    LabMechanism("table", table=_half_sinusoid),
    ("vaswani_2017",),
    missing={"config": "a test's family reads no model config"},
    nav=Nav("Fakeformer", ":material/bug_report:", "Beyond"),
    how="adds half a sinusoid",
    comparison=ComparisonSignal(
        "angles",
        "Fakeformer",
        "position p",
        "added to the input",
        "as the sinusoid",
        inv_freq=lambda width, base: sinusoid_frequencies(width, base=base),
        absolute=True,
    ),
    question="What if a family were registered at run time?",
    blurb="A family a test registers, to show that it reaches every view.",
    colour=PALETTE[7],  # a palette colour no real family has
)


def _fake_study():
    """The learned-vs-sinusoid study with the fake family in place of the sinusoid, tiny."""
    base = LEARNED_VS_SINUSOID
    fake_model = dataclasses.replace(base.variant("sinusoid").model, scheme=FAKE_ID)
    variants = tuple(
        Variant("fake", "Fakeformer table", fake_model) if v.id == "sinusoid" else v
        for v in base.variants
    )
    return dataclasses.replace(
        base,
        id=FAKE_STUDY,
        title="Does a fake table help?",
        question="Does a table registered at run time train like a real one?",
        variants=variants,
        compare=("learned", "fake"),
        default=dataclasses.replace(base.default, **TINY),
        paper_checks=(),
        panel_settings=(),
    )


@pytest.fixture
def registered(monkeypatch):
    """The fake family and study, in their registries only (the ONE edit each needs)."""
    monkeypatch.setitem(FAMILIES, FAKE_ID, FAKE)
    monkeypatch.setitem(QUESTIONS, FAKE_STUDY, _fake_study())


# --------------------------------------------------------------------------- registries


def test_the_family_reaches_navigation_path_compare_lab_colours_and_both_hygiene_lists(
    registered,
):
    spec = page_spec(FAKE_PAGE)
    assert (spec.title, spec.url_path, spec.question) == ("Fakeformer", FAKE_ID, FAKE.question)
    assert spec in explorer_pages()  # what chart hygiene and browser page hygiene check
    assert (FAKE_PAGE, FAKE.question) in guided_path()
    assert FAKE_ID in compared_families() and FAKE_ID in lab_schemes()
    assert ModelConfig(kind="encoder", scheme=FAKE_ID, injection="concat").scheme == FAKE_ID
    assert entity_color("Fakeformer (p)") == FAKE.colour  # its legends take its colour


def test_the_hygiene_tests_check_exactly_the_registry_s_explorer_pages():
    import test_chart_hygiene

    browser = pytest.importorskip("test_pages_browser")
    assert tuple(spec.key for spec in explorer_pages()) == test_chart_hygiene.PAGES
    assert tuple(spec.url_path for spec in explorer_pages()) == browser.PAGES


def test_the_study_gets_a_generated_page_on_the_path_after_the_other_lab_pages(registered):
    spec = page_spec(f"lab_{FAKE_STUDY}")
    assert spec.study == FAKE_STUDY and spec.title == "Does a fake table help?"
    lab = [s.key for s in lab_pages()]
    assert lab[0] == "pages/lab.py" and lab[-1] == "pages/lab_papers.py"
    assert lab[-2] == spec.key  # the study list's order: the new study is last
    keys = [key for key, _ in guided_path()]
    assert keys.index(spec.key) == keys.index("pages/lab_papers.py") - 1


def test_the_guided_path_reaches_every_page_but_home():
    keys = [key for key, _ in guided_path()]
    assert sorted(keys) == sorted(s.key for s in all_pages() if s.key != HOME)
    assert len(keys) > START_HERE and all(question for _, question in guided_path())


def test_nothing_is_left_behind_once_unregistered():
    assert FAKE_ID not in FAMILIES and FAKE_STUDY not in QUESTIONS
    assert all(s.key not in (FAKE_PAGE, f"lab_{FAKE_STUDY}") for s in all_pages())


# --------------------------------------------------------------------------- the app


@pytest.fixture
def app_root(tmp_path, registered):
    """A copy of the app's root made of links, plus the fake family's page script."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").symlink_to(ROOT / "app.py")
    for page in (ROOT / "pages").glob("*.py"):
        (tmp_path / "pages" / page.name).symlink_to(page)
    (tmp_path / FAKE_PAGE).write_text(FAKE_PAGE_SOURCE, encoding="utf-8")
    streamlit_config = ROOT / ".streamlit"
    if streamlit_config.is_dir():
        shutil.copytree(streamlit_config, tmp_path / ".streamlit")
    return tmp_path


def _open(root, url_path: str | None = None):
    from streamlit.testing.v1 import AppTest
    from streamlit.util import calc_hash

    at = AppTest.from_file(str(root / "app.py"), default_timeout=300)
    if url_path is not None:
        at._page_hash = calc_hash(url_path)  # as conftest.app_test opens a page
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _links(at) -> list[str]:
    return [link.proto.label for link in at.main.get("page_link")]


@pytest.mark.slow
def test_the_fake_family_and_study_reach_their_pages_compare_and_the_home_page(
    app_root, tmp_path_factory, monkeypatch
):
    from posviz.lab import RunStore, run_question
    from posviz.lab.present.answer import plain_answer
    from posviz.ui.cache import clear_caches

    store = tmp_path_factory.mktemp("lab")
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(store))
    monkeypatch.delenv("POSVIZ_LAB_WARM_DIR", raising=False)
    clear_caches()
    result = run_question(FAKE_STUDY, store=RunStore(store))  # its stored answer, tiny
    assert "fake" in {arm.id for arm in result.arms}

    page = _open(app_root, FAKE_ID)  # the family's page, from its registry entry
    assert page.title and page.get("vega_lite_chart")

    compare = _open(app_root, "compare")  # its Compare row is offered and drawn
    (families,) = [m for m in compare.multiselect if m.key == "cmp_fam"]
    assert "Fakeformer" in families.options and FAKE_ID in families.value

    study = _open(app_root, f"lab_{FAKE_STUDY}")  # the generated lab page reads its answer
    assert study.title[0].value == "Does a fake table help?"
    assert "read from the run store (no training)" in " ".join(c.value for c in study.caption)

    home = _open(app_root)  # the home page lists both, the study with its answer and picture
    links = _links(home)
    assert FAKE.question in links and "Does a fake table help?" in links
    said = " ".join(c.value for c in home.caption) + " ".join(m.value for m in home.markdown)
    assert FAKE.blurb in said.replace("\\", ""), "the home card's line is the registry's blurb"
    answer = plain_answer(result)  # the study's stored answer, in words, on its card
    assert any(answer in c.value.replace("\\", "") for c in home.caption), answer
    alts = [img.alt for element in home.get("image") for img in element.proto.imgs]
    assert "The chart that answers: Does a fake table help?" in alts, alts  # and its picture
