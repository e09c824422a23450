"""``python -m posviz.ui.launch run app.py …``: ``streamlit run`` with the old ``pages/`` folder
mode off before the first visitor (:mod:`posviz.ui.compat`, 1.: otherwise a fresh server's first
link to a generated lab page gets a blocking "Page not found" dialog). Every start command uses it.

It also starts the lab's warm-up with the server (no visitor needed) and stops the lab's runs on
SIGTERM/SIGINT as Streamlit stops (:func:`posviz.lab_jobs.stop_for_shutdown`), then leaves at
once: the interpreter's own teardown (torch's among it) took 2.4 s more here, past the 5 s a
container's grace period and a newcomer's Ctrl-C expect.
"""

import os
import signal
import sys

from streamlit.web import bootstrap, cli

from posviz import jobs
from posviz.ui.compat import leave_pages_directory_mode


def _stop_early(signum: int, frame: object) -> None:
    """SIGTERM/SIGINT before Streamlit's handler is in place: stop the lab runs, then leave."""
    jobs.request_shutdown()
    raise SystemExit(128 + signum)


def _chain_lab_stop() -> None:
    """Streamlit's stop handler (installed once its server runs) stops the lab runs first."""
    original = getattr(bootstrap, "_set_up_signal_handler", None)
    if original is None:  # another Streamlit: the lab then stops once the server has stopped
        return

    def set_up(server: object) -> None:
        original(server)
        for signum in (signal.SIGTERM, signal.SIGINT):

            def handler(num: int, frame: object, then: object = signal.getsignal(signum)) -> None:
                jobs.request_shutdown()
                if callable(then):
                    then(num, frame)

            signal.signal(signum, handler)

    bootstrap._set_up_signal_handler = set_up


def main() -> None:
    leave_pages_directory_mode()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stop_early)
    _chain_lab_stop()
    # Lazy: the lab's job registry (torch when it trains) only for a server, not for --help.
    from posviz import lab_jobs

    code: object = 0
    try:
        if sys.argv[1:2] == ["run"]:
            lab_jobs.start_server_warmup()
        sys.argv[0] = "streamlit"
        cli.main()
    except SystemExit as done:  # click ends every command with one
        code = done.code
    lab_jobs.stop_for_shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    main()
