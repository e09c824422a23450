"""``posviz.bytecache`` without Streamlit: content keys, read-only sharing, the byte budget.

The store's eviction is tested in ``tests/test_cache_budget.py`` and one computation per key in
``tests/test_jobs.py``; here the decorator itself.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from posviz.bytecache import CacheStore, argument_key, freeze, memoize

MB = 2**20


@dataclasses.dataclass(frozen=True)
class Settings:
    n: int
    label: str


def test_keys_follow_content_not_identity_and_skip_underscore_names() -> None:
    a, b = np.arange(6.0), np.arange(6.0)
    assert argument_key({"m": a}) == argument_key({"m": b})
    assert argument_key({"m": a}) != argument_key({"m": a.astype(np.float32)})  # dtype counts
    assert argument_key({"m": a}) != argument_key({"m": a.reshape(2, 3)})  # shape counts
    assert argument_key({"s": Settings(1, "x")}) == argument_key({"s": Settings(1, "x")})
    assert argument_key({"s": Settings(1, "x")}) != argument_key({"s": Settings(2, "x")})
    assert argument_key({"n": 1, "_note": object()}) == argument_key({"n": 1})
    assert argument_key({"n": 1}) != argument_key({"n": "1"})  # types count
    assert argument_key({"d": {"a": 1, "b": 2}}) == argument_key({"d": {"b": 2, "a": 1}})
    with pytest.raises(TypeError, match="start the parameter's name with '_'"):
        argument_key({"f": open})


def test_memoize_shares_one_read_only_value_per_key() -> None:
    store = CacheStore(budget_bytes=4 * MB)
    calls: list[int] = []

    @memoize(store, max_entries=4, ttl=60)
    def table(n: int, *, settings: Settings, _progress: object = None) -> dict[str, np.ndarray]:
        calls.append(n)
        return {"matrix": np.ones((n, 4))}

    first = table(8, settings=Settings(1, "a"), _progress=print)
    again = table(8, settings=Settings(1, "a"))
    assert again is first and calls == [8]
    assert not first["matrix"].flags.writeable
    table(8, settings=Settings(2, "a"))
    assert calls == [8, 8]
    assert store.total_bytes >= 2 * 8 * 4 * 8  # both values counted


def test_memoize_returns_but_does_not_keep_a_value_over_the_budget() -> None:
    store = CacheStore(budget_bytes=MB)
    calls: list[int] = []

    @memoize(store, max_entries=4, ttl=60)
    def big(n: int) -> np.ndarray:
        calls.append(n)
        return np.zeros(n)

    assert big(2 * MB // 8).shape == (2 * MB // 8,)
    big(2 * MB // 8)
    assert calls == [2 * MB // 8] * 2 and len(store) == 0


def test_freeze_reaches_arrays_inside_objects() -> None:
    inner = np.zeros(3)
    freeze(Settings(1, "x"))  # nothing to freeze: no error
    holder = {"rows": [(inner, "a")]}
    freeze(holder)
    assert not inner.flags.writeable
