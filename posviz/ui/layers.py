"""The Position-through-layers page's glue: the per-layer probe of a model, cached, queued for a
job slot, and its zeroed-position ablation."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from posviz.analysis.layer_views import labelled_scores
from posviz.analysis.layers import layer_position_probe
from posviz.governor import heavy_work
from posviz.jobs import JobCancelled, job_slot
from posviz.models import zeroed_position_copy
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.compat import this_session_gone
from posviz.ui.model_handles import loaded_model


@cached_data()
def layer_probe(
    model_id: str,
    text: str,
    window: int,
    zero_positions: bool,
    _on_wait: Callable[[int], None] | None = None,
    _should_stop: Callable[[], bool] | None = None,
) -> pd.DataFrame:
    """Per-layer probe scores for the bundled model (``model_id == "bundled"``) or a hub model.

    A forward pass over every window and a ridge probe per layer: on a cache miss it waits for a
    ``job_slot("probe")`` (``_on_wait(position)`` while queued; ``_should_stop()`` polled).

    Raises:
        posviz.jobs.JobCancelled: ``_should_stop()`` turned true while queued.
        ValueError: bad text, window or model id.
    """
    loaded = loaded_model(model_id)
    with job_slot("probe", on_wait=_on_wait, should_stop=_should_stop), heavy_work():
        model = zeroed_position_copy(loaded.model) if zero_positions else loaded.model
        result = layer_position_probe(model, loaded.tokenizer, text, window=window)
    label = "MiniLM-L6 (bundled)" if model_id == "bundled" else model_id
    return labelled_scores(result, model=label + (", positions zeroed" if zero_positions else ""))


def layer_probe_queued(model_id: str, text: str, window: int, zero_positions: bool) -> pd.DataFrame:
    """:func:`layer_probe` with its place in the job queue shown while it waits."""
    note = st.empty()

    def waiting(position: int) -> None:
        if not position:  # the same probe runs for another session: its result comes here
            note.info("This probe is being computed for another visitor; its result shows here.")
            return
        note.info(
            f"Waiting for a free slot for heavy work: place {position} in the queue "
            f"({settings().max_jobs} run at once on this server)."
        )

    try:
        return layer_probe(
            model_id, text, window, zero_positions, _on_wait=waiting, _should_stop=this_session_gone
        )
    except JobCancelled:
        st.stop()  # the browser left while queued
    finally:
        note.empty()
