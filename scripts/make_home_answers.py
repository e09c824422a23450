"""Store the experiment pages' answers at their defaults for the home page's cards.

    .venv/bin/python scripts/make_home_answers.py      # rewrites posviz/data/answers.json

Runs each page of ``posviz.ui.home_cards.STORED_PAGES`` in Streamlit's AppTest with its default
settings (a few minutes: the add-vs-concatenate page decomposes MiniLM's word table), keeps the
verdict sentence and the hero chart's Vega-Lite spec with its data inlined, and writes them as
JSON (read by ``posviz.data.answers``). ``tests/test_home_answers.py`` checks the stored answers
against the pages.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from answer_support import page_answer  # noqa: E402  (the tests' helpers, after the path is set)
from conftest import app_test  # noqa: E402

from posviz.ui.home_cards import STORED_PAGES  # noqa: E402


def main() -> None:
    answers = {}
    for page in STORED_PAGES:
        print(f"running {page} …", flush=True)
        answers[page] = page_answer(app_test(page, timeout=600))
    target = ROOT / "posviz" / "data" / "answers.json"
    target.write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
