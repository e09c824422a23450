"""The safetensors layout, read by hand so that only the bytes of one tensor are ever fetched.

Why by hand: hub range cache + uploads in memory need 2 bounded reads; hf_hub prefetches 100 kB.

A file is ``u64 little-endian N`` + ``N`` bytes of JSON header + a data buffer. The header maps each
tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` with offsets relative to the
start of the data buffer, i.e. the tensor's bytes sit at ``8 + N + begin … 8 + N + end`` in the file
(format spec: https://github.com/huggingface/safetensors#format). An optional ``__metadata__``
entry maps strings to strings. Every check below refuses a hostile header with a ``ValueError``
before anything is allocated from what the header claims.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

#: Largest header posviz accepts. The safetensors library itself refuses headers above 100 MB.
MAX_HEADER_BYTES = 100 * 1024 * 1024

_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # bit pattern; widened to float32 below
}


@dataclass(frozen=True)
class TensorInfo:
    """One header entry, with its absolute byte range in the file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute offset of the first byte in the file
    end: int  # absolute offset one past the last byte

    @property
    def nbytes(self) -> int:
        return self.end - self.start


def header_length(prefix: bytes, *, where: str, file_size: int | None = None) -> int:
    """The JSON header's length from the file's first 8 bytes.

    Raises:
        ValueError: fewer than 8 bytes, or a length above :data:`MAX_HEADER_BYTES` or the file size.
    """
    if len(prefix) < 8:
        raise ValueError(f"{where} is not a safetensors file: it is shorter than 8 bytes.")
    (length,) = struct.unpack("<Q", prefix[:8])
    limit = MAX_HEADER_BYTES if file_size is None else min(MAX_HEADER_BYTES, file_size - 8)
    if length < 2 or length > limit:
        raise ValueError(
            f"{where} claims a safetensors header of {length:,} bytes (allowed 2…{limit:,}): the "
            "file is corrupt or not a safetensors file. Re-download it or pick another model."
        )
    return int(length)


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json`` object hook: a header naming a tensor twice is ambiguous, so it is refused."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = sorted({key for key in keys if keys.count(key) > 1})
        raise _Corrupt(f"it names {twice[:3]} more than once")
    return dict(pairs)


class _Corrupt(Exception):
    """Raised inside JSON decoding; turned into the caller's ``ValueError`` with the file name."""


def _no_constants(name: str) -> NoReturn:
    raise _Corrupt(f"it contains {name}, which is not JSON")


def _load_json(raw: bytes, where: str) -> dict[str, Any]:
    try:
        header = json.loads(
            raw.decode("utf-8"), object_pairs_hook=_unique_object, parse_constant=_no_constants
        )
    except _Corrupt as exc:
        raise ValueError(f"{where} has a corrupt safetensors header: {exc}.") from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # ValueError: JSON, 4300+ digits
        raise ValueError(
            f"{where} has a corrupt safetensors header (not JSON). Re-download it or pick "
            "another model."
        ) from None
    if not isinstance(header, dict):
        raise ValueError(f"{where} has a corrupt safetensors header (not a JSON object).")
    return header


def _whole_numbers(value: Any, count: int | None) -> tuple[int, ...] | None:
    """``value`` as non-negative ints (``count`` of them if given), else ``None``.

    JSON floats such as ``1e400`` (``inf`` in Python) and booleans are refused, not converted.
    """
    if not isinstance(value, list) or (count is not None and len(value) != count):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return None
    return tuple(value)


def _entry(name: str, entry: Any, *, where: str, data_start: int) -> TensorInfo:
    if not isinstance(entry, dict) or not isinstance(entry.get("dtype"), str):
        raise ValueError(f"{where}: header entry {name!r} is malformed (no dtype string).")
    shape = _whole_numbers(entry.get("shape"), None)
    offsets = _whole_numbers(entry.get("data_offsets"), 2)
    if shape is None:
        raise ValueError(
            f"{where}: header entry {name!r} has shape {entry.get('shape')!r}; a shape is a list "
            "of whole numbers ≥ 0. The header is corrupt."
        )
    if offsets is None or offsets[1] < offsets[0]:
        raise ValueError(
            f"{where}: tensor {name!r} has invalid offsets {entry.get('data_offsets')!r} (need "
            "[begin, end] with 0 ≤ begin ≤ end). The header is corrupt."
        )
    return TensorInfo(name, entry["dtype"], shape, data_start + offsets[0], data_start + offsets[1])


def parse_header(raw: bytes, *, where: str, data_start: int) -> dict[str, TensorInfo]:
    """Tensor entries of a safetensors header (``__metadata__`` checked, then skipped).

    Raises:
        ValueError: not UTF-8 JSON, not an object, a key given twice, ``NaN``/``Infinity``,
            ``__metadata__`` not a string-to-string object, or an entry whose dtype, shape or
            offsets are malformed (negative, non-integer such as ``1e400``, end before begin).
    """
    header = _load_json(raw, where)
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(
            f"{where}: the header's __metadata__ must map strings to strings, got "
            f"{type(metadata).__name__}. The header is corrupt."
        )
    return {
        name: _entry(name, entry, where=where, data_start=data_start)
        for name, entry in header.items()
    }


def check_readable(info: TensorInfo, *, where: str, file_size: int | None) -> None:
    """Refuse an unknown dtype, a byte range that disagrees with the shape, or one past EOF.

    ``bytes = prod(shape) × itemsize(dtype)`` must equal ``end − begin`` (format spec).
    """
    if info.dtype not in _DTYPES:
        raise ValueError(
            f"{where}: tensor {info.name!r} is stored as {info.dtype!r}; posviz reads "
            "F64/F32/F16/BF16."
        )
    expected = math.prod(info.shape) * _DTYPES[info.dtype].itemsize
    if expected != info.nbytes:
        raise ValueError(
            f"{where}: tensor {info.name!r} of shape {info.shape} ({info.dtype}) should take "
            f"{expected:,} bytes but its offsets span {info.nbytes:,}: the header is corrupt."
        )
    if file_size is not None and info.end > file_size:
        raise ValueError(
            f"{where}: tensor {info.name!r} ends at byte {info.end:,}, past the end of the file "
            f"({file_size:,} bytes): the file is truncated. Re-download it."
        )


def decode_tensor(data: bytes, info: TensorInfo, *, where: str = "") -> np.ndarray:
    """Raw little-endian bytes of ``info`` -> float32 array of ``info.shape`` (no torch needed).

    bf16 is the top half of an IEEE float32, so widening is a 16-bit left shift of the bit pattern.

    Raises:
        ValueError: ``data`` is shorter or longer than the tensor (a truncated file).
    """
    if len(data) != info.nbytes:
        raise ValueError(
            f"{where or info.name}: tensor {info.name!r} needs {info.nbytes:,} bytes but "
            f"{len(data):,} could be read: the file is truncated. Re-download it."
        )
    raw = np.frombuffer(data, dtype=_DTYPES[info.dtype])
    if info.dtype == "BF16":
        widened = raw.astype(np.uint32) << 16
        return widened.view(np.float32).reshape(info.shape)
    return raw.astype(np.float32).reshape(info.shape)
