"""``python -m posviz inside MODEL``: the findings as JSON, a window length not offered refused with
its fix, an edited results cache refused with the rebuild command (exit status 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posviz import cli, models
from posviz.analysis import inside_models


def _arrays() -> dict[str, np.ndarray]:
    # one layer, two heads, 4 tokens: head 0 on the first token, head 1 on the previous one
    maps = np.zeros((3, 1, 2, 4, 4))
    maps[:, 0, 0, :, 0] = 1.0
    for t in range(4):
        maps[:, 0, 1, t, max(t - 1, 0)] = 1.0
    return {"distances": np.arange(4), "by_distance": np.ones((3, 1, 2, 4)),
            "scores": np.zeros((3, 5, 1, 2, 8)), "maps": maps}  # fmt: skip


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("POSVIZ_LAB_SECRET", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setattr(models, "_VERIFIED", {})
    path = inside_models.results_path("minilm")
    inside_models._save(path, _arrays())
    monkeypatch.setitem(inside_models._COMPUTE, "minilm", lambda *_a, **_k: pytest.fail("no"))
    return path


def test_the_findings_print_as_json(cached: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["inside", "minilm", "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert findings["window"] == inside_models.WINDOW
    pooled = findings["trained"]["pooled"]
    assert sum(pooled.values()) == findings["trained"]["heads"] == 2
    assert pooled.get("first-token (sink)") == 1


def test_an_uncomputed_window_and_an_edited_cache_are_messages(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["inside", "minilm", "--window", "48"]) == 2
    assert "choose one of 32, 64, 128, 256" in capsys.readouterr().err
    with open(cached, "wb") as handle:
        np.savez(handle, **{**_arrays(), "maps": np.zeros((3, 1, 2, 4, 4))})
    assert cli.main(["inside", "minilm"]) == 2
    err = capsys.readouterr().err
    assert "was changed" in err and "rm '" in err and "Traceback" not in err
