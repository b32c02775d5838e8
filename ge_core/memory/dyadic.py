"""Dyadic decomposition of a range of slots (the index arithmetic of an implicit segment tree).

Slots 0..n-1 are the leaves of a complete binary tree numbered from 1 (node k has children 2k and 2k+1).
A range of slots is the disjoint union of O(log n) *canonical* nodes. Two ranges meet exactly when a
canonical node of one is an ancestor of, or equal to, a canonical node of the other: so a structure that
files each stored range under its canonical nodes ("at") and under those nodes and all their ancestors
("below") answers "which stored ranges meet [lo, hi)?" from O(log n) nodes — `below` of the query's
canonical nodes and `at` of their strict ancestors — without looking at any range that does not meet it.
The placements' index of blocks by lifetime (occupancy.py) is built on it.
"""

from __future__ import annotations


class Dyadic:
    def __init__(self, slots: int) -> None:
        self.base = 1 << max(0, slots - 1).bit_length()  # leaves are nodes base .. base + slots - 1

    def split(self, lo: int, hi: int) -> tuple[list[int], list[int]]:
        """The canonical nodes of slots [lo, hi) and the strict ancestors of those nodes (no repeats)."""
        canonical: list[int] = []
        left, right = lo + self.base, hi + self.base
        while left < right:
            if left & 1:
                canonical.append(left)
                left += 1
            if right & 1:
                right -= 1
                canonical.append(right)
            left >>= 1
            right >>= 1
        seen: set[int] = set()
        ancestors: list[int] = []
        for node in canonical:
            node >>= 1
            while node and node not in seen:  # the paths up from neighbouring nodes join quickly
                seen.add(node)
                ancestors.append(node)
                node >>= 1
        return canonical, ancestors
