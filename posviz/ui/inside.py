"""The "Inside real models" page's glue: each model's results at every window length from the
disk cache, else computed as one heavy job (a window at a time, each cached when done) with its
place in the queue, what it is doing and the time elapsed shown (never a blank section)."""

from __future__ import annotations

import streamlit as st

from posviz.analysis.inside_models import WINDOWS, cached_windows, inside_all_windows
from posviz.analysis.probe_numbers import queue_text
from posviz.analysis.rope_usage import FrequencyUsage
from posviz.analysis.rope_usage_source import source_frequency_usage
from posviz.jobs import JobCancelled
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone

_WHAT = {
    "smollm2": "SmolLM2-135M at 32, 64, 128 and 256 tokens (the first time: hash check, one-time "
    "dequantisation, then five passes per length; about 5 minutes on two cores)",
    "minilm": "MiniLM-L6 at 32, 64, 128 and 256 tokens (five passes per length; about a minute)",
}


def inside_windows(model: str) -> dict:
    """``model``'s results by window length: the disk cache (no model loaded), else a queued
    heavy job whose queue place, step and elapsed time are shown in place until it is done.

    Raises:
        ValueError: packages missing or files failing their check (the message says the fix).
    """
    found = cached_windows(model)
    if len(found) == len(WINDOWS):
        return found
    slot, bar = st.empty(), st.progress(0.0, text=f"Waiting to start {_WHAT[model]} …")
    slot.info(f"Computing {_WHAT[model]}; {len(found)} of {len(WINDOWS)} lengths cached …")

    def on_wait(position: int) -> None:
        slot.info(queue_text(position, what=f"Computing {model}", slots=settings().max_jobs))

    def progress(fraction: float, what: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=what)

    try:
        return inside_all_windows(
            model, on_wait=on_wait, should_stop=this_session_gone, progress=progress
        )
    except JobCancelled:
        st.stop()
        raise
    finally:
        slot.empty()
        bar.empty()


@cached_data()
def source_usage(source: str) -> tuple[FrequencyUsage, list[int]]:
    """:func:`posviz.analysis.rope_usage_source.source_frequency_usage`, cached (byte ranges are
    also cached on disk by the hub reader)."""
    return source_frequency_usage(source)
