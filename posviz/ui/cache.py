"""The UI's one cache policy: bounded entries, a time to live and a byte budget for all data.

``@cached_data()`` — arrays, frames, tables, charts and results: :func:`posviz.bytecache.memoize`
on one process-wide store whose values hold at most ``settings().cache_bytes`` together
(``POSVIZ_CACHE_MB``); each function keeps at most ``max_entries`` entries (default
``settings().cache_entries``) for ``ttl`` seconds (default ``cache_ttl_seconds``).

``@cached_resource()`` — handles (models, tokenizers): Streamlit's own ``st.cache_resource`` with
the same entry/ttl defaults; their size is not measured, so keep ``max_entries`` small.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import streamlit as st

from posviz.bytecache import CacheStore, memoize
from posviz.settings import settings

P = ParamSpec("P")
R = TypeVar("R")

_STORE = CacheStore(budget_bytes=settings().cache_bytes)  # one budget for the whole process


def cached_data(
    *, max_entries: int | None = None, ttl: float | None = None, store: CacheStore | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Cache a function's results by argument values, within the shared byte budget.

    ``store`` is for tests (default: the process-wide store). Raises ``TypeError`` at call time
    for an argument that cannot be keyed (name such a parameter ``_…``).
    """
    limits = settings()
    return memoize(
        _STORE if store is None else store,
        max_entries=limits.cache_entries if max_entries is None else max_entries,
        ttl=limits.cache_ttl_seconds if ttl is None else ttl,
    )


def cached_resource(
    *, max_entries: int | None = None, ttl: float | None = None, show_spinner: bool | str = False
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``st.cache_resource`` for handles (models, tokenizers), bounded like :func:`cached_data`.

    Handles are shared and must never be mutated; their bytes are not counted against the budget.
    """
    limits = settings()
    return st.cache_resource(
        max_entries=limits.cache_entries if max_entries is None else max_entries,
        ttl=limits.cache_ttl_seconds if ttl is None else ttl,
        show_spinner=show_spinner,
    )


def cached_model(build: Callable[..., R], key: str, data: object, **settings: object) -> R:
    """A page model ``build(data, **settings)``, cached by the model's name, ``key`` (what
    identifies ``data``: its settings or its source) and ``settings``; ``data`` itself is not
    hashed (a big table would cost more to hash than a hit saves).
    """
    name = f"{build.__module__}.{build.__qualname__}"
    return _cached_model(name, key, tuple(sorted(settings.items())), _build=build, _data=data)


@cached_data()
def _cached_model(
    name: str, key: str, settings: tuple, *, _build: Callable[..., R], _data: object
) -> R:
    return _build(_data, **dict(settings))


def clear_caches() -> None:
    """Forget every ``cached_data`` value of this process (``cached_resource`` handles stay)."""
    _STORE.clear()
