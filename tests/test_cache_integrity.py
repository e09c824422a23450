"""Every derived cache is verified on every load (issue 33): SmolLM2's float32 folder and the
Inside-real-models results carry a manifest HMAC-signed with the lab store's key handling; an
edited file, an edited manifest or a foreign key is refused with the rebuild command, and an
unsigned (older) cache is never used as is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posviz import models
from posviz.analysis import inside_models
from posviz.models import (
    CACHE_SIGNATURE,
    CacheTampered,
    cached_dequantised,
    dequantised_dir,
    sign_cache,
)

SHA = "cd" * 32


@pytest.fixture(autouse=True)
def _own_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POSVIZ_LAB_SECRET", raising=False)
    monkeypatch.setattr(models, "_VERIFIED", {})


def _fake_cache(root: Path) -> Path:
    """A folder shaped like a dequantised cache (tiny files; no model is dequantised)."""
    folder = dequantised_dir(SHA, root=root)
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(np.arange(64, dtype=np.float32).tobytes())
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / models._GGUF_DONE).write_text(json.dumps({"gguf_sha256": SHA}))
    manifest = sign_cache(models._cache_files(folder), label=f"gguf/{SHA}", key_root=root)
    (folder / CACHE_SIGNATURE).write_text(json.dumps(manifest))
    models._VERIFIED.clear()  # as in a fresh process: the next load hashes the files again
    return folder


def test_a_signed_float32_cache_loads_and_an_edited_one_is_refused(tmp_path: Path) -> None:
    folder = _fake_cache(tmp_path)
    assert cached_dequantised(SHA, root=tmp_path) == folder
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[8] ^= 0x01  # one flipped bit, same size
    weights.write_bytes(bytes(data))
    with pytest.raises(CacheTampered, match=r"model\.safetensors was changed.*rm -rf"):
        cached_dequantised(SHA, root=tmp_path)


def test_an_added_file_an_edited_manifest_and_another_key_are_refused(tmp_path: Path) -> None:
    folder = _fake_cache(tmp_path)
    (folder / "extra.safetensors").write_bytes(b"x")
    with pytest.raises(CacheTampered, match="added or missing"):
        cached_dequantised(SHA, root=tmp_path)
    (folder / "extra.safetensors").unlink()
    assert cached_dequantised(SHA, root=tmp_path) == folder
    manifest = json.loads((folder / CACHE_SIGNATURE).read_text())
    # the attacker's way: edit the weights and rewrite their hash in the manifest
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    manifest["sha256"]["config.json"] = models._file_sha256(folder / "config.json")
    (folder / CACHE_SIGNATURE).write_text(json.dumps(manifest))
    with pytest.raises(CacheTampered, match="not signed by this installation's key"):
        cached_dequantised(SHA, root=tmp_path)
    (tmp_path / ".secret").write_text("another key")  # same files, another installation's key
    models._VERIFIED.clear()
    with pytest.raises(CacheTampered, match="not signed"):
        cached_dequantised(SHA, root=tmp_path)


def test_an_unsigned_older_cache_is_not_used(tmp_path: Path) -> None:
    folder = _fake_cache(tmp_path)
    (folder / CACHE_SIGNATURE).unlink()
    assert cached_dequantised(SHA, root=tmp_path) is None  # rebuilt, never trusted


def _arrays() -> dict[str, np.ndarray]:
    return {"distances": np.arange(3), "by_distance": np.ones((1, 2, 3)),
            "scores": np.ones((1, 2, 4)), "maps": np.ones((1, 2, 3, 3))}  # fmt: skip


def test_results_are_signed_and_an_edited_results_file_is_refused(tmp_path: Path) -> None:
    path = inside_models.results_path("minilm", root=tmp_path)
    inside_models._save(path, _arrays())
    models._VERIFIED.clear()
    result = inside_models.cached_inside("minilm", root=tmp_path)
    assert result is not None and result.heads.scores.shape == (1, 2, 4)
    # a valid .npz with other numbers (the q_proj ×10 case: plausible, silently different)
    edited = _arrays()
    edited["scores"] = edited["scores"] * 10
    with open(path, "wb") as handle:
        np.savez(handle, **edited)
    with pytest.raises(CacheTampered, match=r"was changed.*python -m posviz inside"):
        inside_models.cached_inside("minilm", root=tmp_path)


def test_unsigned_results_are_computed_again_and_then_signed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = inside_models.results_path("minilm", root=tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:  # an older version's unsigned file, edited
        np.savez(handle, **{**_arrays(), "scores": np.full((1, 2, 4), 7.0)})
    assert inside_models.cached_inside("minilm", root=tmp_path) is None
    monkeypatch.setitem(inside_models._COMPUTE, "minilm", lambda _progress, **_k: _arrays())
    result = inside_models.inside_results("minilm", root=tmp_path)
    assert float(result.heads.scores.max()) == 1.0  # recomputed, not the unsigned 7s
    models._VERIFIED.clear()
    again = inside_models.cached_inside("minilm", root=tmp_path)
    assert again is not None and float(again.heads.scores.max()) == 1.0
