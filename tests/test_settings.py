"""The hosted-deploy profile: environment -> limits, and the configs that ship with it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest
from conftest import ROOT

from posviz.settings import settings

MB = 1024 * 1024
_VARS = (
    "POSVIZ_HOSTED",
    "POSVIZ_ALLOW_LOCAL_PATHS",
    "POSVIZ_MAX_FETCH_MB",
    "POSVIZ_MAX_UPLOAD_MB",
    "POSVIZ_CACHE_ENTRIES",
    "POSVIZ_CACHE_TTL",
    "SPACE_ID",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)


def test_local_defaults_allow_paths_and_larger_caps():
    s = settings()
    assert not s.hosted and s.allow_local_paths
    assert (s.max_fetch_bytes, s.max_upload_bytes) == (2000 * MB, 200 * MB)
    assert s.cache_entries == 32 and s.cache_ttl_seconds == 3600 and s.problems == ()


def test_hosted_turns_local_paths_off_and_tightens_every_cap(monkeypatch):
    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    s = settings()
    local = (2000 * MB, 200 * MB, 32)
    assert s.hosted and not s.allow_local_paths
    assert (s.max_fetch_bytes, s.max_upload_bytes, s.cache_entries) < local
    assert (s.max_fetch_bytes, s.max_upload_bytes, s.cache_entries) == (200 * MB, 50 * MB, 8)


def test_local_paths_only_when_explicitly_enabled_on_a_hosted_server(monkeypatch):
    monkeypatch.setenv("POSVIZ_HOSTED", "true")
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "yes")
    assert settings().allow_local_paths


def test_a_hugging_face_space_is_hosted_unless_told_otherwise(monkeypatch):
    monkeypatch.setenv("SPACE_ID", "someone/posviz")
    assert settings().hosted and not settings().allow_local_paths
    monkeypatch.setenv("POSVIZ_HOSTED", "0")
    assert not settings().hosted


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1e9", "", " "])
def test_bad_numbers_fall_back_to_the_default_and_say_so(monkeypatch, raw):
    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    monkeypatch.setenv("POSVIZ_MAX_FETCH_MB", raw)
    s = settings()
    assert s.max_fetch_bytes == 200 * MB
    assert len(s.problems) == 1 and "POSVIZ_MAX_FETCH_MB" in s.problems[0]


def test_operator_overrides_are_taken_as_given(monkeypatch):
    monkeypatch.setenv("POSVIZ_MAX_UPLOAD_MB", " 7 ")
    monkeypatch.setenv("POSVIZ_CACHE_ENTRIES", "3")
    monkeypatch.setenv("POSVIZ_CACHE_TTL", "60")
    s = settings()
    assert (s.max_upload_bytes, s.cache_entries, s.cache_ttl_seconds) == (7 * MB, 3, 60)


def test_a_misspelt_switch_fails_safe(monkeypatch):
    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    monkeypatch.setenv("POSVIZ_ALLOW_LOCAL_PATHS", "maybe")
    s = settings()
    assert not s.allow_local_paths and "POSVIZ_ALLOW_LOCAL_PATHS" in s.problems[0]


def _toml(path):
    return tomllib.loads((ROOT / path).read_text())


def test_xsrf_protection_is_on_in_every_shipped_streamlit_config():
    for path in (".streamlit/config.toml", "deploy/streamlit-cloud/config.toml"):
        server = _toml(path)["server"]
        assert server.get("enableXsrfProtection", True) is True, path
        assert server.get("enableCORS", True) is True, path


def test_hosted_streamlit_config_caps_uploads_like_posviz_does():
    server = _toml("deploy/streamlit-cloud/config.toml")["server"]
    assert server["maxUploadSize"] <= 50
    assert _toml("deploy/streamlit-cloud/config.toml")["client"]["showErrorDetails"] == "none"


def test_the_space_readme_runs_the_docker_image_on_streamlits_port():
    text = (ROOT / "deploy/huggingface-space/README.md").read_text()
    header = text.split("---")[1]
    assert "sdk: docker" in header and "app_port: 8501" in header
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert (
        "EXPOSE 8501" in dockerfile and "HEALTHCHECK" in dockerfile and "USER posviz" in dockerfile
    )


#: (environment, server.address, local paths offered)
LOCAL_PATH_CASES = [
    ({"POSVIZ_HOSTED": "1"}, "127.0.0.1", False),
    ({"POSVIZ_HOSTED": "1", "POSVIZ_ALLOW_LOCAL_PATHS": "1"}, "127.0.0.1", True),
    ({}, "127.0.0.1", True),  # the default of scripts/run-app.sh
    # a server others can reach: off unless explicitly allowed
    ({}, "0.0.0.0", False),
    ({}, "", False),  # empty: every interface
    ({"POSVIZ_ALLOW_LOCAL_PATHS": "0"}, "192.168.1.5", False),
    ({"POSVIZ_ALLOW_LOCAL_PATHS": "1"}, "0.0.0.0", True),
    ({}, "::1", True),
    ({}, "localhost", True),
]


@pytest.mark.slow
def test_table_picker_offers_local_paths_only_when_allowed():
    """The picker's limits are read per run: one fresh interpreter, as a server would be, asked
    once per case with the environment and the address changed in between."""
    code = f"""
import json, os, sys
from streamlit import config
import posviz.ui.table_source as t
answers = []
for env, address in json.loads(sys.argv[1]):
    for name in {_VARS!r}:
        os.environ.pop(name, None)
    os.environ.update(env)
    config.set_option("server.address", address)
    answers.append(t.local_paths_off_reason() is None)
print(json.dumps(answers))
"""
    clean = {k: v for k, v in os.environ.items() if k not in _VARS}
    cases = [[env, address] for env, address, _ in LOCAL_PATH_CASES]
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(cases)],
        env=clean,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == [offered for _, _, offered in LOCAL_PATH_CASES]


@pytest.mark.parametrize(
    ("env", "address"), [({}, "127.0.0.1"), ({"POSVIZ_ADDRESS": "0.0.0.0"}, "0.0.0.0")]
)
def test_run_app_script_binds_loopback_unless_told_otherwise(tmp_path, env, address):
    """The README's start command listens on 127.0.0.1 by default.

    The script runs as written, in a copy of scripts/ whose .venv python only prints its arguments.
    """
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts/run-app.sh", tmp_path / "scripts/run-app.sh")
    (tmp_path / "scripts/_venv.sh").write_text('cd "$(dirname "${BASH_SOURCE[0]}")/.."\n')
    fake = tmp_path / ".venv/bin/python"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if k not in ("POSVIZ_ADDRESS", "PORT")}
    out = subprocess.run(
        ["bash", str(tmp_path / "scripts/run-app.sh")],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    args = out.stdout.split("\n")
    assert args[:3] == ["-m", "posviz.ui.launch", "run"]
    assert args[args.index("--server.address") + 1] == address
    header = (ROOT / "scripts/run-app.sh").read_text()
    assert "POSVIZ_ADDRESS=0.0.0.0" in header and "POSVIZ_ALLOW_LOCAL_PATHS=1" in header


def test_every_shipped_config_follows_the_visitors_theme_with_one_accent():
    """No fixed ``theme.base``: light or dark as the visitor's system (or settings menu) says,
    the accent set for both (tests/test_pages_browser.py checks the dark theme's contrast)."""
    for path in (".streamlit/config.toml", "deploy/streamlit-cloud/config.toml"):
        theme = _toml(path)["theme"]
        assert "base" not in theme, path
        assert theme["light"]["primaryColor"] and theme["dark"]["primaryColor"], path
