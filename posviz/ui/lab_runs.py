"""A lab run's live view: the Run button with its estimate, then one progress count across every
arm and sweep cell, Stop, and the live loss of every arm under its label; and the progress line of
the background warm-up that stores every default answer on the first start.

The runs themselves (worker threads shared by every session, the warm-up, stopping) are
:mod:`posviz.lab_jobs`; this module only polls their snapshots from fragments and draws them.
A run goes on when its tab closes (it is stored for whoever comes next); only Stop ends it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from posviz import lab_jobs as runs
from posviz.lab import RunStore
from posviz.lab.present.live import RunPlan, duration_text
from posviz.lab_jobs import DONE, FAILED, STOPPED, get_job, start_job
from posviz.page_models import lab as model
from posviz.ui.text import safe_md

#: seconds between two polls of a running job.
POLL_S = 1.0
#: seconds between two polls of the warm-up's progress line.
WARMUP_POLL_S = 3.0


@st.fragment(run_every=POLL_S)
def watch(store_root: str, run_id: str, key_prefix: str) -> None:
    """Live progress of a running job, refreshed every :data:`POLL_S` seconds, with Stop."""
    job = get_job(store_root, run_id)
    if job is None:
        return
    snap = job.snapshot()
    if snap.state in (DONE, STOPPED, FAILED):
        st.rerun(scope="app")  # the whole page now shows the result (or why there is none)
    st.progress(snap.live.fraction, text=snap.live.text(job.plan))
    if job.stoppable and st.button("Stop", key=f"{key_prefix}stop", icon=":material/stop:"):
        job.stop()
        st.info("Stopping after the current step…")
    if len(snap.live.curves):
        # The spec never changes while a run trains: the browser swaps the data in place.
        st.vega_lite_chart(
            snap.live.curves, job.plan.spec, width="stretch", key=f"{key_prefix}live"
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
    level, note = model.last_run_note(job.snapshot()) if job is not None else ("", "")
    if note:
        st.error(note, icon="⚠️") if level == "error" else st.warning(note)
    seconds, source = plan.estimate_now()
    label = f"Run to reproduce, {duration_text(seconds)}"
    if st.button(label, key=f"{key_prefix}go", type="primary", icon=":material/play_arrow:"):
        start_job(run_id, plan, store_root=store_root, work=work)
        st.rerun()  # the page now shows the run's live view instead of the button
    st.caption(model.run_note(source))


def start_warmup() -> None:
    """Start computing every missing default answer in the background, once per process, when
    ``POSVIZ_LAB_WARMUP`` asks for it (``scripts/run-app.sh`` does); the app serves meanwhile."""
    if runs.warmup_enabled():
        runs.start_warmup(str(RunStore().root))


def warmup_notice(run_id: str | None = None) -> None:
    """The warm-up's progress line ("Computing the stored answers: 4 of 9, about 2 min left"),
    refreshed while it runs. The whole page reruns when what it shows changed: its own answer
    (``run_id``, when the warm-up computes it) is stored, or (``run_id`` None: /lab, the paper
    checks) any answer is. Nothing when no warm-up runs or everything is stored."""
    warmup = runs.get_warmup(str(RunStore().root))
    if warmup is None:
        return
    now = warmup.view()
    if now.text():
        _warmup_line(*model.warmup_watch(now, run_id))


@st.fragment(run_every=WARMUP_POLL_S)
def _warmup_line(run_id: str | None, drawn: int) -> None:
    """The line; reruns the page once ``run_id`` is stored, or (``drawn`` ≥ 0) once the number of
    stored answers differs from ``drawn``, the number the page was drawn with."""
    warmup = runs.get_warmup(str(RunStore().root))
    if warmup is None:
        return
    now = warmup.view()
    if model.warmup_changed(now, run_id, drawn):
        st.rerun(scope="app")  # an answer this page shows is now stored
    text = now.text()
    if text:
        fraction = now.stored / now.total if now.total else 1.0
        st.progress(min(fraction, 1.0), text=text)
    for title, why in now.failed.items():
        st.warning(
            f"{safe_md(title, max_len=80)} could not be computed: {safe_md(why, max_len=300)}"
        )
