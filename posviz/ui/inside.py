"""The "Inside real models" page's glue: each model's results from the disk cache, else computed
as a heavy job with its place in the queue and its progress shown (never a blank section)."""

from __future__ import annotations

import streamlit as st

from posviz.analysis.inside_models import InsideResult, cached_inside, inside_results
from posviz.analysis.probe_numbers import queue_text
from posviz.analysis.rope_usage import FrequencyUsage
from posviz.analysis.rope_usage_source import source_frequency_usage
from posviz.jobs import JobCancelled
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone

_WHAT = {
    "smollm2": "SmolLM2-135M (the first time: hash check, one-time dequantisation to float32, "
    "three forward passes; about half a minute)",
    "minilm": "MiniLM-L6 (three forward passes; a few seconds)",
}


def inside_result(model: str) -> InsideResult:
    """``model``'s results: the disk cache (no model loaded), else a queued heavy job whose
    queue place and progress are shown in place until it is done.

    Raises:
        ValueError: packages missing or files failing their check (the message says the fix).
    """
    found = cached_inside(model)
    if found is not None:
        return found
    slot = st.empty()
    slot.info(f"Computing {_WHAT[model]} …")
    bar = st.progress(0.0, text=f"Waiting to start {_WHAT[model]} …")

    def on_wait(position: int) -> None:
        slot.info(queue_text(position, what=f"Computing {model}", slots=settings().max_jobs))

    def progress(fraction: float, what: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=what)

    try:
        return inside_results(
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
