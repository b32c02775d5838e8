"""Placing blocks one by one, each into a gap left by the time-overlapping blocks already placed.

Only the union of those blocks' byte ranges decides where a block goes, so it is read from an index of
the placed blocks by lifetime (ge_core.memory.occupancy) rather than from a list of rivals: the same
offsets as comparing against every rival, without the pairs (N² of them when N blocks are alive at once).
"""

from __future__ import annotations

from ge_core.memory.blocks import Block
from ge_core.memory.occupancy import Occupancy

Offsets = dict[int, int]  # block id -> offset


def greedy_in_order(order: list[Block], *, lowest: bool = False) -> Offsets:
    """Place blocks in `order`, each into the smallest gap (`lowest`: the lowest gap) that holds it among
    placed blocks alive at the same time, else on top of them."""
    # Only the order of the steps where lifetimes start or end matters for which lifetimes meet: index
    # those alone (a wide Split's blocks all live over the same steps, so its index has two slots).
    steps = sorted({b.start for b in order} | {b.end for b in order})
    slot = {step: i for i, step in enumerate(steps)}
    occupancy = Occupancy(len(steps))
    return {b.id: occupancy.place(slot[b.start], slot[b.end], b.size, lowest=lowest) for b in order}
