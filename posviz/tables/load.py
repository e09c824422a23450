"""``load_table``: a position table from the bundled model, the hub, a local file or a formula.

Row ``p`` of the returned matrix is the vector the model adds at token position ``p``: offset rows
(RoBERTa, XLM-R, OPT, BART) and the ViT CLS row are moved to ``set_aside`` with the reason,
following how each model's forward pass indexes its table (see :mod:`posviz.tables.registry`).
"""

from __future__ import annotations

import io
import pickle
import re
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from posviz.tables import registry
from posviz.tables.files import CheckpointFiles, LocalFiles, Progress
from posviz.tables.safetensors_format import (
    check_readable,
    decode_tensor,
    header_length,
    parse_header,
)
from posviz.tables.table import PositionTable, SetAside

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_SYNTHETIC = re.compile(r"^sinusoidal:(\d+)x(\d+)(?::([a-z_-]+))?$")
_ALL_SUFFIXES = tuple(
    dict.fromkeys(
        s for specs in registry.REGISTRY.values() for spec in specs for s in spec.suffixes
    )
)


def _looks_like_path(source: str) -> bool:
    """``source`` names a file or directory rather than a hub id.

    When local paths are turned off (hosted servers), the answer never depends on the server's
    disk, and anything written like a path is refused outright.
    """
    from posviz.settings import settings

    by_syntax = source.startswith(("/", "./", "../", "~", "\\")) or source.endswith(
        (".npy", ".safetensors")
    )
    if not settings().allow_local_paths:
        if by_syntax or source in (".", ".."):
            raise ValueError(
                f"{source!r} looks like a file path, and reading files from this server's disk is "
                "not allowed here (POSVIZ_ALLOW_LOCAL_PATHS is off). Upload the file instead, or "
                "enter a hub model id such as openai-community/gpt2."
            )
        return False
    return by_syntax or Path(source).exists()


def open_files(source: str, *, revision: str | None = None) -> CheckpointFiles:
    """The checkpoint files behind ``source``: "bundled", a local model directory, or a hub id."""
    from posviz.tables.bundled import BUNDLED_MODEL_ID, BUNDLED_REVISION, verified_bundled_weights

    if source == "bundled":
        files = LocalFiles(verified_bundled_weights().parent)
        files.where, files.revision = f"bundled {BUNDLED_MODEL_ID}", BUNDLED_REVISION
        return files
    if _looks_like_path(source):
        path = Path(source).expanduser()
        if not path.is_dir():
            raise ValueError(f"{source} is not a model directory (expected config.json + weights).")
        return LocalFiles(path)
    from posviz.tables.hub import HubFiles

    return HubFiles(source.strip(), revision)


def _weights_file(files: CheckpointFiles) -> str:
    for name in _WEIGHT_FILES:
        if files.size(name) is not None:
            return name
    raise ValueError(
        f"{files.where} has no weights posviz can read (looked for {', '.join(_WEIGHT_FILES)})."
    )


def read_header(files: CheckpointFiles, filename: str) -> dict[str, Any]:
    """Parse a safetensors file's header with two small reads: the length, then the JSON."""
    where = f"{files.where}/{filename}"
    size = files.size(filename)
    length = header_length(files.read_range(filename, 0, 8), where=where, file_size=size)
    raw = files.read_range(filename, 8, 8 + length)
    return parse_header(raw, where=where, data_start=8 + length)


def _no_key(where: str, keys: list[str], suffixes: tuple[str, ...]) -> ValueError:
    near = [k for k in keys if "pos" in k.lower()][:6]
    seen = f" Tensors with 'pos' in their name: {near}." if near else ""
    return ValueError(
        f"{where} has no tensor ending in {' or '.join(suffixes)}: the checkpoint has no position "
        f"table where this architecture keeps it.{seen} Pick another model or a .npy file."
    )


