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
    by_step: dict[int, list[Block]] = {}
    for b in order:
        rivals = {id(p): p for step in range(b.start, b.end + 1) for p in by_step.get(step, ())}
        offsets[b.id] = _place_in_best_gap(b, list(rivals.values()), offsets)
        for step in range(b.start, b.end + 1):
            by_step.setdefault(step, []).append(b)
    return offsets
