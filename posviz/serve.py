"""``posviz-app``: start the Streamlit app that ships inside the installed package.

A wheel carries the app's scripts as ``posviz/_app/`` (``app.py``, ``pages/``,
``.streamlit/config.toml``; copied there by the build, see ``setup.py``). From a checkout (an
editable install) the repository root holds the same files. Either way this module only finds the
folder and hands over to ``python -m streamlit run``; it never imports Streamlit itself, so it works
(and says what to install) when the ``[app]`` extra is missing.

    posviz-app                              # http://127.0.0.1:8501, loopback only
    posviz-app --host 0.0.0.0 --port 8080   # reachable from other machines (e.g. in a container)
    posviz-app -- --server.maxUploadSize 50 # anything after -- goes to streamlit run
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def app_dir() -> Path:
    """The folder holding ``app.py`` and ``pages/``: the packaged copy, else the checkout.

    Raises:
        FileNotFoundError: neither exists (a wheel built without setup.py's build hook).
    """
    for candidate in (_PACKAGE / "_app", _PACKAGE.parent):
        if (candidate / "app.py").is_file() and (candidate / "pages").is_dir():
            return candidate
    raise FileNotFoundError(
        f"The posviz app's scripts are not installed: no app.py and pages/ in {_PACKAGE / '_app'} "
        f"or {_PACKAGE.parent}. Reinstall posviz from a wheel built by `pip wheel .` (setup.py "
        "copies them), or run `./scripts/run-app.sh` in a checkout."
    )


def streamlit_command(*, host: str, port: int, extra: list[str]) -> list[str]:
    """``python -m posviz.ui.launch run <app.py>`` (``streamlit run`` with the first visitor's
    deep link fixed, :mod:`posviz.ui.launch`) bound to ``host:port``, with ``extra`` appended."""
    return [
        sys.executable, "-m", "posviz.ui.launch", "run", str(app_dir() / "app.py"),
        "--server.address", host, "--server.port", str(port), "--server.headless", "true",
        *extra,
    ]  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="posviz-app",
        description="Start the posviz Streamlit app (needs the [app] extra).",
        epilog="Arguments after -- are passed to `streamlit run` unchanged.",
    )
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: 127.0.0.1, this machine only)")  # fmt: skip
    parser.add_argument("--port", type=int, default=8501, help="port (default: 8501)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the options, then become the Streamlit server (does not return on success)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_in:
        cut = args_in.index("--")
        args_in, extra = args_in[:cut], args_in[cut + 1 :]
    parser = _parser()
    args = parser.parse_args(args_in)
    if not 1 <= args.port <= 65535:
        parser.error(f"--port {args.port} is outside 1-65535; pick a free port such as 8501")
    # find_spec, not import: this command must not pay for (or require) Streamlit to explain itself
    if importlib.util.find_spec("streamlit") is None:
        print("posviz-app needs Streamlit: pip install 'posviz[app]'", file=sys.stderr)
        return 2
    try:
        command = streamlit_command(host=args.host, port=args.port, extra=extra)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    # Streamlit reads .streamlit/config.toml from the working directory: run from the app's folder.
    os.chdir(app_dir())
    os.execv(command[0], command)  # the server gets this process's PID and signals (containers)
    return 0  # pragma: no cover - execv does not return
