"""The lab run store's files: where an entry lives, its checksums, and verified reads.

One directory per run id (16 lower-case hex digits) under the store's root::

    <root>/<run_id>/result.json    the run's metadata: config, numbers, text (strict JSON)
    <root>/<run_id>/<name>.npy     one array per name (``np.save``, ``allow_pickle=False``)
    <root>/<run_id>/manifest.json  {"format": 3, "sha256": {"result.json": hex, "<name>.npy": hex},
                                    "hmac": hex}

An entry is written into a temporary directory next to its final place (each file fsynced) and
renamed into place with ``os.replace``, so a reader sees a whole entry or none. Writers on several
processes (replicas sharing the directory) serialise on ``<root>/.lock`` (``fcntl.flock``). An id
that already holds a readable entry is never overwritten (write-once); a corrupted one is moved to
``<root>/.corrupt/`` when its replacement is written, and no other entry is touched.

Every read verifies the manifest's HMAC-SHA256 (keyed with the store's secret, over the run id
and every file's SHA-256), then the SHA-256 of ``result.json``'s bytes and of every ``.npy``
against the manifest, and that nothing is missing: an edited number is a :class:`CorruptEntry`,
never a result, even when whoever edited it recomputed the checksums. The key
(:func:`store_key`) is ``$POSVIZ_LAB_SECRET`` or ``<root>/.secret`` (32 random bytes, created
0600 on the first save, refused when others may read or write it). The read-only warm root is
read with its own ``.secret``, baked with it into the Docker image: a store is only ever as
trustworthy as the directory that holds its key, and the warm one cannot be written at all.
Arrays are decoded from the bytes that were hashed (no second read) and never unpickled. Messages
name the run id and the file, never a path on the server.

Learned tables (for ``lab:`` sources, :func:`read_table`): the writer lists them in the metadata,
``meta["tables"] = {table_id: {"array": name, "steps_array": name, "label": str, "trained_rows":
int, "steps": int}}`` with ``arrays[name]`` of shape ``(seeds, n_snapshots, rows, p)`` and
``arrays[steps_array]`` the ``(n_snapshots,)`` training steps of the snapshots.

This module sits just above the utilities floor (stdlib, numpy and :func:`posviz.jobs.flocked`,
the one file lock) so that both :mod:`posviz.lab.store` and
the ``lab:`` source of :func:`posviz.tables.load_table` read entries the same way.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posviz.jobs import flocked

FORMAT = 3
SECRET = ".secret"
#: the environment variable that, when set, keys the writable store instead of its .secret file.
SECRET_ENV = "POSVIZ_LAB_SECRET"
RESULT = "result.json"
MANIFEST = "manifest.json"
PREFIX = "lab:"
SPEC_HELP = "lab:<run-id>[/<table>[/<seed>[/<step>]]]"
_RUN_ID = re.compile(r"^[0-9a-f]{16}$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")  # array and table names: safe in paths, URLs


class CorruptEntry(ValueError):
    """A stored entry that fails its checks (checksum, missing file, unreadable JSON or array).

    ``run_id`` names the entry; the message says what is wrong and never holds a server path.
    """

    def __init__(self, run_id: str, why: str) -> None:
        self.run_id = run_id
        self.why = why
        super().__init__(
            f"Stored lab run {run_id} is corrupted ({why}); it will be retrained and replaced, "
            "other runs are not affected."
        )


class NoEntry(ValueError):
    """No entry is stored under this run id."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"No stored lab run {run_id!r} on this server; run its question first "
            "(`python -m posviz lab run QUESTION`) or pick one from `python -m posviz lab list`."
        )


def default_root() -> Path:
    """``$POSVIZ_LAB_DIR``, else ``~/.cache/posviz/lab``."""
    env = os.environ.get("POSVIZ_LAB_DIR")
    return Path(env) if env else Path.home() / ".cache" / "posviz" / "lab"


def warm_root() -> Path | None:
    """``$POSVIZ_LAB_WARM_DIR``: a read-only store of precomputed runs (the Docker image's default
    answers), read after the writable root; None when unset."""
    env = os.environ.get("POSVIZ_LAB_WARM_DIR")
    return Path(env) if env else None


