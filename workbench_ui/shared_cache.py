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
from typing import Any, Generic, TypeVar

import streamlit as st

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedCache(Generic[K, V]):
    """At most `entries` results, the least recently used dropped first; safe to share between sessions."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                self._items.popitem(last=False)


class NotBuiltYet(LookupError):
    """What a PeekCache raises on a miss."""


class PeekCache(SharedCache[K, V]):
    """Another cache, only looked into: a miss raises NotBuiltYet where the caller would build the value."""

    def __init__(self, inner: SharedCache[K, V]) -> None:
        super().__init__(0)
        self._inner = inner

    def get(self, key: K) -> V:
        found = self._inner.get(key)
        if found is None:
            raise NotBuiltYet(key)
        return found

    def put(self, key: K, value: V) -> None:
        raise NotBuiltYet(key)


@st.cache_resource(show_spinner=False)
def shared_cache(name: str, entries: int) -> SharedCache[Any, Any]:
    """The cache called `name`, one per server process. Held by st.cache_resource (the function only
    makes an empty cache, drawing nothing), so `st.cache_resource.clear()` empties it like the others."""
    return SharedCache(entries)
