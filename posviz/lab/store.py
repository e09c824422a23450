"""The run store: every finished lab run on disk as JSON + ``.npy`` (never pickle), checksummed.

The files, their SHA-256 manifest, atomic write-once saves and verified reads live in
:mod:`posviz.labfiles` (shared with the ``lab:`` table source); this module turns a
:class:`~posviz.lab.results.LabResult` into that entry and back. A corrupted entry (an edited
number included) raises :class:`~posviz.labfiles.CorruptEntry` naming the run; it is moved aside to
``<root>/.corrupt/`` when its replacement is saved, and no other entry is touched.

The run id is a hash of the question, the full :class:`~posviz.lab.config.LabConfig` and the code
version: a hash of the lab's sources, the store's file format and the statistics the answers use,
and every family's formula module (:func:`posviz.encodings.families.code_modules`), so a changed
formula, preset or estimator never returns an old result.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posviz import labfiles
from posviz.encodings.families import code_modules
from posviz.lab.config import LabConfig
from posviz.lab.results import LabResult, SummaryRow
from posviz.labfiles import CorruptEntry, default_root

__all__ = ["CorruptEntry", "RunStore", "RunSummary", "code_version", "default_root"]

_ARRAY_FIELDS = ("curves", "snapshots", "position_accuracy")
#: modules besides posviz/lab/*.py whose code decides a run's numbers or its answer's words.
_ALSO_HASHED = (
    "posviz.labfiles",
    "posviz.analysis.evidence",
    "posviz.analysis.probes",
    "posviz.encodings.families",
)


def _module_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ValueError(f"code module {name!r} cannot be found; it must be importable.")
    return Path(spec.origin)


def code_files() -> list[Path]:
    """The source files hashed into :func:`code_version`, in a fixed order."""
    lab = sorted(Path(__file__).parent.glob("*.py"))
    modules = dict.fromkeys((*_ALSO_HASHED, *code_modules()))
    return lab + [_module_file(name) for name in modules]


@functools.cache
def code_version() -> str:
    """Hash of :func:`code_files` (12 hex digits): the lab, its statistics, every formula.

    Computed once per process: the code that trains is the code that was imported, and a run
    id must not change under a running job when the files on disk are edited (the page then
    lost track of its own job and showed a bare Run button with no word about the run).
    """
    digest = hashlib.sha256()
    root = Path(__file__).parents[2]
    for file in code_files():
        try:
            name = file.relative_to(root).as_posix()
        except ValueError:
            name = file.name
        digest.update(name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class RunSummary:
    """One stored run, for lists: what it answered, when, and its learned tables.

    A corrupted entry is listed with ``corrupt`` set to what is wrong (and nothing else known).
    """

    run_id: str
    question_id: str
    seeds: int
    wall_s: float
    created: float  # seconds since the epoch (the entry's modification time)
    answer: str
    learned_variants: tuple[str, ...]
    corrupt: str = ""


def _json_number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _from_json_number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


class RunStore:
    """Finished runs on disk (:mod:`posviz.labfiles`), keyed by question, config and code.

    Args:
        root: the directory; default :func:`~posviz.labfiles.default_root`. Created on first save.
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
        return labfiles.entry_dir(self.root, run_id)

    def exists(self, run_id: str) -> bool:
        return labfiles.has_entry(self.root, run_id)

    def load(self, run_id: str) -> LabResult | None:
        """The stored run, or None if there is none.

        Raises:
            CorruptEntry: the entry exists but fails its checksums or cannot be read (names the
                run and what is wrong); :func:`posviz.lab.run_question` then retrains it.
        """
        try:
            meta, arrays = labfiles.read_entry(self.root, run_id)
        except labfiles.NoEntry:
            return None
        try:
            return _result_from_entry(meta, arrays)
        except (ValueError, KeyError, TypeError, IndexError) as error:
            raise CorruptEntry(run_id, f"its contents do not form a lab result: {error}") from None

    def save(self, result: LabResult) -> Path:
        """Write a run atomically; a readable entry with the same id is kept (write-once).

        Returns:
            The entry's directory.
        """
        meta, arrays = _entry(result)
        return labfiles.write_entry(self.root, result.run_id, meta, arrays)

    def list(self) -> list[RunSummary]:
        """Stored runs, newest first; corrupted entries are listed with ``corrupt`` set."""
        out = []
        for status in labfiles.list_entries(self.root):
            if status.meta is None:
                out.append(_corrupt_summary(status.run_id, status.created, status.why))
                continue
            try:
                out.append(_summary(status.meta, status.created))
            except (ValueError, KeyError, TypeError) as error:
                why = f"its contents do not form a lab result: {error}"
                out.append(_corrupt_summary(status.run_id, status.created, why))
        return out


def _corrupt_summary(run_id: str, created: float, why: str) -> RunSummary:
    return RunSummary(run_id, "", 0, 0.0, created, "", (), corrupt=why)


def _summary(data: dict[str, Any], created: float) -> RunSummary:
    return RunSummary(
        run_id=str(data["run_id"]),
        question_id=str(data["question_id"]),
        seeds=int(data["config"]["seeds"]),
        wall_s=float(data["wall_s"]),
        created=created,
        answer=str(data["answer"]),
        learned_variants=tuple(data.get("tables", {})),
    )


def _array_name(field: str, variant: str) -> str:
    return f"{field}__{labfiles.check_name(variant)}"


def _entry(result: LabResult) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and arrays of one run, as :func:`posviz.labfiles.write_entry` takes them."""
    arrays: dict[str, np.ndarray] = {
        "curve_steps": np.asarray(result.curve_steps),
        "snapshot_steps": np.asarray(result.snapshot_steps),
    }
    shapes: dict[str, dict[str, list[int]]] = {}
    for field in _ARRAY_FIELDS:
        shapes[field] = {}
        for variant, array in getattr(result, field).items():
            arrays[_array_name(field, variant)] = np.asarray(array)
            shapes[field][variant] = list(np.shape(array))
    tables = {
        variant: {
            "array": _array_name("snapshots", variant),
            "steps_array": "snapshot_steps",
            "label": result.label(variant),
            "trained_rows": int(result.config.max_len),
            "steps": int(result.config.steps),
        }
        for variant in result.snapshots
    }
    meta = {
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
        "arrays": shapes,
        "tables": tables,
    }
    return meta, arrays


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


def _shaped(arrays: dict[str, np.ndarray], name: str, shape: list[int] | None = None) -> np.ndarray:
    array = arrays[name]
    if shape is not None and list(array.shape) != list(shape):
        raise ValueError(f"{name}.npy has shape {array.shape}, expected {tuple(shape)}")
    return array


def _result_from_entry(data: dict[str, Any], arrays: dict[str, np.ndarray]) -> LabResult:
    fields = {
        field: {
            v: _shaped(arrays, _array_name(field, v), shape)
            for v, shape in data["arrays"][field].items()
        }
        for field in _ARRAY_FIELDS
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
        curve_steps=_shaped(arrays, "curve_steps"),
        curves=fields["curves"],
        snapshot_steps=_shaped(arrays, "snapshot_steps"),
        snapshots=fields["snapshots"],
        position_accuracy=fields["position_accuracy"],
        n_params={k: int(v) for k, v in data["n_params"].items()},
        diverged=tuple(data["diverged"]),
        notes=tuple(data["notes"]),
        wall_s=float(data["wall_s"]),
        extra={str(k): str(v) for k, v in data["extra"].items()},
    )
