"""Cached loaders of position tables, under the UI's one cache policy (:mod:`posviz.ui.cache`).

Keys hold only what changes the result: a revision is part of the key for hub models only (a
synthetic sinusoid, the bundled table and a file on disk have no revisions, so a link that varies
the Revision box cannot make a new copy of them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from posviz.analysis.family_inputs import synthetic_vit_table
from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables import PositionTable, load_table, table_from_upload
from posviz.tables.picker import has_revisions
from posviz.ui.cache import cached_data

Progress = Callable[[int, int | None], None]


def cached_table(
    source: str, revision: str = "", part: str = "", _progress: Progress | None = None
) -> PositionTable:
    """``load_table`` cached by (source, revision, part); ``revision`` only counts for hub ids.

    ``_progress(done, total)`` is called while a ``.bin``-only checkpoint downloads (not part of
    the key). Raises ``ValueError`` from :func:`posviz.tables.load_table`.
    """
    source = source.strip()
    return _cached_load(source, revision.strip() if has_revisions(source) else "", part, _progress)


@cached_data()
def _cached_load(
    source: str, revision: str, part: str, _progress: Progress | None = None
) -> PositionTable:
    return load_table(source, revision=revision or None, part=part or None, progress=_progress)


def cached_upload(data: bytes, *, filename: str) -> PositionTable:
    """``table_from_upload`` cached by the file's SHA-256 and name (the bytes are not kept)."""
    return _cached_upload(hashlib.sha256(data).hexdigest(), filename, _data=data)


@cached_data()
def _cached_upload(digest: str, filename: str, *, _data: bytes) -> PositionTable:
    return table_from_upload(_data, filename=filename)


@cached_data()
def cached_sinusoidal(n_positions: int, d_model: int, base: float, layout: str) -> np.ndarray:
    """``posviz.sinusoidal`` in float64 (the page's checks hold to float64 rounding), shared
    read-only between sessions (byte-budgeted): the sinusoid page's one table per setting."""
    return sinusoidal(n_positions, d_model, base=base, layout=layout)


@cached_data()
def cached_vit_table(h: int, w: int, d_model: int) -> PositionTable:
    """:func:`posviz.analysis.family_inputs.synthetic_vit_table`, cached (raises ``ValueError``
    for a grid or width it refuses)."""
    return synthetic_vit_table(h, w, d_model)
