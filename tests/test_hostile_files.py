"""Hostile table files: each crafted file ends in a ValueError that says what is wrong.

Every file is built here with ``struct``/``json`` and fed through BOTH loaders: the path loader
(``load_table(path)``) and the upload loader (``table_from_upload(bytes, filename=...)``). Nothing
but ``ValueError`` may come out, the message must name the problem (and the file, once), and the
loader must not allocate more than a few MB whatever the header claims (``tracemalloc`` counts
numpy's buffers).
"""

from __future__ import annotations

import errno
import io
import json
import struct
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

from posviz.tables import PositionTable, load_table, table_from_upload

POS = "wpe.weight"
_PEAK_LIMIT = 16 * 2**20  # every crafted file is tiny; a loader believing its header would not be


def _st(header: dict | list | str, data: bytes = b"", *, length: int | None = None) -> bytes:
    """safetensors bytes: u64 header length + JSON header (an object or raw text) + data."""
    raw = (header if isinstance(header, str) else json.dumps(header)).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _st_one(shape, offsets, *, dtype="F32", data: bytes = b"", **extra) -> bytes:
    entry = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
    return _st({POS: entry, **extra}, data)


def _st_raw_entry(shape: str, offsets: str, data: bytes) -> bytes:
    """One entry written as raw JSON text, for numbers json.dumps would never write (1e400)."""
    entry = f'{{"dtype": "F32", "shape": {shape}, "data_offsets": {offsets}}}'
    return _st(f'{{"{POS}": {entry}}}', data)


def _npy_raw(header: dict | str, data: bytes = b"", *, version: tuple[int, int] = (1, 0)) -> bytes:
    """.npy bytes with any header dict (even one np.save would refuse) and any version byte."""
    text = header if isinstance(header, str) else repr(header)
    length_format = "<H" if version == (1, 0) else "<I"
    prefix = 6 + 2 + struct.calcsize(length_format)
    pad = 64 - (prefix + len(text) + 1) % 64
    body = (text + " " * pad + "\n").encode("latin1")
    return b"\x93NUMPY" + bytes(version) + struct.pack(length_format, len(body)) + body + data


def _npy(array: np.ndarray, **kwargs) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, **kwargs)
    return buffer.getvalue()


_F32 = np.arange(16, dtype="<f4").tobytes()  # 16 float32 = 64 bytes

