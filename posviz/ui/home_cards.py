"""The home page's "Start here" path: one card per question, each with the page's own verdict at
its default settings and a thumbnail rendered from the page's hero chart.

The two table pages are cheap, so their verdicts and heroes are computed here as the pages do
(:mod:`posviz.ui.heroes`). The experiment pages take seconds to a minute on a cold server, so
their verdicts and hero charts, as the pages draw them with their defaults, are stored in
:mod:`posviz.data.answers` by ``scripts/make_home_answers.py`` (which runs the pages themselves);
``tests/test_home_answers.py`` runs the pages again and fails when a stored answer differs.
Thumbnails are rendered on the server by vl-convert, once per process.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pyarrow.ipc
import streamlit as st

from posviz import export
from posviz.data.answers import ANSWERS
from posviz.tables import load_table
from posviz.ui.answer import GUIDED_PATH, START_HERE
from posviz.ui.cache import cached_resource
from posviz.ui.heroes import learned_hero_for, sinusoid_hero
from posviz.ui.text import safe_md

#: The pages whose answers are stored (too slow to compute on a cold server's home page).
STORED_PAGES = ("pages/probing.py", "pages/add_vs_concat.py", "pages/permutation.py")

#: Thumbnail width in CSS pixels (rendered at 2× for sharp screens).
THUMB_WIDTH = 360
THUMB_HEIGHT = 170


def _live(page: str) -> tuple[str, Any] | None:
    """Verdict and hero chart of the pages cheap enough to compute at their defaults here."""
    if page == "pages/sinusoidal.py":
        verdict, table, _clock = sinusoid_hero(128, 512, 10000.0, "interleaved", 10)
        return verdict.sentence, table.chart
    if page == "pages/learned.py":
        verdict, similarity, _path = learned_hero_for(load_table("bundled"))
        return verdict.sentence, similarity.chart
    return None


def card_answer(page: str) -> str:
    """The verdict the page shows at its default settings ("" when none is known)."""
    live = _live(page)
    if live is not None:
        return live[0]
    return str(ANSWERS.get(page, {}).get("verdict", ""))


@cached_resource(show_spinner=False)
def card_thumbnail(page: str) -> bytes | None:
    """PNG of the page's hero chart at its defaults, small (``None`` when there is none)."""
    live = _live(page)
    if live is not None:
        spec = export.chart_spec(live[1])
    elif "hero" in ANSWERS.get(page, {}):
        spec = copy.deepcopy(ANSWERS[page]["hero"])
    else:
        return None
    spec.update(width=THUMB_WIDTH, height=THUMB_HEIGHT)
    spec.pop("title", None)  # the card says the question; the picture shows the chart
    try:
        return export.spec_png(spec, scale=2.0)
    except ValueError:
        return None  # a card without its picture still answers


def start_here_cards() -> None:
    """The first :data:`START_HERE` questions as cards, in reading order on any width."""
    path = GUIDED_PATH[:START_HERE]
    slots = []
    for row in (path[:3], path[3:6]):  # row by row, so a phone stacks them 1, 2, 3, …
        if row:
            slots += list(st.columns(3, gap="medium"))[: len(row)]
    pictures = []
    for number, ((page, question), slot) in enumerate(zip(path, slots, strict=True), start=1):
        with slot, st.container(border=True, key=f"card_{number}"):
            st.markdown(f"**{number} · {safe_md(question, max_len=200)}**")
            pictures.append((page, st.empty()))
            st.caption(safe_md(card_answer(page), max_len=600))
            st.page_link(page, label="Open the answer", icon=":material/arrow_forward:")
    for page, place in pictures:  # the text first, then the pictures as they render
        png = card_thumbnail(page)
        if png is not None:
            place.image(png, width="stretch")


def page_answer(at: Any) -> dict[str, Any]:
    """A page's verdict sentence and hero spec (data inlined) from its run in Streamlit's
    ``AppTest``: the first Markdown block is the verdict, the first chart the hero."""
    return {
        "verdict": verdict_text(at.markdown[0].value),
        "hero": inline_spec(at.get("vega_lite_chart")[0].proto),
    }


def verdict_text(markdown: str) -> str:
    """The plain sentence inside the verdict's Markdown (bold, escaped by ``safe_md``)."""
    return re.sub(r"\\(.)", r"\1", markdown.strip().removeprefix("**").removesuffix("**"))


def inline_spec(proto: Any) -> dict[str, Any]:
    """A chart element's Vega-Lite spec with its Arrow datasets turned into inline values."""
    spec = json.loads(proto.spec)
    datasets = dict(spec.get("datasets", {}))
    for dataset in proto.datasets:
        table = pyarrow.ipc.open_stream(dataset.data.data).read_all()
        datasets[dataset.name] = json.loads(table.to_pandas().to_json(orient="records"))
    if datasets:
        spec["datasets"] = datasets
    return spec
