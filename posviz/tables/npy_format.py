"""A ``.npy`` file's header checked before any array is built from it (no pickles, no big claims).

``np.load`` allocates the shape a header claims before reading the data, so a 100-byte file
claiming ``(10**6, 10**6)`` asks for terabytes. Here the header is read with numpy's own parsers
(``numpy.lib.format``, format spec NEP 1: versions 1.0, 2.0 and 3.0; 3.0 differs from 2.0 only in
encoding the header as UTF-8), checked, and the data is then viewed in place with ``frombuffer``.
"""

from __future__ import annotations

import io

import numpy as np

_FIX = "Save a numeric 2-D array with np.save(path, matrix); pickled objects are refused."


def _header(data: bytes, source: str) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """``(shape, fortran_order, dtype, data offset)`` from the bytes of a ``.npy`` file."""
    fmt = np.lib.format
    buffer = io.BytesIO(data)
    try:
        version = fmt.read_magic(buffer)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(buffer)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(buffer)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} is not one numpy writes")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise ValueError(f"{source} is not a plain .npy array ({exc}). {_FIX}") from None
    return tuple(shape), bool(fortran), dtype, buffer.tell()


def _refusal(shape: tuple[int, ...], fortran: bool, dtype: np.dtype) -> str | None:
    """Why a header describes something that is not a position table, or ``None``."""
    if dtype.hasobject:
        return f"it holds Python objects (dtype {dtype}); pickled objects are refused"
    if dtype.names is not None or dtype.kind not in "fiu":
        return f"it does not hold a numeric array (dtype {dtype}); store floats or integers"
    if len(shape) != 2:
        return (
            f"it has shape {shape}; a position table is 2-D (n_positions, d_model). "
            "Reshape it before saving, e.g. matrix.reshape(n_positions, -1)"
        )
    if fortran:
        return (
            "it is stored in Fortran (column-major) order; save it with "
            "np.save(path, np.ascontiguousarray(matrix))"
        )
    return None


def npy_matrix(data: bytes, *, source: str) -> np.ndarray:
    """The 2-D numeric array stored in ``.npy`` bytes, as float32.

    Shape ``(n_positions, d_model)`` as stored; ``source`` names the file in messages.

    Raises:
        ValueError: not a ``.npy`` file, an unknown format version, object/structured/non-numeric
            dtype, Fortran order, rank ≠ 2, or a header whose shape disagrees with the bytes that
            follow it (truncated or forged).
    """
    shape, fortran, dtype, offset = _header(data, source)
    why = _refusal(shape, fortran, dtype)
    if why:
        raise ValueError(f"{source} is not a usable table: {why}.")
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    available = len(data) - offset
    if expected != available:
        raise ValueError(
            f"{source} is not a plain .npy array: its header promises shape {shape} "
            f"({expected:,} bytes of {dtype}) but the file holds {available:,} bytes after the "
            "header. It is truncated or forged; save it again with np.save(path, matrix)."
        )
    stored = np.frombuffer(data, dtype=dtype, count=int(np.prod(shape)), offset=offset)
    return stored.reshape(shape).astype(np.float32)
