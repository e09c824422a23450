"""Store the experiment pages' answers at their defaults for the home page's cards.

    .venv/bin/python scripts/make_home_answers.py      # rewrites posviz/data/answers.py

Runs each page of ``posviz.ui.home_cards.STORED_PAGES`` in Streamlit's AppTest with its default
settings (a few minutes: the add-vs-concatenate page decomposes MiniLM's word table), keeps the
verdict sentence and the hero chart's Vega-Lite spec with its data inlined, and writes them as a
Python literal. ``tests/test_home_answers.py`` checks the stored answers against the pages.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from answer_support import page_answer  # noqa: E402  (the tests' helpers, after the path is set)
from conftest import app_test  # noqa: E402

from posviz.ui.home_cards import STORED_PAGES  # noqa: E402

HEADER = (
    '"""Stored answers of the experiment pages at their defaults, for the home page\'s cards.\n\n'
    "Written by ``scripts/make_home_answers.py`` (it runs each page and keeps its verdict sentence "
    "and\nits hero chart's Vega-Lite spec); ``tests/test_home_answers.py`` checks them against the "
    'pages.\n"""\n\n'
)
LINE = 100  # the project's line length; a longer generated line carries a noqa comment


def write_literal(target: Path, answers: dict) -> None:
    """``answers`` as a formatted Python literal (ruff's layout; long strings stay whole)."""
    target.write_text(HEADER + f"ANSWERS: dict[str, dict] = {answers!r}\n")
    ruff = Path(sys.executable).with_name("ruff")
    subprocess.run([str(ruff), "format", "-q", str(target)], check=True)
    lines = [
        f"{line}  # noqa: E501" if len(line) > LINE and "noqa" not in line else line
        for line in target.read_text().splitlines()
    ]
    target.write_text("\n".join(lines) + "\n")


def main() -> None:
    answers = {}
    for page in STORED_PAGES:
        print(f"running {page} …", flush=True)
        answers[page] = page_answer(app_test(page, timeout=600))
    target = ROOT / "posviz" / "data" / "answers.py"
    write_literal(target, answers)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
