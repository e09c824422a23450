"""The bad-input corpus: hostile values in every URL parameter, model-id box and upload.

Each must end in a clear message on the page (or a ``ValueError`` with one, for the library) —
never an uncaught exception, a hang, an out-of-memory or a read of the server's own files.

* URL parameters: every hostile value goes through every parser of ``posviz.urlparams``
  (``tests/test_urlparams.py``) and each page gets one representative bad link
  (``tests/test_hostile_links.py``); a second visit to every page is ``tests/test_pages.py``.
* Model-id boxes: every "where does the table/config come from" choice that offers the hub is
  switched to it, and the text box that appears gets hostile ids (path traversal included).
* Uploads: the function behind the upload widget gets hostile files (a 2 GB safetensors header
  length, a pickle disguised as ``.npy``, shapes that claim terabytes, …).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import struct

import numpy as np
import pytest
from conftest import app_test, assert_no_exception

from posviz.navigation import all_pages, page_params, shown_at_defaults

HOSTILE_IDS: dict[str, str] = {
    "traversal": "../../etc/passwd",
    "absolute": "/etc/passwd",
    "home": "~/.ssh/id_rsa",
    "url": "http://169.254.169.254/latest/meta-data",
    "unicode": "😀/🚀; rm -rf /",
    "long": "org/" + "x" * 500,
}

PAGES = all_pages()


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No network: hub ids must fail fast with a message. The HF cache is the machine's own
    (offline, nothing hostile can be written to it), so the inside-models page's one-time
    computation is shared with every other test instead of paid again here."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _url_keys(spec) -> tuple[str, ...]:
    """The parameters the page writes at its defaults, as its ``PageSpec`` declares them (checked
    against a real visit in tests/test_pages.py)."""
    return tuple(p.name for p in shown_at_defaults(page_params(spec)))


def _messages(at) -> list[str]:
    return [m.value for kind in ("error", "warning", "info") for m in getattr(at, kind)]


#: every numeric parameter clamped to its largest and to its smallest value (a value that is not a
#: number is each page's one bad link, tests/test_hostile_links.py); server paths get a traversal.
EXTREMES = {"largest": "99999999999999999999999", "smallest": "-7"}


@pytest.mark.slow
@pytest.mark.parametrize("spec", PAGES, ids=lambda spec: spec.url_path)
def test_every_page_runs_at_the_extremes_of_its_parameters(spec):
    """Each page with all its parameters at once at the largest, then the smallest value a link
    can ask for: it runs to its title and says what it clamped, ignored or could not use; a path
    parameter given "../../etc/passwd" never shows the file."""
    keys = _url_keys(spec)
    for name, value in EXTREMES.items():
        query = dict.fromkeys(keys or ("unknown_param",), value)
        query |= {k: "../../etc/passwd" for k in keys if k.endswith("_path")}
        at = app_test(spec.key, query=query, timeout=400)
        assert_no_exception(at)
        assert at.title, f"{spec.url_path} ({name}): the page stopped before its title"
        # a number or choice says "Link parameter …"; a text box (a model id) says why the
        # value it was given cannot be used
        assert _messages(at) or not keys, f"{spec.url_path} ({name}): taken without a word"
        assert not any("root:x:0" in m for m in _messages(at) + [md.value for md in at.markdown])


def _is_hub(value: str) -> bool:
    return "hub" in value.lower() or "hugging face" in value.lower()


def _id_boxes(spec) -> list[tuple[dict[str, str], tuple[str, ...]]]:
    """(setup query, the text boxes it opens) for each hub source of the page, from its declared
    parameters: a choice set to its hub option opens the boxes declared ``when`` it is."""
    hidden = set(page_params(spec)) - set(shown_at_defaults(page_params(spec)))
    boxes: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for param in hidden:
        if param.kind == "text" and any(_is_hub(value) for _, value in param.when):
            boxes.setdefault(param.when, []).append(param.name)
    return [(dict(when), tuple(sorted(names))) for when, names in sorted(boxes.items())]


@pytest.mark.parametrize("name", HOSTILE_IDS)
def test_the_loader_refuses_hostile_model_ids_with_a_message(name, monkeypatch, tmp_path):
    """What every model-id box hands its text to: a ValueError that says what is wrong, never a
    read of the server's files (the pages show that message: the sweep below)."""
    from posviz.tables import load_table

    monkeypatch.chdir(tmp_path)  # nothing to find on the disk by accident
    with pytest.raises(ValueError) as caught:
        load_table(HOSTILE_IDS[name])
    message = str(caught.value)
    assert len(message) > 20 and "root:x:0" not in message, message


