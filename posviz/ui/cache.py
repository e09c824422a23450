"""The UI's one cache policy: bounded entries, a time to live and a byte budget for all data.

Every cached function in ``posviz.ui`` uses one of two decorators from here:

``@cached_data()``
    Arrays, frames, tables, charts and results. Entries are keyed by the *values* of the arguments
    (parameters whose name starts with ``_`` are left out of the key, as in Streamlit). All
    ``cached_data`` functions share one least-recently-used store whose values may hold at most
    ``settings().cache_bytes`` together (``POSVIZ_CACHE_MB``); each function also keeps at most
    ``max_entries`` entries (default ``settings().cache_entries``) for ``ttl`` seconds (default
    ``settings().cache_ttl_seconds``). A single value bigger than the whole budget is computed and
    returned but not kept. Values are shared between sessions, not copied: arrays reachable from a
    cached value are made read-only so that no caller can change what another session sees.

``@cached_resource()``
    Handles (models, tokenizers): ``st.cache_resource`` with the same entry/ttl defaults. Their size
    is not measured; keep ``max_entries`` small.

Why not ``st.cache_data`` alone: it bounds entries per function but not bytes, so a few crafted
links that each make a 256 MB table (issue #13.1) grew one server by 2 GB with nothing evicted; and
it returns a fresh unpickled copy on every hit, doubling what a big table costs.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np
import streamlit as st

from posviz.settings import settings

P = ParamSpec("P")
R = TypeVar("R")

_MAX_DEPTH = 32  # hashing/measuring recursion limit; deeper structures are not cache arguments


@dataclasses.dataclass
class _Entry:
    value: Any
    nbytes: int
    expires: float  # time.monotonic() after which the entry is stale


class CacheStore:
    """A thread-safe LRU store bounded by total bytes and, per function, by entries and age.

    ``budget_bytes`` bounds the sum of :func:`value_nbytes` over every kept value; ``clock`` is
    ``time.monotonic`` (tests pass a fake one).
    """

    def __init__(self, *, budget_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes={budget_bytes} is negative; use 0 to keep nothing.")
        self.budget_bytes = budget_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()  # oldest use first
        self._total = 0

    @property
    def total_bytes(self) -> int:
        """Bytes held by the values kept now."""
        return self._total

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, function: str, key: str) -> tuple[bool, Any]:
        """``(True, value)`` for a fresh entry (now most recently used), else ``(False, None)``."""
        with self._lock:
            entry = self._entries.get((function, key))
            if entry is None:
                return False, None
            if entry.expires <= self._clock():
                self._drop((function, key))
                return False, None
            self._entries.move_to_end((function, key))
            return True, entry.value

    def put(
        self, function: str, key: str, value: Any, *, nbytes: int, ttl: float, max_entries: int
    ) -> bool:
        """Keep ``value`` unless it alone exceeds the budget; evict LRU entries to make room.

        Returns whether the value was kept.
        """
        if nbytes > self.budget_bytes:
            return False
        with self._lock:
            now = self._clock()
            self._drop((function, key))
            for stale in [k for k, e in self._entries.items() if e.expires <= now]:
                self._drop(stale)
            mine = [k for k in self._entries if k[0] == function]
            for old in mine[: max(0, len(mine) - max_entries + 1)]:
                self._drop(old)
            while self._entries and self._total + nbytes > self.budget_bytes:
                self._drop(next(iter(self._entries)))
            self._entries[(function, key)] = _Entry(value, nbytes, now + ttl)
            self._total += nbytes
            return True

    def clear(self, function: str | None = None) -> None:
        """Forget every entry (of ``function`` only, when given)."""
        with self._lock:
            for k in [k for k in self._entries if function is None or k[0] == function]:
                self._drop(k)

    def _drop(self, k: tuple[str, str]) -> None:
        entry = self._entries.pop(k, None)
        if entry is not None:
            self._total -= entry.nbytes


_STORE = CacheStore(budget_bytes=settings().cache_bytes)  # one budget for the whole process


def _root_array(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory (a view keeps its whole base alive)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def value_nbytes(value: Any, *, _seen: set[int] | None = None, _depth: int = 0) -> int:
    """Bytes ``value`` keeps alive, counting each array's owning buffer once (an estimate).

    Arrays count their base buffer's ``nbytes``; frames ``memory_usage(deep=True)``; containers,
    dataclasses and plain objects the sum of their parts plus ``sys.getsizeof``.
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen or _depth > _MAX_DEPTH:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        root = _root_array(value)
        if root is not value:
            if id(root) in seen:
                return 0
            seen.add(id(root))
        return int(root.nbytes)
    if isinstance(value, str | bytes | bytearray | int | float | complex | bool | type(None)):
        return sys.getsizeof(value)
    if hasattr(value, "memory_usage") and hasattr(value, "columns"):  # a pandas DataFrame
        return int(value.memory_usage(deep=True).sum())
    parts: list[Any]
    if isinstance(value, dict):
        parts = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set | frozenset):
        parts = list(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif hasattr(value, "__dict__"):
        parts = list(vars(value).values())
    else:
        return sys.getsizeof(value)
    own = sys.getsizeof(value)
    return own + sum(value_nbytes(p, _seen=seen, _depth=_depth + 1) for p in parts)


def _freeze(value: Any, *, _depth: int = 0) -> None:
    """Make every array reachable through containers/dataclasses read-only (shared values)."""
    if _depth > _MAX_DEPTH:
        return
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, dict):
        for item in value.values():
            _freeze(item, _depth=_depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _freeze(item, _depth=_depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _freeze(getattr(value, f.name), _depth=_depth + 1)


def _hash_into(h: Any, value: Any, *, name: str, depth: int = 0) -> None:
    """Feed ``value`` into hash ``h`` by content; raise ``TypeError`` for what cannot be keyed."""
    if depth > _MAX_DEPTH:
        raise TypeError(f"argument {name!r} is nested too deeply to be a cache key.")
    h.update(type(value).__qualname__.encode() + b"\x00")
    if value is None or isinstance(value, bool | int | float | complex | str | enum.Enum):
        h.update(repr(value).encode("utf-8", "surrogatepass") + b"\x01")
    elif isinstance(value, bytes | bytearray | memoryview):
        h.update(hashlib.blake2b(value, digest_size=16).digest())
    elif isinstance(value, np.ndarray):
        h.update(f"{value.dtype.str}{value.shape}".encode())
        h.update(hashlib.blake2b(np.ascontiguousarray(value).data, digest_size=16).digest())
    elif isinstance(value, np.generic):
        h.update(repr(value.item()).encode())
    elif isinstance(value, list | tuple):
        h.update(f"{len(value)}[".encode())
        for item in value:
            _hash_into(h, item, name=name, depth=depth + 1)
    elif isinstance(value, dict):
        h.update(f"{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            _hash_into(h, k, name=name, depth=depth + 1)
            _hash_into(h, value[k], name=name, depth=depth + 1)
    elif isinstance(value, set | frozenset):
        h.update(",".join(sorted(_key_of(v, name=name) for v in value)).encode())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _hash_into(h, getattr(value, f.name), name=name, depth=depth + 1)
    else:
        raise TypeError(
            f"cached_data cannot key argument {name!r} of type {type(value).__name__}: pass "
            "primitives, arrays, tuples, dicts or dataclasses, or start the parameter's name "
            "with '_' to leave it out of the key."
        )


def _key_of(value: Any, *, name: str) -> str:
    h = hashlib.blake2b(digest_size=20)
    _hash_into(h, value, name=name)
    return h.hexdigest()


def _call_key(signature: inspect.Signature, args: tuple, kwargs: dict) -> str:
    """Digest of the bound arguments whose names do not start with ``_``."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    h = hashlib.blake2b(digest_size=20)
    for name, value in bound.arguments.items():
        if not name.startswith("_"):
            h.update(name.encode() + b"=")
            _hash_into(h, value, name=name)
    return h.hexdigest()


def cached_data(
    *,
    max_entries: int | None = None,
    ttl: float | None = None,
    show_spinner: bool | str = False,
    store: CacheStore | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Cache a function's results by argument values, within the shared byte budget.

    ``max_entries``/``ttl`` default to ``settings().cache_entries``/``cache_ttl_seconds``;
    ``show_spinner`` is a message shown while a miss computes (``False``: none); ``store`` is for
    tests (default: the process-wide store bounded by ``settings().cache_bytes``). The wrapper has
    ``.clear()``. Raises ``TypeError`` at call time for an argument that cannot be keyed.
    """
    limits = settings()
    entries = limits.cache_entries if max_entries is None else max_entries
    seconds = limits.cache_ttl_seconds if ttl is None else ttl

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(func)
        function = f"{func.__module__}.{func.__qualname__}"

        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            target = _STORE if store is None else store
            key = _call_key(signature, args, kwargs)
            hit, value = target.get(function, key)
            if hit:
                return value
            if isinstance(show_spinner, str) and show_spinner:
                with st.spinner(show_spinner):
                    value = func(*args, **kwargs)
            else:
                value = func(*args, **kwargs)
            _freeze(value)
            target.put(
                function,
                key,
                value,
                nbytes=value_nbytes(value),
                ttl=seconds,
                max_entries=entries,
            )
            return value

        wrapper.clear = lambda: (_STORE if store is None else store).clear(function)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def cached_resource(
    *, max_entries: int | None = None, ttl: float | None = None, show_spinner: bool | str = False
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``st.cache_resource`` for handles (models, tokenizers), bounded like :func:`cached_data`.

    Handles are shared and must never be mutated; their bytes are not counted against the budget,
    so keep ``max_entries`` small for big ones.
    """
    limits = settings()
    return st.cache_resource(
        max_entries=limits.cache_entries if max_entries is None else max_entries,
        ttl=limits.cache_ttl_seconds if ttl is None else ttl,
        show_spinner=show_spinner,
    )


def clear_caches() -> None:
    """Forget every ``cached_data`` value of this process (``cached_resource`` handles stay)."""
    _STORE.clear()


def cache_bytes_held() -> int:
    """Bytes the process-wide ``cached_data`` store holds now."""
    return _STORE.total_bytes
