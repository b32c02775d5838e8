"""best_fit: in execution order, a block born takes the smallest free gap that fits, else extends the arena.

A sweep over the steps: the live blocks (pairwise disjoint: each was placed clear of those alive with it)
are kept by offset, and the gaps between them by (length, offset), so the smallest fitting gap is one
bisection instead of a walk over every live block (thousands of them in a wide Split).
"""

from __future__ import annotations

import heapq

from sortedcontainers import SortedDict, SortedList

from ge_core.memory.blocks import Block
from ge_core.memory.placement import Offsets


class FreeGaps:
    """Disjoint live byte ranges and the gaps below the highest of them (the first one from offset 0)."""

    def __init__(self) -> None:
        self.live = SortedDict()  # offset -> end
        self.gaps = SortedList()  # (length, offset); zero-length gaps between touching blocks included

    def top(self) -> int:
        return self.live.peekitem(-1)[1] if self.live else 0

    def smallest(self, size: int) -> tuple[int, int] | None:
        """(length, offset) of the smallest gap of at least `size` bytes (ties: the lowest), or None."""
        i = self.gaps.bisect_left((size,))
        return self.gaps[i] if i < len(self.gaps) else None

    def _around(self, offset: int) -> tuple[int, int | None]:
        """The end of the live block below `offset` (0 if none) and the start of the one above (None if none)."""
        i = self.live.bisect_left(offset)
        below = self.live.peekitem(i - 1)[1] if i > 0 else 0
        j = i + 1 if i < len(self.live) and self.live.peekitem(i)[0] == offset else i  # skip `offset` itself
        above = self.live.peekitem(j)[0] if j < len(self.live) else None
        return below, above

    def add(self, offset: int, end: int) -> None:
        below, above = self._around(offset)
        if above is not None:
            self.gaps.remove((above - below, below))
            self.gaps.add((above - end, end))
        self.gaps.add((offset - below, below))
        self.live[offset] = end

    def remove(self, offset: int) -> None:
        below, above = self._around(offset)
        end = self.live.pop(offset)
        self.gaps.remove((offset - below, below))
        if above is not None:
            self.gaps.remove((above - end, end))
            self.gaps.add((above - below, below))


def best_fit(blocks: list[Block]) -> Offsets:
    offsets: Offsets = {}
    free = FreeGaps()
    arena = 0
    born: dict[int, list[Block]] = {}
    for b in blocks:
        born.setdefault(b.start, []).append(b)
    alive: list[tuple[int, int]] = []  # heap of (end, block id)
    for step in sorted(born):
        while alive and alive[0][0] < step:
            free.remove(offsets[heapq.heappop(alive)[1]])
        for b in sorted(born[step], key=lambda b: (-b.size, b.id)):
            offsets[b.id] = offset = _smallest_gap(b.size, free, arena)
            arena = max(arena, offset + b.size)
            free.add(offset, offset + b.size)
            heapq.heappush(alive, (b.end, b.id))
    return offsets


def _smallest_gap(size: int, free: FreeGaps, arena: int) -> int:
    """The start of the smallest free gap of `size` bytes, the room between the top live block and the
    arena's top counting as one (ties: lowest), else the top of the live blocks."""
    top = free.top()
    best = free.smallest(size)
    if arena - top >= size and (best is None or (arena - top, top) < best):
        best = (arena - top, top)
    return best[1] if best is not None else top
