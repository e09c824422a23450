"""``load_table``: a position table from the bundled model, the hub, a local file or a formula.

One pass, top to bottom: resolve the source (:mod:`posviz.tables.sources`) → open its files → the
registry picks the tensor and says how to align it (:func:`posviz.tables.registry.plan_for`) →
find its bytes → read them → align the rows → :class:`PositionTable`.

Row ``p`` of the returned matrix is the vector the model adds at token position ``p``: offset rows
(RoBERTa, XLM-R, OPT, BART) and the ViT CLS row are moved to ``set_aside`` with the reason,
following how each model's forward pass indexes its table (see :mod:`posviz.tables.registry`).
"""

from __future__ import annotations

import pickle
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

import posviz.settings  # read as posviz.settings.settings() so tests can patch it
from posviz.tables import bundled, registry
from posviz.tables.ctranslate2 import ct2_variable
from posviz.tables.files import CheckpointFiles, MemoryFile, Progress, user_path_errors
from posviz.tables.lab_source import lab_table
from posviz.tables.npy_format import npy_matrix
from posviz.tables.onnx_format import onnx_initializer
from posviz.tables.packaged_data import data_values
from posviz.tables.registry import TablePlan
from posviz.tables.safetensors_format import (
    TensorInfo,
    check_readable,
    decode_tensor,
    header_length,
    parse_header,
)
from posviz.tables.sources import Source, open_files, resolve_source
from posviz.tables.synthetic import synthetic_table
from posviz.tables.table import PositionTable, SetAside, check_table_shape

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def load_table(
    source: str,
    *,
    revision: str | None = None,
    part: str | None = None,
    progress: Progress | None = None,
) -> PositionTable:
    """Load a position table; row ``p`` is what the model adds at token position ``p``.

    ``source`` (the grammar of :mod:`posviz.tables.sources`): ``"bundled"`` (MiniLM-L6, offline,
    SHA-256 verified), ``"bundled:<name>"`` (a packaged checkpoint such as
    ``bundled:paraphrase-MiniLM-L3-v2``, offline, SHA-256 verified), a hub model id (with
    ``revision``; ignored for every other kind of source),
    a local model directory, a ``.safetensors`` or ``.npy`` file, ``"sinusoidal:NxD[:layout]"``
    for a synthetic table, or ``"lab:<run-id>[/<table>[/<seed>[/<step>]]]"`` for a table a lab run
    trained (read from ``$POSVIZ_LAB_DIR``; :func:`posviz.tables.lab_table` takes another store).
    ``part`` picks "encoder"/"decoder" for BART. ``progress(done, total)`` is called while a
    ``.bin``-only checkpoint downloads in full.

    Returns:
        :class:`PositionTable` with ``matrix`` of shape ``(n_positions, d_model)``, float32.

    Raises:
        ValueError: a source outside the grammar (the message shows it), unknown/misspelled/
            private model, hub unreachable, a family without a stored table (RoPE, ALiBi, T5,
            sinusoidal …), no position tensor, corrupt header, wrong or empty shape, NaN/inf, a
            path that cannot be read, a file that is not a plain array, or a lab run that is
            missing, corrupted or lacks the table, seed or step asked for.
    """
    resolved = resolve_source(source, revision=revision)
    if resolved.synthetic is not None:
        return synthetic_table(resolved.synthetic)
    if resolved.kind == "lab":
        return lab_table(resolved.text)
    if resolved.kind == "npy":
        return table_from_npy_bytes(_read_local_npy(resolved), source=resolved.text)
    if resolved.packaged is not None:
        return packaged_table(resolved.packaged, source=resolved.text)
    files = open_files(resolved)
    return table_from_files(
        files, source=resolved.text, part=part, filename=resolved.filename, progress=progress
    )


def table_from_upload(data: bytes, *, filename: str) -> PositionTable:
    """A table from uploaded bytes: ``.npy``, or ``.safetensors`` (its position or only tensor).

    Raises:
        ValueError: another extension, more than ``POSVIZ_MAX_UPLOAD_MB``, or any file problem
            :func:`load_table` reports.
    """
    cap = posviz.settings.settings().max_upload_bytes
    if len(data) > cap:
        raise ValueError(
            f"{filename} is {len(data) / 2**20:,.1f} MB, above this server's upload cap of "
            f"{cap / 2**20:,.0f} MB (POSVIZ_MAX_UPLOAD_MB). Upload a smaller table."
        )
    if filename.lower().endswith(".npy"):
        return table_from_npy_bytes(data, source=filename)
    if filename.lower().endswith(".safetensors"):
        return table_from_files(MemoryFile(filename, data), source=filename, filename=filename)
    raise ValueError(f"{filename}: upload a .npy or .safetensors file.")


