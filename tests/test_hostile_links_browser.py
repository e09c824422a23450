"""Crafted links in a real browser: the rendered DOM holds no link or image from user input.

Every page of the app is opened in headless Chromium with every query parameter it reads set to
one hostile value holding every form of link: a bare URL, a ``www.`` host, an e-mail address, a
Markdown link, a Markdown image and HTML (``tests/hostile_support.py``). Streamlit renders
message bodies with GitHub-flavoured Markdown, whose autolink step
runs on the *text* after backslash escapes are resolved, so escaping alone is not enough; this
test looks at what the browser really drew: no ``<a>`` or ``<img>`` whose target names the
attacker's host, on any page, for any parameter. The server runs the hosted profile, as a public
link would.

    python tests/test_hostile_links_browser.py     # prints every live link found (before/after)
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_support import browser_page, start_streamlit_server, stop_process, wait_for_app
from hostile_support import HOST, REPRESENTATIVE

from posviz.navigation import all_pages

#: every ``<a>``/``<img>`` whose target names the host, with the text of the element it sits in.
_FIND_LIVE = """host => [...document.querySelectorAll('a[href], img[src]')]
  .filter(el => (el.getAttribute('href') || el.getAttribute('src') || '').includes(host))
  .map(el => ({
    tag: el.tagName.toLowerCase(),
    target: el.getAttribute('href') || el.getAttribute('src'),
    context: (el.closest('[data-testid="stAlert"], [data-testid="stMarkdown"], '
      + '[data-testid="stCaptionContainer"], [data-testid="stWidgetLabel"], '
      + '[data-testid="stHeading"], [data-testid="stToast"]') || el.parentElement).innerText,
  }))"""


@dataclass(frozen=True)
class LiveLink:
    page: str
    query: tuple[tuple[str, str], ...]
    tag: str
    target: str
    context: str

    def params(self) -> list[str]:
        """The URL parameters whose name appears in the element's text (who let it in)."""
        return [key for key, _ in self.query if key in self.context] or ["?"]


def _open(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=240_000)


def _url_keys(page, base: str, url_path: str) -> list[str]:
    """The query parameters a page reads: it writes each one back into the URL after a run."""
    _open(page, f"{base}/{url_path}")
    query = urllib.parse.urlsplit(page.url).query
    return sorted(urllib.parse.parse_qs(query, keep_blank_values=True)) or ["unknown_param"]


def _queries(keys: list[str]) -> Iterator[dict[str, str]]:
    """Each page's one bad link: every parameter at once gets the representative hostile value
    (every form of link in one value; each value alone goes through ``safe_md`` in
    tests/test_hostile_links.py)."""
    yield dict.fromkeys(keys, REPRESENTATIVE)


def find_live_links(base: str, page) -> list[LiveLink]:
    """Open every page with every hostile query; return each live link or image found."""
    found: list[LiveLink] = []
    for spec in all_pages():
        keys = _url_keys(page, base, spec.url_path)
        for query in _queries(keys):
            _open(page, f"{base}/{spec.url_path}?{urllib.parse.urlencode(query)}")
            for hit in page.evaluate(_FIND_LIVE, HOST):
                found.append(LiveLink(spec.url_path, tuple(query.items()), **hit))
    return found


def _server(tmp: Path) -> tuple[str, object]:
    env = {
        "POSVIZ_HOSTED": "1",
        "HF_HUB_OFFLINE": "1",
        "POSVIZ_LAB_DIR": str(tmp / "lab"),
    }
    return start_streamlit_server(env=env, timeout=120)


@pytest.mark.slow
def test_no_page_draws_a_link_or_image_from_a_crafted_url(tmp_path: Path) -> None:
    base, process = _server(tmp_path)
    try:
        with browser_page() as page:
            found = find_live_links(base, page)
    finally:
        stop_process(process)
    assert not found, [(f.page, f.params(), f.tag, f.target, f.context[:120]) for f in found]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        base, process = _server(Path(folder))
        try:
            with browser_page() as page:
                found = find_live_links(base, page)
        finally:
            stop_process(process)
    pairs = sorted({(f.page, p) for f in found for p in f.params()})
    for f in found:
        print(f"{f.page:18s} {','.join(f.params()):28s} <{f.tag}> {f.target!r}  {f.context[:90]!r}")
    print(f"{len(found)} live links/images; {len(pairs)} page/parameter pairs: {pairs}")
