"""The run store: every finished lab run on disk as JSON + ``.npy`` (never pickle), checksummed.

The files, their SHA-256 manifest, atomic write-once saves and verified reads live in
:mod:`posviz.labfiles` (shared with the ``lab:`` table source); this module turns a
:class:`~posviz.lab.engine.results.LabResult` into that entry and back. A corrupted entry (an edited
number included) raises :class:`~posviz.labfiles.CorruptEntry` naming the run; it is moved aside to
``<root>/.corrupt/`` when its replacement is saved, and no other entry is touched.

The run id (:func:`study_run_id`, one function for questions and paper checks) hashes what
trains: the study's kind, id and part, its *design* (arms, config, sweep, kind and settings; for a
paper check its arms, checkpoints, extractor and published numbers — never a title, explanation,
claim sentence, caveat or judge), the store's format, the engine's source (:func:`code_version`
of :data:`ENGINE_MODULES`) and the math of the families its arms train with
(:func:`families_key`: each mechanism's canonical description and its modules' source). Words,
judging, the CLI, the presentation, another family or another study change no id: stored runs
keep their raw per-seed arrays and every verdict is judged again from them when a run is loaded
(``judge``: the studies' :func:`posviz.lab.studies.loading.rejudge`, looked up by the stored
kind's name), so rewording or re-judging never retrains a stored answer.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import logging
import math
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from posviz import labfiles
from posviz.encodings.families import family_math
from posviz.lab.engine.config import LabConfig
from posviz.lab.engine.results import CardResult, LabResult
from posviz.labfiles import CorruptEntry, default_root

T = TypeVar("T", LabResult, CardResult)
#: judges a loaded result again from its stored arrays: ``result -> result`` of the same type.
Judge = Callable[[Any], Any]
_log = logging.getLogger(__name__)

__all__ = [
    "CorruptEntry",
    "RunStore",
    "RunSummary",
    "code_version",
    "default_root",
    "study_run_id",
]

#: the engine: the modules whose code decides every stored run's numbers (judging is not here:
#: it is redone on every load from the stored arrays; nor are the studies' words).
ENGINE_MODULES = (
    "posviz.lab.engine.config",
    "posviz.lab.engine.model",
    "posviz.lab.engine.train",
    "posviz.lab.engine.tasks",
    "posviz.lab.engine.sweep",
    "posviz.lab.engine.measure",
    "posviz.lab.engine.rows",
    "posviz.lab.engine.probe",
    "posviz.lab.engine.emergence",  # the layer probe is computed at training time and stored
    "posviz.lab.engine.induction",  # so are the attention heads' prefix-matching scores
    "posviz.lab.engine.card_inputs",  # a paper check's stored per-seed numbers
    "posviz.analysis.evidence",  # its ridge probe (emergence, probe)
    "posviz.analysis.probes",
    "posviz.data.lab_text",  # the character tasks' text (its SHA-256 is in the module)
)
#: the stored entry's layout (bump when the result types change incompatibly).
STORE_FORMAT = 3


def _module_file(name: str) -> Path:
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec(name)
        origin = None if spec is None else spec.origin
    if origin is None:
        raise ValueError(f"code module {name!r} cannot be found; it must be importable.")
    return Path(origin)


def code_files() -> list[Path]:
    """The engine's source files, hashed into :func:`code_version`, in a fixed order."""
    return [_module_file(name) for name in ENGINE_MODULES]


def read_source(file: Path) -> bytes:
    """A hashed file's bytes (the one place the run ids read code; tests replace it)."""
    return file.read_bytes()


def _file_key(file: Path) -> str:
    try:
        return file.relative_to(Path(__file__).parents[2]).as_posix()
    except ValueError:
        return file.name


@functools.cache
def _module_digest(name: str) -> str:
    """SHA-256 of one module's path and source, read once per process (see :func:`code_version`)."""
    file = _module_file(name)
    return hashlib.sha256(_file_key(file).encode() + b"\0" + read_source(file)).hexdigest()


@functools.cache
def code_version() -> str:
    """Hash of the engine's files (:data:`ENGINE_MODULES`, 12 hex digits).

    Computed once per process: the code that trains is the code that was imported, and a run
    id must not change under a running job when the files on disk are edited (the page then
    lost track of its own job and showed a bare Run button with no word about the run).
    """
    digest = hashlib.sha256()
    for name in ENGINE_MODULES:
        digest.update(_module_digest(name).encode())
    return digest.hexdigest()[:12]


def clear_code_caches() -> None:
    """Forget every hashed source (tests that edit what :func:`read_source` returns)."""
    _module_digest.cache_clear()
    code_version.cache_clear()


def families_key(schemes: Iterable[str]) -> dict[str, Any]:
    """What of each family in ``schemes`` decides a run's numbers: its mechanism's canonical
    description and the hash of its formula modules' source
    (:func:`posviz.encodings.families.family_math`); nothing of its page's words."""
    out = {}
    for scheme in sorted(set(schemes)):
        description, modules = family_math(scheme)
        out[scheme] = {**description, "source": [_module_digest(name) for name in modules]}
    return out