def table_from_files(
    files: CheckpointFiles,
    *,
    source: str,
    part: str | None = None,
    filename: str | None = None,
    progress: Progress | None = None,
) -> PositionTable:
    """The position table of a checkpoint (hub, local directory, single file or upload)."""
    config = files.config()
    plan = registry.plan_for(config, part)
    stored, key, name = read_tensor(
        files,
        plan.suffixes,
        filename=filename,
        progress=progress,
        only_tensor_ok=plan.only_tensor_ok,
    )
    matrix, aside, grid = align(stored, plan, where=f"{files.label(name)}: {key}")
    return PositionTable(
        matrix=matrix,
        source=source,
        tensor_name=key,
        kind=plan.kind,
        set_aside=aside,
        bytes_read=files.bytes_read,
        revision=files.revision,
        model_type=plan.model_type,
        grid=grid,
        notes=plan.notes,
    )


def packaged_table(name: str, *, source: str) -> PositionTable:
    """The position table of the packaged checkpoint ``name`` (:data:`bundled.PACKAGED`).

    The file is hash-checked first (:func:`bundled.verified_packaged_file`), then its one
    position tensor is read; a BERT table such as paraphrase-MiniLM-L3-v2's is indexed from
    position 0 (``create_position_ids``: ``arange``), so its rows are taken as stored.

    Raises:
        ValueError: not installed (with the install command), a file whose hash differs, a
            checkpoint without a position table, or an unreadable or non-finite tensor.
    """
    checkpoint = bundled.packaged_checkpoint(name)
    if checkpoint.table_tensor is None:
        raise ValueError(
            f"{checkpoint.name} has no learned position table (its positions are computed); "
            "pick a checkpoint with a learned table."
        )
    where = f"{checkpoint.name} ({checkpoint.distribution})"
    if checkpoint.reader == "data":
        stored = data_values(checkpoint.file, sha256=checkpoint.sha256, name=checkpoint.name)
        size = stored.nbytes
    else:
        path = bundled.verified_packaged_file(checkpoint)
        size = path.stat().st_size
        if checkpoint.reader == "ctranslate2":
            stored = ct2_variable(path, checkpoint.table_tensor, where=where)
        else:
            stored = onnx_initializer(path, checkpoint.table_tensor, where=where)
    if checkpoint.grid is not None and stored.ndim == 3 and stored.shape[0] == 1:
        stored = stored[0]  # (1, h·w, d): the patch rows only (the [CLS] row is stored apart)
    check_table_shape(stored.shape, where=where)
    _check_values(stored, where)
    if checkpoint.grid is not None and checkpoint.grid[0] * checkpoint.grid[1] != len(stored):
        raise ValueError(f"{where}: {len(stored)} rows do not fill a {checkpoint.grid} grid.")
    return PositionTable(
        matrix=stored,
        source=source,
        tensor_name=checkpoint.table_tensor,
        kind=checkpoint.kind,
        bytes_read=size,
        model_type=checkpoint.model_type,
        grid=checkpoint.grid,
        notes=(checkpoint.summary,),
    )


def table_from_npy_bytes(data: bytes, *, source: str) -> PositionTable:
    """A table from the bytes of a ``.npy`` file: 2-D, numeric, finite (no pickles accepted)."""
    stored = npy_matrix(data, source=source)
    _check_values(stored, source)
    return PositionTable(matrix=stored, source=source, kind="learned", bytes_read=len(data))