def roots(root: Path) -> list[Path]:
    """Where entries are read from, in order: ``root``, then :func:`warm_root` if set."""
    warm = warm_root()
    out = [Path(root)]
    if warm is not None and warm.resolve() != Path(root).resolve():
        out.append(warm)
    return out


def find_root(root: Path, run_id: str) -> Path:
    """The first of :func:`roots` that holds ``run_id`` (``root`` when none does)."""
    for candidate in roots(root):
        if has_entry(candidate, run_id):
            return candidate
    return Path(root)


def check_run_id(run_id: object) -> str:
    """``run_id`` itself when it is 16 lower-case hex digits.

    Raises:
        ValueError: anything else (the message shows what a run id looks like).
    """
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ValueError(
            f"run id {str(run_id)[:40]!r} is not a lab run id (16 hex digits, e.g. as listed by "
            "`python -m posviz lab list`)."
        )
    return run_id


def check_name(name: object) -> str:
    """``name`` itself when it is a safe array or table name (letters, digits, ``_ . -``).

    Raises:
        ValueError: an unsafe name (it would escape the entry's directory or break a URL).
    """
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 120:
        raise ValueError(
            f"name {str(name)[:40]!r} must be letters, digits, '_', '.' or '-' (not first), "
            "at most 120 characters."
        )
    return name


def entry_dir(root: Path, run_id: str) -> Path:
    """The directory of one entry (validated id; the directory may not exist)."""
    return Path(root) / check_run_id(run_id)


def has_entry(root: Path, run_id: str) -> bool:
    """Whether an entry (readable or not) is stored under ``run_id``."""
    return (entry_dir(root, run_id) / RESULT).is_file()


def _is_warm(root: Path) -> bool:
    warm = warm_root()
    return warm is not None and warm.resolve() == Path(root).resolve()


def store_key(root: Path, *, create: bool = False) -> bytes | None:
    """The key that signs the manifests under ``root`` (see the module's docstring).

    ``$POSVIZ_LAB_SECRET`` keys the writable store when set; otherwise ``<root>/.secret``, which
    ``create`` makes (32 random bytes as hex, mode 0600) when it is missing. None: no key yet.

    Raises:
        ValueError: the writable store's key file may be read or written by others, or is not
            this user's (the message says how to fix it).
    """
    root = Path(root)
    warm = _is_warm(root)
    env = os.environ.get(SECRET_ENV)
    if env and not warm:
        return env.encode("utf-8")
    path = root / SECRET
    if create and not warm and not path.exists():
        root.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(32))
                handle.flush()
                os.fsync(handle.fileno())
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if not warm and (info.st_mode & 0o077 or info.st_uid != os.geteuid()):
        raise ValueError(
            f"the lab store's key file {SECRET} may be read or changed by other users (mode "
            f"{info.st_mode & 0o777:o}); run `chmod 600` on it as its owner, or set {SECRET_ENV}."
        )
    key = path.read_bytes().strip()
    return key or None


def signature(key: bytes, run_id: str, hashes: dict[str, str]) -> str:
    """HMAC-SHA256 over the run id, the format and every file's SHA-256 (canonical JSON)."""
    body = json.dumps({"format": FORMAT, "run_id": run_id, "sha256": hashes}, sort_keys=True)
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def entry_files(
    meta: dict[str, Any], arrays: dict[str, np.ndarray], *, run_id: str, key: bytes
) -> dict[str, bytes]:
    """Every file of an entry, by name, manifest included (what :func:`write_entry` writes),
    the manifest signed with ``key`` (:func:`store_key`).

    Raises:
        ValueError: an unsafe array name, or metadata that is not strict JSON (NaN/inf must be
            written as null by the caller).
    """
    try:
        # key order kept (no sort_keys): the first table listed is a run's default table
        text = json.dumps(meta, indent=1, allow_nan=False)
    except ValueError as error:
        raise ValueError(
            f"the run's metadata is not strict JSON ({error}); write NaN/inf as null."
        ) from None
    files = {RESULT: text.encode("utf-8")}
    for name, array in arrays.items():
        files[f"{check_name(name)}.npy"] = _npy_bytes(array)
    hashes = {n: _sha256(b) for n, b in sorted(files.items())}
    manifest = {"format": FORMAT, "sha256": hashes, "hmac": signature(key, run_id, hashes)}
    files[MANIFEST] = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8")
    return files


