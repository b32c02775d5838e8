"""Which bytes are taken, at some step of a lifetime, by the blocks placed so far — without listing rivals.

A placement only needs the *union* of the byte ranges of the placed blocks alive at some step of the new
block's lifetime (its rivals): the lowest gap of that union that fits, or its smallest fitting gap.
Comparing with every rival is quadratic when thousands of blocks are alive at once (a 10k-output Split),
so the placed blocks are indexed by lifetime instead (ge_core.memory.dyadic: each block filed under the
O(log T) canonical nodes of its steps and their ancestors), and each tree node keeps its blocks' bytes as
merged runs. The rivals' union is the union of O(log T) run lists, walked from offset 0 by merging them:
the cost is per run of those lists the walk passes, not per rival — blocks alive together sit side by
side and their runs merge (the 10k Split's rivals are one run), and a list's runs under the cover already
walked are skipped by bisection.

Budget: a walk takes at most PROBES steps of that merge. The longest walk of any sample model (O0 or O3,
every strategy) takes 20, so they are exact; a walk cut short — only where the union is fragmented into
hundreds of gaps, e.g. random lifetimes over 10k+ blocks — takes the best fitting gap it has seen, else
the top of its rivals (a skyline placement). The plan stays valid; each placement costs O((PROBES + log T) · log n).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from ge_core.memory.dyadic import Dyadic

PROBES = 1024  # merge steps per placement walk (see above)


class Runs:
    """A union of byte ranges as sorted, disjoint runs; ranges that touch merge (a zero gap holds nothing)."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        i = bisect_left(self.ends, lo)  # the first run ending at or after lo: touching runs merge
        j = bisect_right(self.starts, hi)  # past the last run starting at or before hi
        if i < j:
            lo, hi = min(lo, self.starts[i]), max(hi, self.ends[j - 1])
        self.starts[i:j] = [lo]
        self.ends[i:j] = [hi]


def gaps(taken: list[Runs], probes: int | None = None) -> Iterator[tuple[int, int | None]]:
    """(offset, length) of the free gaps of the union of `taken`, lowest first, then (top, None).

    A merge of the lists' runs by start (a heap holding each list's next run) that tracks how far the union
    covers from offset 0; a list whose next run lies under that cover skips past it by bisection. Each
    step of the merge is a probe: past `probes` (default PROBES), the walk stops and goes straight to the top.
    """
    probes = PROBES if probes is None else probes
    lists = [(r.starts, r.ends) for r in taken if r.starts]
    top = max((ends[-1] for _, ends in lists), default=0)
    heap = [(starts[0], i, 0) for i, (starts, _) in enumerate(lists)]  # (run start, list, run index)
    heapq.heapify(heap)
    covered = 0  # the union covers [0, covered) up to its gaps already yielded
    while heap and probes > 0:
        probes -= 1
        start, i, j = heapq.heappop(heap)
        starts, ends = lists[i]
        if ends[j] <= covered:  # under the cover: go to this list's first run ending above it
            j = bisect_right(ends, covered)
        else:
            if start > covered:
                yield covered, start - covered
            covered = ends[j]
            j += 1
        if j < len(starts):
            heapq.heappush(heap, (starts[j], i, j))
    yield top, None


def lowest_fit(taken: list[Runs], size: int) -> int:
    """The lowest gap holding `size` bytes, else the top (GE / TFLite's greedy by size)."""
    for offset, length in gaps(taken):
        if length is None or length >= size:
            return offset
    raise AssertionError("gaps() always ends with the top")


def smallest_fit(taken: list[Runs], size: int) -> int:
    """The smallest gap holding `size` bytes (ties: the lowest), else the top."""
    best: tuple[int, int] | None = None  # (length, offset)
    for offset, length in gaps(taken):
        if length is None:
            return best[1] if best is not None else offset
        if length >= size and (best is None or length < best[0]):
            if length == size:
                return offset  # nothing smaller fits, and lower gaps were looked at first
            best = (length, offset)
    raise AssertionError("gaps() always ends with the top")


class Occupancy:
    """Placed blocks' byte ranges indexed by their steps [start, end]; steps are 0 .. steps - 1."""

    def __init__(self, steps: int) -> None:
        self.tree = Dyadic(steps)
        self.at: dict[int, Runs] = {}  # node -> bytes of the blocks whose lifetime has this canonical node
        self.below: dict[int, Runs] = {}  # node -> bytes of the blocks with a canonical node in its subtree

    def place(self, start: int, end: int, size: int, *, lowest: bool = False) -> int:
        """Put a block alive over steps [start, end] into the gap `smallest_fit` (or `lowest_fit`) picks among
        the blocks placed so far whose lifetimes meet its own; record it; return its offset."""
        canonical, ancestors = self.tree.split(start, end + 1)
        taken = [self.below[n] for n in canonical if n in self.below]
        taken += [self.at[n] for n in ancestors if n in self.at]
        offset = (lowest_fit if lowest else smallest_fit)(taken, size)
        for index, nodes in ((self.at, canonical), (self.below, canonical + ancestors)):
            for n in nodes:
                runs = index.get(n)
                if runs is None:
                    index[n] = runs = Runs()
                runs.add(offset, offset + size)
        return offset
