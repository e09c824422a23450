"""A fake Hugging Face hub on 127.0.0.1, enough for the real ``huggingface_hub`` client.

Point ``HF_ENDPOINT`` at ``server.url`` and ``hf_hub_download`` / ``get_hf_file_metadata`` / range
GETs work against it. It implements what ``huggingface_hub`` (2.x, ``file_download.py`` and
``utils/_http.py``) reads from the real hub:

* ``HEAD|GET /{repo_id}/resolve/{revision}/{filename}`` with ``X-Repo-Commit``, ``ETag`` (and
  ``X-Linked-Etag`` / ``X-Linked-Size`` for large files, as the hub does for LFS),
  ``Content-Length``, ``Accept-Ranges``; ``Range: bytes=a-b`` answered with 206 + ``Content-Range``;
* errors the way the hub signals them: ``X-Error-Code: RepoNotFound`` (404, or 401 for a private
  repo without a valid token), ``GatedRepo`` (401), ``RevisionNotFound``, ``EntryNotFound``.

It counts every body byte it sends, per file, so tests can check what a loader fetched.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")
_LFS_THRESHOLD = 1024  # files above this get the LFS-style X-Linked-* headers


@dataclass
class FakeRepo:
    """One repository: files at a single commit (served for "main" and for the commit hash)."""

    files: dict[str, bytes]
    commit: str = ""
    private: bool = False
    gated: bool = False
    token: str = "hf_test_token"  # accepted for private/gated repos
    revisions: tuple[str, ...] = ("main",)

    def __post_init__(self) -> None:
        if not self.commit:
            digest = hashlib.sha1(b"".join(sorted(self.files.values()))).hexdigest()
            self.commit = digest


@dataclass
class FakeHub:
    """The server's state: repositories and a byte counter."""

    repos: dict[str, FakeRepo] = field(default_factory=dict)
    served: Counter = field(default_factory=Counter)  # (repo_id, filename) -> body bytes sent
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, range
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_dir(self, repo_id: str, directory: Path, **kwargs) -> FakeRepo:
        """Serve every file of ``directory`` (recursively) as ``repo_id``."""
        files = {
            str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*"))
            if p.is_file()
        }
        repo = FakeRepo(files, **kwargs)
        self.repos[repo_id] = repo
        return repo

    def bytes_for(self, repo_id: str) -> int:
        with self.lock:
            return sum(n for (rid, _), n in self.served.items() if rid == repo_id)

    def reset(self) -> None:
        with self.lock:
            self.served.clear()
            self.requests.clear()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub  # set on the subclass made per server

    def log_message(self, format: str, *args) -> None:  # quiet
        del format, args

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        self._serve(body=True)

    def _reply(self, status: int, headers: dict[str, str], body: bytes = b"", send: bool = True):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", headers.get("Content-Length", str(len(body))))
        self.end_headers()
        if send and body and self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, commit: str | None = None) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": message}
        if commit:
            headers["X-Repo-Commit"] = commit
        self._reply(status, headers, message.encode())

    def _serve(self, *, body: bool) -> None:
        path = unquote(self.path.split("?", 1)[0])
        byte_range = self.headers.get("Range")
        with self.hub.lock:
            self.hub.requests.append((self.command, path, byte_range))
        repo_id, sep, rest = path.lstrip("/").partition("/resolve/")
        revision, _, filename = rest.partition("/")
        if not sep or not filename:
            self._error(404, "EntryNotFound", f"unknown route {path}")
            return
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        authorised = self.headers.get("Authorization") == f"Bearer {repo.token}"
        if repo.gated and not authorised:
            self._error(401, "GatedRepo", "Access to this model is restricted.")
            return
        if repo.private and not authorised:
            self._error(401, "RepoNotFound", "Repository not found")
            return
        if revision not in (*repo.revisions, repo.commit):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return
        data = repo.files.get(filename)
        if data is None:
            self._error(404, "EntryNotFound", f"{filename} does not exist", commit=repo.commit)
            return
        self._send_file(repo_id, repo, filename, data, byte_range, body=body)

    def _send_file(self, repo_id, repo, filename, data, byte_range, *, body: bool) -> None:
        etag = hashlib.sha256(data).hexdigest()
        headers = {
            "X-Repo-Commit": repo.commit,
            "ETag": f'"{etag}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if len(data) > _LFS_THRESHOLD:
            headers["X-Linked-Etag"] = f'"{etag}"'
            headers["X-Linked-Size"] = str(len(data))
        status, chunk = 200, data
        match = _RANGE.match(byte_range or "")
        if byte_range and match:
            start = int(match[1])
            end = min(int(match[2]) if match[2] else len(data) - 1, len(data) - 1)
            if start >= len(data) or end < start:
                self._reply(416, {"Content-Range": f"bytes */{len(data)}"})
                return
            status, chunk = 206, data[start : end + 1]
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        headers["Content-Length"] = str(len(chunk))
        if body:
            with self.hub.lock:
                self.hub.served[(repo_id, filename)] += len(chunk)
        self._reply(status, headers, chunk, send=body)


class HubServer:
    """``with HubServer() as server:`` — a running fake hub; ``server.url`` for ``HF_ENDPOINT``."""

    def __init__(self, hub: FakeHub | None = None) -> None:
        self.hub = hub or FakeHub()
        handler = type("Handler", (_Handler,), {"hub": self.hub})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
