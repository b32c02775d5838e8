"""Results shared by every session, kept by hand: for work that shows a progress bar while it runs.

A function under `st.cache_data` / `st.cache_resource` must not draw: Streamlit records what it draws and
replays it on a cache hit, and an element drawn into a block made outside the function (a progress bar's
placeholder) cannot be replayed (CacheReplayClosureError: "This app has encountered an error" on every
later visit). So the compile and the numeric bisection are cached here and draw their progress bars
outside: look the key up, and on a miss compute with a progress bar and `put` the result.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar, cast

import streamlit as st

from ge_core.viz import format_bytes
from workbench_ui.memory_budget import MemoryBudget, default_budget, size_of

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedCache(Generic[K, V]):
    """At most `entries` results, the least recently used dropped first; safe to share between sessions.
    With a `budget`, each entry is sized when stored and the budget evicts the least recently used entries of
    all its caches to keep their bytes within it (workbench_ui.memory_budget)."""

    def __init__(self, entries: int, budget: MemoryBudget | None = None) -> None:
        self._entries = entries
        self._items: OrderedDict[K, V] = OrderedDict()
        self._budget = budget
        self._lock = budget.lock if budget is not None else threading.RLock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                if self._budget is not None:
                    self._budget.touch(self, key)
            return value

    def put(self, key: K, value: V) -> None:
        nbytes = size_of(value) if self._budget is not None else 0  # outside the lock: it walks the value
        with self._lock:
            if self._budget is not None and not self._budget.admit(self, key, nbytes):
                self._items.pop(key, None)  # alone over the budget: used by this run, not kept
                return
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                old_key, _ = self._items.popitem(last=False)
                if self._budget is not None:
                    self._budget.forget(self, old_key)

    def drop(self, key: Hashable) -> None:
        """The budget evicts an entry (called with the budget's lock, which this cache shares, held)."""
        with self._lock:
            if key in self._items:
                del self._items[cast(K, key)]

    def was_evicted(self, key: K) -> bool:
        """Whether a miss on `key` is a result the budget evicted (its page says it computes it again)."""
        return self._budget is not None and self._budget.was_evicted(self, key)


class NotBuiltYet(LookupError):
    """What a PeekCache raises on a miss."""


class PeekCache(SharedCache[K, V]):
    """Another cache, only looked into: a miss raises NotBuiltYet where the caller would build the value."""

    def __init__(self, inner: SharedCache[K, V]) -> None:
        super().__init__(0)  # no budget: it keeps nothing
        self._inner = inner

    def get(self, key: K) -> V:
        found = self._inner.get(key)
        if found is None:
            raise NotBuiltYet(key)
        return found

    def put(self, key: K, value: V) -> None:
        raise NotBuiltYet(key)


@st.cache_resource(show_spinner=False)
def memory_budget() -> MemoryBudget:
    """The server's one memory budget (GE_WORKBENCH_MEMORY_BUDGET), shared by every cache made below."""
    return MemoryBudget(default_budget())


@st.cache_resource(show_spinner=False)
def shared_cache(name: str, entries: int) -> SharedCache[Any, Any]:
    """The cache called `name`, one per server process, within the server's memory budget. Held by
    st.cache_resource (the function only makes an empty cache, drawing nothing), so
    `st.cache_resource.clear()` empties it like the others."""
    return SharedCache(entries, memory_budget())


def say_if_recomputed(cache: SharedCache[K, Any], key: K, what: str) -> None:
    """On a miss: when the result had been kept and the memory budget evicted it, say that it is computed
    again (drawn where the caller's progress is shown, never inside a cached function)."""
    if cache.was_evicted(key):
        budget = memory_budget()
        st.caption(f":material/memory: {what} again: the result was dropped from the server's memory "
                   f"(its budget is {format_bytes(budget.capacity)}; the least recently used results go first).")


def budget_line() -> str:
    """What the caches hold against the budget, for the sidebar."""
    budget = memory_budget()
    return (f"Server memory for results: {format_bytes(budget.used)} of {format_bytes(budget.capacity)} "
            f"({budget.entries} kept)")
