"""``python -m posviz``: --help, export round trips, probe output, clear errors (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import posviz
from posviz.cli import main


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert all(word in out for word in ("info", "export", "probe", "sinusoidal:NxD"))


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".tsv"])
def test_export_round_trip(tmp_path, suffix, capsys):
    out = tmp_path / f"pe{suffix}"
    assert main(["export", "sinusoidal:16x8", "-o", str(out)]) == 0
    expected = posviz.sinusoidal(16, 8)
    if suffix == ".npy":
        loaded = np.load(out, allow_pickle=False)
    elif suffix == ".csv":
        loaded = np.loadtxt(out, delimiter=",", skiprows=1)
        np.testing.assert_array_equal(loaded[:, 0], np.arange(16))
        loaded = loaded[:, 1:]
        assert out.read_text().startswith("position,dim_0,dim_1")
    else:
        loaded = np.loadtxt(out, delimiter="\t")
    np.testing.assert_allclose(loaded, expected, atol=1e-6)
    assert "wrote 16×8" in capsys.readouterr().out


def test_export_refuses_overwrite_and_bad_suffix(tmp_path, capsys):
    out = tmp_path / "pe.npy"
    out.write_bytes(b"keep")
    assert main(["export", "sinusoidal:16x8", "-o", str(out)]) == 2
    assert out.read_bytes() == b"keep"
    assert main(["export", "sinusoidal:16x8", "-o", str(tmp_path / "pe.xlsx")]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and ".npy, .csv, .tsv" in err


def test_probe_prints_results_table(capsys):
    assert main(["probe", "sinusoidal:64x32", "bundled", "--no-relative"]) == 0
    out = capsys.readouterr().out
    assert "MAE (this run)" in out and "even→odd" in out
    lines = [line for line in out.splitlines() if line.strip().startswith("sinusoidal")]
    assert " 0.0000 " in lines[0]


def test_probe_csv_and_info(capsys):
    assert main(["probe", "sinusoidal:64x32", "--protocol", "kfold", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("table,positions,d_model,protocol")
    assert "5-fold CV (rounded)" in out
    assert main(["info", "bundled"]) == 0
    info = capsys.readouterr().out
    assert "512 positions × 384 dimensions" in info and "position_embeddings" in info


def test_unreachable_hub_is_a_clear_error_not_a_traceback():
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_DISABLE_TELEMETRY": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "posviz", "info", "someone/some-model"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_every_public_name_resolves_and_type_checkers_see_the_same_names():
    import ast
    import importlib
    import inspect

    assert sorted(posviz.__all__) == sorted(posviz._EXPORTS)
    for name in posviz.__all__:
        module = importlib.import_module(posviz._EXPORTS[name])
        assert getattr(posviz, name) is getattr(module, name), name
    tree = ast.parse(inspect.getsource(posviz))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )
    seen = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == posviz._EXPORTS


def test_import_posviz_loads_no_heavy_library():
    code = (
        "import sys, posviz; posviz.__all__; "
        "print(sorted(m for m in ('torch', 'streamlit', 'transformers') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_export_writes_exactly_what_posviz_export_offers_for_download(tmp_path, capsys):
    from posviz import export

    matrix = posviz.load_table("sinusoidal:16x8").matrix
    expected = {
        ".npy": export.matrix_npy(matrix),
        ".csv": export.matrix_csv(matrix),
        ".tsv": export.projector_vectors(matrix),
    }
    for suffix, data in expected.items():
        out = tmp_path / f"pe{suffix}"
        assert main(["export", "sinusoidal:16x8", "-o", str(out)]) == 0
        assert out.read_bytes() == data, suffix


def test_lab_commands_are_part_of_the_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path))
    assert main(["lab", "list"]) == 0
    listed = capsys.readouterr().out
    assert "learned" in listed and "extrapolation" in listed
    # a lab table that does not exist is a clear message and exit status 2, not a traceback
    assert main(["info", "lab:0123456789ab"]) == 2
    assert "lab" in capsys.readouterr().err


def test_lab_sources_go_through_load_table_like_every_source(tmp_path, capsys, monkeypatch):
    from posviz import labfiles

    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path))
    snaps = np.arange(1 * 2 * 6 * 4, dtype=np.float32).reshape(1, 2, 6, 4)
    index = {"array": "s", "steps_array": "t", "label": "learned", "trained_rows": 4, "steps": 8}
    meta = {"question_id": "learned", "tables": {"learned": index}}
    labfiles.write_entry(tmp_path, "00000000000000aa", meta, {"s": snaps, "t": np.array([0, 8])})
    assert main(["info", "lab:00000000000000aa"]) == 0
    out = capsys.readouterr().out
    assert "lab:00000000000000aa/learned/0/8" in out and "6 positions × 4 dimensions" in out
    out_file = tmp_path / "t.npy"
    assert main(["export", "lab:00000000000000aa/learned/0/0", "-o", str(out_file)]) == 0
    np.testing.assert_array_equal(np.load(out_file), snaps[0, 0])
    assert main(["info", "lab:zz"]) == 2
    assert "lab:<run-id>[/<table>" in capsys.readouterr().err
