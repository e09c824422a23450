"""Stored answers of the experiment pages at their defaults, for the home page's cards.

The data is ``answers.json`` beside this module, written by ``scripts/make_home_answers.py`` (it
runs each page and keeps its verdict sentence and its hero chart's Vega-Lite spec);
``tests/test_home_answers.py`` checks them against the pages. JSON, not a Python literal: it is
data, read with :func:`json.loads`, never executed.
"""

from __future__ import annotations

import json
from importlib import resources

#: page path → ``{"verdict": sentence, "hero": Vega-Lite spec with its data inlined}``
ANSWERS: dict[str, dict] = json.loads(
    resources.files(__package__).joinpath("answers.json").read_text(encoding="utf-8")
)
