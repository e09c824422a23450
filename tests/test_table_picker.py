"""What the table picker offers (``posviz.tables.picker``), without Streamlit; the picker's widgets
are tested on the pages (``tests/test_tables_page.py``, ``tests/test_hostile_links.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.tables import PositionTable, SetAside, load_table, picker


@pytest.mark.parametrize(
    ("default", "mode"),
    [
        ("bundled", "bundled"),
        ("upload", "upload"),
        ("sinusoidal:64x32", "sinusoid"),
        ("lab:run/x", "lab"),
        ("openai-community/gpt2", "hub"),
        ("my-org/my-model", "hub"),
    ],
)
def test_a_default_source_selects_its_mode(default: str, mode: str) -> None:
    assert picker.default_mode(default) == mode


def test_hub_defaults_choose_a_suggestion_or_type_the_id() -> None:
    assert picker.hub_defaults("facebook/opt-125m") == ("facebook/opt-125m", "")
    assert picker.hub_defaults("my-org/my-model") == (picker.OTHER, "my-org/my-model")
    for other in ("hub", "bundled", "sinusoidal:8x4", "lab:run"):
        assert picker.hub_defaults(other) == (picker.HUB_SUGGESTIONS[0], ""), other


def test_sinusoid_shapes_are_clamped_to_what_the_loader_accepts() -> None:
    assert picker.sinusoid_shape("hub") == (512, 384, None)
    assert picker.sinusoid_shape("sinusoidal:nonsense") == (512, 384, None)
    n, d, note = picker.sinusoid_shape("sinusoidal:20x7")
    assert (n, d) == (20, 6) and "20×7" in note
    n, d, note = picker.sinusoid_shape(f"sinusoidal:{picker.SINUSOID_MAX_POSITIONS + 1}x8")
    assert n == picker.SINUSOID_MAX_POSITIONS and note
    n, d, _ = picker.sinusoid_shape(f"sinusoidal:{n}x{d}")
    assert load_table(f"sinusoidal:{n}x{d}").matrix.shape == (n, d)  # the loader takes it


def test_the_comparison_sinusoid_has_the_table_shape() -> None:
    table = PositionTable(matrix=np.zeros((20, 6), dtype=np.float32), source="t.npy")
    assert picker.comparison_default(table) == "sinusoidal:20x6"
    assert picker.comparison_default(None) == "sinusoidal:512x384"


def test_uploads_over_the_cap_are_refused_naming_the_file_once() -> None:
    picker.check_upload_size("t.npy", 2**20, cap=2**20)
    with pytest.raises(ValueError, match=r"^t\.npy is 2\.0 MB; the limit here is 1 MB") as caught:
        picker.check_upload_size("t.npy", 2 * 2**20, cap=2**20)
    assert str(caught.value).count("t.npy") == 1


def test_only_hub_ids_have_revisions() -> None:
    assert picker.has_revisions("openai-community/gpt2")
    for source in ("bundled", "sinusoidal:8x4", "lab:run/x", "/tmp/t.npy", "./m", "t.npy"):
        assert not picker.has_revisions(source), source


def test_cache_keys_change_with_the_content_of_small_tables() -> None:
    matrix = np.zeros((4, 2), dtype=np.float32)
    same = PositionTable(matrix=matrix.copy(), source="a.npy")
    changed = PositionTable(matrix=matrix + 1, source="a.npy")
    assert picker.table_cache_key(PositionTable(matrix=matrix, source="a.npy")) == (
        picker.table_cache_key(same)
    )
    assert picker.table_cache_key(same) != picker.table_cache_key(changed)
    big = np.zeros((picker.DIGEST_LIMIT_BYTES // 4 + 4, 1), dtype=np.float32)
    key = picker.table_cache_key(PositionTable(matrix=big, source="big"))
    assert key.split("|")[-1] == "float32"  # no digest of a big table: source, shape, dtype


def test_description_lines_pass_file_text_through_show() -> None:
    table = PositionTable(
        matrix=np.zeros((4, 2)),
        source="org/*bert*",
        tensor_name="embeddings.position_embeddings.weight",
        model_type="bert",
        bytes_read=4096,
        set_aside=(SetAside(rows=(0, 1), reason="offset 2"),),
        notes=("a note",),
    )
    lines = picker.describe_lines(table, show=lambda text, max_len: f"<{text[:max_len]}>")
    assert lines[0].startswith("**<")
    assert "tensor <embeddings.position_embeddings.weight>" in lines[0]
    assert "model type <bert> · 4 KiB read" in lines[0]
    assert lines[1:] == ["Set aside stored row(s) 0, 1: <offset 2>.", "Note: <a note>."]


@pytest.mark.parametrize(
    ("address", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("[::1]", True), ("", False), ("0.0.0.0", False),
     ("example.org", False)],
)  # fmt: skip
def test_loopback_addresses(address: str, loopback: bool) -> None:
    assert picker.is_loopback(address) is loopback


def test_a_server_reachable_by_others_turns_local_paths_off(monkeypatch) -> None:
    monkeypatch.setenv(picker.ALLOW_PATHS_ENV, "")  # so that the value set below is undone
    monkeypatch.delenv(picker.ALLOW_PATHS_ENV)
    monkeypatch.delenv("POSVIZ_HOSTED", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert picker.local_paths_off_reason("127.0.0.1") is None
    reason = picker.local_paths_off_reason("")
    assert "every network interface" in reason
    assert picker.local_paths_off_reason("127.0.0.1") is not None  # off for the process now
    monkeypatch.setenv(picker.ALLOW_PATHS_ENV, "1")
    assert picker.local_paths_off_reason("0.0.0.0") is None  # the operator said yes
