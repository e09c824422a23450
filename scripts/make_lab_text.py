"""Rebuild ``posviz/data/kjv_narrative.txt.gz``, the lab's character-LM text, from Debian's KJV.

    apt-get install bible-kjv      # the `bible` reader and bible-kjv-text 4.38's data
    .venv/bin/python scripts/make_lab_text.py

Five narrative books of the King James Version (Genesis, Exodus, Ruth, Esther, Jonah) in canonical
order: one line per chapter, verses joined by a space, verse numbers dropped. The result must hash
to :data:`posviz.data.lab_text.SHA256` (checked here, and by the library on every load); the gzip is
written with no name and mtime 0, so a rebuild is byte-identical.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from posviz.data.lab_text import BOOKS, FILE, SHA256  # noqa: E402

VERSE = re.compile(r"^\s*\d+ (.*)$")  # "  12 And God said, …" in `bible -l` output


def chapter(book: str, number: int) -> str:
    """One chapter's verses, joined by a space (``bible`` prints one verse per line)."""
    out = subprocess.run(
        ["bible", "-l100000", f"{book} {number}:1-200"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    verses = [m.group(1).strip() for line in out.splitlines() if (m := VERSE.match(line))]
    if not verses:
        raise SystemExit(f"`bible` printed no verses for {book} {number}: is bible-kjv installed?")
    return " ".join(verses)


def main() -> None:
    if shutil.which("bible") is None:
        raise SystemExit("Needs Debian's `bible` reader: apt-get install bible-kjv")
    text = "".join(chapter(book, n) + "\n" for book, count in BOOKS for n in range(1, count + 1))
    raw = text.encode("utf-8")
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"sha256 {digest} differs from posviz.data.lab_text.SHA256 {SHA256}.")
    with (
        FILE.open("wb") as file,
        gzip.GzipFile(fileobj=file, mode="wb", filename="", mtime=0, compresslevel=9) as packed,
    ):
        packed.write(raw)
    print(f"{FILE.relative_to(ROOT)}: {len(text):,} characters, sha256 {digest}")


if __name__ == "__main__":
    main()
