"""Following a page's heavy computation (:func:`posviz.jobs.detached`) while it runs in a thread
of its own: its queue place in plain words, then its step and the time, redrawn twice a second
so the elapsed time ticks through a long step (a checkpoint being dequantised, a model loading).

A rerun (the visitor changed a control) stops this loop, not the computation: the rerun follows
the same computation by its key and keeps what it has done."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from posviz import jobs
from posviz.ui.compat import this_session_gone

#: seconds between redraws of a followed computation's progress
POLL_S = 0.5


def progress_line(view: jobs.DetachedView) -> tuple[str, str]:
    """``(the line above the bar, the bar's text)`` for a followed computation's state."""
    if view.position:
        name = view.what.split(" (")[0]  # its name, without the duration it promises once running
        line = jobs.queue_wait_text(view.position, what=f"Computing {name}")
        return line, f"Waiting for its turn ({view.queued_s:.0f} s so far) …"
    if not view.started:
        return f"Computing {view.what} …", f"Starting ({view.elapsed_s:.0f} s elapsed) …"
    text = jobs.wait_text(
        view.step, view.fraction, view.elapsed_s, step_s=view.step_s, left_s=view.left_s
    )
    return f"Computing {view.what} …", text


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
            line, text = progress_line(job.view())
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
