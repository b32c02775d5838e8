"""LiveRanges: a fixed set of byte ranges switched on and off, and which live ones overlap a given range.

For the validator, so it shares no code with the planners it checks. The ranges sit in offset order at
the leaves of a segment tree whose nodes hold the largest end of the live ranges below them. The live
ranges overlapping [lo, hi) are those with offset < hi (a prefix of the leaves) and end > lo: the search
descends only into subtrees whose largest end is above lo, so it costs O(log n) plus O(log n) per range
found — a sweep over the steps examines every overlapping live pair without comparing all of them.
"""

from __future__ import annotations

from bisect import bisect_left

_DEAD = float("-inf")  # the largest end of a subtree with nothing live


class LiveRanges:
    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        """`ranges[k]` is range k's (offset, end); all start switched off."""
        self.ranges = ranges
        self.by_offset = sorted(range(len(ranges)), key=lambda k: ranges[k])  # leaf i holds range by_offset[i]
        self.leaf = {k: i for i, k in enumerate(self.by_offset)}
        self.offsets = [ranges[k][0] for k in self.by_offset]
        self.base = 1 << max(0, len(ranges) - 1).bit_length()
        self.top: list[float] = [_DEAD] * (2 * self.base)  # node -> the largest end of a live range below it

    def switch(self, key: int, live: bool) -> None:
        node = self.base + self.leaf[key]
        self.top[node] = self.ranges[key][1] if live else _DEAD
        node >>= 1
        while node:
            top = max(self.top[2 * node], self.top[2 * node + 1])
            if self.top[node] == top:
                break  # nothing above changes either
            self.top[node] = top
            node >>= 1

    def overlapping(self, lo: int, hi: int) -> list[int]:
        """Keys of the live ranges (offset, end) with offset < hi and end > lo, in offset order."""
        prefix = bisect_left(self.offsets, hi)  # leaves [0, prefix) start below hi
        found: list[int] = []
        stack = [(1, 0, self.base)]  # (node, its first leaf, past its last leaf)
        while stack:
            node, first, past = stack.pop()
            if first >= prefix or self.top[node] <= lo:
                continue
            if node >= self.base:
                found.append(self.by_offset[node - self.base])
                continue
            middle = (first + past) // 2
            stack += [(2 * node + 1, middle, past), (2 * node, first, middle)]  # the left one is popped first
        return found
