"""The lab's character-level text: five narrative books of the King James Version (1611).

Genesis, Exodus, Ruth, Esther and Jonah, in canonical order, one line per chapter (verse numbers
dropped): 416,058 characters over a 62-symbol alphabet, shipped gzipped beside this module and
checked against :data:`SHA256` on every load. Built by ``scripts/make_lab_text.py`` from Debian's
``bible-kjv-text`` 4.38 (Chip Chapin's Bible Retrieval System data), whose copyright file says the
translation's copyright has expired; the King James Version is in the public domain outside the
United Kingdom (where the Crown's letters patent govern its printing).

Why this text and not the five openings of :mod:`posviz.data.texts` (5,200 characters): the lab's
character models train on about 300,000 characters per run, so on the short text they memorise it
within a few hundred steps and the held-out loss then *rises*, which makes every verdict depend on
the step budget. On 374,000 training characters a run sees each at most about once. The held-out
windows come from the last 10 % (the end of Ruth, Esther and Jonah: books never trained on).
"""

from __future__ import annotations

import gzip
import hashlib
from functools import cache
from pathlib import Path

FILE = Path(__file__).with_name("kjv_narrative.txt.gz")
#: SHA-256 of the uncompressed UTF-8 text.
SHA256 = "a1c97ea3dd3227bc2d7600539748f77bb1c84a6f12b016e09d8797560bb1c397"
#: (book, chapters) as ``scripts/make_lab_text.py`` reads them, in order.
BOOKS: tuple[tuple[str, int], ...] = (
    ("Genesis", 50),
    ("Exodus", 40),
    ("Ruth", 4),
    ("Esther", 10),
    ("Jonah", 4),
)
SOURCE = (
    "King James Version (1611): Genesis, Exodus, Ruth, Esther, Jonah "
    "(text of Debian's bible-kjv-text 4.38)"
)


@cache
def lab_text() -> str:
    """The whole text, verified.

    Raises:
        ValueError: the shipped file is missing or its content does not hash to :data:`SHA256`
            (a damaged install: reinstall posviz, or rebuild it with ``scripts/make_lab_text.py``).
    """
    try:
        raw = gzip.decompress(FILE.read_bytes())
    except (OSError, EOFError) as error:
        raise ValueError(
            f"The lab's text {FILE.name} cannot be read ({error}); reinstall posviz or rebuild it "
            "with scripts/make_lab_text.py."
        ) from error
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        raise ValueError(
            f"The lab's text {FILE.name} has sha256 {digest[:12]}…, not {SHA256[:12]}…: the file "
            "is damaged; reinstall posviz or rebuild it with scripts/make_lab_text.py."
        )
    return raw.decode("utf-8")
