"""Faults while fetching a table from the hub: each ends in a clear message, leaves nothing
half-written in the cache, and the bundled default keeps working.

A loopback hub (tests/hub_server.py) serves a tiny BERT-shaped checkpoint; a handler subclass breaks
the tensor's range request on purpose: the connection drops before an answer (hub unreachable
mid-fetch), the body stops half-way (truncated download), or the server sends fewer bytes than asked
(a lying/short file). The cache is corrupted by hand, and the disk "fills up" by a write that raises
``OSError(ENOSPC)``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hub_server import FakeHub, HubServer, _Handler

REPO = "tiny/bert"
POS_KEY = "embeddings.position_embeddings.weight"
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


class FaultyHandler(_Handler):
    """The fake hub, except for the tensor range of model.safetensors while a fault is set."""

    def _send_file(self, repo_id, repo, filename, data, byte_range, *, body: bool) -> None:
        fault = getattr(self.hub, "fault", None)
        match = _RANGE.match(byte_range or "")
        tensor_read = (
            fault and body and match and filename == "model.safetensors"
            and int(match[1]) >= self.hub.tensor_start
        )  # fmt: skip
        whole_bin = fault and body and filename == "pytorch_model.bin"
        if not (tensor_read or whole_bin):
            super()._send_file(repo_id, repo, filename, data, byte_range, body=body)
            return
        start, end = (int(match[1]), int(match[2])) if match else (0, len(data) - 1)
        chunk = data[start : end + 1]
        self.close_connection = True
        if fault == "drop":  # the hub goes away: no answer at all
            return
        headers = {
            "X-Repo-Commit": repo.commit,
            "Content-Range": f"bytes {start}-{end}/{len(data)}",
            "Accept-Ranges": "bytes",
        }
        if fault == "truncate":  # promises the whole range, sends half, hangs up
            self.send_response(206)
            for name, value in {**headers, "Content-Length": str(len(chunk))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(chunk[: len(chunk) // 2])
            self.wfile.flush()
            return
        if fault == "short":  # a consistent but short answer (file shorter than its header says)
            self._reply(
                206, {**headers, "Content-Length": str(len(chunk) // 2)}, chunk[: len(chunk) // 2]
            )
            return
        raise AssertionError(f"unknown fault {fault!r}")


@pytest.fixture
def checkpoint(tmp_path) -> tuple[Path, np.ndarray]:
    """A BERT-shaped checkpoint: config.json + model.safetensors with a (40, 32) position table."""
    from safetensors.numpy import save_file

    directory = tmp_path / "ckpt"
    directory.mkdir()
    table = np.random.default_rng(0).standard_normal((40, 32)).astype(np.float32)
    words = np.zeros((99, 32), np.float32)
    save_file({POS_KEY: table, "embeddings.word_embeddings.weight": words},
              directory / "model.safetensors")  # fmt: skip
    config = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 32,
              "max_position_embeddings": 40, "vocab_size": 99}  # fmt: skip
    (directory / "config.json").write_text(json.dumps(config))
    return directory, table


@pytest.fixture
def hub(checkpoint, tmp_path, monkeypatch):
    """A running faulty hub with the checkpoint as ``tiny/bert``; HF_HOME in a temp dir."""
    directory, _ = checkpoint
    fake = FakeHub()
    fake.add_dir(REPO, directory)
    raw = (directory / "model.safetensors").read_bytes()
    fake.tensor_start = 8 + struct.unpack("<Q", raw[:8])[0]
    fake.fault = None
    server = HubServer(fake)
    server._httpd.RequestHandlerClass = type("Handler", (FaultyHandler,), {"hub": fake})
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with server:
        yield fake


def _load(source: str = REPO):
    from posviz.tables import load_table

    return load_table(source)


def _cache_files(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "hf").rglob("*") if p.is_file())


def _assert_cache_clean(tmp_path: Path) -> None:
    """No temp/partial files, and every cached byte range has exactly the length its name says."""
    for path in _cache_files(tmp_path):
        assert not path.name.startswith((".part", "tmp")), f"left behind: {path}"
        assert not path.name.endswith(".incomplete"), f"left behind: {path}"
        if re.fullmatch(r"\d+-\d+", path.name):
            start, end = map(int, path.name.split("-"))
            assert path.stat().st_size == end - start, f"half-written range entry {path}"


def _assert_bundled_still_works() -> None:
    table = _load("bundled")
    assert table.matrix.shape == (512, 384) and np.isfinite(table.matrix).all()


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("drop", r"reach the hub|connection|interrupted|try again"),
        ("truncate", r"reach the hub|connection|interrupted|incomplete|try again"),
        ("short", r"shorter|got|corrupt"),
    ],
)
def test_a_broken_tensor_fetch_is_a_clear_message_and_retrying_recovers(
    hub, checkpoint, tmp_path, fault, expected
):
    hub.fault = fault
    with pytest.raises(ValueError, match=expected) as info:
        _load()
    print(f"[{fault}] {info.value}")
    assert REPO in str(info.value) or "hub" in str(info.value)
    _assert_cache_clean(tmp_path)
    _assert_bundled_still_works()
    hub.fault = None  # the hub is back: the same call now succeeds, with the right numbers
    np.testing.assert_array_equal(_load().matrix, checkpoint[1])
    _assert_cache_clean(tmp_path)


def test_hub_unreachable_from_the_start_is_a_clear_message(monkeypatch, tmp_path):
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ValueError, match="reach the hub"):
        _load()
    _assert_cache_clean(tmp_path)
    _assert_bundled_still_works()


def _range_entries(tmp_path: Path) -> dict[str, Path]:
    return {p.name: p for p in _cache_files(tmp_path) if re.fullmatch(r"\d+-\d+", p.name)}


def test_a_truncated_cache_entry_is_fetched_again(hub, checkpoint, tmp_path):
    _load()
    entries = _range_entries(tmp_path)
    tensor_entry = max(entries.values(), key=lambda p: p.stat().st_size)
    tensor_entry.write_bytes(tensor_entry.read_bytes()[:100])
    np.testing.assert_array_equal(_load().matrix, checkpoint[1])
    _assert_cache_clean(tmp_path)


def test_a_corrupt_header_cache_entry_never_gives_a_wrong_table(hub, checkpoint, tmp_path):
    """Same-length garbage in the cached header: a clear message or a correct reload, never junk."""
    _load()
    entries = _range_entries(tmp_path)
    header = next(p for name, p in entries.items() if name.startswith("8-"))
    header.write_bytes(b"\xff" * header.stat().st_size)
    try:
        table = _load()
    except ValueError as exc:
        print(f"[corrupt header] {exc}")
        assert "header" in str(exc) or "corrupt" in str(exc), exc
    else:
        np.testing.assert_array_equal(table.matrix, checkpoint[1])
    _assert_bundled_still_works()


def test_a_corrupt_tensor_cache_entry_never_gives_a_wrong_table(hub, checkpoint, tmp_path):
    """Cached tensor bytes turned to 0xff (NaN in float32): refused or refetched, never shown."""
    _load()
    entries = _range_entries(tmp_path)
    tensor_entry = max(entries.values(), key=lambda p: p.stat().st_size)
    tensor_entry.write_bytes(b"\xff" * tensor_entry.stat().st_size)
    try:
        table = _load()
    except ValueError as exc:
        print(f"[corrupt tensor] {exc}")
        assert re.search(r"(?i)nan|finite|corrupt", str(exc)), exc
    else:
        np.testing.assert_array_equal(table.matrix, checkpoint[1])
    _assert_bundled_still_works()


def test_a_corrupt_length_prefix_in_the_cache_is_a_clear_message(hub, tmp_path):
    """The cached 8-byte prefix claims a 2 GB header: refused before anything that big is read."""
    _load()
    prefix = _range_entries(tmp_path)["0-8"]
    prefix.write_bytes(struct.pack("<Q", 2 * 1024**3))
    hub.reset()
    try:
        _load()
    except ValueError as exc:
        print(f"[2 GB header] {exc}")
        assert "header" in str(exc), exc
    assert hub.bytes_for(REPO) < 64 * 1024, "fetched far more than a header after a bad prefix"


class _DiskFull:
    """A stand-in for the ``os`` module whose files fail to write with ENOSPC."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def fdopen(self, fd, *args, **kwargs):
        return _FailingFile(self._real.fdopen(fd, *args, **kwargs))