def canonical(value: Any) -> Any:
    """``value`` as JSON-able data, the same in every process: dataclasses as field dicts,
    tuples as lists, mappings with string keys, callables by ``module:qualname``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, functools.partial):
        return {"call": canonical(value.func), "args": canonical(value.args),
                "keywords": canonical(value.keywords)}  # fmt: skip
    if callable(value):
        return f"{value.__module__}:{value.__qualname__}"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def study_run_id(
    kind: str,
    study_id: str,
    design: Any,
    *,
    part: str = "default",
    schemes: Iterable[str] = (),
) -> str:
    """The run id (16 hex digits) of one study's run: its kind (``question``, ``paper_check``),
    id, part (``default``; a later part such as ``panel`` is a run of its own), its design (every
    setting it trains, JSON-able: arms, config, sweep …; never its words), the store format,
    the engine's :func:`code_version` and the math of the families its arms train with
    (``schemes``, :func:`families_key`). Another family or study, or any text, changes nothing."""
    key = {
        "study": kind,
        "id": study_id,
        "part": part,
        "settings": canonical(design),
        "format": STORE_FORMAT,
        "code": code_version(),
        "families": families_key(schemes),
    }
    blob = json.dumps(key, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def question_run_id(question: Designed, config: LabConfig, *, part: str = "default") -> str:
    """A question's run id with ``config``: :func:`study_run_id` of its design and config."""
    design = {"design": question.design(), "config": config.to_dict()}
    return study_run_id("question", question.id, design, part=part, schemes=question.schemes)


class Designed(Protocol):
    """A study whose runs the store keys (a :class:`~posviz.lab.studies.presets.Question`)."""

    @property
    def id(self) -> str: ...

    @property
    def schemes(self) -> tuple[str, ...]: ...

    def design(self) -> dict[str, Any]: ...


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


class RunStore:
    """Finished runs on disk (:mod:`posviz.labfiles`), keyed by question, config and code.

    Reads look in ``root`` and then in the read-only warm root (``$POSVIZ_LAB_WARM_DIR``, the
    Docker image's precomputed default answers); saves go to ``root`` only.

    Args:
        root: the directory; default :func:`~posviz.labfiles.default_root`. Created on first save.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def run_id(self, question: Designed, config: LabConfig, *, part: str = "default") -> str:
        """A question's run id with ``config`` (:func:`question_run_id`)."""
        return question_run_id(question, config, part=part)

    def path(self, run_id: str) -> Path:
        """The entry's directory.

        Raises:
            ValueError: ``run_id`` is not 16 lower-case hex digits.
        """
        return labfiles.entry_dir(self.root, run_id)

    def exists(self, run_id: str) -> bool:
        """Whether ``run_id`` is stored here or in the warm root (readable or not)."""
        return any(labfiles.has_entry(r, run_id) for r in labfiles.roots(self.root))

    def load(self, run_id: str, *, judge: Judge | None = None) -> LabResult | None:
        """The stored question run, or None if there is none; judged again by ``judge``
        (``result -> result``, e.g. :func:`posviz.lab.studies.loading.rejudge`) when given, else
        as stored (its arrays are what counts; the store judges nothing itself).

        Raises:
            CorruptEntry: the entry exists but fails its checksums, cannot be read, or is not a
                question's run (names the run and what is wrong); :func:`posviz.lab.run_question`
                then retrains it.
        """
        return self._load(run_id, LabResult, judge)

    def load_card(self, run_id: str, *, judge: Judge | None = None) -> CardResult | None:
        """The stored paper-check run (:mod:`posviz.lab.studies.cards`), or None if there is none.

        Raises:
            CorruptEntry: as :meth:`load`.
        """
        return self._load(run_id, CardResult, judge)

    def _load(self, run_id: str, kind: type[T], judge: Judge | None) -> T | None:
        try:
            meta, arrays = labfiles.read_entry(labfiles.find_root(self.root, run_id), run_id)
        except labfiles.NoEntry:
            return None
        if meta.get("type") != _TYPES[kind]:
            raise CorruptEntry(
                run_id, f"it holds a {meta.get('type')!r} run, not a {_TYPES[kind]!r} run"
            )
        try:
            result = _decode(_content(meta), kind, arrays)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
            raise CorruptEntry(run_id, f"its contents do not form a lab result: {error}") from None
        if judge is None:
            return result
        try:
            return judge(result)
        except (ValueError, KeyError, IndexError, TypeError) as error:
            # A judging bug, not a damaged entry: retraining would not help. The run is shown
            # as it was judged when it was trained, and the server log says why.
            _log.warning("stored lab run %s could not be judged again: %s", run_id, error)
            return result

    def save(self, result: LabResult | CardResult) -> Path:
        """Write a run atomically; a readable entry with the same id is kept (write-once).

        Returns:
            The entry's directory.
        """
        meta, arrays = _entry(result)
        return labfiles.write_entry(self.root, result.run_id, meta, arrays)

    def list(self) -> list[RunSummary]:
        """Stored runs, newest first; corrupted entries are listed with ``corrupt`` set."""
        out, seen = [], set()
        statuses = [s for root in labfiles.roots(self.root) for s in labfiles.list_entries(root)]
        for status in statuses:
            if status.run_id in seen:
                continue  # the writable root's entry is the one read
            seen.add(status.run_id)
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
    if data.get("type") == _TYPES[CardResult]:
        seeds = len(next(iter(next(iter(data["inputs"].values())).values())))
        return RunSummary(
            run_id=str(data["run_id"]),
            question_id=f"paper:{data['check_id']}",
            seeds=seeds,
            wall_s=float(data["wall_s"]),
            created=created,
            answer=str(data["verdict"]),
            learned_variants=(),
        )
    return RunSummary(
        run_id=str(data["run_id"]),
        question_id=str(data["question_id"]),
        seeds=int(data["config"]["seeds"]),
        wall_s=float(data["wall_s"]),
        created=created,
        answer=str(data["answer"]),
        learned_variants=tuple(data.get("tables", {})),
    )


