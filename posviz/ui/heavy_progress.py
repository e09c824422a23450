"""Following a heavy computation that runs in its own thread (:func:`posviz.jobs.detached`), its
words redrawn twice a second; a rerun stops this loop, not the computation, and follows it again."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from posviz import jobs
from posviz.ui.compat import this_session_gone

#: seconds between redraws of a followed computation's progress
POLL_S = 0.5


def follow_heavy(key: Hashable, what: str, run: Callable[..., Any], *, about: str = "") -> Any:
    """``run(on_wait=, should_stop=, progress=)``'s result, computed once per ``key`` in its own
    thread (:func:`posviz.jobs.detached`) and followed here with its queue place, step and
    elapsed time; a visitor who leaves stops following (the computation leaves the queue when
    nobody follows it, else it finishes and caches its result).

    Raises:
        ValueError: what ``run`` raised (bad input, packages missing).
    """
    job = jobs.detached(key, what, run, about=about)
    slot, bar = st.empty(), st.progress(0.0, text="Starting …")
    try:
        while True:
            line, text = job.view().lines()
            slot.info(line)
            bar.progress(min(max(job.view_quietly().fraction, 0.0), 1.0), text=text)
            if job.wait(POLL_S):
                return job.result()
            if this_session_gone():
                st.stop()
    except jobs.JobCancelled:  # nobody followed it (every visitor left) or the server stops
        st.stop()
    finally:
        slot.empty()
        bar.empty()
