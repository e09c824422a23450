"""The repository's own HAProxy config, rendered for loopback replicas.

``deploy/compose/haproxy/haproxy.cfg`` is what compose runs (replicas found through Docker's DNS).
For replicas on ``127.0.0.1`` ports this module replaces its ``bind`` line and its
``server-template`` line, and nothing else; ``affinity=False`` also drops the ``cookie`` line, to
show the failure affinity prevents.

    python tests/load/proxy.py render --listen 127.0.0.1:8600 --ports 8601 8602 8603 --out DIR
    python tests/load/proxy.py render ... --no-affinity

``render`` writes ``DIR/haproxy.cfg``; run it with ``haproxy -f DIR/haproxy.cfg``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from browser_support import stop_process, wait_healthy  # noqa: E402  (tests/ is not a package)

CONFIG = ROOT / "deploy" / "compose" / "haproxy" / "haproxy.cfg"
BIND_LINE = "bind :8080"
SERVERS_PREFIX = "server-template app "
AFFINITY_PREFIX = "cookie posviz_affinity "


def _replace_one(lines: list[str], prefix: str, new: list[str]) -> list[str]:
    """``lines`` with the one line starting (after indentation) with ``prefix`` replaced by ``new``.

    Raises:
        ValueError: not exactly one such line (the config changed shape).
    """
    hits = [i for i, line in enumerate(lines) if line.strip().startswith(prefix)]
    if len(hits) != 1:
        raise ValueError(f"{CONFIG} must hold exactly one line starting with {prefix!r}")
    i = hits[0]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    return lines[:i] + [indent + text for text in new] + lines[i + 1 :]


def render(*, listen: str, ports: list[int], affinity: bool = True) -> str:
    """The compose config for replicas on ``127.0.0.1:ports``, the proxy on ``listen``."""
    lines = CONFIG.read_text().splitlines()
    lines = _replace_one(lines, BIND_LINE, [f"bind {listen}"])
    servers = [f"server app{i} 127.0.0.1:{port}" for i, port in enumerate(ports, start=1)]
    lines = _replace_one(lines, SERVERS_PREFIX, servers)
    if not affinity:
        lines = _replace_one(lines, AFFINITY_PREFIX, [])
    return "\n".join(lines) + "\n"


def write_config(workdir: Path, *, listen: str, ports: list[int], affinity: bool = True) -> Path:
    """Render into ``workdir/haproxy.cfg``; returns its path."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "haproxy.cfg"
    path.write_text(render(listen=listen, ports=ports, affinity=affinity))
    return path


def haproxy_binary() -> str | None:
    """Debian's haproxy (``/usr/sbin`` is not on every PATH)."""
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.path.exists(p)), None
    )


def check_config(path: Path) -> subprocess.CompletedProcess:
    """``haproxy -c`` on a config file."""
    return subprocess.run([haproxy_binary() or "haproxy", "-c", "-f", str(path)],
                          capture_output=True, text=True, timeout=30)  # fmt: skip


@contextlib.contextmanager
def haproxy(workdir: Path, *, port: int, ports: list[int], affinity: bool = True,
            wait: bool = True) -> Iterator[str]:  # fmt: skip
    """HAProxy on ``127.0.0.1:port`` in front of ``ports``; yields its URL; stopped on exit."""
    path = write_config(workdir, listen=f"127.0.0.1:{port}", ports=ports, affinity=affinity)
    binary = haproxy_binary()
    if binary is None:
        raise FileNotFoundError("haproxy is not installed (apt-get install haproxy)")
    log = (workdir / "haproxy.log").open("wb")
    # -db: stay in the foreground, so this process's PID is the proxy's
    proc = subprocess.Popen([binary, "-db", "-f", str(path)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        if wait:
            wait_healthy(url, proc, timeout=30)
        yield url
    finally:
        stop_process(proc)
        log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("render", help="write haproxy.cfg into --out")
    cmd.add_argument("--listen", required=True, help="e.g. 127.0.0.1:8600")
    cmd.add_argument("--ports", type=int, nargs="+", required=True, help="replica ports")
    cmd.add_argument("--out", type=Path, required=True)
    cmd.add_argument("--no-affinity", action="store_true")
    args = parser.parse_args(argv)
    print(write_config(args.out, listen=args.listen, ports=args.ports,
                       affinity=not args.no_affinity))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
