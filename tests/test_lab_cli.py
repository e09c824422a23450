"""``posviz lab list`` / ``lab run``: the same results table as the page, JSON on request."""

from __future__ import annotations

import io
import json
from pathlib import Path

from posviz.lab import QUESTIONS, RunStore, results_frame
from posviz.lab.present.cli import main


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


def _tiny_question(monkeypatch, question_id: str = "concat") -> None:
    """Shrink a preset (and the lists warm walks) so the command runs in seconds."""
    from dataclasses import replace

    import posviz.lab.present.cli as lab_cli
    import posviz.lab.studies.presets as presets

    q = presets.QUESTIONS[question_id]
    tiny = replace(
        q, default=replace(q.default, steps=3, width=16, batch=8, eval_batch=16, seeds=2)
    )
    monkeypatch.setitem(presets.QUESTIONS, question_id, tiny)
    monkeypatch.setattr(lab_cli, "QUESTIONS", {question_id: tiny})
    monkeypatch.setattr(lab_cli, "PAPER_CHECKS", {})


def test_run_prints_the_sweep_grid_and_the_answer(tmp_path: Path, monkeypatch) -> None:
    _tiny_question(monkeypatch)
    out = io.StringIO()
    assert main(["run", "concat", "--store", str(tmp_path)], out=out) == 0
    text = out.getvalue()
    assert "The sweep (one row per cell):" in text and "3× preset" in text
    assert "table init N(0, 0.71²)" in text


def test_a_corrupted_run_is_said_on_stderr_and_listed_as_such(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    _tiny_question(monkeypatch)
    assert main(["run", "concat", "--store", str(tmp_path)], out=io.StringIO()) == 0
    store = RunStore(tmp_path)
    (run,) = store.list()
    result_json = store.path(run.run_id) / "result.json"
    result_json.write_text(result_json.read_text().replace('"wall_s": ', '"wall_s": 1'))
    out = io.StringIO()
    assert main(["list", "--store", str(tmp_path)], out=out) == 0
    assert f"{run.run_id}  CORRUPTED" in out.getvalue()
    capsys.readouterr()
    assert main(["run", "concat", "--store", str(tmp_path)], out=io.StringIO()) == 0
    err = capsys.readouterr().err
    assert f"Found a corrupted run: Stored lab run {run.run_id} is corrupted" in err
    assert "Retraining it now." in err and str(tmp_path) not in err


def test_warm_stores_every_default_answer_then_its_panel(tmp_path: Path, monkeypatch) -> None:
    _tiny_question(monkeypatch)
    out = io.StringIO()
    assert main(["warm", "--store", str(tmp_path)], out=out) == 0
    default, panel = out.getvalue().splitlines()
    assert default.startswith("concat ") and panel.startswith("concat panel ")
    ids = [default.split()[1], panel.split()[2]]
    results = [RunStore(tmp_path).load(run_id) for run_id in ids]
    assert [r.part for r in results] == ["default", "panel"]
    again = io.StringIO()
    assert main(["warm", "--store", str(tmp_path)], out=again) == 0  # stored: no training
    assert again.getvalue().split()[1] == ids[0]
    # `run --panel` judges with the stored panel: the grid has its held-out rows, verdict first
    target = tmp_path / "with_panel.json"
    argv = ["run", "concat", "--panel", "--store", str(tmp_path), "--json", str(target)]
    assert main(argv, out=io.StringIO()) == 0
    sweep = json.loads(target.read_text(encoding="utf-8"))["sweep"]
    assert list(sweep[0])[:2] == ["verdict", "under-trained"] and "held out" in sweep[0]
    held_out = {row["held out"] for row in sweep}
    assert len(held_out) == 1 + len(QUESTIONS["concat"].panel_settings), held_out
    assert len(RunStore(tmp_path).list()) == 2  # loaded, nothing trained again


def test_a_budget_past_the_servers_cap_names_the_sweeps_factor(tmp_path: Path, capsys) -> None:
    argv = ["run", "concat", "--steps", "7000", "--store", str(tmp_path)]
    assert main(argv, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "3× the steps" in err and "POSVIZ_LAB_MAX_STEPS=20,000" in err
    assert "use steps ≤ 6,666" in err
