"""Crafted links and hostile text (issue #13.2): nothing a user types or links renders as markup."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from posviz.ui.text import safe_md

HOSTILE_TEXT = [
    "`[Log in again](https://evil.example)`",
    "`![p](http://evil.example/px.png)`",
    "<img src=x onerror=alert(1)>",
    '<a href="https://evil.example">x</a>',
    "**bold** _it_ ~~s~~ # h1",
    "[x]: https://evil.example\n[y][x]",
    "https://evil.example www.evil.example",
    ":red[alarm] :material/warning: $x^2$",
    "&lt;b&gt; &#x5B;",
    "line\nbreak\r\n> quote\n- item",
    "\\`escaped\\` back\\slash",
    "ünïcödé 位置 \u202eevil\u200b",
]


def _render(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_safe_md_renders_literally(text: str) -> None:
    rendered = _render(safe_md(text, max_len=1000))
    for tag in ("<a ", "<img", "<code", "<em", "<strong", "<h1", "<blockquote", "<li", "<br"):
        assert tag not in rendered, (text, rendered)
    shown = html.unescape(rendered.removeprefix("<p>").removesuffix("</p>\n"))
    expected = "".join(" " if c in "\r\n" else c for c in text)
    expected = expected.replace("\u202e", "\ufffd").replace("\u200b", "\ufffd")
    assert shown == expected


def test_safe_md_cuts_and_says_so() -> None:
    text = "a" * 10_000
    short = safe_md(text, max_len=80)
    assert short.startswith("a" * 80 + "…") and "10,000" in short and "cut" in short
    assert safe_md("abc", max_len=3) == "abc"
    with pytest.raises(ValueError, match="max_len=0"):
        safe_md("abc", max_len=0)


@pytest.mark.parametrize(
    "text",
    [
        "https://evil.example/x",
        "www.evil.example",
        "mail me@evil.example",
        "1. item",
        "- item",
        "# title",
        "    code block",
        "> quote",
        ":material/lock: :red[x]",
    ],
)
def test_safe_md_leaves_nothing_gfm_or_streamlit_would_turn_into_markup(text: str) -> None:
    escaped = safe_md(text)
    assert not re.search(r"(?<!\\)(:(//|\S*:)|@|www\.)", escaped), escaped  # autolinks, icons
    rendered = _render(escaped)
    assert rendered.startswith("<p>") and "<pre" not in rendered and "<ol" not in rendered
    assert html.unescape(rendered[3:-5]).replace("\u00a0", " ").strip() == text.strip()
