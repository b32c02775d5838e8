"""Placing blocks one by one, each into the smallest gap left by the time-overlapping blocks already placed."""

from __future__ import annotations

from ge_core.memory.blocks import Block

Offsets = dict[int, int]  # block id -> offset


def _place_in_best_gap(b: Block, rivals: list[Block], offsets: Offsets) -> int:
    """The offset of the smallest gap between time-overlapping placed blocks that holds `b`, else the top."""
    best: tuple[int, int] | None = None
    cursor = 0
    for p in sorted(rivals, key=lambda p: offsets[p.id]):
        gap = offsets[p.id] - cursor
        if gap >= b.size and (best is None or (gap, cursor) < best):
            best = (gap, cursor)
        cursor = max(cursor, offsets[p.id] + p.size)
    return best[1] if best is not None else cursor


def greedy_in_order(order: list[Block]) -> Offsets:
    """Place blocks in `order`, each into the best gap among placed blocks alive at the same time."""
    offsets: Offsets = {}
    neighbours = time_neighbours(order)
    for b in order:
        rivals = [p for p in neighbours[b.id] if p.id in offsets]
        offsets[b.id] = _place_in_best_gap(b, rivals, offsets)
    return offsets


def time_neighbours(blocks: list[Block]) -> dict[int, list[Block]]:
    """block id -> the other blocks alive at some step it is alive (one sweep over start times).

    Found once per placement rather than step by step: at O0 a light model's weights are computed on the
    device and live for most of the graph, and walking their lifetimes step by step cost tens of seconds.
    """
    neighbours: dict[int, list[Block]] = {b.id: [] for b in blocks}
    active: list[Block] = []
    for b in sorted(blocks, key=lambda b: (b.start, b.id)):
        active = [a for a in active if a.end >= b.start]
        for a in active:
            neighbours[a.id].append(b)
            neighbours[b.id].append(a)
        active.append(b)
    return neighbours
