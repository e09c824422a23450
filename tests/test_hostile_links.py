"""Crafted links and hostile text: nothing a user types or links renders as a link or an image.

Streamlit renders message bodies, captions and widget labels as GitHub-flavoured Markdown. The
model below renders a body the way Streamlit's frontend does where it matters here: CommonMark
(markdown-it, the reference algorithm) for links, images, autolinks and HTML, then GFM's autolink
step exactly as Streamlit's bundle runs it (``mdast-util-gfm-autolink-literal``: regular
expressions over each *text* node after backslash escapes are resolved, skipping link text). The
real-browser counterpart is ``tests/test_pages_browser.py``.
"""

from __future__ import annotations

import html
import re
import unicodedata

import numpy as np
import pytest
from conftest import app_test, assert_no_exception
from hostile_support import HOST, HOSTILE, REPRESENTATIVE
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
    "mail me@evil.example or mailto:me@evil.example",
    "HTTPS://EVIL.EXAMPLE WWW.EVIL.EXAMPLE (https://evil.example/a_(b))",
    ":red[alarm] :material/warning: $x^2$",
    "&lt;b&gt; &#x5B;",
    "line\nbreak\r\n> quote\n- item",
    "\\`escaped\\` back\\slash",
    "ünïcödé 位置 \u202eevil\u200b",
]


# --- a model of Streamlit's Markdown: which links and images a body renders --------------------

_MD = MarkdownIt("commonmark")
#: GFM autolink literals as Streamlit's bundle finds them (mdast-util-gfm-autolink-literal 2.x;
#: JavaScript's ``\w`` is ASCII, hence re.ASCII).
_GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)


def _gfm_boundary(text: str, index: int) -> bool:
    """GFM links a literal only at the start of a text or after whitespace, punctuation or a
    symbol (micromark's ``unicodeWhitespace``/``unicodePunctuation``, which includes \\p{S})."""
    if index == 0:
        return True
    before = text[index - 1]
    return before.isspace() or unicodedata.category(before)[0] in "PS"


def _gfm_autolinks(text: str) -> list[str]:
    """Targets GFM's autolink step makes of one text node (trailing punctuation ignored: the
    link exists either way)."""
    found = []
    for match in _GFM_URL.finditer(text):
        if _gfm_boundary(text, match.start()) and "." in match.group(2):
            prefix = "http://" if match.group(1).lower().startswith("w") else ""
            found.append(prefix + match.group(0))
    start = 0
    while (match := _GFM_EMAIL.search(text, start)) is not None:
        # JavaScript tries every start after a boundary; Python's leftmost match may begin too
        # early (after a letter), so retry one character later, as findAndReplace does.
        if _gfm_boundary(text, match.start()) and text[match.start() - 1 : match.start()] != "/":
            found.append(f"mailto:{match.group(0)}")
            start = match.end()
        else:
            start = match.start() + 1
    return found


def rendered_targets(markdown: str) -> list[str]:
    """Every link/image target that ``markdown`` renders to, as Streamlit's GFM renderer would."""
    targets: list[str] = []
    for block in _MD.parse(markdown):
        in_link = 0
        for token in block.children or ():
            if token.type == "link_open":
                targets.append(str(token.attrs.get("href", "")))
                in_link += 1
            elif token.type == "link_close":
                in_link -= 1
            elif token.type == "image":
                targets.append(str(token.attrs.get("src", "")))
            elif token.type == "html_inline" and re.search(r"<(a|img)\b", token.content, re.I):
                targets.append(token.content)  # raw HTML: live only with unsafe_allow_html
            elif token.type == "text" and not in_link:
                targets += _gfm_autolinks(token.content)
        if block.type == "html_block" and re.search(r"<(a|img)\b", block.content, re.I):
            targets.append(block.content)
    return targets


def hostile_targets(markdown: str) -> list[str]:
    """The targets in ``markdown`` that name the attacker's host."""
    return [target for target in rendered_targets(markdown) if HOST in target.lower()]


