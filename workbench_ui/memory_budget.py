"""One memory budget, in bytes, for everything the server's caches keep (issue 41): imports, compiles with
their pass snapshots, bisections, canvas graphs, page data. Every workbench_ui.shared_cache cache sizes an
entry when it is stored and asks the budget for room; the least recently used entries of all caches go first.

    budget = MemoryBudget(2 << 30)
    budget.admit(owner, key, nbytes)   # False when the entry alone is over the budget (not kept)
    budget.touch(owner, key)           # a cache hit: used now
    budget.was_evicted(owner, key)     # a miss that had been kept: the page says it computes it again

Sizes are estimates made without walking every object: numpy arrays count their bytes (an array shared by
several snapshots once), a graph its constants plus NODE_BYTES per node, other objects their fields.
GE_WORKBENCH_MEMORY_BUDGET sets the budget in bytes; the default is DEFAULT_SHARE of the machine's memory.
Nothing here imports Streamlit.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Protocol

from ge_core import Graph

NODE_BYTES = 3000  # a node with its tensor descriptions, measured with tracemalloc on resnet50's import
DEFAULT_SHARE = 0.25  # of the machine's memory, when GE_WORKBENCH_MEMORY_BUDGET is not set
MAX_OBJECTS = 200_000  # objects walked per entry at most: past that, the rest is not counted
EVICTED_KEPT = 4096  # keys of evicted entries remembered, so their page can say it recomputes them


class Evictable(Protocol):
    """A cache whose entries the budget can drop."""

    def drop(self, key: Hashable) -> None: ...


def default_budget() -> int:
    """GE_WORKBENCH_MEMORY_BUDGET (bytes), else DEFAULT_SHARE of this machine's memory."""
    value = os.environ.get("GE_WORKBENCH_MEMORY_BUDGET", "").strip()
    if value:
        return int(float(value))
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 8 << 30
    return int(memory * DEFAULT_SHARE)


class MemoryBudget:
    """Bytes held by the caches registered with it, within `capacity`; thread-safe."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._sizes: OrderedDict[tuple[int, Hashable], tuple[Evictable, int]] = OrderedDict()  # LRU first
        self._evicted: OrderedDict[tuple[int, Hashable], None] = OrderedDict()
        self._used = 0
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        """Held by every cache of this budget too: one lock, so an eviction never waits on another cache."""
        return self._lock

    @property
    def used(self) -> int:
        return self._used

    @property
    def entries(self) -> int:
        return len(self._sizes)

    def admit(self, owner: Evictable, key: Hashable, nbytes: int) -> bool:
        """Make room for an entry of `nbytes` (evicting the least recently used ones); False, and nothing
        evicted, when it alone is over the budget: the caller does not keep it."""
        slot = (id(owner), key)
        with self._lock:
            self.forget(owner, key)
            if nbytes > self.capacity:
                return False
            while self._sizes and self._used + nbytes > self.capacity:
                (_, old_key), (old_owner, size) = self._sizes.popitem(last=False)
                self._used -= size
                self._remember_evicted((id(old_owner), old_key))
                old_owner.drop(old_key)
            self._sizes[slot] = (owner, nbytes)
            self._used += nbytes
            self._evicted.pop(slot, None)
            return True

    def touch(self, owner: Evictable, key: Hashable) -> None:
        with self._lock:
            slot = (id(owner), key)
            if slot in self._sizes:
                self._sizes.move_to_end(slot)

    def forget(self, owner: Evictable, key: Hashable) -> None:
        """The cache dropped the entry by itself (its own entry count): no longer counted, not "evicted"."""
        with self._lock:
            found = self._sizes.pop((id(owner), key), None)
            if found is not None:
                self._used -= found[1]

    def was_evicted(self, owner: Evictable, key: Hashable) -> bool:
        with self._lock:
            return (id(owner), key) in self._evicted

    def _remember_evicted(self, slot: tuple[int, Hashable]) -> None:
        self._evicted[slot] = None
        while len(self._evicted) > EVICTED_KEPT:
            self._evicted.popitem(last=False)


def size_of(value: object) -> int:
    """Estimated bytes `value` holds (see the module's docstring)."""
    seen: set[int] = set()
    buffers: set[tuple[int, int]] = set()
    stack: list[Any] = [value]
    total = walked = 0
    while stack and walked < MAX_OBJECTS:
        item = stack.pop()
        if id(item) in seen or item is None or isinstance(item, bool | int | float | type | types.ModuleType):
            continue
        seen.add(id(item))
        walked += 1
        total += _own_bytes(item, buffers, stack)
    return total


def _own_bytes(item: Any, buffers: set[tuple[int, int]], stack: list[Any]) -> int:
    """The bytes of `item` itself; what it refers to goes on `stack`."""
    if _is_array(item):
        while _is_array(item.base):  # a view holds its base's bytes: count the base, once
            item = item.base
        buffer = (item.__array_interface__["data"][0], item.nbytes)
        if buffer in buffers:
            return 0
        buffers.add(buffer)
        return int(item.nbytes)
    if isinstance(item, str | bytes | bytearray):
        return sys.getsizeof(item)
    if hasattr(item, "memory_usage") and hasattr(item, "index"):  # a pandas frame (a Series of sizes) or series
        usage = item.memory_usage(index=True, deep=False)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    if isinstance(item, Graph):
        stack.extend(item.constants.values())
        return NODE_BYTES * len(item.nodes)
    if isinstance(item, dict):
        stack.extend(item.keys())
        stack.extend(item.values())
    elif isinstance(item, list | tuple | set | frozenset):
        stack.extend(item)
    elif dataclasses.is_dataclass(item) or hasattr(item, "__dict__"):
        stack.extend(getattr(item, "__dict__", {}).values())  # cached properties too (an executor's arena)
        stack.extend(getattr(item, s) for s in getattr(type(item), "__slots__", ()) if hasattr(item, s))
    return sys.getsizeof(item)


def _is_array(item: object) -> bool:
    """A numpy array, told by its interface (the UI leaves numpy to ge_core: tests/test_style.py)."""
    return hasattr(item, "__array_interface__") and hasattr(item, "nbytes") and hasattr(item, "base")
