"""Variables of a CTranslate2 ``model.bin`` (binary version 6), read without CTranslate2.

The ``ctranslate2`` package on PyPI is an inference engine: its Python classes (``Whisper``,
``Translator``, ``Generator`` …) load a whole model onto a device and expose ``generate``,
``encode``, ``align`` and the like, but no accessor for a stored variable (its bindings,
``python/cpp/whisper.cc``, define none), and its spec classes only *write* models. Reading one
position table through it would mean installing a native runtime and building the whole model, so
posviz reads the file itself. The layout is the writer's, ``ModelSpec._serialize`` in
``python/ctranslate2/specs/model_spec.py`` (OpenNMT/CTranslate2), all integers little-endian::

    uint32 binary_version (6)
    string spec_name                      string = uint16 length (incl. NUL), bytes, NUL
    uint32 spec_revision
    uint32 n_variables
    n_variables × { string name, uint8 rank, rank × uint32 dim, uint8 dtype,
                    uint32 n_bytes, n_bytes raw bytes }
    uint32 n_aliases
    n_aliases × { string alias, string variable_name }

``dtype`` follows ``ctranslate2::DataType``: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16,
5 bfloat16. :func:`ct2_index` walks the headers (seeking past the data) and refuses a file that
ends early or has bytes left over; nothing in the file is executed or unpickled.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

SUPPORTED_VERSION = 6
#: ``ctranslate2::DataType`` id → numpy dtype (bfloat16 is widened by hand, see below).
DTYPES: dict[int, str] = {0: "<f4", 1: "i1", 2: "<i2", 3: "<i4", 4: "<f2", 5: "bfloat16"}
_MAX_RANK = 8
_MAX_NAME = 4096


@dataclass(frozen=True)
class Variable:
    """One stored variable: its name, shape, dtype id, and where its bytes lie in the file."""

    name: str
    shape: tuple[int, ...]
    dtype_id: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Ct2Index:
    """What a ``model.bin`` holds: spec name and revision, variables in file order, aliases."""

    version: int
    spec: str
    revision: int
    variables: dict[str, Variable]
    aliases: dict[str, str]


class _Reader:
    def __init__(self, handle: BinaryIO, size: int, where: str) -> None:
        self.handle, self.size, self.where = handle, size, where

    def take(self, n: int) -> bytes:
        data = self.handle.read(n)
        if len(data) != n:
            raise ValueError(
                f"{self.where} ends early (at byte {self.handle.tell():,} of {self.size:,}): the "
                "file is truncated."
            )
        return data

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(struct.unpack("<H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def string(self) -> str:
        length = self.u16()
        if not 1 <= length <= _MAX_NAME:
            raise ValueError(f"{self.where}: a name of length {length} is not a CTranslate2 name.")
        raw = self.take(length)
        if raw[-1] != 0:
            raise ValueError(f"{self.where}: a name is not NUL-terminated; not a CTranslate2 file.")
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{self.where}: a variable name is not UTF-8.") from None


def ct2_index(path: Path, *, where: str) -> Ct2Index:
    """Parse the headers of the CTranslate2 model file at ``path`` (data bytes are skipped).

    Raises:
        ValueError: another binary version, an unknown dtype, a rank or byte count that does not
            fit the file, a truncated file, or bytes after the alias table.
    """
    size = path.stat().st_size
    with path.open("rb") as handle:
        r = _Reader(handle, size, where)
        version = r.u32()
        if version != SUPPORTED_VERSION:
            raise ValueError(
                f"{where} is CTranslate2 binary version {version}; posviz reads version "
                f"{SUPPORTED_VERSION} (or the file is not a CTranslate2 model)."
            )
        spec, revision, count = r.string(), r.u32(), r.u32()
        variables: dict[str, Variable] = {}
        for _ in range(count):
            name = r.string()
            rank = r.u8()
            if rank > _MAX_RANK:
                raise ValueError(f"{where}: {name!r} claims rank {rank}; not a CTranslate2 file.")
            shape = tuple(r.u32() for _ in range(rank))
            dtype_id, nbytes = r.u8(), r.u32()
            if dtype_id not in DTYPES:
                raise ValueError(f"{where}: {name!r} has unknown dtype id {dtype_id}.")
            itemsize = 1 if dtype_id == 1 else 4 if dtype_id in (0, 3) else 2
            if nbytes != int(np.prod(shape, dtype=np.int64)) * itemsize:
                raise ValueError(
                    f"{where}: {name!r} has shape {shape} but {nbytes:,} bytes; the file is "
                    "corrupt."
                )
            offset = handle.tell()
            if offset + nbytes > size:
                raise ValueError(
                    f"{where} ends inside {name!r} (needs byte {offset + nbytes:,} of {size:,}): "
                    "the file is truncated."
                )
            handle.seek(nbytes, 1)
            variables[name] = Variable(name, shape, dtype_id, offset, nbytes)
        aliases = {}
        for _ in range(r.u32()):
            alias = r.string()
            aliases[alias] = r.string()
        if handle.tell() != size:
            raise ValueError(
                f"{where} has {size - handle.tell():,} bytes after its last entry; the file is "
                "corrupt or not a CTranslate2 model."
            )
    return Ct2Index(version, spec, revision, variables, aliases)


def ct2_variable(
    path: Path,
    name: str,
    *,
    where: str,
    index: Ct2Index | None = None,
    floats_only: bool = True,
) -> np.ndarray:
    """The variable ``name`` (or an alias of one) as float32 in its stored shape (integer flags
    such as ``decoder/alibi`` too, with ``floats_only=False``).

    Raises:
        ValueError: any :func:`ct2_index` error, no such variable (the message lists ones with
            'position' in their names), or a variable that is not floating point.
    """
    index = index or ct2_index(path, where=where)
    name = index.aliases.get(name, name)
    info = index.variables.get(name)
    if info is None:
        near = [v for v in index.variables if "position" in v][:6]
        seen = f" (position variables: {near})." if near else "."
        raise ValueError(f"{where} has no variable {name!r}{seen}")
    if floats_only and info.dtype_id not in (0, 4, 5):
        raise ValueError(f"{where}: {name!r} holds {DTYPES[info.dtype_id]} values, not floats.")
    with path.open("rb") as handle:
        handle.seek(info.offset)
        raw = handle.read(info.nbytes)
    if len(raw) != info.nbytes:
        raise ValueError(f"{where} is truncated inside {name!r}.")
    if info.dtype_id == 5:  # bfloat16: the high half of a float32
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        array = bits.view(np.float32)
    else:
        array = np.frombuffer(raw, dtype=DTYPES[info.dtype_id]).astype(np.float32)
    return array.reshape(info.shape).copy()  # (ascontiguousarray would make a scalar 1-D)
