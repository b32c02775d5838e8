"""perturbed_greedy: seeded reorderings of greedy placement, stopping at the lower bound."""

from __future__ import annotations

from ge_core.memory.blocks import Block, peak_live_bytes
from ge_core.memory.placement import Offsets
from ge_core.memory.planners import greedy_by_breadth, greedy_by_size, greedy_by_size_best_gap
from ge_core.memory.search import perturbed_greedy

# DenseNet-121's first transition layer in units of 0.38 MiB (id, size, start, end): the block concat r82
# (7) outlives the BN-ReLU r88 (7) and the conv r95 (4); the 1x1 conv r96 (1) must sit right above r82 so the
# pooled r103 (8) fits beside them. Size-ordered greedy puts r103 there first and strands r96 at the top.
TRANSITION = [Block(0, 7, 0, 4), Block(1, 7, 1, 2), Block(2, 4, 2, 3), Block(3, 1, 3, 4), Block(4, 8, 4, 5),
              Block(5, 4, 5, 6)]


def arena(offsets: Offsets, blocks: list[Block]) -> int:
    return max(offsets[b.id] + b.size for b in blocks)


def no_collisions(offsets: Offsets, blocks: list[Block]) -> bool:
    return all(a.id == b.id or not a.overlaps_in_time(b) or offsets[a.id] + a.size <= offsets[b.id]
               or offsets[b.id] + b.size <= offsets[a.id] for a in blocks for b in blocks)


def test_reordering_reaches_the_bound_where_greedy_orders_do_not() -> None:
    bound = peak_live_bytes(TRANSITION, 7)
    assert bound == 18
    for greedy in (greedy_by_size, greedy_by_size_best_gap, greedy_by_breadth):
        assert arena(greedy(TRANSITION), TRANSITION) > bound
    offsets = perturbed_greedy(TRANSITION)
    assert arena(offsets, TRANSITION) == bound and no_collisions(offsets, TRANSITION)


def test_it_is_deterministic_and_starts_from_greedy_by_size() -> None:
    assert perturbed_greedy(TRANSITION) == perturbed_greedy(TRANSITION)
    easy = [Block(0, 4, 0, 1), Block(1, 2, 1, 2), Block(2, 4, 2, 3)]  # size order is already optimal
    assert perturbed_greedy(easy) == greedy_by_size_best_gap(easy)
    assert perturbed_greedy([]) == {}
