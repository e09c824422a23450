"""A lab run's live view: the Run button with its estimate, then one progress count across every
arm and sweep cell, Stop, and the live loss of every arm under its label.

The runs themselves (worker threads shared by every session, heartbeats, stopping) are
:mod:`posviz.lab.views.runs`; this module only polls a run's snapshot from a fragment and draws it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from posviz.lab.views.live import RunPlan
from posviz.lab.views.runs import DONE, FAILED, STOPPED, get_job, start_job
from posviz.ui import compat
from posviz.ui.text import safe_md

#: seconds between two polls of a running job (also the heartbeat interval).
POLL_S = 1.0


@st.fragment(run_every=POLL_S)
def watch(store_root: str, run_id: str, key_prefix: str) -> None:
    """Live progress of a running job, refreshed every :data:`POLL_S` seconds, with Stop."""
    job = get_job(store_root, run_id)
    if job is None:
        return
    job.beat(compat.current_session_id())
    view = job.snapshot()
    if view.state in (DONE, STOPPED, FAILED):
        st.rerun(scope="app")  # the whole page now shows the result (or why there is none)
    st.progress(view.live.fraction, text=view.live.text(job.plan))
    if st.button("Stop", key=f"{key_prefix}stop", icon=":material/stop:"):
        job.stop_event.set()
        st.info("Stopping after the current step…")
    if len(view.live.curves):
        # The spec never changes while a run trains: the browser swaps the data in place.
        st.vega_lite_chart(
            view.live.curves, job.plan.spec, width="stretch", key=f"{key_prefix}live"
        )


def run_controls(
    run_id: str, plan: RunPlan, *, store_root: str, key_prefix: str, work: Callable
) -> None:
    """The Run button with its estimate, or the live view of the run in progress, or how the
    last run of these settings ended."""
    job = get_job(store_root, run_id)
    if job is not None and not job.finished:
        watch(store_root, run_id, key_prefix)
        return
    if job is not None:
        view = job.snapshot()
        if view.state == FAILED:
            st.error(f"The run failed: {safe_md(view.message, max_len=500)}", icon="⚠️")
        elif view.state == STOPPED:
            st.warning(f"{view.message} Nothing was stored; press Run to start again.")
    label = f"Run to reproduce, {plan.estimate_text()}"
    if st.button(label, key=f"{key_prefix}go", type="primary", icon=":material/play_arrow:"):
        start_job(
            run_id, plan, store_root=store_root, session_id=compat.current_session_id(),
            work=work, session_active=compat.session_active,
        )  # fmt: skip
        st.rerun()  # the page now shows the run's live view instead of the button
