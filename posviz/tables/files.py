"""Checkpoint files, local or on the hub, behind one small interface used by the loader.

The loader only ever asks for: the config, a file's size (or that it is missing), a byte range of a
file, a small JSON file, and — for the ``.bin`` fallback only — a whole file on local disk. Reading
through this interface is what keeps the hub path down to "header + one tensor".
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

#: ``progress(done_bytes, total_bytes_or_None)``, called while a whole file is fetched.
Progress = Callable[[int, int | None], None]


class CheckpointFiles(Protocol):
    """A model's files: a hub repository at one commit, or a directory on disk."""

    where: str  # human name used in messages ("openai-community/gpt2@abc123", a path)
    revision: str | None
    bytes_read: int  # bytes fetched or read so far

    def config(self) -> dict[str, Any] | None: ...

    def label(self, filename: str) -> str:
        """How messages name ``filename`` ("gpt2@abc123/model.safetensors", a path, an upload)."""

    def size(self, filename: str) -> int | None:
        """Size in bytes, or ``None`` when the file does not exist."""

    def read_range(self, filename: str, start: int, end: int) -> bytes:
        """Bytes ``start … end - 1`` of a file."""

    def read_json(self, filename: str) -> Any: ...

    def whole_file(self, filename: str, *, progress: Progress | None) -> Path:
        """The file on local disk (downloaded in full if needed)."""


def parse_json(raw: bytes, *, where: str) -> Any:
    """JSON from bytes, or a ValueError naming the file."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # ValueError: JSON, 4300+ digits
        raise ValueError(f"{where} is not valid JSON; the file is corrupt.") from None


def short_path(path: str | Path, *, limit: int = 80) -> str:
    """``path`` for a message: long ones keep their start and end around "…"."""
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-(limit // 2 - 1) :]}"


@contextlib.contextmanager
def user_path_errors(path: str | Path) -> Iterator[None]:
    """Turn any ``OSError`` from touching a user-given path into a ``ValueError`` naming it.

    A name too long (ENAMETOOLONG), no permission, a directory where a file was expected …: the
    message gives the (shortened) path and the system's reason instead of a traceback.
    """
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(
            f"{short_path(path)} could not be read ({reason}). Check the path, or upload the file."
        ) from None


class LocalFiles:
    """A model directory on disk (``config.json`` optional); OS errors become ``ValueError``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = str(directory)
        self.revision: str | None = None
        self.bytes_read = 0

    def label(self, filename: str) -> str:
        return short_path(f"{self.where}/{filename}")

    def config(self) -> dict[str, Any] | None:
        path = self.directory / "config.json"
        with user_path_errors(path):
            if not path.is_file():
                return None
        data = self.read_json("config.json")
        if not isinstance(data, dict):
            raise ValueError(f"{short_path(path)} is not a JSON object.")
        return data

    def size(self, filename: str) -> int | None:
        path = self.directory / filename
        with user_path_errors(path):
            return path.stat().st_size if path.is_file() else None

    def read_range(self, filename: str, start: int, end: int) -> bytes:
        path = self.directory / filename
        with user_path_errors(path), path.open("rb") as handle:
            handle.seek(start)
            data = handle.read(end - start)
        self.bytes_read += len(data)
        return data

    def read_json(self, filename: str) -> Any:
        with user_path_errors(self.directory / filename):
            raw = (self.directory / filename).read_bytes()
        self.bytes_read += len(raw)
        return parse_json(raw, where=self.label(filename))

    def whole_file(self, filename: str, *, progress: Progress | None) -> Path:
        path = self.directory / filename
        with user_path_errors(path):
            size = path.stat().st_size
        self.bytes_read += size
        if progress is not None:
            progress(size, size)
        return path


class MemoryFile:
    """A single uploaded file held in memory (e.g. a ``.safetensors`` upload)."""

    def __init__(self, filename: str, data: bytes) -> None:
        self.filename = filename
        self.data = data
        self.where = filename
        self.revision: str | None = None
        self.bytes_read = 0

    def label(self, filename: str) -> str:
        return filename  # an upload is one file: its name, said once

    def config(self) -> dict[str, Any] | None:
        return None

    def size(self, filename: str) -> int | None:
        return len(self.data) if filename == self.filename else None

    def read_range(self, filename: str, start: int, end: int) -> bytes:
        chunk = self.data[start:end]
        self.bytes_read += len(chunk)
        return chunk

    def read_json(self, filename: str) -> Any:
        raise ValueError(
            f"{filename}: an upload is a single file; shard indexes are not supported."
        )

    def whole_file(self, filename: str, *, progress: Progress | None) -> Path:
        raise ValueError(f"{filename}: upload a .safetensors or .npy file, not a PyTorch .bin.")
