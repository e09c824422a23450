"""What a source string names, and the checkpoint files behind it.

``"bundled"``, ``"sinusoidal:NxD"``, a local ``.npy`` / ``.safetensors`` file or model directory, or
else a hub model id. Only hub ids have revisions: a revision given with anything else is dropped
here, so it can change neither the table nor a cache key built from :attr:`Source.revision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import posviz.settings  # read as posviz.settings.settings() so tests can patch it
from posviz.tables.bundled import BUNDLED_MODEL_ID, BUNDLED_REVISION, verified_bundled_weights
from posviz.tables.files import CheckpointFiles, LocalFiles, short_path, user_path_errors
from posviz.tables.hub import HubFiles
from posviz.tables.synthetic import SYNTHETIC_PREFIX

SourceKind = Literal["synthetic", "bundled", "hub", "directory", "safetensors", "npy"]


@dataclass(frozen=True)
class Source:
    """A resolved source: its kind, the text asked for, and where it lives."""

    kind: SourceKind
    text: str  # what was asked for, stripped; becomes PositionTable.source
    path: Path | None = None  # local kinds only
    revision: str | None = None  # hub only

    @property
    def filename(self) -> str | None:
        """The weights file to read for a single-file source, else ``None`` (the loader looks)."""
        return self.path.name if self.kind == "safetensors" and self.path else None


def resolve_source(source: str, *, revision: str | None = None) -> Source:
    """Say what ``source`` names; ``revision`` is kept for hub ids only.

    Raises:
        ValueError: empty, a path while local paths are off, a path that does not exist or cannot
            be read (too long, no permission), or a file that is not ``.npy``/``.safetensors``.
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError("Empty source: use 'bundled', a hub id, a file path or 'sinusoidal:NxD'.")
    text = source.strip()
    if "\x00" in text:
        raise ValueError(f"{short_path(text)!r} contains a NUL character; no file or model does.")
    if text.startswith(SYNTHETIC_PREFIX):
        return Source("synthetic", text)
    if text == "bundled":
        return Source("bundled", text)
    if not _looks_like_path(text):
        return Source("hub", text, revision=(revision or "").strip() or None)
    return _local_source(text)


def _looks_like_path(source: str) -> bool:
    """``source`` names a file or directory rather than a hub id.

    When local paths are turned off (hosted servers), the answer never depends on the server's
    disk, and anything written like a path is refused outright.
    """
    by_syntax = source.startswith(("/", "./", "../", "~", "\\")) or source.endswith(
        (".npy", ".safetensors")
    )
    if not posviz.settings.settings().allow_local_paths:
        if by_syntax or source in (".", ".."):
            raise ValueError(
                f"{short_path(source)!r} looks like a file path, and reading files from this "
                "server's disk is not allowed here (POSVIZ_ALLOW_LOCAL_PATHS is off). Upload the "
                "file instead, or enter a hub model id such as openai-community/gpt2."
            )
        return False
    if by_syntax:
        return True
    with user_path_errors(source):
        return Path(source).exists()


def _local_source(text: str) -> Source:
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~someone" with no such user
        raise ValueError(f"{short_path(text)}: no such user's home directory.") from None
    with user_path_errors(text):  # the path as typed, so the user recognises it
        exists, is_dir = path.exists(), path.is_dir()
    if not exists:
        raise ValueError(f"{short_path(text)} does not exist. Check the path.")
    if is_dir:
        return Source("directory", text, path)
    if path.suffix == ".npy":
        return Source("npy", text, path)
    if path.suffix == ".safetensors":
        return Source("safetensors", text, path)
    raise ValueError(
        f"{short_path(text)}: expected a model directory, a .safetensors file or a .npy file."
    )


def open_files(source: Source) -> CheckpointFiles:
    """The checkpoint files behind a bundled, hub, directory or ``.safetensors`` source.

    Raises:
        ValueError: a synthetic or ``.npy`` source (no checkpoint files), or any hub error.
    """
    if source.kind == "bundled":
        files = LocalFiles(verified_bundled_weights().parent)
        files.where, files.revision = f"bundled {BUNDLED_MODEL_ID}", BUNDLED_REVISION
        return files
    if source.kind == "hub":
        return HubFiles(source.text, source.revision)
    if source.kind == "directory" and source.path is not None:
        return LocalFiles(source.path)
    if source.kind == "safetensors" and source.path is not None:
        return LocalFiles(source.path.parent)
    raise ValueError(
        f"{short_path(source.text)} is not a model directory (expected config.json + weights)."
    )


def source_revision(source: str, revision: str | None) -> str | None:
    """The revision that can change what ``source`` loads: ``revision`` for hub ids, else ``None``.

    For cache keys: ``cached_table("bundled", "v1")`` and ``cached_table("bundled", "")`` are
    the same table, so a key built from this value does not split them.

    Raises:
        ValueError: as :func:`resolve_source`.
    """
    return resolve_source(source, revision=revision).revision
