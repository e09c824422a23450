"""Inside real models' glue: cached results, else a heavy job shown with its step and time."""

from __future__ import annotations

import functools
from typing import Any

from posviz.analysis import rope_activation as ra
from posviz.analysis.inside_models import cached_windows, inside_all_windows
from posviz.analysis.rope_usage_source import source_frequency_usage
from posviz.page_models.inside_models import first_windows
from posviz.settings import settings
from posviz.ui.cache import cached_data
from posviz.ui.heavy_progress import follow_heavy


def _heavy(what: str, key: tuple, run: functools.partial) -> Any:
    """``run(on_wait=, should_stop=, progress=)`` in its own thread, once per ``key``, followed
    with its queue place, step and ticking time: a rerun keeps what it has done."""
    about = f"{what.split(' (')[0]} (Inside real models page)"
    return follow_heavy(("inside", *key), what, run, about=about)


def inside_plan() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`posviz.page_models.inside_models.first_windows` on the disk cache."""
    return first_windows(settings().inside_max_window, cached_windows)


def inside_windows(model: str, what: str, windows: tuple[int, ...]) -> dict:
    """``model``'s results at ``windows``: the disk cache, else :func:`_heavy` (ValueError)."""
    found = cached_windows(model)
    if all(w in found for w in windows):
        return {w: found[w] for w in windows}
    run = functools.partial(inside_all_windows, model, windows=windows)
    return _heavy(what, (model, windows), run)


def rope_activation(window: int, what: str | None) -> ra.ActivationResult | None:
    """SmolLM2's real-q/k frequency usage at ``window``: the cache, else a job if ``what``."""
    found = ra.cached_rope_activation(window)
    run = functools.partial(ra.rope_activation, window)
    return found or (what and _heavy(what, ("rope-activation", window), run))


#: :func:`posviz.analysis.rope_usage_source.source_frequency_usage`, cached
source_usage = cached_data()(source_frequency_usage)
