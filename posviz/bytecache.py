"""A cache bounded by bytes: one least-recently-used store for every cached function's values.

``memoize(store, max_entries=…, ttl=…)`` caches a function's results keyed by the *values* of its
arguments (parameters whose name starts with ``_`` are left out of the key, as in Streamlit). All
functions memoized on one :class:`CacheStore` share its byte budget; each also keeps at most
``max_entries`` entries for ``ttl`` seconds. A value bigger than the whole budget is computed and
returned but not kept. Values are shared between callers (sessions), not copied: every array
reachable from one is made read-only. A missing value is computed once per key at a time
(:func:`posviz.jobs.single_flight`): a second caller waits for it.

Why not Streamlit's cache or a library: ``st.cache_data`` bounds entries per function but not
bytes, so a few crafted links that each make a 256 MB table grew one server by 2 GB with nothing
evicted, and it returns a fresh unpickled copy on every hit (twice a big table's memory);
``st.cache_resource`` returns the shared object but has no byte bound either, and keys an array of
a million cells or more by a sample of its values (two tables that agree there would share an
entry); ``functools.lru_cache`` counts entries. No library we ship bounds bytes across functions.
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
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, ParamSpec, TypeVar

import numpy as np

from posviz.jobs import single_flight

P = ParamSpec("P")
R = TypeVar("R")

_MAX_DEPTH = 32  # hashing/measuring recursion limit; deeper structures are not cache arguments


class _Entry(NamedTuple):
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
        self.total_bytes = 0  # held by the values kept now

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, function: str, key: str) -> tuple[bool, Any]:
        """``(True, value)`` for a fresh entry (now most recently used), else ``(False, None)``."""
        with self._lock:
            entry = self._entries.get((function, key))
            if entry is None or entry.expires <= self._clock():
                self._drop((function, key))
                return False, None
            self._entries.move_to_end((function, key))
            return True, entry.value

    def put(
        self, function: str, key: str, value: Any, *, nbytes: int, ttl: float, max_entries: int
    ) -> bool:
        """Keep ``value`` unless it alone exceeds the budget; evict stale, then the function's
        oldest, then least recently used entries to make room. Returns whether it was kept."""
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
            while self._entries and self.total_bytes + nbytes > self.budget_bytes:
                self._drop(next(iter(self._entries)))
            self._entries[(function, key)] = _Entry(value, nbytes, now + ttl)
            self.total_bytes += nbytes
            return True

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self.total_bytes = 0

    def _drop(self, k: tuple[str, str]) -> None:
        entry = self._entries.pop(k, None)
        if entry is not None:
            self.total_bytes -= entry.nbytes


def _parts(value: Any) -> list[Any]:
    """What ``value`` holds: a container's items, a dataclass's fields, an object's attributes.

    Leaves (numbers, strings, arrays) hold nothing; pandas objects neither, since
    ``sys.getsizeof`` already measures them deeply (``memory_usage(deep=True)``).
    """
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    if isinstance(value, np.ndarray) or hasattr(value, "memory_usage"):
        return []
    return list(vars(value).values()) if hasattr(value, "__dict__") else []


def _reachable(value: Any) -> Iterator[Any]:
    """``value`` and everything it holds, each object once (at most ``_MAX_DEPTH`` deep)."""
    seen: set[int] = set()
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if id(item) in seen or depth > _MAX_DEPTH:
            continue
        seen.add(id(item))
        yield item
        stack.extend((part, depth + 1) for part in _parts(item))


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory (a view keeps its whole base alive)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def value_nbytes(value: Any) -> int:
    """Bytes ``value`` keeps alive, counting each array's owning buffer once (an estimate).

    Arrays count their base buffer's ``nbytes``; everything else ``sys.getsizeof``.
    """
    items = list(_reachable(value))
    owners = {id(o): o.nbytes for o in (_owner(a) for a in items if isinstance(a, np.ndarray))}
    rest = (sys.getsizeof(item) for item in items if not isinstance(item, np.ndarray))
    return int(sum(owners.values())) + sum(rest)


def freeze(value: Any) -> None:
    """Make every array reachable from ``value`` read-only (values are shared between callers)."""
    for item in _reachable(value):
        if isinstance(item, np.ndarray):
            item.flags.writeable = False


def _hash_into(h: Any, value: Any, *, name: str, depth: int = 0) -> None:
    """Feed ``value`` into hash ``h`` by content; raise ``TypeError`` for what cannot be keyed."""
    if depth > _MAX_DEPTH:
        raise TypeError(f"argument {name!r} is nested too deeply to be a cache key.")
    h.update(type(value).__qualname__.encode() + b"\x00")
    nested = functools.partial(_hash_into, h, name=name, depth=depth + 1)
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
            nested(item)
    elif isinstance(value, dict):
        h.update(f"{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            nested(k)
            nested(value[k])
    elif isinstance(value, set | frozenset):
        h.update(",".join(sorted(argument_key({name: v}) for v in value)).encode())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            nested(getattr(value, f.name))
    else:
        raise TypeError(
            f"the cache cannot key argument {name!r} of type {type(value).__name__}: pass "
            "primitives, arrays, tuples, dicts or dataclasses, or start the parameter's name "
            "with '_' to leave it out of the key."
        )


def argument_key(arguments: dict[str, Any]) -> str:
    """Digest of named arguments by content (names starting with ``_`` are left out).

    Raises:
        TypeError: an argument cannot be keyed (an open file, a model): name it ``_…``.
    """
    h = hashlib.blake2b(digest_size=20)
    for name, value in arguments.items():
        if not name.startswith("_"):
            h.update(name.encode() + b"=")
            _hash_into(h, value, name=name)
    return h.hexdigest()


def memoize(
    store: CacheStore, *, max_entries: int, ttl: float
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Cache a function's results in ``store`` by argument values (see the module's docstring).

    The arguments ``_on_wait`` and ``_should_stop``, when the function has them, are handed to
    :func:`posviz.jobs.single_flight` (a caller waiting for another's computation is told so,
    and may leave). Raises ``TypeError`` at call time for an argument that cannot be keyed.
    """

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(func)
        function = f"{func.__module__}.{func.__qualname__}"

        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = argument_key(bound.arguments)
            hit, value = store.get(function, key)
            if hit:
                return value

            def compute() -> R:
                value = func(*args, **kwargs)
                freeze(value)
                nbytes = value_nbytes(value)
                store.put(function, key, value, nbytes=nbytes, ttl=ttl, max_entries=max_entries)
                return value

            return single_flight(
                (function, key),
                compute,
                on_wait=bound.arguments.get("_on_wait"),
                should_stop=bound.arguments.get("_should_stop"),
            )

        return wrapper

    return decorate