def test_the_model_finds_what_streamlit_links() -> None:
    """The model sees every way a link gets in, including the autolinks escapes do not stop."""
    assert rendered_targets("[a](https://x.example)") == ["https://x.example"]
    assert rendered_targets("![a](https://x.example/p.png)") == ["https://x.example/p.png"]
    assert rendered_targets("<https://x.example>") == ["https://x.example"]
    assert rendered_targets("see https\\://x.example now") == ["https://x.example"]
    assert rendered_targets("www\\.x.example") == ["http://www.x.example"]
    assert rendered_targets("me\\@x.example") == ["mailto:me@x.example"]
    assert rendered_targets("“https://x.example”") == ["https://x.example”"]
    assert rendered_targets("[https://x.example](/here)") == ["/here"]  # link text is not linked
    assert rendered_targets("`https://x.example` xhttps://x.example nohost@x") == []


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_safe_md_renders_literally(text: str) -> None:
    escaped = safe_md(text, max_len=1000)
    assert rendered_targets(escaped) == []
    rendered = _MD.render(escaped)
    for tag in ("<a ", "<img", "<code", "<em", "<strong", "<h1", "<blockquote", "<li", "<br"):
        assert tag not in rendered, (text, rendered)
    shown = html.unescape(rendered.removeprefix("<p>").removesuffix("</p>\n"))
    expected = "".join(" " if c in "\r\n" else c for c in text)
    expected = expected.replace("\u202e", "\ufffd").replace("\u200b", "\ufffd")
    assert shown.replace("\u2060", "") == expected  # the joiners are invisible


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
    assert not re.search(r"(?<!\\):\S*:", escaped), escaped  # Streamlit's icons and directives
    assert rendered_targets(escaped) == []
    rendered = _MD.render(escaped)
    assert rendered.startswith("<p>") and "<pre" not in rendered and "<ol" not in rendered
    shown = html.unescape(rendered[3:-5]).replace("\u00a0", " ").replace("\u2060", "")
    assert shown.strip() == text.strip()


def test_safe_md_keeps_plain_text_plain() -> None:
    """Ids, file names and numbers read as typed: no backslash where nothing needs one."""
    assert safe_md("sentence-transformers/all-MiniLM-L6-v2") == (
        "sentence-transformers/all-MiniLM-L6-v2"
    )
    assert safe_md("position_embeddings.weight") == "position_embeddings.weight"
    assert safe_md("ratio: 0.5") == "ratio: 0.5"


# --- every page of the app, every query parameter it reads, through AppTest -------------------
#
# Every hostile value goes through every parser in tests/test_urlparams.py and through safe_md
# below; each page gets ONE representative bad link here (all its parameters at once), checked
# for the message it shows and for no link or image from the value.

#: One value per way user text becomes a link or an image (shared with the browser test).
HOSTILE_LINKS: dict[str, str] = {
    name: HOSTILE[name] for name in ("url", "www", "email", "md_link", "md_image", "html")
}

#: proto fields Streamlit renders as Markdown: message bodies, labels, help tooltips, options of
#: radios/pills, expander and tab labels.
_MARKDOWN_FIELDS = frozenset({"body", "label", "help", "caption", "options", "title"})


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_hostile_link_value_is_echoed_inert(name: str) -> None:
    """What a page echoes of a link value (``safe_md``, cut at 60 characters as the link warnings
    cut it, or whole) renders no link or image to the attacker's host."""
    for max_len in (60, 20_000):
        assert hostile_targets(safe_md(HOSTILE[name], max_len=max_len)) == [], (name, max_len)


def _pages():
    from posviz.navigation import all_pages

    return all_pages()


def _url_keys(spec) -> tuple[str, ...]:
    """The parameters the page writes at its defaults, as its ``PageSpec`` declares them (checked
    against a real visit in tests/test_pages.py)."""
    from posviz.navigation import page_params, shown_at_defaults

    return tuple(p.name for p in shown_at_defaults(page_params(spec)))


def _table_sources(spec) -> tuple[str, ...]:
    """The page's table pickers (``<key>_src`` with a "path" choice) shown at its defaults."""
    from posviz.navigation import page_params, shown_at_defaults

    shown = shown_at_defaults(page_params(spec))
    return tuple(p.name for p in shown if p.name.endswith("_src") and "path" in p.options)


def _markdown_strings(message, name: str = "") -> list[str]:
    """Every Markdown-rendered string field of a proto message, recursively."""
    found: list[str] = []
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for item in values:
            if hasattr(item, "ListFields"):
                found += _markdown_strings(item, field.name)
            elif isinstance(item, str) and field.name in _MARKDOWN_FIELDS:
                found.append(item)
    return found


def page_hostile_targets(at) -> list[tuple[str, str]]:
    """``(element type, target)`` for every link/image to the attacker's host on the page."""
    found = []
    for node in at._tree:  # the whole element tree: main, sidebar, expanders, tabs, toasts
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "ListFields"):
            continue
        for text in _markdown_strings(proto):
            found += [(node.type, target) for target in hostile_targets(text)]
    return found


def _messages(at) -> list[str]:
    return [m.value for kind in ("error", "warning", "info") for m in getattr(at, kind)]


