"""User text inside Markdown: escaped so that it renders literally, never as markup.

A page model decides what a page says; this decides how a typed or linked value may appear in
it (the ui re-exports :func:`safe_md` as ``posviz.ui.safe_md``; no Streamlit here).

Streamlit renders ``st.warning/error/info/markdown/caption`` bodies and widget labels as GitHub
Markdown (plus its own ``:red[…]``/``:material/…:`` directives and ``$…$`` maths). A value from a
link, a text box or a file name that reaches such a body unescaped can open a code span, draw a
live link (``[Log in again](https://evil.example)``) or make the browser fetch an image of the
sender's choice (``![p](https://…/px.png)``) inside the app's own message.

Backslash escapes stop CommonMark's own markup, but not GitHub's autolinks: Streamlit's renderer
(remark-gfm, ``mdast-util-gfm-autolink-literal``) finds bare ``https://…``, ``www.…`` and e-mail
addresses in the *text* after escapes are resolved, so ``https\\://evil.example`` is a live link
again. :func:`safe_md` therefore puts an invisible WORD JOINER (U+2060) inside each pattern
(after the colon of ``://``, between ``www`` and ``.``, before ``@``): the text reads and wraps
the same, the pattern no longer matches. ``tests/test_pages_browser.py`` checks what
Chromium really draws.

On the hosted profile (``POSVIZ_HOSTED=1``) the same helper also hides what a visitor has no
business seeing in a message: this server's directories (caches, the lab store, the app, home,
temp, Python) and its host name (a container's host name is its id) become "(server path)" and
"(server)". A local user still sees full paths, which is what they need to fix a local problem.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import tempfile
import unicodedata
from pathlib import Path

from posviz.settings import settings

#: Characters that can start markup anywhere in a line: emphasis, code, links/images, HTML,
#: entities, Streamlit's ``:directives:``/``:material/…:`` icons, ``$`` maths and tables.
#: CommonMark shows a backslash-escaped ASCII punctuation character literally (§2.4), so each gets a
#: backslash. Others (``( ) . - ,``) only matter at the start of a line and are escaped there (see
#: :func:`_block_safe`); GFM's autolinks are broken by :data:`_JOINER` instead.
_INLINE = frozenset("\\`*[]<>#+!|~$&")
#: a colon starts markup as the first of a pair with no space between (Streamlit's
#: ``:material/icon:`` and ``:emoji:`` shortcodes).
_COLON_MARKUP = re.compile(r"[^\s:]*:")
#: U+2060 WORD JOINER: invisible, never a line break, neither space nor punctuation, so GFM's
#: autolink patterns (``scheme://``, ``www.``, ``local@domain``) cannot match across it.
_JOINER = "\u2060"
#: where a joiner goes: between a colon and "//", between "www" and ".", before every "@".
_AUTOLINK_SEAMS = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)")
_AT_LINE_START = frozenset("-.+=>#")
#: what replaces a server directory (and whatever follows it up to a space or quote) in a
#: message on the hosted profile.
SERVER_PATH = "(server path)"
SERVER_HOST = "(server)"
#: environment variables naming directories a message may quote (caches, the lab store).
_DIR_VARIABLES = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME")
#: characters of a path in a message, and where one ends: before a space, a quote, a bracket,
#: "," or ";", or a "." or ":" that ends the sentence or clause.
_PATH_CHARS = r"[^\s'\"`()\[\],;]"
_PATH_PART = r"[^\s'\"`()\[\],;/]"  # the same, without "/"
_PATH_END = r"(?=$|[\s'\"`()\[\],;/]|[.:](?:\s|$))"
#: an absolute path of two or more parts not preceded by a word, ":" or "/" (so "https://a/b",
#: "sin/cos" and "1/2" stay).
_ABSOLUTE_PATH = re.compile(rf"(?<![\w:/.~])/(?:{_PATH_PART}+/)+{_PATH_CHARS}*?{_PATH_END}")
_ELLIPSIS = "…"


def _visible(char: str) -> str:
    """Line breaks and tabs become spaces; other control/format characters (bidi overrides, zero
    width) become U+FFFD so the text cannot reorder or hide what follows it."""
    if char in "\r\n\t\v\f":
        return " "
    if unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs"):
        return "\ufffd"
    return char


def _inside_word(text: str, i: int) -> bool:
    """``text[i]`` has a letter or digit on both sides: an underscore there cannot open or close
    emphasis (CommonMark §6.2), so ``position_embeddings`` needs no backslash."""
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def _starts_markup(text: str, i: int) -> bool:
    c = text[i]
    if c == ":":
        return _COLON_MARKUP.match(text, i + 1) is not None
    if c == "_":
        return not _inside_word(text, i)
    return c in _INLINE


def _block_safe(text: str) -> str:
    """No block markup at the start (list, heading, quote, code block)."""
    stripped = text.lstrip(" ")
    text = "\u00a0" * (len(text) - len(stripped)) + stripped  # 4 spaces would start a code block
    digits = re.match(r"\u00a0*\d+(?=[.)])", text)
    if digits:  # "1. " / "1) " would start an ordered list
        return f"{text[: digits.end()]}\\{text[digits.end() :]}"
    first = len(text) - len(text.lstrip("\u00a0"))
    if first < len(text) and text[first] in _AT_LINE_START:
        return f"{text[:first]}\\{text[first:]}"
    return text


def _server_dirs() -> list[str]:
    """This server's directories that messages may name, longest first."""
    dirs = [os.environ.get(name, "") for name in (*_DIR_VARIABLES, "POSVIZ_LAB_DIR")]
    dirs += [str(Path.home()), tempfile.gettempdir(), sys.prefix, sys.base_prefix, os.getcwd()]
    dirs.append(str(Path(__file__).resolve().parents[2]))  # the app's own files
    return sorted({d.rstrip("/") for d in dirs if len(d.rstrip("/")) > 1}, key=len, reverse=True)


