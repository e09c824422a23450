"""User text inside Markdown: escaped so that it renders literally, never as markup.

Streamlit renders ``st.warning/error/info/markdown/caption`` bodies and widget labels as GitHub
Markdown (plus its own ``:red[…]``/``:material/…:`` directives and ``$…$`` maths). A value from a
link, a text box or a file name that reaches such a body unescaped can open a code span, draw a
live link (``[Log in again](https://evil.example)``) or make the browser fetch an image of the
sender's choice (``![p](https://…/px.png)``) inside the app's own message (issue #13.2).
"""

from __future__ import annotations

import string
import unicodedata

#: CommonMark lets a backslash escape every ASCII punctuation character and then shows it literally;
#: escaping them all also breaks GFM autolinks (``https\\://``, ``www\\.``), entities (``\\&``),
#: HTML (``\\<``), Streamlit's ``:directives:`` and ``$`` maths.
_PUNCTUATION = frozenset(string.punctuation)
_ELLIPSIS = "…"


def _visible(char: str) -> str:
    """Line breaks and tabs become spaces; other control/format characters (bidi overrides, zero
    width) become U+FFFD so the text cannot reorder or hide what follows it."""
    if char in "\r\n\t\v\f":
        return " "
    if unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs"):
        return "\ufffd"
    return char


def safe_md(text: str, *, max_len: int = 80) -> str:
    """``text`` escaped to render literally in Markdown, cut to ``max_len`` characters with a note.

    Every ASCII punctuation character gets a backslash (CommonMark §2.4, backslash escapes); line
    breaks become spaces; control and format characters become U+FFFD. Text longer than
    ``max_len`` keeps its first ``max_len`` characters, then ``…`` and ``(cut: N characters)``.
    Do not put the result inside backticks: code spans show backslashes literally.

    Raises ``ValueError`` when ``max_len < 1``.
    """
    if max_len < 1:
        raise ValueError(f"max_len={max_len} is below 1; pass at least 1 character to keep.")
    text = str(text)
    cut = len(text) > max_len
    kept = text[:max_len] if cut else text
    escaped = "".join("\\" + char if char in _PUNCTUATION else _visible(char) for char in kept)
    if cut:
        return f"{escaped}{_ELLIPSIS} (cut: {len(text):,} characters in all)"
    return escaped
