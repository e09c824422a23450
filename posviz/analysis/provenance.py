"""Where a page's numbers come from: a small badge beside its answer, made by the code that
computed them (never typed by hand).

Four kinds, after how a reader weighs a number:

* ``formula`` — **exact formula**: computed from a published definition (its citation, read
  from :mod:`posviz.references`), no data involved;
* ``checkpoint`` — **read from a checkpoint**: numbers read from a model's weights, named with
  the SHA-256 the file was checked against before a byte was read (:mod:`posviz.tables.bundled`);
* ``measured`` — **measured here**: computed on this machine (a probe, a trained lab run, a
  forward pass), always with the control it was measured beside;
* ``published`` — **published**: a paper's number, with its table or figure and page.

:class:`Provenance` is plain data; :meth:`Provenance.badge` its text. A verdict
(:class:`posviz.analysis.headlines.Verdict`) carries its sources in ``sources``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import numpy as np

from posviz.references import REFERENCES
from posviz.tables.bundled import BUNDLED_MODEL_ID, BUNDLED_WEIGHTS_SHA256, PACKAGED
from posviz.tables.sources import BUNDLED, BUNDLED_PREFIX, source_kind

Kind = Literal["formula", "checkpoint", "measured", "published"]

#: the badge's first words per kind, in the order a page lists its sources
KIND_WORDS: dict[str, str] = {
    "formula": "exact formula",
    "checkpoint": "read from a checkpoint",
    "measured": "measured here",
    "published": "published",
}


@dataclass(frozen=True)
class Provenance:
    """One source of a page's numbers: its ``kind`` and what names it (a citation, a file's
    hash, the control, a table and page)."""

    kind: Kind
    detail: str

    def __post_init__(self) -> None:
        if self.kind not in KIND_WORDS:
            raise ValueError(f"unknown provenance kind {self.kind!r}: one of {list(KIND_WORDS)}")
        if not self.detail.strip():
            raise ValueError(f"a {self.kind} source must name its citation, hash or control")

    @property
    def badge(self) -> str:
        """``"<kind words>: <detail>"``, e.g. ``"measured here: control, positions shuffled"``."""
        return f"{KIND_WORDS[self.kind]}: {self.detail}"


def _short_cite(key: str) -> str:
    """``Author year`` of a reference (its first author's surname, or the whole author line)."""
    if key not in REFERENCES:
        raise ValueError(f"unknown reference {key!r}")
    author = REFERENCES[key].author  # "Su et al.", "Wang & Chen", "Press, Smith & Lewis"
    if author.endswith(" et al.") or "&" not in author:
        lead = author
    elif "," not in author:
        lead = author  # two authors
    else:
        lead = f"{author.split(',')[0].strip()} et al."
    year = REFERENCES[key].year
    return f"{lead} {year}" if year is not None else lead


def formula(reference: str, where: str = "") -> Provenance:
    """Numbers computed from the definition in ``reference`` (a :data:`REFERENCES` key), e.g.
    ``formula("vaswani_2017", "§3.5")`` → "exact formula: Vaswani et al. 2017, §3.5"."""
    return Provenance("formula", ", ".join(p for p in (_short_cite(reference), where) if p))


def checkpoint(name: str, sha256: str) -> Provenance:
    """Numbers read from ``name``'s weights, checked against ``sha256`` before reading."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return Provenance("checkpoint", f"{name}, SHA-256 {sha256[:8]}…")


def measured(control: str) -> Provenance:
    """Numbers computed here, beside ``control`` (what the same measurement gives without the
    effect: shuffled positions, a random table, no positions …)."""
    return Provenance("measured", f"control, {control}")


def published(reference: str, where: str) -> Provenance:
    """A number printed in ``reference`` at ``where`` (e.g. "Table 4, p. 9")."""
    if not where.strip():
        raise ValueError("a published number needs its table or figure and page")
    return Provenance("published", f"{_short_cite(reference)}, {where}")


def badges(sources: tuple[Provenance, ...]) -> list[str]:
    """The badges of ``sources`` in :data:`KIND_WORDS` order, each once."""
    order = list(KIND_WORDS)
    return list(dict.fromkeys(s.badge for s in sorted(sources, key=lambda s: order.index(s.kind))))


def of_table(table) -> Provenance:
    """Where a learned table's numbers come from (a :class:`~posviz.tables.PositionTable`): a
    packaged checkpoint by the SHA-256 its file was checked against before it was read; a
    formula-made table by its formula; anything else (a hub model, a file, an upload, a lab run)
    by the SHA-256 of the rows as read, so two people can tell they saw the same table."""
    text = str(table.source).strip()
    if text == BUNDLED:
        return MINILM
    if text.startswith(BUNDLED_PREFIX) and text[len(BUNDLED_PREFIX) :] in PACKAGED:
        packaged = PACKAGED[text[len(BUNDLED_PREFIX) :]]
        return checkpoint(packaged.name, packaged.sha256)
    if source_kind(text) == "synthetic":
        return formula("vaswani_2017", "§3.5")
    rows = np.ascontiguousarray(np.asarray(table.matrix, dtype=np.float32)).tobytes()
    digest = hashlib.sha256(rows).hexdigest()
    # the page names the table; its source text (a path on the server) is not repeated here
    return Provenance("checkpoint", f"the rows as read, SHA-256 {digest[:8]}…")


#: the bundled MiniLM-L6 (the model the experiment pages run), by its checked SHA-256
MINILM = checkpoint(BUNDLED_MODEL_ID.split("/")[-1], BUNDLED_WEIGHTS_SHA256)