def hide_server_details(text: str) -> str:
    """``text`` without this server's paths and host name (see the module docstring).

    Known server directories go first (they may hold spaces), then any other absolute path of
    two or more parts; URLs, hub ids (``org/name``) and page paths (``/sinusoidal``) stay.
    """
    for folder in _server_dirs():
        # whole directories only: "/app" is not inside ".../apple/x" nor "/application"
        pattern = rf"(?<![\w:/.~-]){re.escape(folder)}{_PATH_END}(?:/{_PATH_CHARS}*{_PATH_END})?"
        text = re.sub(pattern, SERVER_PATH, text)
    text = _ABSOLUTE_PATH.sub(SERVER_PATH, text)
    host = socket.gethostname()
    if len(host) > 2:
        text = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", SERVER_HOST, text)
    return text


def safe_md(text: str, *, max_len: int = 80) -> str:
    """``text`` escaped to render literally in Markdown, cut to ``max_len`` characters with a note.

    Markup characters get a backslash (CommonMark §2.4, backslash escapes); GFM's autolinks
    (bare URLs, ``www.`` hosts, e-mail addresses) get an invisible U+2060 inside; line breaks
    become spaces; control and format characters become U+FFFD. On the hosted profile, server
    paths and the host name are hidden first (:func:`hide_server_details`). Text longer than
    ``max_len`` keeps its first ``max_len`` characters, then ``…`` and ``(cut: N characters)``.
    Do not put the result inside backticks: code spans show backslashes literally.

    Raises ``ValueError`` when ``max_len < 1``.
    """
    if max_len < 1:
        raise ValueError(f"max_len={max_len} is below 1; pass at least 1 character to keep.")
    text = str(text)
    if settings().hosted:
        text = hide_server_details(text)
    cut = len(text) > max_len
    kept = text[:max_len] if cut else text
    chars = ["\\" + c if _starts_markup(kept, i) else _visible(c) for i, c in enumerate(kept)]
    escaped = _AUTOLINK_SEAMS.sub(_JOINER, _block_safe("".join(chars)))
    if cut:
        return f"{escaped}{_ELLIPSIS} (cut: {len(text):,} characters in all)"
    return escaped