def read_tensor(
    files: CheckpointFiles,
    suffixes: tuple[str, ...],
    *,
    filename: str | None = None,
    progress: Progress | None = None,
    only_tensor_ok: bool = False,
) -> tuple[np.ndarray, str, str]:
    """The first tensor whose key ends with one of ``suffixes``: ``(float32 array, key, file)``.

    safetensors (single or sharded) is read by byte range: the header, then the tensor's bytes
    only; ``.bin`` only as a last resort (the whole file, ``torch.load(weights_only=True)``).
    """
    name = filename or _weights_file(files)
    key = None
    if name.endswith(".index.json"):
        key, name = _shard(files, name, suffixes)
    if not name.endswith(".safetensors"):
        return (*_torch_tensor(files, name, suffixes, progress), name)
    header = read_header(files, name)
    if key not in header:
        key = registry.pick_key(list(header), suffixes, only_tensor_ok=only_tensor_ok)
    if key is None:
        raise _no_key(files.label(name), list(header), suffixes)
    info = header[key]
    _check_fetch(info, files.label(name), files.size(name))
    data = files.read_range(name, info.start, info.end)
    return decode_tensor(data, info, where=files.label(name)), key, name


def read_header(files: CheckpointFiles, filename: str) -> dict[str, TensorInfo]:
    """Parse a safetensors file's header with two small reads: the length, then the JSON."""
    where = files.label(filename)
    size = files.size(filename)
    length = header_length(files.read_range(filename, 0, 8), where=where, file_size=size)
    raw = files.read_range(filename, 8, 8 + length)
    if len(raw) != length:
        raise ValueError(f"{where} is truncated inside its safetensors header. Re-download it.")
    return parse_header(raw, where=where, data_start=8 + length)


def align(
    stored: np.ndarray, plan: TablePlan, *, where: str
) -> tuple[np.ndarray, tuple[SetAside, ...], tuple[int, int] | None]:
    """Stored tensor -> (positions matrix, set-aside rows, ViT grid), checking the shape.

    ViT: ``(1, 1 + h·w, d)`` -> CLS row set aside, ``(h·w, d)`` kept. Offset models: the leading
    ``spec.offset`` rows set aside with the registry's reasons. Unknown models: rows as stored.

    Raises:
        ValueError: not 2-D, no rows or columns left, NaN/inf, or a shape ``config.json`` does
            not predict.
    """
    spec = plan.spec
    if spec is not None and spec.vit_grid and stored.ndim == 3 and stored.shape[0] == 1:
        stored = stored[0]  # (1, 1 + h·w, d) -> (1 + h·w, d)
    check_table_shape(stored.shape, where=where)
    _check_values(stored, where)
    expected = plan.expected_shape
    if expected is not None and tuple(stored.shape) != expected:
        raise ValueError(
            f"{where} has shape {tuple(stored.shape)} but config.json predicts {expected}: the "
            "checkpoint and its config disagree. Check the revision, or load the tensor as a .npy."
        )
    if spec is None:
        return np.ascontiguousarray(stored), (), None
    offset = 1 if spec.vit_grid else spec.offset
    check_table_shape(stored[offset:].shape, where=f"{where} (after {offset} set-aside rows)")
    if spec.vit_grid:
        grid = plan.grid
        if grid is None or grid[0] * grid[1] != stored.shape[0] - 1:
            side = round((stored.shape[0] - 1) ** 0.5)
            grid = (side, side) if side * side == stored.shape[0] - 1 else None
        cls = SetAside((0,), "row 0 is added to the [CLS] token, not to a patch", stored[:1].copy())
        return np.ascontiguousarray(stored[1:]), (cls,), grid
    aside = tuple(SetAside(rows, why, stored[list(rows)].copy()) for rows, why in spec.set_aside)
    return np.ascontiguousarray(stored[offset:]), aside, None


def fetch_config(repo_id: str, *, revision: str | None = None) -> dict[str, Any]:
    """``config.json`` of a hub model (or of "bundled" / a local model directory) as a dict.

    Raises:
        ValueError: unknown model, no access, hub unreachable, or no ``config.json``.
    """
    config = open_files(resolve_source(repo_id, revision=revision)).config()
    if config is None:
        raise ValueError(f"{repo_id} has no config.json; posviz needs it to know the architecture.")
    return config


def read_named_tensor(source: str, key_suffix: str, *, revision: str | None = None) -> np.ndarray:
    """One tensor, found by checkpoint-key suffix, as float32 (range-read from the hub if remote).

    ``source`` is a hub id, "bundled" or a local model directory; ``key_suffix`` matches at a ``.``
    boundary (e.g. ``"relative_attention_bias.weight"``, ``"word_embeddings.weight"``). Shape is the
    stored tensor's.

    Raises:
        ValueError: no tensor ends with ``key_suffix``, or any :func:`load_table` error.
    """
    resolved = resolve_source(source, revision=revision)
    files = open_files(resolved)
    array, _key, _file = read_tensor(files, (key_suffix,), filename=resolved.filename)
    return array