class _FailingFile:
    def __init__(self, handle) -> None:
        self._handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()

    def write(self, _data) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def _load_on_a_full_disk(monkeypatch, expected: np.ndarray) -> str | None:
    """Load the table while every file write fails with ENOSPC: it either skips caching (the
    table still loads, right) or refuses with a message about space; that message, or None."""
    import posviz.tables.hub as hub_module

    monkeypatch.setattr(hub_module, "os", _DiskFull(os))
    try:
        table = _load()
    except ValueError as exc:
        assert re.search(r"(?i)space|disk|full", str(exc)), exc
        return str(exc)
    finally:
        monkeypatch.setattr(hub_module, "os", os)
    np.testing.assert_array_equal(table.matrix, expected)
    return None


def test_out_of_disk_for_the_cache_is_a_clear_message_and_leaves_no_partial_file(
    hub, checkpoint, tmp_path, monkeypatch
):
    """A full disk may either skip caching (the table still loads, right) or say so clearly."""
    message = _load_on_a_full_disk(monkeypatch, checkpoint[1])
    if message is not None:
        assert "HF_HOME" in message or "cache" in message, message
    _assert_cache_clean(tmp_path)
    _assert_bundled_still_works()


@pytest.fixture
def bin_hub(checkpoint, tmp_path, monkeypatch):
    """The same table as an old-style ``pytorch_model.bin``-only repo (downloaded whole)."""
    import torch

    directory, table = checkpoint
    bin_dir = tmp_path / "bin-ckpt"
    bin_dir.mkdir()
    (bin_dir / "config.json").write_bytes((directory / "config.json").read_bytes())
    torch.save({POS_KEY: torch.from_numpy(table)}, bin_dir / "pytorch_model.bin")
    fake = FakeHub()
    fake.add_dir(REPO, bin_dir)
    fake.tensor_start, fake.fault = 0, None
    server = HubServer(fake)
    server._httpd.RequestHandlerClass = type("Handler", (FaultyHandler,), {"hub": fake})
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with server:
        yield fake


@pytest.mark.slow
def test_a_whole_file_download_cut_short_leaves_nothing_and_recovers(bin_hub, checkpoint, tmp_path):
    bin_hub.fault = "truncate"
    with pytest.raises(ValueError, match=r"reach the hub|interrupted|incomplete|try again"):
        _load()
    _assert_cache_clean(tmp_path)
    assert not [p for p in _cache_files(tmp_path) if p.name == "whole"], "partial download kept"
    bin_hub.fault = None
    np.testing.assert_array_equal(_load().matrix, checkpoint[1])


@pytest.mark.slow
def test_out_of_disk_during_a_whole_file_download_says_where_to_free_space(
    bin_hub, checkpoint, tmp_path, monkeypatch
):
    message = _load_on_a_full_disk(monkeypatch, checkpoint[1])
    if message is not None:
        print(f"[ENOSPC whole file] {message}")
    _assert_cache_clean(tmp_path)
    assert not [p for p in _cache_files(tmp_path) if p.name == "whole"], "partial download kept"
    _assert_bundled_still_works()