def _shard(weight_map: Any, suffixes: tuple[str, ...], where: str) -> tuple[str, str]:
    """(key, shard filename) from a ``*.index.json`` weight map."""
    if not isinstance(weight_map, dict) or not isinstance(weight_map.get("weight_map"), dict):
        raise ValueError(f"{where} is not a shard index (no 'weight_map').")
    mapping = weight_map["weight_map"]
    key = registry.find_key(list(mapping), suffixes)
    if key is None:
        raise _no_key(where, list(mapping), suffixes)
    shard = str(mapping[key])
    if PurePosixPath(shard).is_absolute() or ".." in PurePosixPath(shard).parts:
        raise ValueError(f"{where} points {key!r} at {shard!r}, outside the repository.")
    return key, shard


def _safetensors_tensor(
    files: CheckpointFiles, filename: str, suffixes: tuple[str, ...], key: str | None = None
) -> tuple[np.ndarray, str]:
    header = read_header(files, filename)
    where = f"{files.where}/{filename}"
    key = key if key in header else registry.find_key(list(header), suffixes)
    if key is None and suffixes is _ALL_SUFFIXES and len(header) == 1:
        key = next(iter(header))  # a bare file holding one tensor: that is the table
    if key is None:
        raise _no_key(where, list(header), suffixes)
    info = header[key]
    check_readable(info, where=where, file_size=files.size(filename))
    return decode_tensor(files.read_range(filename, info.start, info.end), info), key


