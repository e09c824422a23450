"""Reading from the Hugging Face hub: config, safetensors headers and single tensors by HTTP range.

Everything goes through ``huggingface_hub``: ``hf_hub_download`` for small files (``config.json``,
shard indexes; cached in ``HF_HUB_CACHE``), ``hf_hub_url`` + ``get_session`` + ``build_hf_headers``
for range requests. The environment is read at call time: ``HF_ENDPOINT``, ``HF_HOME`` /
``HF_HUB_CACHE``, ``HF_HUB_OFFLINE`` and ``HF_TOKEN`` (via ``huggingface_hub``'s own token lookup).

Byte ranges are cached under ``$HF_HOME/posviz/ranges/<repo>/<commit>/<file>/<start>-<end>`` and
written atomically (temporary file + ``os.replace``), so an interrupted fetch never leaves a
half-written entry and an offline session can re-read what an online one fetched.

``huggingface_hub`` and ``httpx2`` are imported inside the functions that use them, for start-up
speed: ``import posviz.tables`` stays light for pages that never reach the hub.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import posviz.settings  # read as posviz.settings.settings() so tests can patch it
from posviz.tables.files import Progress, parse_json

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class HubEnv:
    """Hub settings as the environment has them now."""

    endpoint: str
    hub_cache: Path  # huggingface_hub's file cache
    range_cache: Path  # posviz's cache of fetched byte ranges and whole files
    offline: bool
    timeout: float = 10.0


def hub_env() -> HubEnv:
    """Read ``HF_ENDPOINT``, ``HF_HOME``, ``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` now."""
    from huggingface_hub import constants

    home = Path(os.path.expanduser(os.environ.get("HF_HOME") or constants.HF_HOME))
    hub_cache = os.environ.get("HF_HUB_CACHE") or (
        str(home / "hub") if "HF_HOME" in os.environ else constants.HF_HUB_CACHE
    )
    offline_env = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    offline = (
        (offline_env or "").strip().lower() in _TRUE if offline_env else constants.HF_HUB_OFFLINE
    )
    endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    return HubEnv(endpoint, Path(hub_cache), home / "posviz" / "ranges", bool(offline))


@contextlib.contextmanager
def hub_errors(repo_id: str, revision: str | None, env: HubEnv) -> Iterator[None]:
    """Turn ``huggingface_hub``/network exceptions into ``ValueError``s that say what to do."""
    import httpx2
    from huggingface_hub import errors

    at = f" at revision {revision!r}" if revision else ""
    try:
        yield
    except errors.HFValidationError as exc:
        raise ValueError(
            f"{repo_id!r} is not a valid hub model id ({exc}). Use the form 'org/name' "
            "(e.g. openai-community/gpt2) or a bare name such as bert-base-uncased."
        ) from None
    except errors.GatedRepoError:
        raise ValueError(
            f"{repo_id} is a gated model: accept its terms at {env.endpoint}/{repo_id}, then set "
            "HF_TOKEN to a token of that account and reload."
        ) from None
    except errors.RepositoryNotFoundError:
        raise ValueError(
            f"Model {repo_id!r} was not found on the hub ({env.endpoint}). Check the spelling "
            "(e.g. openai-community/gpt2); if it is private, set HF_TOKEN to a token that can read "
            "it."
        ) from None
    except errors.RevisionNotFoundError:
        raise ValueError(
            f"{repo_id} has no revision {revision!r}. Use a branch (main), a tag or a commit hash."
        ) from None
    except (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError, httpx2.TransportError):
        if env.offline:
            raise ValueError(
                f"HF_HUB_OFFLINE is set and {repo_id}{at} is not in the local cache. Unset "
                "HF_HUB_OFFLINE to fetch it once, or use the bundled table, which works offline."
            ) from None
        raise ValueError(
            f"Could not reach the hub at {env.endpoint} to fetch {repo_id}{at}. Check the network "
            "(and HF_ENDPOINT if you use a mirror); the bundled table works offline."
        ) from None
    except errors.RemoteEntryNotFoundError as exc:
        raise ValueError(
            f"{repo_id}{at}: a file is missing on the hub ({exc.response.url})."
        ) from None
    except errors.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        hint = (
            "your token may lack access: check HF_TOKEN"
            if status in (401, 403)
            else "the hub may be busy; try again in a minute"
        )
        raise ValueError(f"The hub answered HTTP {status} for {repo_id}{at}: {hint}.") from None


def _atomic_write(path: Path, chunks: Iterator[bytes]) -> int:
    """Write ``chunks`` to ``path`` via a temp file in the same directory; return bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    written = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                written += len(chunk)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return written


def _cache_quietly(path: Path, data: bytes) -> None:
    """Cache ``data`` if the disk allows; a full or read-only disk only costs a refetch later."""
    with contextlib.suppress(OSError):
        _atomic_write(path, iter([data]))


class HubFiles:
    """One hub repository pinned at the commit its ``config.json`` resolved to."""

    def __init__(
        self, repo_id: str, revision: str | None = None, env: HubEnv | None = None
    ) -> None:
        from huggingface_hub.utils import validate_repo_id

        self.env = env or hub_env()
        self.repo_id = repo_id
        self.requested_revision = revision
        self.bytes_read = 0
        with self.errors():
            validate_repo_id(repo_id)
            config_path = self._resolve_config(revision)
        self.revision = config_path.parent.name  # snapshots/<commit>/config.json
        raw = config_path.read_bytes()
        self.bytes_read += len(raw)
        self._config = parse_json(raw, where=f"{repo_id}/config.json")
        self.where = f"{repo_id}@{self.revision[:8]}"
        folder = repo_id.replace("/", "--")
        self._cache = self.env.range_cache / f"models--{folder}" / self.revision

    @property
    def endpoint_name(self) -> str:
        return self.env.endpoint

    def label(self, filename: str) -> str:
        return f"{self.where}/{filename}"

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return hub_errors(self.repo_id, self.requested_revision, self.env)

    def _resolve_config(self, revision: str | None) -> Path:
        """``config.json`` at the commit ``revision`` points to now (or in the cache if offline).

        One HEAD without retries first, so a misspelled id or an unreachable hub fails in
        milliseconds instead of after ``huggingface_hub``'s ~20 s of retries; when the hub cannot
        be reached the cached copy (if any) is used.
        """
        import httpx2
        from huggingface_hub import get_hf_file_metadata

        if not self.env.offline:
            try:
                # fail fast on errors; the download below records the branch -> commit ref
                get_hf_file_metadata(
                    self._url("config.json", revision or "main"), timeout=self.env.timeout
                )
            except httpx2.TransportError:
                # unreachable: the cached copy or LocalEntryNotFoundError ("could not reach")
                return Path(self._download("config.json", revision, local_only=True))
        return Path(self._download("config.json", revision))

    def _download(self, filename: str, revision: str | None, *, local_only: bool = False) -> str:
        from huggingface_hub import hf_hub_download

        return hf_hub_download(
            self.repo_id,
            filename,
            revision=revision,
            cache_dir=self.env.hub_cache,
            endpoint=self.env.endpoint,
            local_files_only=self.env.offline or local_only,
            etag_timeout=self.env.timeout,
        )

    def _url(self, filename: str, revision: str | None = None) -> str:
        from huggingface_hub import hf_hub_url

        revision = revision or self.revision
        return hf_hub_url(self.repo_id, filename, revision=revision, endpoint=self.env.endpoint)

    def config(self) -> dict[str, Any] | None:
        return self._config if isinstance(self._config, dict) else None

    def size(self, filename: str) -> int | None:
        """File size from a HEAD request (cached); ``None`` if the repo has no such file."""
        from huggingface_hub import get_hf_file_metadata
        from huggingface_hub.errors import RemoteEntryNotFoundError

        marker = self._cache / filename / "size"
        if marker.is_file():
            text = marker.read_text().strip()
            return int(text) if text.isdigit() else None
        if self.env.offline:
            raise ValueError(
                f"HF_HUB_OFFLINE is set and {self.where} was never fetched with this posviz cache "
                f"({self.env.range_cache}). Unset HF_HUB_OFFLINE to fetch it once, or use the "
                "bundled table."
            )
        with self.errors():
            try:
                meta = get_hf_file_metadata(self._url(filename), timeout=self.env.timeout)
            except RemoteEntryNotFoundError:
                meta = None
        size = meta.size if meta is not None else None
        _cache_quietly(marker, b"" if size is None else str(size).encode())
        return size

    def read_range(self, filename: str, start: int, end: int) -> bytes:
        """Bytes ``start … end - 1`` of ``filename`` by one HTTP range request (or the cache)."""
        path = self._cache / filename / f"{start}-{end}"
        if path.is_file() and path.stat().st_size == end - start:
            data = path.read_bytes()
            self.bytes_read += len(data)
            return data
        if self.env.offline:
            raise ValueError(
                f"HF_HUB_OFFLINE is set and bytes {start}…{end} of {self.where}/{filename} are not "
                "cached. Unset HF_HUB_OFFLINE to fetch them once, or use the bundled table."
            )
        with self.errors():
            chunks = list(self._stream(filename, (start, end), limit=end - start))
        data = b"".join(chunks)
        if len(data) != end - start:
            raise ValueError(
                f"{self.where}/{filename}: asked for {end - start:,} bytes at {start:,}, got "
                f"{len(data):,}. The file is shorter than its header says (corrupt upload)."
            )
        _cache_quietly(path, data)
        return data

    def _stream(
        self, filename: str, byte_range: tuple[int, int] | None, *, limit: int
    ) -> Iterator[bytes]:
        """GET the file (or ``[start, end)`` of it), yielding at most ``limit`` bytes.

        A server that ignores ``Range`` answers 200 with the whole file: fine for a range starting
        at 0 (the prefix is what was asked, and the stream is cut at ``limit``), refused otherwise.
        """
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        headers = build_hf_headers()
        headers["Accept-Encoding"] = "identity"
        if byte_range:
            headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1] - 1}"
        session = get_session()
        with session.stream("GET", self._url(filename), headers=headers, timeout=60) as response:
            hf_raise_for_status(response)
            if byte_range and byte_range[0] > 0 and response.status_code != 206:
                raise ValueError(
                    f"{self.endpoint_name} ignored an HTTP range request for {filename} (status "
                    f"{response.status_code}); posviz will not download the whole file. Use the "
                    "official hub or a mirror that supports Range (HF_ENDPOINT)."
                )
            got = 0
            for chunk in response.iter_bytes(1 << 20):
                piece = chunk[: limit - got]
                got += len(piece)
                self.bytes_read += len(piece)
                yield piece
                if got >= limit:
                    break

    def read_json(self, filename: str) -> Any:
        with self.errors():
            path = Path(self._download(filename, self.revision))
        raw = path.read_bytes()
        self.bytes_read += len(raw)
        return parse_json(raw, where=f"{self.where}/{filename}")

    def whole_file(self, filename: str, *, progress: Progress | None) -> Path:
        """Download a whole file (the ``.bin`` fallback), capped by ``max_fetch_bytes``."""
        path = self._cache / filename / "whole"
        if path.is_file():
            self.bytes_read += path.stat().st_size
            return path
        if self.env.offline:
            raise ValueError(
                f"HF_HUB_OFFLINE is set and {self.where}/{filename} is not cached. Unset "
                "HF_HUB_OFFLINE to fetch it once, or use the bundled table."
            )
        cap = posviz.settings.settings().max_fetch_bytes
        total = self.size(filename)
        if total is not None and total > cap:
            raise ValueError(_cap_message(self.where, filename, total, cap))

        def counted() -> Iterator[bytes]:
            done = 0
            for chunk in self._stream(filename, None, limit=cap + 1):
                done += len(chunk)
                if done > cap:
                    raise ValueError(_cap_message(self.where, filename, done, cap))
                if progress is not None:
                    progress(done, total)
                yield chunk

        try:
            with self.errors():
                _atomic_write(path, counted())
        except OSError as exc:
            raise ValueError(
                f"Could not store {self.where}/{filename} in the cache at {path.parent} "
                f"({exc.strerror or exc}). Free disk space or point HF_HOME to a disk with room."
            ) from None
        return path


def _cap_message(where: str, filename: str, size: int, cap: int) -> str:
    return (
        f"{where} has no safetensors weights, only {filename} ({size / 2**20:,.0f} MB or more), "
        f"which is above this server's fetch cap of {cap / 2**20:,.0f} MB. "
        "Raise POSVIZ_MAX_FETCH_MB, "
        "or pick a repository that has model.safetensors (posviz then reads only the table)."
    )