@pytest.mark.slow
def test_model_id_boxes_refuse_hostile_ids_clearly():
    """Every model-id box of every page, each given one of the hostile ids in turn (every id
    reaches a page), ends in a message on the page, not a traceback."""
    checked, values = [], list(HOSTILE_IDS.values())
    for spec in PAGES:
        for setup, boxes in _id_boxes(spec):
            value = values[len(checked) % len(values)]
            query = {**setup, **dict.fromkeys(boxes, value)}
            at = app_test(spec.key, query=query, timeout=180)
            assert_no_exception(at)
            assert at.title, query
            shown = {box.key for box in at.text_input}
            assert set(boxes) <= shown, f"{spec.url_path} {setup}: declared {boxes}, shown {shown}"
            assert at.error or at.warning, f"{spec.url_path} {query}: no message for a bad id"
            checked.append(spec.url_path)
    assert len(checked) >= len(values), "fewer id boxes than hostile ids: each must reach a page"
    assert len(set(checked)) >= 3, f"only {sorted(set(checked))} have a model-id box?"


#: parameters a visitor types (a text box): free text and lists of numbers.
TYPED = ("text", "ints")


@pytest.mark.slow
def test_text_boxes_survive_hostile_typing():
    typed = 0
    for spec in PAGES:
        declared = {p.name for p in shown_at_defaults(page_params(spec)) if p.kind in TYPED}
        if not declared:
            continue  # no text box to type in: nothing to render
        at = app_test(spec.key, timeout=180)
        keys = [box.key for box in at.text_input if box.key in declared and not box.disabled]
        for box_key in keys:
            for value in ("../../etc/passwd", "😀\u202e", "-1,nan,1e400", " ", "x" * 40):
                box = at.text_input(key=box_key)
                limit = box.proto.max_chars or len(value)
                at = box.input(value[:limit]).run()
                assert_no_exception(at)
                typed += 1
    assert typed, "no page has a text box?"


# ---------------------------------------------------------------------------------------------
# uploads: the function behind the upload widget
# ---------------------------------------------------------------------------------------------


def _npy_header_only(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def _npy(array: np.ndarray, **kwargs) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, **kwargs)
    return buffer.getvalue()