# name -> (file extension, bytes, phrase the message must contain)
CORPUS: dict[str, tuple[str, bytes, str]] = {
    # --- .npy ------------------------------------------------------------------------------
    "npy v3.0 header claiming 4 TB": (
        ".npy",
        _npy_raw({"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}, version=(3, 0)),
        "promises shape",
    ),
    "npy v2.0 header claiming 4 TB": (
        ".npy",
        _npy_raw({"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}, version=(2, 0)),
        "promises shape",
    ),
    "npy unknown version 9.0": (
        ".npy",
        _npy_raw({"descr": "<f4", "fortran_order": False, "shape": (2, 2)}, b"\0" * 16,
                 version=(9, 0)),
        "not a plain .npy",
    ),
    "npy truncated data": (
        ".npy", _npy(np.ones((4, 4), np.float32))[:-8], "promises shape"),
    "npy shape 0x8": (".npy", _npy(np.zeros((0, 8), np.float32)), "this one is 0×8"),
    "npy shape 8x0": (".npy", _npy(np.zeros((8, 0), np.float32)), "this one is 8×0"),
    "npy fortran order": (".npy", _npy(np.asfortranarray(np.ones((3, 4), np.float32))), "Fortran"),
    "npy object dtype": (
        ".npy", _npy(np.array([[1, "x"]], dtype=object), allow_pickle=True), "Python objects"),
    "npy structured dtype": (
        ".npy", _npy(np.zeros((2, 2), dtype=[("a", "<f4"), ("b", "<i4")])), "numeric"),
    "npy complex dtype": (".npy", _npy(np.zeros((2, 2), np.complex64)), "numeric"),
    "npy rank 3": (".npy", _npy(np.zeros((1, 4, 4), np.float32)), "2-D"),
    "npy rank 1": (".npy", _npy(np.zeros(4, np.float32)), "2-D"),
    "npy rank 0": (".npy", _npy(np.float32(1.0)), "2-D"),
    "npy inf": (".npy", _npy(np.array([[1.0, np.inf]], np.float32)), "NaN/inf"),
    "npy nan": (".npy", _npy(np.array([[np.nan, 1.0]], np.float64)), "NaN/inf"),
    "npy header not a dict": (".npy", _npy_raw("[1, 2, 3]"), "not a plain .npy"),
    "npy header not Python": (".npy", _npy_raw("{'descr': __import__('os')}"), "not a plain .npy"),
    # --- .safetensors ----------------------------------------------------------------------
    "1e400 in data_offsets": (".safetensors", _st_raw_entry("[4, 4]", "[0, 1e400]", _F32),
                              "invalid offsets"),
    "1e400 in shape": (".safetensors", _st_raw_entry("[1e400, 4]", "[0, 64]", _F32), "shape"),
    "float in shape": (".safetensors", _st_raw_entry("[4.0, 4]", "[0, 64]", _F32), "shape"),
    "bool in shape": (".safetensors", _st_raw_entry("[true, 4]", "[0, 64]", _F32), "shape"),
    "10**5000 in shape": (".safetensors", _st_raw_entry("[" + "9" * 5000 + ", 4]", "[0, 64]",
                                                       _F32), "not JSON"),
    "NaN in header": (".safetensors", _st_raw_entry("[NaN, 4]", "[0, 64]", _F32), "not JSON"),
    "shape 0x8": (".safetensors", _st_one([0, 8], [0, 0]), "this one is 0×8"),
    "shape 8x0": (".safetensors", _st_one([8, 0], [0, 0]), "this one is 8×0"),
    "rank 3 without a ViT config": (".safetensors", _st_one([1, 4, 4], [0, 64], data=_F32), "2-D"),
    "rank 1": (".safetensors", _st_one([16], [0, 64], data=_F32), "2-D"),
    "non-finite values": (
        ".safetensors",
        _st_one([4, 4], [0, 64], data=np.full(16, np.inf, "<f4").tobytes()),
        "NaN/inf",
    ),
    "negative offsets": (".safetensors", _st_one([4, 4], [-64, 0], data=_F32), "invalid offsets"),
    "end before begin": (".safetensors", _st_one([4, 4], [64, 0], data=_F32), "invalid offsets"),
    "three offsets": (".safetensors", _st_one([4, 4], [0, 32, 64], data=_F32), "invalid offsets"),
    "offsets disagree with shape": (".safetensors", _st_one([4, 4], [0, 32], data=_F32),
                                    "should take"),
    "offsets past the file end": (".safetensors", _st_one([4, 4], [0, 64], data=_F32[:32]),
                                  "past the end of the file"),
    "terabyte tensor past the end": (".safetensors", _st_one([10**6, 10**6], [0, 4 * 10**12]),
                                     "past the end of the file"),
    "dtype not in the list": (".safetensors", _st_one([2, 4], [0, 64], dtype="I64", data=_F32),
                              "stored as 'I64'"),
    "dtype not a string": (".safetensors", _st_one([4, 4], [0, 64], dtype=4, data=_F32),
                           "malformed"),
    "header length past the file": (".safetensors", _st({}, length=10**6), "claims a safetensors"),
    "header length past the cap": (".safetensors", _st({}, length=2**62), "claims a safetensors"),
    "header length below 2": (".safetensors", _st("", length=0), "claims a safetensors"),
    "shorter than 8 bytes": (".safetensors", b"\x10\0\0", "shorter than 8 bytes"),
    "JSON that is a list": (".safetensors", _st([1, 2]), "not a JSON object"),
    "JSON that is a string": (".safetensors", _st('"table"'), "not a JSON object"),
    "header not UTF-8": (".safetensors", struct.pack("<Q", 9) + b'{"\xff\xfe": 1}', "not JSON"),
    "deeply nested JSON": (".safetensors", _st("[" * 100_000 + "]" * 100_000), "not JSON"),
    "duplicate keys": (
        ".safetensors",
        _st(f'{{"{POS}": {{"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}, '
            f'"{POS}": {{"dtype": "F32", "shape": [2, 8], "data_offsets": [0, 64]}}}}', _F32),
        "more than once",
    ),
    "__metadata__ a list": (
        ".safetensors", _st_one([4, 4], [0, 64], data=_F32, __metadata__=[1]), "__metadata__"),
    "__metadata__ with a number": (
        ".safetensors", _st_one([4, 4], [0, 64], data=_F32, __metadata__={"format": 1}),
        "__metadata__"),
    "entry not an object": (".safetensors", _st({POS: [1, 2]}), "malformed"),
    "no tensors": (".safetensors", _st({}), "no tensor ending in"),
}  # fmt: skip


def _load_path(tmp_path, extension: str, data: bytes) -> PositionTable:
    path = tmp_path / f"crafted{extension}"
    path.write_bytes(data)
    return load_table(str(path))


def _load_upload(_tmp_path, extension: str, data: bytes) -> PositionTable:
    return table_from_upload(data, filename=f"crafted{extension}")


LOADERS: dict[str, Callable[..., PositionTable]] = {"path": _load_path, "upload": _load_upload}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("case", CORPUS)
def test_hostile_file_is_a_clear_value_error(case, loader, tmp_path):
    extension, data, phrase = CORPUS[case]
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=phrase) as info:
            LOADERS[loader](tmp_path, extension, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert peak < _PEAK_LIMIT + 2 * len(data), f"allocated {peak:,} bytes for {len(data):,}"
    assert message.count(f"crafted{extension}") == 1, message  # named, and only once
    assert "Traceback" not in message


def test_the_crafting_helpers_make_files_that_load_when_honest(tmp_path):
    """Controls: the same builders with honest values give tables, so refusals are about values."""
    matrix = np.arange(16, dtype=np.float32).reshape(4, 4)
    good = {
        ".safetensors": _st_one([4, 4], [0, 64], data=_F32, __metadata__={"format": "pt"}),
        ".npy": _npy_raw(
            {"descr": "<f4", "fortran_order": False, "shape": (4, 4)}, _F32, version=(3, 0)
        ),
    }
    for extension, data in good.items():
        for loader in LOADERS.values():
            np.testing.assert_array_equal(loader(tmp_path, extension, data).matrix, matrix)
    raw = _st_raw_entry("[4, 4]", "[0, 64]", _F32)
    np.testing.assert_array_equal(_load_upload(tmp_path, ".safetensors", raw).matrix, matrix)


def test_empty_position_table_is_refused_at_construction():
    with pytest.raises(ValueError, match=r"at least 1 position and 1 dimension; this one is 0×8"):
        PositionTable(matrix=np.zeros((0, 8), np.float32), source="t")
    with pytest.raises(ValueError, match=r"this one is 8×0"):
        PositionTable(matrix=np.zeros((8, 0), np.float32), source="t")
    with pytest.raises(ValueError, match="2-D"):
        PositionTable(matrix=np.zeros(8, np.float32), source="t")
    assert PositionTable(matrix=np.zeros((1, 1), np.float32), source="t").label == "t (1×1)"


def test_vit_table_of_rank_three_with_leading_one_loads_and_other_rank_three_does_not(tmp_path):
    config = {"model_type": "vit", "image_size": 4, "patch_size": 2, "hidden_size": 4}
    (tmp_path / "config.json").write_text(json.dumps(config))
    stored = np.arange(5 * 4, dtype="<f4")  # 1 CLS row + a 2×2 grid, width 4
    (tmp_path / "model.safetensors").write_bytes(
        _st({"embeddings.position_embeddings": {"dtype": "F32", "shape": [1, 5, 4],
                                                "data_offsets": [0, 80]}}, stored.tobytes())
    )  # fmt: skip
    table = load_table(str(tmp_path))
    np.testing.assert_array_equal(table.matrix, stored.reshape(5, 4)[1:])
    assert table.grid == (2, 2)
    (tmp_path / "model.safetensors").write_bytes(
        _st({"embeddings.position_embeddings": {"dtype": "F32", "shape": [5, 1, 4],
                                                "data_offsets": [0, 80]}}, stored.tobytes())
    )  # fmt: skip
    with pytest.raises(ValueError, match="2-D"):
        load_table(str(tmp_path))


def test_offset_model_with_no_rows_left_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    (tmp_path / "model.safetensors").write_bytes(
        _st({"embeddings.position_embeddings.weight": {"dtype": "F32", "shape": [2, 4],
                                                       "data_offsets": [0, 32]}}, _F32[:32])
    )  # fmt: skip
    with pytest.raises(ValueError, match="this one is 0×4"):
        load_table(str(tmp_path))


@pytest.mark.parametrize(
    "typed",
    [
        "a" * 256,
        "./" + "a" * 256,
        "/tmp/" + "b" * 300 + "/x.npy",
        "c" * 256 + ".safetensors",
        "./nul\x00byte.npy",
    ],
    ids=["bare", "relative", "absolute-dir", "file", "nul"],
)
def test_path_component_too_long_is_a_value_error_naming_it(typed):
    with pytest.raises(ValueError, match=r"File name too long|does not exist|NUL") as info:
        load_table(typed)
    message = str(info.value)
    assert len(message) < 300, message  # the path is shortened, not repeated in full
    assert typed[:20] in message or ascii(typed)[1:20] in message  # NUL is shown escaped


def test_any_os_error_from_a_user_path_names_the_path_and_the_reason(tmp_path, monkeypatch):
    from pathlib import Path

    target = tmp_path / "t.npy"
    target.write_bytes(_npy(np.ones((2, 2), np.float32)))

    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(ValueError, match="Permission denied") as info:
        load_table(str(target))
    assert "t.npy" in str(info.value)


def test_upload_above_the_cap_is_refused_before_parsing(monkeypatch):
    monkeypatch.setenv("POSVIZ_MAX_UPLOAD_MB", "1")
    data = _npy(np.ones((600, 512), np.float32))  # 1.2 MB
    with pytest.raises(ValueError, match="upload cap of 1 MB"):
        table_from_upload(data, filename="big.npy")


def test_tensor_above_the_fetch_cap_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("POSVIZ_MAX_FETCH_MB", "1")
    rows = np.ones((600, 512), "<f4").tobytes()  # 1.2 MB
    (tmp_path / "t.safetensors").write_bytes(_st_one([600, 512], [0, len(rows)], data=rows))
    with pytest.raises(ValueError, match="POSVIZ_MAX_FETCH_MB"):
        load_table(str(tmp_path / "t.safetensors"))
