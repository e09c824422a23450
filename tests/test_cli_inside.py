"""``python -m posviz inside MODEL``: the findings as JSON (head classes under every condition,
the ablation, positional heads, the moved control), a window length not offered refused with
its fix, an edited results cache refused with the rebuild command (exit status 2, no
traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posviz import cli, models
from posviz.analysis import inside_models
from posviz.analysis.heads import CLASSES

SCORED = [c for c in CLASSES if c != "broad"]


def _arrays() -> dict[str, np.ndarray]:
    """One layer, two heads, 4 tokens, 2 windows: head 0 on the first token in every condition
    but the untrained one, head 1 on the previous token except under the ablation (it attends
    by position); in the moved control head 0 follows slot 0, not the token."""
    conditions, windows, t = len(inside_models.CONDITIONS), 2, 4
    scores = np.zeros((conditions, len(SCORED), 1, 2, windows))
    content = np.full((conditions, 1, 2, windows, t), 0.1)
    sink, prev = SCORED.index("first-token (sink)"), SCORED.index("previous-token")
    for c, condition in enumerate(inside_models.CONDITIONS):
        if condition != "untrained":
            scores[c, sink, 0, 0] = 0.9
        if condition in ("trained", "shuffled"):
            scores[c, prev, 0, 1] = 0.8
            content[c, 0, 1, :, 1] = 0.8  # the same distance on every window: positional
    moved = np.zeros((2, 1, 2, windows))
    moved[0, 0, 0] = 0.9
    return {"distances": np.arange(t), "by_distance": np.ones((conditions, 1, 2, t)),
            "scores": scores, "content": content, "moved": moved}  # fmt: skip


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
    assert sum(pooled.values()) == findings["heads"] == 2
    assert pooled["first-token (sink)"] == 1 and pooled["previous-token"] == 1
    assert findings["trained"]["per_window"]["previous-token"] == [1, 1]
    ablated = findings["ablated"]
    assert ablated["what"] == inside_models.ABLATIONS["minilm"]
    assert ablated["pooled"]["previous-token"] == 0 and ablated["pooled"]["first-token (sink)"] == 1
    assert findings["trained"]["positional"] == 1 and findings["trained"]["positional_at"] == {
        "1": 1
    }
    assert ablated["positional_kept"] == 0
    assert findings["moved"]["on_slot_0"] == 1 and findings["moved"]["on_the_token"] == 0


def test_the_text_output_names_the_ablation(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["inside", "minilm"]) == 0
    out = capsys.readouterr().out
    assert f"ablated, {inside_models.ABLATIONS['minilm']}" in out
    assert "positional heads: 1 (at distance: {1: 1})" in out
    assert "positional heads that keep their distance: 0" in out
    assert "moved control ([CLS] moved to the middle slot): 1 heads on slot 0, 0 on [CLS]" in out


def test_an_uncomputed_window_and_an_edited_cache_are_messages(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["inside", "minilm", "--window", "48"]) == 2
    assert "choose one of 32, 64, 128, 256" in capsys.readouterr().err
    with open(cached, "wb") as handle:
        np.savez(handle, **{**_arrays(), "moved": np.ones((2, 1, 2, 2))})
    assert cli.main(["inside", "minilm"]) == 2
    err = capsys.readouterr().err
    assert "was changed" in err and "rm '" in err and "Traceback" not in err
