"""``python -m posviz.ui.launch run app.py …``: ``streamlit run`` with the old ``pages/`` folder
mode off before the first visitor (:mod:`posviz.ui.compat`, 1.: otherwise a fresh server's first
link to a generated lab page gets a blocking "Page not found" dialog). Every start command uses it.

It also owns the server's lifecycle around the lab:

* the first start's warm-up (``POSVIZ_LAB_WARMUP=1``, set by ``scripts/run-app.sh``) starts with
  the server, not with its first visitor (a plain HTTP request runs no page script);
* when Streamlit stops (its own SIGTERM/SIGINT handler ends the server loop),
  :func:`posviz.jobs.request_shutdown` tells every lab run to stop at its next training step and
  the process waits at most :data:`STOP_GRACE_S` for them: their claims are released and nothing
  half-written is stored (entries are renamed into place whole), so the next start trains only
  what is missing. Without it the interpreter's exit joined the training threads and a Ctrl-C
  waited for the run to finish.
"""

import logging
import os
import signal
import sys

from streamlit.web import bootstrap, cli

from posviz import jobs
from posviz.ui.compat import leave_pages_directory_mode

#: seconds the server waits, once stopped, for lab runs to reach their next step and release.
STOP_GRACE_S = 2.5


def _start_warmup() -> None:
    """The warm-up now, in this process (the app's pages find it: one per store and process)."""
    # Lazy: the lab's job registry (and torch, when it trains) only where a warm-up is asked for.
    from posviz import lab_jobs
    from posviz.lab import RunStore  # lazy, as above

    if lab_jobs.warmup_enabled():
        lab_jobs.start_warmup(str(RunStore().root))


def _stop_lab_work() -> bool:
    """Stop every lab run of this process at its next step; whether all stopped within
    :data:`STOP_GRACE_S`."""
    jobs.request_shutdown()
    lab_jobs = sys.modules.get("posviz.lab_jobs")  # no run can exist if it was never imported
    return lab_jobs is None or lab_jobs.wait_for_jobs(STOP_GRACE_S)


def _stop_early(signum: int, frame: object) -> None:
    """SIGTERM/SIGINT before Streamlit's own handler is in place: stop the lab, then leave."""
    jobs.request_shutdown()
    raise SystemExit(128 + signum)


def _chain_lab_stop() -> None:
    """Have Streamlit's stop handler (installed once its server runs) stop the lab runs first, so
    they stop while the server shuts its sessions down rather than after."""
    original = getattr(bootstrap, "_set_up_signal_handler", None)
    if original is None:  # another Streamlit: the lab then stops once the server has stopped
        return

    def set_up(server: object) -> None:
        original(server)
        for signum in (signal.SIGTERM, signal.SIGINT):
            streamlit_handler = signal.getsignal(signum)

            def handler(num: int, frame: object, then: object = streamlit_handler) -> None:
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
    if sys.argv[1:2] == ["run"]:
        _start_warmup()
    sys.argv[0] = "streamlit"
    code: object = 0
    try:
        cli.main()
    except SystemExit as done:  # click ends every command with one
        code = done.code
    if not _stop_lab_work():  # a run still importing torch or evaluating: its claim goes now
        released = jobs.release_held_claims()
        logging.getLogger(__name__).warning(
            "lab runs still busy after %.0f s: %d claim(s) released, leaving",
            STOP_GRACE_S,
            released,
        )
    # Leave now: the interpreter's own teardown (torch's among it) took 2.4 s more here, past the
    # 5-s stop a container's grace period and a newcomer's Ctrl-C expect. Stores and claims are
    # already consistent (entries are renamed into place whole; a dead pid's claim is taken over).
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    main()
