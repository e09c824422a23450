"""The repository's own nginx config, rendered for loopback replicas and run without root's files.

``deploy/compose/nginx/posviz.conf.template`` is what compose runs; this module fills its two
placeholders for ``127.0.0.1`` ports and wraps it in a self-contained main config (pid, logs and
temp paths in one work directory), so Debian's nginx can run it next to the tests.

    python tests/load/proxy.py render --listen 127.0.0.1:8600 --ports 8601 8602 8603 --out DIR
    python tests/load/proxy.py render ... --no-affinity      # the failure the affinity prevents

``render`` writes ``DIR/nginx.conf`` (main) and ``DIR/posviz.conf`` (the site); start it with
``nginx -p DIR -c DIR/nginx.conf -e DIR/error.log``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "compose" / "nginx" / "posviz.conf.template"
AFFINITY_LINE = "hash $posviz_affinity consistent;"
PLACEHOLDERS = ("${POSVIZ_LISTEN}", "${POSVIZ_UPSTREAMS}")


def loopback_upstreams(ports: list[int]) -> str:
    """One ``server`` line per replica port (a refused connection benches it for 10 s)."""
    return " ".join(f"server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;" for p in ports)


def render_site(*, listen: str, upstreams: str, affinity: bool = True) -> str:
    """The template with its placeholders filled, as the nginx image's envsubst would.

    Raises:
        ValueError: the template lost a placeholder or its affinity line.
    """
    text = TEMPLATE.read_text()
    for name in PLACEHOLDERS:
        if name not in text:
            raise ValueError(f"{TEMPLATE} has no {name}")
    text = text.replace("${POSVIZ_LISTEN}", listen).replace("${POSVIZ_UPSTREAMS}", upstreams)
    if not affinity:
        lines = [line for line in text.splitlines(keepends=True) if AFFINITY_LINE not in line]
        if len(lines) != len(text.splitlines()) - 1:
            raise ValueError(f"{TEMPLATE} must hold exactly one '{AFFINITY_LINE}' line")
        text = "".join(lines)
    return text


def main_conf(workdir: Path, site: Path) -> str:
    """A main ``nginx.conf`` that keeps pid, logs and temp files under ``workdir``."""
    temps = "\n".join(
        f"    {kind}_temp_path {workdir / ('tmp_' + kind)};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"worker_processes 1;\npid {workdir / 'nginx.pid'};\nerror_log {workdir / 'error.log'};\n"
        "events { worker_connections 4096; }\n"
        "http {\n"
        f"    access_log {workdir / 'access.log'};\n{temps}\n"
        f"    include {site};\n"
        "}\n"
    )


def write_config(workdir: Path, *, listen: str, ports: list[int], affinity: bool = True) -> Path:
    """Render both files into ``workdir``; returns the main config's path."""
    workdir.mkdir(parents=True, exist_ok=True)
    # workers run as nobody when the master is root: they must reach the temp paths
    workdir.chmod(0o755)
    site = workdir / "posviz.conf"
    upstreams = loopback_upstreams(ports)
    site.write_text(render_site(listen=listen, upstreams=upstreams, affinity=affinity))
    main = workdir / "nginx.conf"
    main.write_text(main_conf(workdir, site))
    return main


def nginx_binary() -> str | None:
    """Debian's nginx (``/usr/sbin`` is not on every PATH)."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(p)), None
    )


def nginx_test(main: Path) -> subprocess.CompletedProcess:
    """``nginx -t`` on a rendered config."""
    workdir = main.parent
    return subprocess.run(
        [nginx_binary() or "nginx", "-t", "-p", str(workdir), "-c", str(main),
         "-e", str(workdir / "error.log")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


@contextlib.contextmanager
def nginx_proxy(workdir: Path, *, port: int, ports: list[int], affinity: bool = True
                ) -> Iterator[str]:  # fmt: skip
    """nginx on ``127.0.0.1:port`` in front of ``ports``; yields its URL; stopped on exit."""
    main = write_config(workdir, listen=f"127.0.0.1:{port}", ports=ports, affinity=affinity)
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx is not installed (apt-get install nginx-light)")
    cmd = [binary, "-p", str(workdir), "-c", str(main), "-e", str(workdir / "error.log"),
           "-g", "daemon off;"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {proc.stderr.read().decode()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response,
            ):
                if response.read() == b"ok":
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("nginx did not answer /_stcore/health in 20 s")
            time.sleep(0.1)  # polling a port: nothing to wait on but time
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    render = sub.add_parser("render", help="write nginx.conf + posviz.conf into --out")
    render.add_argument("--listen", required=True, help="e.g. 127.0.0.1:8600")
    render.add_argument("--ports", type=int, nargs="+", required=True, help="replica ports")
    render.add_argument("--out", type=Path, required=True)
    render.add_argument("--no-affinity", action="store_true")
    args = parser.parse_args(argv)
    main_path = write_config(args.out, listen=args.listen, ports=args.ports,
                             affinity=not args.no_affinity)  # fmt: skip
    print(main_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
