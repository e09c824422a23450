"""The safetensors layout, read by hand so that only the bytes of one tensor are ever fetched.

A file is ``u64 little-endian N`` + ``N`` bytes of JSON header + a data buffer. The header maps each
tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` with offsets relative to the
start of the data buffer, i.e. the tensor's bytes sit at ``8 + N + begin … 8 + N + end`` in the file
(format spec: https://github.com/huggingface/safetensors#format).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

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


def parse_header(raw: bytes, *, where: str, data_start: int) -> dict[str, TensorInfo]:
    """Tensor entries of a safetensors header (``__metadata__`` skipped).

    Raises:
        ValueError: the header is not JSON, or an entry is malformed.
    """
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(
            f"{where} has a corrupt safetensors header (not JSON). Re-download it or pick "
            "another model."
        ) from None
    if not isinstance(header, dict):
        raise ValueError(f"{where} has a corrupt safetensors header (not a JSON object).")
    tensors: dict[str, TensorInfo] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = (int(x) for x in entry["data_offsets"])
            shape = tuple(int(x) for x in entry["shape"])
            dtype = str(entry["dtype"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{where}: header entry {name!r} is malformed.") from None
        if begin < 0 or end < begin:
            raise ValueError(f"{where}: tensor {name!r} has invalid offsets [{begin}, {end}].")
        tensors[name] = TensorInfo(name, dtype, shape, data_start + begin, data_start + end)
    return tensors


def check_readable(info: TensorInfo, *, where: str, file_size: int | None) -> None:
    """Refuse an unknown dtype, a byte range that disagrees with the shape, or one past EOF."""
    if info.dtype not in _DTYPES:
        raise ValueError(
            f"{where}: tensor {info.name!r} is stored as {info.dtype}; posviz reads "
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


def decode_tensor(data: bytes, info: TensorInfo) -> np.ndarray:
    """Raw little-endian bytes of ``info`` -> float32 array of ``info.shape`` (no torch needed).

    bf16 is the top half of an IEEE float32, so widening is a 16-bit left shift of the bit pattern.
    """
    raw = np.frombuffer(data, dtype=_DTYPES[info.dtype])
    if info.dtype == "BF16":
        widened = raw.astype(np.uint32) << 16
        return widened.view(np.float32).reshape(info.shape)
    return raw.astype(np.float32).reshape(info.shape)
