"""Inside real models' glue: cached results, else a heavy job shown with its step and time."""

from __future__ import annotations

import functools
import time
from typing import Any

import streamlit as st

from posviz.analysis import rope_activation as ra
from posviz.analysis.inside_models import cached_windows, inside_all_windows
from posviz.analysis.probe_numbers import queue_text
from posviz.analysis.rope_usage_source import source_frequency_usage
from posviz.jobs import JobCancelled, wait_text
from posviz.page_models.inside_models import first_windows
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone


def _heavy(what: str, run: functools.partial) -> Any:
    """``run(on_wait=, should_stop=, progress=)`` with its queue place, step and time shown."""
    start, slot, bar = time.monotonic(), st.empty(), st.progress(0.0, f"Waiting to start {what} …")
    slot.info(f"Computing {what} …")

    def on_wait(position: int) -> None:
        slot.info(queue_text(position, what=f"Computing {what}", slots=settings().max_jobs))

    def progress(fraction: float, step: str) -> None:
        text = wait_text(step, fraction, time.monotonic() - start)
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    try:
        return run(on_wait=on_wait, should_stop=this_session_gone, progress=progress)
    except JobCancelled:  # the visitor left
        st.stop()
    finally:
        slot.empty()
        bar.empty()


def inside_plan() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`posviz.page_models.inside_models.first_windows` on the disk cache."""
    return first_windows(settings().inside_max_window, cached_windows)


def inside_windows(model: str, what: str, windows: tuple[int, ...]) -> dict:
    """``model``'s results at ``windows``: the disk cache, else :func:`_heavy` (ValueError)."""
    found = cached_windows(model)
    if all(w in found for w in windows):
        return {w: found[w] for w in windows}
    return _heavy(what, functools.partial(inside_all_windows, model, windows=windows))


def rope_activation(window: int, what: str | None) -> ra.ActivationResult | None:
    """SmolLM2's real-q/k frequency usage at ``window``: the cache, else a job if ``what``."""
    found = ra.cached_rope_activation(window)
    return found or (what and _heavy(what, functools.partial(ra.rope_activation, window)))


#: :func:`posviz.analysis.rope_usage_source.source_frequency_usage`, cached
source_usage = cached_data()(source_frequency_usage)