def _torch_tensor(
    files: CheckpointFiles, filename: str, suffixes: tuple[str, ...], progress: Progress | None
) -> tuple[np.ndarray, str]:
    """The ``.bin`` fallback: whole file, ``torch.load(weights_only=True)`` (no free unpickling)."""
    import torch

    path = files.whole_file(filename, progress=progress)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError) as exc:
        raise ValueError(
            f"{files.where}/{filename} could not be read safely as a PyTorch state dict "
            f"({type(exc).__name__}); posviz never unpickles arbitrary objects."
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{files.where}/{filename} is not a state dict.")
    key = registry.find_key([str(k) for k in state], suffixes)
    if key is None:
        raise _no_key(f"{files.where}/{filename}", [str(k) for k in state], suffixes)
    return state[key].detach().to(torch.float32).numpy().copy(), key


def read_tensor(
    files: CheckpointFiles,
    suffixes: tuple[str, ...],
    *,
    filename: str | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, str, str]:
    """The first tensor whose key ends with one of ``suffixes``: ``(float32 array, key, file)``.

    safetensors (single or sharded) is read by byte range; ``.bin`` only as a last resort.
    """
    name = filename or _weights_file(files)
    key = None
    if name.endswith(".index.json"):
        key, name = _shard(files.read_json(name), suffixes, f"{files.where}/{name}")
    if name.endswith(".safetensors"):
        array, key = _safetensors_tensor(files, name, suffixes, key)
    else:
        array, key = _torch_tensor(files, name, suffixes, progress)
    return array, key, name


def _check_values(stored: np.ndarray, where: str) -> None:
    bad = int(np.size(stored) - np.count_nonzero(np.isfinite(stored)))
    if bad:
        raise ValueError(
            f"{where} contains {bad:,} NaN/inf values; a position table must be finite. "
            "The checkpoint is corrupt or was saved mid-divergence."
        )


def _arrange(
    stored: np.ndarray, spec: registry.TableSpec | None, config: dict[str, Any] | None, where: str
) -> tuple[np.ndarray, tuple[SetAside, ...], tuple[int, int] | None]:
    """Stored tensor -> (positions matrix, set-aside rows, ViT grid), checking the shape."""
    if spec is not None and spec.vit_grid and stored.ndim == 3 and stored.shape[0] == 1:
        stored = stored[0]  # (1, 1 + h·w, d) -> (1 + h·w, d)
    if stored.ndim != 2:
        raise ValueError(
            f"{where} has shape {stored.shape}; a position table is 2-D (n_positions, d_model)."
        )
    _check_values(stored, where)
    expected = spec.expected_shape(config) if spec is not None and config else None
    if expected is not None and tuple(stored.shape) != expected:
        raise ValueError(
            f"{where} has shape {tuple(stored.shape)} but config.json predicts {expected}: the "
            "checkpoint and its config disagree. Check the revision, or load the tensor as a .npy."
        )
    if spec is None:
        return np.ascontiguousarray(stored), (), None
    if spec.vit_grid:
        grid = registry.vit_grid_shape(config or {})
        if grid is None or grid[0] * grid[1] != stored.shape[0] - 1:
            side = round((stored.shape[0] - 1) ** 0.5)
            grid = (side, side) if side * side == stored.shape[0] - 1 else None
        cls = SetAside((0,), "row 0 is added to the [CLS] token, not to a patch", stored[:1].copy())
        return np.ascontiguousarray(stored[1:]), (cls,), grid
    aside = tuple(SetAside(rows, why, stored[list(rows)].copy()) for rows, why in spec.set_aside)
    return np.ascontiguousarray(stored[spec.offset :]), aside, None


def _spec(config: dict[str, Any] | None, part: str | None) -> registry.TableSpec | None:
    model_type = (config or {}).get("model_type")
    if model_type is None or (model_type not in registry.REGISTRY and not part):
        if model_type in registry.NOT_A_TABLE:
            registry.specs_for(model_type)  # raises the family message
        return None
    return registry.spec_for(model_type, part)


def table_from_files(
    files: CheckpointFiles,
    *,
    source: str,
    part: str | None = None,
    filename: str | None = None,
    progress: Progress | None = None,
) -> PositionTable:
    """The position table of a checkpoint (hub, local directory or single file)."""
    config = files.config()
    spec = _spec(config, part)
    suffixes = spec.suffixes if spec is not None else _ALL_SUFFIXES
    stored, key, name = read_tensor(files, suffixes, filename=filename, progress=progress)
    where = f"{files.where}/{name}: {key}"
    matrix, aside, grid = _arrange(stored, spec, config, where)
    model_type = (config or {}).get("model_type")
    notes: list[str] = []
    if spec is None:
        what = (
            f"model type {model_type!r} is not in the registry" if model_type else "no config.json"
        )
        notes.append(f"{what}: rows are taken as stored, no offset applied")
    if spec is not None and spec.part:
        notes.append(f"{spec.part} table (this model has {len(registry.REGISTRY[model_type])})")
    kind = spec.kind if spec is not None else "learned"
    if model_type == "distilbert" and (config or {}).get("sinusoidal_pos_embds"):
        kind = "sinusoidal"
        notes.append("sinusoidal_pos_embds=true: this stored table is a fixed sinusoid")
    return PositionTable(
        matrix=matrix,
        source=source,
        tensor_name=key,
        kind=kind,
        set_aside=aside,
        bytes_read=files.bytes_read,
        revision=files.revision,
        model_type=model_type,
        grid=grid,
        notes=tuple(notes),
    )


def _synthetic(source: str) -> PositionTable:
    from posviz.encodings.sinusoidal import sinusoidal

    match = _SYNTHETIC.match(source.strip())
    if match is None:
        raise ValueError(
            f"{source!r} is not a synthetic source; write it as 'sinusoidal:NxD' "
            "(e.g. sinusoidal:512x384), optionally ':layout'."
        )
    n, d, layout = int(match[1]), int(match[2]), match[3]
    kwargs = {"layout": layout} if layout else {}
    matrix = sinusoidal(n, d, dtype=np.float32, **kwargs)
    label = f"sinusoidal:{n}x{d}" + (f":{layout}" if layout else "")
    return PositionTable(matrix=matrix, source=label, kind="sinusoidal")


def _check_npy_header(data: bytes, source: str) -> None:
    """Refuse a ``.npy`` whose header promises more (or less) data than the file holds.

    ``np.load`` allocates the shape the header claims before reading, so a 100-byte file claiming
    ``(10**6, 10**6)`` would ask for terabytes. Format: numpy/lib/format.py (NEP 1).
    """
    fmt = np.lib.format
    buffer = io.BytesIO(data)
    try:
        version = fmt.read_magic(buffer)
        if version == (1, 0):
            shape, _fortran, dtype = fmt.read_array_header_1_0(buffer)
        elif version == (2, 0):
            shape, _fortran, dtype = fmt.read_array_header_2_0(buffer)
        else:
            return  # newer versions: np.load's own checks apply
    except (ValueError, OSError, EOFError):
        return  # not an .npy header: np.load below gives the message
    if dtype.hasobject:
        return  # refused by allow_pickle=False below
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    available = len(data) - buffer.tell()
    if expected != available:
        raise ValueError(
            f"{source} is not a plain .npy array: its header promises shape {shape} "
            f"({expected:,} bytes of {dtype}) but the file holds {available:,} bytes after the "
            "header. It is truncated or forged; save it again with np.save(path, matrix)."
        )


def table_from_npy_bytes(data: bytes, *, source: str) -> PositionTable:
    """A table from the bytes of a ``.npy`` file: 2-D, numeric, finite (no pickles accepted)."""
    _check_npy_header(data, source)
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(
            f"{source} is not a plain .npy array ({exc}). Save a numeric 2-D array with "
            "np.save(path, matrix); pickled objects are refused."
        ) from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "fiu":
        raise ValueError(
            f"{source} does not hold a numeric array (dtype {getattr(array, 'dtype', '?')})."
        )
    if array.ndim != 2:
        raise ValueError(
            f"{source} has shape {array.shape}; a position table is 2-D (n_positions, d_model). "
            "Reshape it before saving, e.g. matrix.reshape(n_positions, -1)."
        )
    stored = array.astype(np.float32)
    _check_values(stored, source)
    return PositionTable(matrix=stored, source=source, kind="learned", bytes_read=len(data))


def table_from_upload(data: bytes, *, filename: str) -> PositionTable:
    """A table from uploaded bytes: ``.npy``, or ``.safetensors`` (its position or only tensor)."""
    from posviz.tables.files import MemoryFile

    if filename.lower().endswith(".npy"):
        return table_from_npy_bytes(data, source=filename)
    if filename.lower().endswith(".safetensors"):
        return table_from_files(MemoryFile(filename, data), source=filename, filename=filename)
    raise ValueError(f"{filename}: upload a .npy or .safetensors file.")


def load_table(
    source: str,
    *,
    revision: str | None = None,
    part: str | None = None,
    progress: Progress | None = None,
) -> PositionTable:
    """Load a position table; row ``p`` is what the model adds at token position ``p``.

    ``source``: ``"bundled"`` (MiniLM-L6, offline, SHA-256 verified), a hub model id (with
    ``revision``), a local model directory, a ``.safetensors`` or ``.npy`` file, or
    ``"sinusoidal:NxD"`` for a synthetic table. ``part`` picks "encoder"/"decoder" for BART.
    ``progress(done, total)`` is called while a ``.bin``-only checkpoint downloads in full.

    Returns:
        :class:`PositionTable` with ``matrix`` of shape ``(n_positions, d_model)``, float32.

    Raises:
        ValueError: unknown/misspelled/private model, hub unreachable, a family without a stored
            table (RoPE, ALiBi, T5, sinusoidal), no position tensor, corrupt header, wrong shape,
            NaN/inf, or a file that is not a plain array.
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError("Empty source: use 'bundled', a hub id, a file path or 'sinusoidal:NxD'.")
    source = source.strip()
    if source.startswith("sinusoidal:"):
        return _synthetic(source)
    if source != "bundled" and _looks_like_path(source):
        return _load_path(Path(source).expanduser(), source=source, part=part, progress=progress)
    files = open_files(source, revision=revision)
    return table_from_files(files, source=source, part=part, progress=progress)


def _load_path(
    path: Path, *, source: str, part: str | None, progress: Progress | None
) -> PositionTable:
    if not path.exists():
        raise ValueError(f"{source} does not exist. Check the path.")
    if path.is_dir():
        return table_from_files(LocalFiles(path), source=source, part=part, progress=progress)
    if path.suffix == ".npy":
        return table_from_npy_bytes(path.read_bytes(), source=source)
    if path.suffix == ".safetensors":
        files = LocalFiles(path.parent)
        return table_from_files(files, source=source, part=part, filename=path.name)
    raise ValueError(f"{source}: expected a model directory, a .safetensors file or a .npy file.")
