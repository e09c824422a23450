"""Crafted links and hostile text (issue #13.2): nothing a user types or links renders as markup."""

from __future__ import annotations

import functools
import html
import re

import pytest
from conftest import app_test, assert_no_exception
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


# --- every page of the app, every query parameter it reads, through AppTest -------------------

_MARKUP = (
    "`[Log in again](https://evil.example/login)` `![p](http://evil.example/px.png)` "
    "<img src=https://evil.example/x.png onerror=alert(1)><a href='https://evil.example'>x "
    "ℵ₀😀\u202e:material/lock: :red[evil] $x$ www.evil.example me@evil.example"
)
#: One run per entry and page; a list is dealt out over the page's parameters in turn, so every
#: parameter gets a hostile value and a page needs three runs, not one per value.
HOSTILE_LINK_VALUES: dict[str, list[str]] = {
    "markup": [_MARKUP],  # links, images, HTML, Streamlit directives, autolinks, bidi override
    "long": ["`[x](https://evil.example)" + "A" * 10_000],  # 10 kB
    "numbers": ["-1e308", "nan", "1e400", "-7", "99999999999999999999", "0", "unknown-value"],
}

#: (page url_path, value name) -> owner, for cases that fail on pages this file's author does not
#: own; each is an xfail(strict=True) so a fix is noticed.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

_MARKDOWN_KINDS = (
    "markdown",
    "caption",
    "error",
    "warning",
    "info",
    "success",
    "title",
    "header",
    "subheader",
)


def _pages():
    from posviz.ui import all_pages

    return all_pages()


@functools.cache
def _url_keys(path: str) -> tuple[str, ...]:
    at = app_test(path, timeout=400)
    assert_no_exception(at)
    return tuple(sorted(at.query_params.keys()))


def _live_markup(body: str) -> list[str]:
    """Links, images, autolinks and HTML in a Markdown body that point at the attacker's host."""
    rendered = MarkdownIt("commonmark").render(body)
    found = re.findall(r"<(?:a|img)\b[^>]*evil\.example[^>]*>", rendered)
    # GFM (which Streamlit uses) also links bare https://… and www.… : look at the source
    found += re.findall(r"(?<!\\)(?:https?:(?<!\\:)//|(?<!\\)www\.)evil", body)
    found += re.findall(r"(?<!\\)<(?:img|a)\b", body)
    return found


def _cases():
    cases = []
    for spec in _pages():
        for name in HOSTILE_LINK_VALUES:
            marks = []
            owner = KNOWN_FAILURES.get((spec.url_path, name))
            if owner:
                marks.append(pytest.mark.xfail(strict=True, reason=f"owner: {owner}"))
            cases.append(pytest.param(spec, name, marks=marks, id=f"{spec.url_path}-{name}"))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "name"), _cases())
def test_crafted_link_renders_no_live_markup(spec, name, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    keys = _url_keys(spec.path) or ("unknown_param",)
    values = HOSTILE_LINK_VALUES[name]
    query = {key: values[i % len(values)] for i, key in enumerate(keys)}
    at = app_test(spec.path, query=query, timeout=400)
    assert_no_exception(at)
    assert at.title, f"{spec.url_path}: the page stopped before its title"
    for kind in _MARKDOWN_KINDS:
        for element in getattr(at, kind):
            body = str(element.value)
            assert not _live_markup(body), (spec.url_path, kind, body[:300])
    for widget in [*at.selectbox, *at.radio, *at.text_input, *at.checkbox, *at.toggle]:
        assert not _live_markup(str(widget.label)), (spec.url_path, widget.key, widget.label)
