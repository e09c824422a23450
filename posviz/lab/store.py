"""The run store: every finished lab run on disk as JSON + ``.npy`` (never pickle).

Layout: ``<root>/<run_id>/result.json`` plus one ``.npy`` per array. A run is written into a
temporary directory next to its final place (each file fsynced) and renamed into place with
``os.replace``, so a reader sees a whole run or none. Writers on several processes (replicas
sharing the directory) serialise on ``<root>/.lock`` (``fcntl.flock``); a run id that already
holds a readable run is never overwritten (write-once). A corrupted entry is moved aside to
``<root>/.corrupt/`` when its replacement is saved; no other entry is touched.

The run id is a hash of the question, the full :class:`~posviz.lab.config.LabConfig` and the code
version (a hash of the lab's source files and the formulas it reuses), so a changed formula or
preset never returns an old result.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

import posviz.encodings.alibi
import posviz.encodings.rope
import posviz.encodings.sinusoidal
import posviz.encodings.t5
from posviz.lab.config import LabConfig
from posviz.lab.results import LabResult, SummaryRow

FORMAT = 1
_RUN_ID = re.compile(r"^[0-9a-f]{16}$")
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_ARRAY_FIELDS = ("curves", "snapshots", "position_accuracy")
_CODE_FILES = (
    Path(__file__).parent,
    Path(posviz.encodings.sinusoidal.__file__),
    Path(posviz.encodings.rope.__file__),
    Path(posviz.encodings.alibi.__file__),
    Path(posviz.encodings.t5.__file__),
)


@functools.cache
def code_version() -> str:
    """Hash of the lab's source files and the encoding formulas it reuses (12 hex digits).

    Computed once per process: the code that trains is the code that was imported, and a run
    id must not change under a running job when the files on disk are edited (the page then
    lost track of its own job and showed a bare Run button with no word about the run).
    """
    digest = hashlib.sha256()
    for path in _CODE_FILES:
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.name.encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


def default_root() -> Path:
    """``$POSVIZ_LAB_DIR``, else ``~/.cache/posviz/lab``."""
    env = os.environ.get("POSVIZ_LAB_DIR")
    return Path(env) if env else Path.home() / ".cache" / "posviz" / "lab"


@dataclass(frozen=True)
class RunSummary:
    """One stored run, for lists: what it answered, when, and its learned tables."""

    run_id: str
    question_id: str
    seeds: int
    wall_s: float
    created: float  # seconds since the epoch (the entry's modification time)
    answer: str
    learned_variants: tuple[str, ...]


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _json_number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _from_json_number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


class RunStore:
    """Finished runs on disk, keyed by question, config and code version.

    Args:
        root: the directory; default :func:`default_root`. Created on first save.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def run_id(self, question_id: str, config: LabConfig) -> str:
        """Hash (16 hex digits) of the question id, the full config and :func:`code_version`."""
        key = {"question": question_id, "config": config.to_dict(), "code": code_version()}
        blob = json.dumps(key, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def path(self, run_id: str) -> Path:
        """The entry's directory.

        Raises:
            ValueError: ``run_id`` is not 16 lower-case hex digits.
        """
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise ValueError(
                f"run id {run_id!r} is not a lab run id (16 hex digits, e.g. as listed by "
                "`python -m posviz lab list`)."
            )
        return self.root / run_id

    def exists(self, run_id: str) -> bool:
        return (self.path(run_id) / "result.json").is_file()

    def load(self, run_id: str) -> LabResult | None:
        """The stored run, or None if there is none.

        Raises:
            ValueError: the entry exists but is corrupted (names the entry and what is wrong);
                :func:`posviz.lab.run_question` then retrains it.
        """
        folder = self.path(run_id)
        if not (folder / "result.json").is_file():
            return None
        try:
            data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
            return _result_from_json(data, folder)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"Stored lab run {run_id} in {folder} is corrupted ({error}); it will be "
                "retrained and replaced, other runs are not affected."
            ) from error

    def save(self, result: LabResult) -> Path:
        """Write a run atomically; a readable entry with the same id is kept (write-once).

        Returns:
            The entry's directory.
        """
        final = self.path(result.run_id)
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked():
            if final.exists():
                try:
                    if self.load(result.run_id) is not None:
                        return final  # another writer got there first: same config, same numbers
                except ValueError:
                    pass  # corrupted: moved aside below
                self._move_aside(final)
            staging = Path(tempfile.mkdtemp(prefix=f".{result.run_id}-", dir=self.root))
            try:
                _write_entry(result, staging)
                os.replace(staging, final)
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
        return final

    def list(self) -> list[RunSummary]:
        """Readable stored runs, newest first (corrupted entries are skipped)."""
        if not self.root.is_dir():
            return []
        out = []
        for folder in self.root.iterdir():
            if not _RUN_ID.match(folder.name) or not (folder / "result.json").is_file():
                continue
            try:
                data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
                out.append(_summary(data, folder))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return sorted(out, key=lambda s: s.created, reverse=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.root / ".lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _move_aside(self, folder: Path) -> None:
        aside = self.root / ".corrupt"
        aside.mkdir(exist_ok=True)
        os.replace(folder, aside / f"{folder.name}-{time.time_ns()}")


def _summary(data: dict[str, Any], folder: Path) -> RunSummary:
    return RunSummary(
        run_id=str(data["run_id"]),
        question_id=str(data["question_id"]),
        seeds=int(data["config"]["seeds"]),
        wall_s=float(data["wall_s"]),
        created=(folder / "result.json").stat().st_mtime,
        answer=str(data["answer"]),
        learned_variants=tuple(data["arrays"]["snapshots"]),
    )


def _write_entry(result: LabResult, folder: Path) -> None:
    arrays: dict[str, dict[str, list[int]]] = {}
    for name in _ARRAY_FIELDS:
        arrays[name] = {}
        for variant, array in getattr(result, name).items():
            if not _NAME.match(variant):
                raise ValueError(f"variant id {variant!r} must be letters, digits or _.")
            buffer = _npy_bytes(np.asarray(array))
            _fsync_write(folder / f"{name}__{variant}.npy", buffer)
            arrays[name][variant] = list(np.shape(array))
    _fsync_write(folder / "curve_steps.npy", _npy_bytes(np.asarray(result.curve_steps)))
    _fsync_write(folder / "snapshot_steps.npy", _npy_bytes(np.asarray(result.snapshot_steps)))
    data = {
        "format": FORMAT,
        "run_id": result.run_id,
        "question_id": result.question_id,
        "config": result.config.to_dict(),
        "code_version": result.code_version,
        "variant_ids": list(result.variant_ids),
        "variant_labels": list(result.variant_labels),
        "metrics": {
            v: {m: [_json_number(x) for x in values] for m, values in by_metric.items()}
            for v, by_metric in result.metrics.items()
        },
        "summary": [_row_json(row) for row in result.summary],
        "answer": result.answer,
        "n_params": result.n_params,
        "diverged": list(result.diverged),
        "notes": list(result.notes),
        "wall_s": result.wall_s,
        "extra": result.extra,
        "arrays": arrays,
    }
    _fsync_write(folder / "result.json", json.dumps(data, indent=1).encode("utf-8"))


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _row_json(row: SummaryRow) -> dict[str, Any]:
    data = asdict(row)
    for name in ("mean", "std", "low", "high"):
        data[name] = _json_number(data[name])
    data["values"] = [_json_number(v) for v in row.values]
    return data


def _row_from_json(data: dict[str, Any]) -> SummaryRow:
    values = dict(data)
    for name in ("mean", "std", "low", "high"):
        values[name] = _from_json_number(values[name])
    values["values"] = tuple(_from_json_number(v) for v in values["values"])
    return SummaryRow(**values)


def _load_array(folder: Path, name: str, shape: list[int] | None = None) -> np.ndarray:
    array = np.load(folder / f"{name}.npy", allow_pickle=False)
    if shape is not None and list(array.shape) != list(shape):
        raise ValueError(f"{name}.npy has shape {array.shape}, expected {tuple(shape)}")
    return array


def _result_from_json(data: dict[str, Any], folder: Path) -> LabResult:
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown format {data.get('format')!r} (expected {FORMAT})")
    arrays = {
        name: {
            v: _load_array(folder, f"{name}__{v}", shape)
            for v, shape in data["arrays"][name].items()
        }
        for name in _ARRAY_FIELDS
    }
    return LabResult(
        run_id=str(data["run_id"]),
        question_id=str(data["question_id"]),
        config=LabConfig.from_dict(data["config"]),
        code_version=str(data["code_version"]),
        variant_ids=tuple(data["variant_ids"]),
        variant_labels=tuple(data["variant_labels"]),
        metrics={
            v: {m: tuple(_from_json_number(x) for x in values) for m, values in by_metric.items()}
            for v, by_metric in data["metrics"].items()
        },
        summary=tuple(_row_from_json(row) for row in data["summary"]),
        answer=str(data["answer"]),
        curve_steps=_load_array(folder, "curve_steps"),
        curves=arrays["curves"],
        snapshot_steps=_load_array(folder, "snapshot_steps"),
        snapshots=arrays["snapshots"],
        position_accuracy=arrays["position_accuracy"],
        n_params={k: int(v) for k, v in data["n_params"].items()},
        diverged=tuple(data["diverged"]),
        notes=tuple(data["notes"]),
        wall_s=float(data["wall_s"]),
        extra={str(k): str(v) for k, v in data["extra"].items()},
    )