# --------------------------------------------------------------------------- the codec
#
# A LabResult is a tree of frozen dataclasses, tuples, dicts, numbers, strings and arrays. It is
# written as JSON with every array replaced by {"npy": name} (the array goes to <name>.npy), and
# read back by following the dataclasses' type hints, so the format follows the types with no
# second description to keep in step. NaN is written as null and ±inf as "inf"/"-inf" (strict
# JSON has neither).


def _array_name(path: tuple[str, ...]) -> str:
    return labfiles.check_name("__".join(path))


def _encode(value: Any, path: tuple[str, ...], arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(value, np.ndarray):
        name = _array_name(path)
        arrays[name] = value
        return {"npy": name}
    if dataclasses.is_dataclass(value):
        return {
            f.name: _encode(getattr(value, f.name), (*path, f.name), arrays)
            for f in dataclasses.fields(value)
        }
    if isinstance(value, dict):
        return {str(k): _encode(v, (*path, str(k)), arrays) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v, (*path, str(i)), arrays) for i, v in enumerate(value)]
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return None
        return number if math.isfinite(number) else ("inf" if number > 0 else "-inf")
    if isinstance(value, np.integer):
        return int(value)
    raise TypeError(f"cannot store a {type(value).__name__} at {'/'.join(path)}")


def _decode(data: Any, hint: Any, arrays: dict[str, np.ndarray]) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return data
    if hint is np.ndarray:
        return arrays[data["npy"]]
    if origin in (types.UnionType, typing.Union):
        if data is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(data, inner, arrays)
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        # a field added later with a default (``CardResult.sizes``) takes it in an older entry
        return hint(
            **{
                f.name: _decode(data[f.name], hints[f.name], arrays)
                for f in dataclasses.fields(hint)
                if f.name in data or f.default is dataclasses.MISSING
            }
        )
    if origin is dict:
        return {str(k): _decode(v, args[1], arrays) for k, v in data.items()}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(v, args[0], arrays) for v in data)
        return tuple(_decode(v, a, arrays) for v, a in zip(data, args, strict=True))
    if origin is list:
        return [_decode(v, args[0], arrays) for v in data]
    if origin is typing.Literal or hint is str:
        return str(data)
    if hint is float:
        return (
            {None: math.nan, "inf": math.inf, "-inf": -math.inf}.get(data, data)
            if not isinstance(data, int | float)
            else float(data)
        )
    if hint is bool:
        if not isinstance(data, bool):
            raise TypeError(f"expected true/false, got {data!r}")
        return data
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise TypeError(f"expected a whole number, got {data!r}")
        return data
    raise TypeError(f"cannot read a {hint!r}")


def _tables(result: LabResult) -> dict[str, dict[str, Any]]:
    """The labfiles table index: every instance with snapshots, the preset's cell first."""
    first = list(result.default_cell.instances.values())
    order = first + [i for i in result.instances if i not in first]
    tables = {}
    for instance_id in order:
        inst = result.instances[instance_id]
        if inst.snapshots is None:
            continue
        steps = result.snapshot_steps_by_task[inst.task]
        label = result.label(inst.arm)
        if instance_id != inst.arm:
            label = (
                f"{label} ({inst.task}, init {inst.init})"
                if inst.init
                else f"{label} ({inst.task})"
            )
        tables[instance_id] = {
            "array": _array_name(("instances", instance_id, "snapshots")),
            "steps_array": _array_name(("snapshot_steps_by_task", inst.task)),
            "label": label,
            "trained_rows": inst.trained_rows,
            "steps": int(steps[-1]) if len(steps) else 0,
        }
    return tables


_TYPES: dict[type, str] = {LabResult: "question", CardResult: "paper_check"}
_WRAPPER = ("type", "tables")  # metadata keys that are not fields of the result


def _content(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in _WRAPPER}


def _entry(result: LabResult | CardResult) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and arrays of one run, as :func:`posviz.labfiles.write_entry` takes them."""
    arrays: dict[str, np.ndarray] = {}
    meta = _encode(result, (), arrays)
    meta["type"] = _TYPES[type(result)]
    meta["tables"] = _tables(result) if isinstance(result, LabResult) else {}
    return meta, arrays