def _safetensors(header: dict, payload: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + payload


class _Payload:
    """Unpickling this would create a marker file: proof that a pickle ran."""

    marker = "/tmp/posviz-bad-input-pickle-ran"

    def __reduce__(self):
        return (open, (self.marker, "w"))


POS = "embeddings.position_embeddings.weight"
UPLOADS: dict[str, tuple[str, bytes, str]] = {
    # name: (filename, bytes, regex the message must match)
    "2 GB safetensors header": (
        "t.safetensors", struct.pack("<Q", 2 * 1024**3) + b"{}", "header",
    ),
    "header longer than the file": ("t.safetensors", struct.pack("<Q", 64) + b"{}", "header"),
    "header not JSON": ("t.safetensors", struct.pack("<Q", 4) + b"\xff\xfe{[", "header|JSON"),
    "tensor claims terabytes": (
        "t.safetensors",
        _safetensors({POS: {"dtype": "F32", "shape": [10**6, 10**6],
                            "data_offsets": [0, 4 * 10**12]}}),
        "past the end|offsets|size|shape",
    ),
    "negative offsets": (
        "t.safetensors",
        _safetensors({POS: {"dtype": "F32", "shape": [2, 2], "data_offsets": [-16, 0]}},
                     b"\0" * 16),
        "offsets",
    ),
    "shape disagrees with bytes": (
        "t.safetensors",
        _safetensors({POS: {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 16]}},
                     b"\0" * 16),
        "shape|bytes|offsets",
    ),
    "integer dtype": (
        "t.safetensors",
        _safetensors({POS: {"dtype": "I64", "shape": [2, 2], "data_offsets": [0, 32]}},
                     b"\0" * 32),
        "I64|dtype|stored",
    ),
    "pickle disguised as .npy": ("t.npy", pickle.dumps(_Payload()), "pickle|not a plain"),
    "object array .npy": (
        "t.npy", _npy(np.array([_Payload()], dtype=object), allow_pickle=True),
        "pickle|not a plain|[Oo]bject",
    ),
    ".npy header claims 10 GB": ("t.npy", _npy_header_only((50_000, 50_000)), "not a plain|EOF"),
    ".npy header claims 4 TB": ("t.npy", _npy_header_only((10**6, 10**6)), "not a plain|EOF|big"),
    "3-D .npy": ("t.npy", _npy(np.zeros((2, 3, 4), np.float32)), "2-D|shape"),
    "NaN .npy": ("t.npy", _npy(np.full((3, 3), np.nan, np.float32)), "NaN|finite"),
    "strings .npy": ("t.npy", _npy(np.array([["a", "b"]])), "numeric|dtype"),
    "empty file": ("t.npy", b"", "not a plain|empty|No data"),
    "random bytes": ("t.safetensors", os.urandom(64), "header|safetensors"),
    "not a table type": ("t.exe", b"MZ\x90\x00", r"\.npy|\.safetensors"),
}  # fmt: skip


@pytest.mark.parametrize("case", UPLOADS)
def test_hostile_uploads_end_in_a_clear_message(case):
    from posviz.tables import table_from_upload

    filename, data, message = UPLOADS[case]
    with pytest.raises(ValueError, match=message):
        table_from_upload(data, filename=filename)
    assert not os.path.exists(_Payload.marker), "a pickle inside an upload was executed"


@pytest.mark.parametrize("case", UPLOADS)
def test_upload_errors_name_the_file_once_and_render_it_literally(case):
    """A doubled name (``x.safetensors/x.safetensors``), and file names are user input."""
    from markdown_it import MarkdownIt

    from posviz.tables.picker import check_upload_size
    from posviz.ui.display import MAX_ERROR_CHARS
    from posviz.ui.loaders import cached_upload
    from posviz.ui.text import safe_md

    filename, data, _ = UPLOADS[case]
    stem, dot, ext = filename.rpartition(".")
    crafted = f"{stem}[Log in](https://evil.example)`{dot}{ext}"
    for name in (filename, crafted):
        with pytest.raises(ValueError) as caught:
            cached_upload(data, filename=name)
        message = str(caught.value)
        assert message.count(name) == 1, message
        shown = MarkdownIt("commonmark").render(safe_md(message, max_len=MAX_ERROR_CHARS))
        assert "<a " not in shown and "<code" not in shown, shown
    with pytest.raises(ValueError) as caught:
        check_upload_size(filename, 300 * 2**20, cap=200 * 2**20)
    assert str(caught.value).count(filename) == 1


# ---------------------------------------------------------------------------------------------
# a hosted server never reads its own disk because of what a visitor typed
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["/etc/passwd", "../../etc/passwd", "SECRET.npy", "/"])
def test_hosted_server_does_not_read_local_paths_typed_as_model_ids(typed, monkeypatch, tmp_path):
    from posviz.tables import load_table

    monkeypatch.setenv("POSVIZ_HOSTED", "1")
    monkeypatch.delenv("POSVIZ_ALLOW_LOCAL_PATHS", raising=False)
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "SECRET.npy", np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError) as info:
        load_table(typed)
    # The answer must not depend on what is on the server's disk.
    assert "POSVIZ_ALLOW_LOCAL_PATHS" in str(info.value) or "not allowed" in str(info.value)
