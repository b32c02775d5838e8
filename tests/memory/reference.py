"""Oracles for the indexed planners: the rival-by-rival (quadratic) rules they replaced, kept small and plain."""

from __future__ import annotations

from ge_core.memory.blocks import Block

Offsets = dict[int, int]


def _gaps(rivals: list[Block], offsets: Offsets) -> tuple[list[tuple[int, int]], int]:
    """(offset, length) of the gaps below the rivals' top, lowest first, and that top."""
    found = []
    cursor = 0
    for p in sorted(rivals, key=lambda p: offsets[p.id]):
        if offsets[p.id] > cursor:
            found.append((cursor, offsets[p.id] - cursor))
        cursor = max(cursor, offsets[p.id] + p.size)
    return found, cursor


def greedy_in_order(order: list[Block], *, lowest: bool = False) -> Offsets:
    """Each block against every placed block alive with it: the lowest or the smallest fitting gap, else the top."""
    offsets: Offsets = {}
    for b in order:
        rivals = [p for p in order if p.id in offsets and p.overlaps_in_time(b)]
        gaps, top = _gaps(rivals, offsets)
        fitting = [(length, offset) for offset, length in gaps if length >= b.size]
        if not fitting:
            offsets[b.id] = top
        else:
            offsets[b.id] = min(fitting, key=lambda g: g[1])[1] if lowest else min(fitting)[1]
    return offsets


def best_fit(blocks: list[Block]) -> Offsets:
    """In birth order (largest first within a step): the smallest gap among the live blocks, the room between
    their top and the arena's counting as one, else on top of them."""
    offsets: Offsets = {}
    arena = 0
    for step in sorted({b.start for b in blocks}):
        for b in sorted((b for b in blocks if b.start == step), key=lambda b: (-b.size, b.id)):
            live = [p for p in blocks if p.id in offsets and p.end >= step]
            gaps, top = _gaps(live, offsets)
            fitting = [(length, offset) for offset, length in [*gaps, (top, arena - top)] if length >= b.size]
            offsets[b.id] = min(fitting)[1] if fitting else top
            arena = max(arena, offsets[b.id] + b.size)
    return offsets


def collisions(blocks: list[Block], offsets: Offsets) -> list[tuple[int, int]]:
    """Pairs of blocks alive at one step whose byte ranges overlap."""
    return [(a.id, b.id) for a in blocks for b in blocks if a.id < b.id and a.overlaps_in_time(b)
            and offsets[a.id] < offsets[b.id] + b.size and offsets[b.id] < offsets[a.id] + a.size]
