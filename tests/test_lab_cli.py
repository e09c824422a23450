"""``posviz lab list`` / ``lab run``: the same results table as the page, JSON on request."""

from __future__ import annotations

import io
import json
from pathlib import Path

from posviz.lab import QUESTIONS, RunStore, results_frame
from posviz.lab.cli import main


def test_list_names_every_question(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["list", "--store", str(tmp_path)], out=out) == 0
    for q in QUESTIONS.values():
        assert q.id in out.getvalue() and q.title in out.getvalue()


def test_run_prints_the_results_table_and_writes_json(tmp_path: Path) -> None:
    out, target = io.StringIO(), tmp_path / "result.json"
    argv = ["run", "concat", "--seeds", "2", "--steps", "2", "--store", str(tmp_path / "s")]
    assert main([*argv, "--json", str(target)], out=out) == 0
    data = json.loads(target.read_text(encoding="utf-8"))
    stored = RunStore(tmp_path / "s").load(data["run_id"])
    frame = results_frame(stored)
    text = out.getvalue()
    assert data["run_id"] in text and stored.answer in text
    for label in frame["variant"]:
        assert label in text
    assert [r["metric"] for r in data["results"]] == list(frame["metric"])
    assert data["config"]["seeds"] == 2 and data["config"]["steps"] == 2


def test_a_bad_setting_is_a_message_not_a_traceback(tmp_path: Path, capsys) -> None:
    argv = ["run", "concat", "--seeds", "99", "--store", str(tmp_path)]
    assert main(argv, out=io.StringIO()) == 2
    assert "seeds=99 is out of range" in capsys.readouterr().err
