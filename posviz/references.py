"""The sources posviz's questions and formulas come from, cited by title, author and year.

Pages and docstrings cite these by key through :func:`cite`, never by an internal file name.
A URL is given only where it is known for certain (arXiv abstract pages, the GitHub issue);
for the Stack Overflow questions and the two blog posts no address is known here, so they are
cited by title and author without a link.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Reference:
    """One cited source: what users know it as, who wrote it, when, and where to read it."""

    title: str
    author: str
    year: int | None  # None where the date is not known
    url: str | None  # None where no address is known (never guessed)
    venue: str | None = None  # journal, conference, site
    note: str | None = None  # e.g. what a post is based on


def _load() -> dict[str, Reference]:
    """``references.toml`` beside this module: one table per key, in the file's order."""
    text = resources.files(__package__).joinpath("references.toml").read_text(encoding="utf-8")
    return {
        key: Reference(**{"year": None, "url": None, **fields})
        for key, fields in tomllib.loads(text).items()
    }


#: every cited source by key (the data is ``references.toml``: a source is a table, not code).
REFERENCES: dict[str, Reference] = _load()

# Characters that Markdown would read as syntax inside a link text or emphasis.
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|"})


def _escape(text: str) -> str:
    return text.translate(_MD_SPECIAL)


def cite(key: str) -> str:
    """Markdown citation of one source: ``[title](url) — author, year``.

    Without a known URL the title is shown in italics, unlinked; without a known year the
    venue stands in its place.

    Raises:
        ValueError: ``key`` is not in :data:`REFERENCES` (the message lists the known keys).
    """
    if key not in REFERENCES:
        raise ValueError(f"Unknown reference {key!r}; use one of: {', '.join(sorted(REFERENCES))}.")
    ref = REFERENCES[key]
    title = _escape(ref.title)
    head = f"[{title}]({ref.url})" if ref.url else f"*{title}*"
    when = str(ref.year) if ref.year is not None else (ref.venue or "")
    tail = ", ".join(part for part in (_escape(ref.author), when) if part)
    return f"{head} — {tail}"


def cite_plain(key: str) -> str:
    """Plain-text citation (no Markdown): ``title — author, year``, for exports and code blocks."""
    if key not in REFERENCES:
        raise ValueError(f"Unknown reference {key!r}; use one of: {', '.join(sorted(REFERENCES))}.")
    ref = REFERENCES[key]
    when = str(ref.year) if ref.year is not None else (ref.venue or "")
    return f"“{ref.title}” — {', '.join(p for p in (ref.author, when) if p)}"