# --- the steps' details ---------------------------------------------------------------------


def _read_local_npy(source: Source) -> bytes:
    """A local ``.npy`` file's bytes, refused above the fetch cap before reading it."""
    path = Path(source.text) if source.path is None else source.path
    cap = posviz.settings.settings().max_fetch_bytes
    with user_path_errors(path):
        size = path.stat().st_size
        if size > cap:
            raise ValueError(
                f"{source.text} is {size / 2**20:,.0f} MB, above the cap of {cap / 2**20:,.0f} MB "
                "(POSVIZ_MAX_FETCH_MB). A position table is far smaller: check the file."
            )
        return path.read_bytes()


def _weights_file(files: CheckpointFiles) -> str:
    for name in _WEIGHT_FILES:
        if files.size(name) is not None:
            return name
    raise ValueError(
        f"{files.where} has no weights posviz can read (looked for {', '.join(_WEIGHT_FILES)})."
    )


def _shard(files: CheckpointFiles, index_name: str, suffixes: tuple[str, ...]) -> tuple[str, str]:
    """(key, shard filename) from a ``*.index.json`` weight map."""
    where = files.label(index_name)
    index = files.read_json(index_name)
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        raise ValueError(f"{where} is not a shard index (no 'weight_map').")
    mapping = index["weight_map"]
    key = registry.find_key([str(k) for k in mapping], suffixes)
    if key is None:
        raise _no_key(where, [str(k) for k in mapping], suffixes)
    shard = str(mapping[key])
    if PurePosixPath(shard).is_absolute() or ".." in PurePosixPath(shard).parts:
        raise ValueError(f"{where} points {key!r} at {shard!r}, outside the repository.")
    return key, shard


def _check_fetch(info: TensorInfo, where: str, file_size: int | None) -> None:
    """The tensor is readable (:func:`check_readable`) and within ``POSVIZ_MAX_FETCH_MB``."""
    check_readable(info, where=where, file_size=file_size)
    cap = posviz.settings.settings().max_fetch_bytes
    if info.nbytes > cap:
        raise ValueError(
            f"{where}: tensor {info.name!r} is {info.nbytes / 2**20:,.0f} MB, above this server's "
            f"fetch cap of {cap / 2**20:,.0f} MB (POSVIZ_MAX_FETCH_MB); no position table is "
            "that large. Check the file."
        )


def _no_key(where: str, keys: list[str], suffixes: tuple[str, ...]) -> ValueError:
    near = [k for k in keys if "pos" in k.lower()][:6]
    seen = f" Tensors with 'pos' in their name: {near}." if near else ""
    return ValueError(
        f"{where} has no tensor ending in {' or '.join(suffixes)}: the checkpoint has no position "
        f"table where this architecture keeps it.{seen} Pick another model or a .npy file."
    )


def _torch_tensor(
    files: CheckpointFiles, filename: str, suffixes: tuple[str, ...], progress: Progress | None
) -> tuple[np.ndarray, str]:
    """The ``.bin`` fallback: whole file, ``torch.load(weights_only=True)`` (no free unpickling)."""
    import torch  # lazy: only .bin-only checkpoints need torch

    path = files.whole_file(filename, progress=progress)
    where = files.label(filename)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError) as exc:
        raise ValueError(
            f"{where} could not be read safely as a PyTorch state dict "
            f"({type(exc).__name__}); posviz never unpickles arbitrary objects."
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{where} is not a state dict.")
    key = registry.find_key([str(k) for k in state], suffixes)
    if key is None:
        raise _no_key(where, [str(k) for k in state], suffixes)
    tensor = state[key]
    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
        raise ValueError(f"{where}: {key!r} is not a floating-point tensor.")
    return tensor.detach().to(torch.float32).numpy().copy(), key


def _check_values(stored: np.ndarray, where: str) -> None:
    bad = int(np.size(stored) - np.count_nonzero(np.isfinite(stored)))
    if bad:
        raise ValueError(
            f"{where} contains {bad:,} NaN/inf values; a position table must be finite. "
            "The checkpoint is corrupt or was saved mid-divergence."
        )
