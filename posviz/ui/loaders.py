"""Cached loaders of position tables, under the UI's one cache policy (:mod:`posviz.ui.cache`).

Keys hold only what changes the result: a revision is part of the key for hub models only (a
synthetic sinusoid, the bundled table and a file on disk have no revisions, so a link that varies
the Revision box cannot make a new copy of them, issue #13.1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from posviz.encodings.sinusoidal import sinusoidal
from posviz.tables import PositionTable, load_table, source_kind, table_from_upload
from posviz.ui.cache import cached_data

Progress = Callable[[int, int | None], None]
#: tables up to this size are keyed by content too (uploads are far smaller).
DIGEST_LIMIT_BYTES = 16 * 2**20


def has_revisions(source: str) -> bool:
    """Whether ``source`` is a hub model id (the only kind of source with revisions).

    ``bundled``, ``sinusoidal:…``, ``lab:…`` and anything written like a path have none (the
    source grammar's :func:`posviz.tables.source_kind`, which never touches the disk).
    """
    return source_kind(source) == "hub"


def cached_table(
    source: str, revision: str = "", part: str = "", _progress: Progress | None = None
) -> PositionTable:
    """``load_table`` cached by (source, revision, part); ``revision`` only counts for hub ids.

    ``_progress(done, total)`` is called while a ``.bin``-only checkpoint downloads (not part of
    the key). Raises ``ValueError`` from :func:`posviz.tables.load_table`.
    """
    source = source.strip()
    if not has_revisions(source):
        revision = ""
    return _cached_load(source, revision.strip(), part, _progress=_progress)


@cached_data()
def _cached_load(
    source: str, revision: str, part: str, *, _progress: Progress | None = None
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
    """``posviz.sinusoidal`` as float32, shared read-only between sessions (byte-budgeted)."""
    return sinusoidal(n_positions, d_model, base=base, layout=layout, dtype=np.float32)


def table_cache_key(table: PositionTable) -> str:
    """A string that identifies ``table``'s matrix, for caching what is computed from it.

    Source, revision, tensor, shape and dtype; plus a content digest for tables up to 16 MB (so
    two uploads with the same file name never share a picture; bigger tables are never uploads).
    """
    matrix = np.ascontiguousarray(table.matrix)
    parts = [
        table.source,
        table.revision or "",
        table.tensor_name,
        table.kind,
        "x".join(map(str, matrix.shape)),
        str(matrix.dtype),
    ]
    if matrix.nbytes <= DIGEST_LIMIT_BYTES:
        parts.append(hashlib.blake2b(matrix.data, digest_size=12).hexdigest())
    return "|".join(parts)