@pytest.mark.parametrize("spec", _pages(), ids=lambda spec: spec.url_path)
def test_a_bad_link_gets_a_message_and_renders_no_link_or_image(spec, monkeypatch, tmp_path):
    """Every parameter of the page set to one value that no parameter accepts as it is: the page
    runs to its title, says which link parameter it ignored (or cut), and shows nothing of the
    value as a link or an image. A page without parameters (home) ignores an unknown one."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path / "lab"))
    keys = _url_keys(spec)
    query = dict.fromkeys(keys or ("unknown_param",), REPRESENTATIVE)
    at = app_test(spec.key, query=query, timeout=400)
    assert_no_exception(at)
    assert at.title, f"{spec.url_path}: the page stopped before its title"
    assert not page_hostile_targets(at), (spec.url_path, page_hostile_targets(at))
    if keys:
        named = [m for m in _messages(at) if any(f"Link parameter {k} " in m for k in keys)]
        assert named, f"{spec.url_path}: a bad link ignored without a word: {_messages(at)}"


#: file names an attacker can give a table (no "/" in a name, so no "https://"); loaded through
#: the local profile's "path on the server" source, whose label is the file name.
HOSTILE_FILE_NAMES = (
    f"www.{HOST}.npy",
    f"me@{HOST}.npy",
    f"[Log in](www.{HOST}) ![p](www.{HOST}).npy",
    f"<a href='www.{HOST}'>x<:a>.npy",
)


#: page url_path -> the echo path that still shows a file name unescaped (xfail, strict).
KNOWN_FILE_NAME_FAILURES: dict[str, str] = {}


def _file_name_cases():
    return [
        pytest.param(
            spec,
            id=spec.url_path,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FILE_NAME_FAILURES[spec.url_path])]
            if spec.url_path in KNOWN_FILE_NAME_FAILURES
            else [],
        )
        for spec in _pages()
    ]


@pytest.mark.slow
@pytest.mark.parametrize("spec", _file_name_cases())
def test_hostile_file_names_render_no_link_or_image(spec, monkeypatch, tmp_path):
    """A table whose file name is a link: every page that shows a table's label shows it inert.
    Three rows, so pages that need more (probing) or a patch grid (ViT) quote the label in an error.
    """
    sources = _table_sources(spec)
    if not sources:
        pytest.skip(f"{spec.url_path} picks no table")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    for name in HOSTILE_FILE_NAMES:
        np.save(tmp_path / name, table)
        query = {key: "path" for key in sources}
        query |= {f"{key.removesuffix('_src')}_path": str(tmp_path / name) for key in sources}
        at = app_test(spec.path, query=query, timeout=400)
        assert_no_exception(at)
        assert not page_hostile_targets(at), (spec.url_path, name, page_hostile_targets(at))


# --- what messages reveal to a visitor of the hosted profile ----------------------------------


def test_hosted_messages_hide_server_paths_and_host(monkeypatch, tmp_path):
    cache = tmp_path / "hf cache"  # a space inside: known directories are matched whole
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path / "lab"))
    monkeypatch.setattr("socket.gethostname", lambda: "3f9a1c2b7d4e")
    message = (
        f"Could not store org/name/model.safetensors in the cache at {cache}/posviz-ranges/x "
        f"(no space); lock {tmp_path / 'lab'}/.lock on 3f9a1c2b7d4e; '/srv/other/file.npy'. "
        "See https://huggingface.co/org/name, the /sinusoidal page, sin/cos and 1/2."
    )
    monkeypatch.setenv("POSVIZ_HOSTED", "0")
    assert str(cache) in safe_md(message, max_len=1000)  # a local user sees where to look
    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    shown = safe_md(message, max_len=1000).replace("\\", "").replace("\u2060", "")
    for secret in (str(tmp_path), "hf cache", "posviz-ranges", "3f9a1c2b7d4e", "/srv/other"):
        assert secret not in shown, shown
    assert shown.count("(server path)") == 3 and "(server)" in shown
    for kept in ("org/name/model.safetensors", "https://huggingface.co/org/name", "/sinusoidal"):
        assert kept in shown
    assert "sin/cos and 1/2" in shown


def test_hosted_hiding_takes_whole_directories_only(monkeypatch):
    """A server directory "/app" is hidden as a path, never inside a URL or a longer name, and the
    punctuation after a path stays."""
    from posviz.page_models import markdown as text

    monkeypatch.setattr(text, "_server_dirs", lambda: ["/app"])
    hide = text.hide_server_details
    assert hide("https://huggingface.co/apple/OpenELM") == "https://huggingface.co/apple/OpenELM"
    assert hide("file /app/posviz/x.py, line 3.") == "file (server path), line 3."
    assert hide("in /app. Then") == "in (server path). Then"
    assert hide("'/srv/lab/.lock': denied") == "'(server path)': denied"