def _locked(root: Path) -> AbstractContextManager[None]:
    return flocked(root / ".lock")


def move_aside(root: Path, run_id: str) -> None:
    """Move an entry to ``<root>/.corrupt/`` (kept for inspection, out of every listing)."""
    folder = entry_dir(root, run_id)
    aside = Path(root) / ".corrupt"
    aside.mkdir(exist_ok=True)
    os.replace(folder, aside / f"{run_id}-{time.time_ns()}")


def write_entry(
    root: Path, run_id: str, meta: dict[str, Any], arrays: dict[str, np.ndarray]
) -> Path:
    """Write an entry atomically; a readable entry with the same id is kept (write-once).

    A corrupted entry under the same id is moved aside first. Returns the entry's directory.

    Raises:
        ValueError: a bad run id or array name, or metadata that is not strict JSON.
    """
    final = entry_dir(root, run_id)
    entry_files(meta, arrays, run_id=run_id, key=b"-")  # validates before the disk is touched
    Path(root).mkdir(parents=True, exist_ok=True)
    key = store_key(root, create=True)
    assert key is not None  # created above (or set in the environment)
    files = entry_files(meta, arrays, run_id=run_id, key=key)
    with _locked(Path(root)):
        if final.exists():
            try:
                read_entry(root, run_id)
                return final  # another writer got there first: same config, same numbers
            except NoEntry:
                shutil.rmtree(final, ignore_errors=True)  # a directory without result.json
            except CorruptEntry:
                move_aside(root, run_id)
        staging = Path(tempfile.mkdtemp(prefix=f".{run_id}-", dir=root))
        try:
            for name, data in files.items():
                _fsync_write(staging / name, data)
            os.replace(staging, final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return final


def _read_bytes(folder: Path, run_id: str, name: str) -> bytes:
    try:
        return (folder / name).read_bytes()
    except FileNotFoundError:
        raise CorruptEntry(run_id, f"{name} is missing") from None
    except OSError as error:
        raise CorruptEntry(run_id, f"{name} cannot be read ({error.strerror})") from None


def _manifest(folder: Path, run_id: str) -> dict[str, str]:
    data = _read_bytes(folder, run_id, MANIFEST)
    try:
        manifest = json.loads(data)
    except ValueError:
        raise CorruptEntry(run_id, f"{MANIFEST} is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise CorruptEntry(run_id, f"{MANIFEST} has format {found!r}, this posviz reads {FORMAT}")
    hashes = manifest.get("sha256")
    if not isinstance(hashes, dict) or RESULT not in hashes:
        raise CorruptEntry(run_id, f"{MANIFEST} lists no checksum for {RESULT}")
    try:
        key = store_key(folder.parent)
    except ValueError as error:
        raise CorruptEntry(run_id, str(error)) from None
    if key is None:
        raise CorruptEntry(run_id, f"its store has no key ({SECRET}) to verify it with")
    signed = manifest.get("hmac")
    expected = signature(key, run_id, {str(k): str(v) for k, v in hashes.items()})
    if not isinstance(signed, str) or not hmac.compare_digest(signed, expected):
        raise CorruptEntry(
            run_id,
            f"{MANIFEST}'s signature does not match this store's key: the entry was changed "
            "after it was written (checksums recomputed or not), or written with another key",
        )
    for name in hashes:
        if name != RESULT and not (name.endswith(".npy") and _NAME.match(name[:-4])):
            raise CorruptEntry(run_id, f"{MANIFEST} lists an unexpected file {name[:40]!r}")
    return {str(k): str(v) for k, v in hashes.items()}


def _verified(folder: Path, run_id: str, name: str, expected: str) -> bytes:
    data = _read_bytes(folder, run_id, name)
    if _sha256(data) != expected:
        raise CorruptEntry(run_id, f"{name} does not match its SHA-256 checksum")
    return data


def _load_npy(run_id: str, name: str, data: bytes) -> np.ndarray:
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise CorruptEntry(run_id, f"{name} is not a readable .npy array") from None


def read_entry(root: Path, run_id: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """An entry's metadata and arrays, each file checked against the manifest's SHA-256.

    Returns:
        ``(meta, arrays)``: the parsed ``result.json`` and ``{name: array}`` for every ``.npy``.
    Raises:
        ValueError: a malformed run id.
        NoEntry: nothing is stored under ``run_id``.
        CorruptEntry: a checksum mismatch, a missing or unlisted file, unreadable JSON or array.
    """
    folder = entry_dir(root, run_id)
    if not (folder / RESULT).is_file():
        raise NoEntry(run_id)
    hashes = _manifest(folder, run_id)
    on_disk = {p.name for p in folder.glob("*.npy")}
    unlisted = sorted(on_disk - set(hashes))
    if unlisted:
        raise CorruptEntry(run_id, f"{unlisted[0]} is not in {MANIFEST}")
    text = _verified(folder, run_id, RESULT, hashes[RESULT])
    try:
        meta = json.loads(text)
    except ValueError:  # UnicodeDecodeError included
        raise CorruptEntry(run_id, f"{RESULT} is not valid JSON") from None
    if not isinstance(meta, dict):
        raise CorruptEntry(run_id, f"{RESULT} is not a JSON object")
    arrays = {
        name[:-4]: _load_npy(run_id, name, _verified(folder, run_id, name, digest))
        for name, digest in hashes.items()
        if name != RESULT
    }
    return meta, arrays


@dataclass(frozen=True)
class EntryStatus:
    """One directory of the store, for listings: readable (``meta`` set) or corrupted (``why``)."""

    run_id: str
    created: float  # seconds since the epoch (result.json's modification time)
    meta: dict[str, Any] | None
    why: str = ""

    @property
    def corrupt(self) -> bool:
        return self.meta is None


def list_entries(root: Path) -> list[EntryStatus]:
    """Every entry under ``root``, newest first; corrupted ones are listed with what is wrong."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for folder in root.iterdir():
        if not _RUN_ID.match(folder.name) or not (folder / RESULT).is_file():
            continue
        try:
            created = (folder / RESULT).stat().st_mtime
        except OSError:
            continue  # removed while listing
        try:
            meta, _ = read_entry(root, folder.name)
            out.append(EntryStatus(folder.name, created, meta))
        except CorruptEntry as error:
            out.append(EntryStatus(folder.name, created, None, error.why))
    return sorted(out, key=lambda s: s.created, reverse=True)


# --------------------------------------------------------------------------- learned tables


@dataclass(frozen=True)
class TableSpec:
    """A parsed ``lab:`` source: run id, table (None: the first), seed, step (None: the last)."""

    run_id: str
    table: str | None
    seed: int
    step: int | None


@dataclass(frozen=True)
class LabTable:
    """One learned table read from the store, with what a page says about it.

    ``matrix`` ``(rows, p)`` float32; ``source`` the full spec
    (``lab:<run>/<table>/<seed>/<step>``); ``notes`` where it came from and which rows training
    never used.
    """

    matrix: np.ndarray
    source: str
    label: str
    question_id: str
    trained_rows: int
    notes: tuple[str, ...]


def parse_spec(spec: object) -> TableSpec:
    """Parse ``lab:<run-id>[/<table>[/<seed>[/<step>]]]``.

    Raises:
        ValueError: not a ``lab:`` source, too many parts, a bad run id or table name, a seed or
            step that is not a whole number (the message shows the grammar).
    """
    if not isinstance(spec, str) or not spec.startswith(PREFIX):
        raise ValueError(
            f"{str(spec)[:60]!r} is not a lab table; use {SPEC_HELP}, e.g. as listed by "
            "`python -m posviz lab list`."
        )
    parts = spec[len(PREFIX) :].split("/")
    if len(parts) > 4 or not parts[0]:
        raise ValueError(f"{spec[:80]!r} has {len(parts)} parts; use {SPEC_HELP}.")
    run_id = check_run_id(parts[0])
    table = check_name(parts[1]) if len(parts) > 1 and parts[1] else None
    numbers = []
    for name, text in zip(("seed", "step"), parts[2:], strict=False):
        if not text.isdigit() or len(text) > 9:
            raise ValueError(f"{name} {text[:20]!r} in {spec[:80]!r} must be a whole number ≥ 0.")
        numbers.append(int(text))
    return TableSpec(
        run_id, table, numbers[0] if numbers else 0, numbers[1] if len(numbers) > 1 else None
    )


def _table_index(meta: dict[str, Any], run_id: str) -> dict[str, dict[str, Any]]:
    tables = meta.get("tables", {})
    if not isinstance(tables, dict):
        raise CorruptEntry(run_id, f"{RESULT} has a malformed table index")
    return tables


def read_table(spec: str, *, root: Path | None = None) -> LabTable:
    """The learned table named by a ``lab:`` spec (see :func:`parse_spec`), checksums verified.

    Defaults: the run's first table, seed 0, the last snapshot.

    Raises:
        ValueError: a malformed spec; no such run (:class:`NoEntry`); a corrupted run
            (:class:`CorruptEntry`); a run without learned tables; an unknown table, seed or step
            (the message lists what exists).
    """
    parsed = parse_spec(spec)
    run_id = parsed.run_id
    meta, arrays = read_entry(find_root(root or default_root(), run_id), run_id)
    tables = _table_index(meta, run_id)
    if not tables:
        raise ValueError(f"Lab run {run_id} has no learned table (its arms use none).")
    name = parsed.table or next(iter(tables))
    if name not in tables:
        raise ValueError(
            f"Lab run {run_id} has no learned table {name!r}; choose {', '.join(tables)}."
        )
    try:
        info = tables[name]
        snaps, steps = arrays[info["array"]], [int(s) for s in arrays[info["steps_array"]]]
        label, trained, total = str(info["label"]), int(info["trained_rows"]), int(info["steps"])
    except (KeyError, TypeError, ValueError):
        raise CorruptEntry(run_id, f"the table index entry {name!r} is malformed") from None
    if snaps.ndim != 4 or snaps.shape[1] != len(steps):
        raise CorruptEntry(run_id, f"table {name!r} has shape {snaps.shape}")
    if not 0 <= parsed.seed < snaps.shape[0]:
        raise ValueError(
            f"seed {parsed.seed} is out of range; run {run_id} has seeds 0 … {snaps.shape[0] - 1}."
        )
    step = steps[-1] if parsed.step is None else parsed.step
    if step not in steps:
        raise ValueError(f"step {step} has no snapshot in run {run_id}; choose one of {steps}.")
    question = str(meta.get("question_id", ""))
    return LabTable(
        matrix=np.array(snaps[parsed.seed, steps.index(step)], dtype=np.float32),
        source=f"{PREFIX}{run_id}/{name}/{parsed.seed}/{step}",
        label=label,
        question_id=question,
        trained_rows=trained,
        notes=(
            f"Trained by the position lab ({question}, {label}), seed {parsed.seed}, step "
            f"{step} of {total}.",
            f"Training sequences were at most {trained} tokens long; rows from {trained} on were "
            "never used and keep their random initial values.",
        ),
    )


def list_tables(*, root: Path | None = None) -> list[str]:
    """Specs (``lab:<run-id>/<table>``) of every readable stored run's tables, newest first
    (the writable root's, then the warm root's)."""
    out = []
    statuses = [s for r in roots(root or default_root()) for s in list_entries(r)]
    seen: set[str] = set()
    for status in statuses:
        if status.run_id in seen:
            continue
        seen.add(status.run_id)
        if status.meta is None:
            continue
        tables = status.meta.get("tables", {})
        if isinstance(tables, dict):
            out.extend(f"{PREFIX}{status.run_id}/{name}" for name in tables)
    return out
