"""Memory assigners (GE keeps the smallest arena of several, as its hybrid assigner does) and plan_memory.

- no_reuse: every block its own range, one after another (GE's ge.exec.disableReuseMemory).
- greedy_by_size: largest block first, each at the lowest offset not overlapping an already-placed block
  whose lifetime overlaps its own (GE / TFLite's greedy by size).
- best_fit: in execution order; a block born takes the smallest free gap that fits, else extends the arena
  (ge_core.memory.best_fit).
- greedy_by_breadth: the busiest steps first (largest live bytes, TFLite's greedy by breadth); the blocks
  alive there, largest first, each into the smallest gap among time-overlapping placed blocks.
- greedy_by_size_best_gap: greedy by size, but into the smallest fitting gap rather than the lowest one.
- perturbed_greedy: greedy_by_size_best_gap over seeded random reorderings, until the lower bound is reached
  (ge_core.memory.search).

Every placement looks up the bytes its time-overlapping rivals take from an index of the placed blocks by
lifetime (ge_core.memory.placement, .occupancy) instead of comparing it with each rival: O(n log n)-ish, also
when thousands of blocks are alive at once.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from ge_core.errors import UsageError
from ge_core.ir.graph import Graph
from ge_core.memory.best_fit import best_fit
from ge_core.memory.blocks import Block, aligned, build_blocks, find_inplace, peak_live_bytes, unique_blocks
from ge_core.memory.continuous import Parts, find_no_copy_concats, no_task_concats
from ge_core.memory.lifetimes import Lifetimes, compute_lifetimes
from ge_core.memory.placement import Offsets, greedy_in_order
from ge_core.memory.plan import Allocation, MemoryPlan, PlanStep
from ge_core.memory.search import perturbed_greedy


def no_reuse(blocks: list[Block]) -> Offsets:
    offsets: Offsets = {}
    top = 0
    for b in sorted(blocks, key=lambda b: (b.start, b.id)):
        offsets[b.id] = top
        top += b.size
    return offsets


def greedy_by_size(blocks: list[Block]) -> Offsets:
    return greedy_in_order(sorted(blocks, key=lambda b: (-b.size, b.start, b.id)), lowest=True)


def greedy_by_size_best_gap(blocks: list[Block]) -> Offsets:
    return greedy_in_order(sorted(blocks, key=lambda b: (-b.size, b.start, b.id)))


def greedy_by_breadth(blocks: list[Block]) -> Offsets:
    if not blocks:
        return {}
    steps = max(b.end for b in blocks) + 1
    delta = [0] * (steps + 1)
    for b in blocks:
        delta[b.start] += b.size
        delta[b.end + 1] -= b.size
    live = list(accumulate(delta[:steps]))
    rank = [0] * steps  # 0 for the busiest step, 1 for the next...
    for r, step in enumerate(sorted(range(steps), key=lambda s: (-live[s], s))):
        rank[step] = r
    # A block is taken at the busiest step it is alive in; blocks taken at one step go largest first.
    taken_at = _lowest_rank(rank, blocks)
    return greedy_in_order(sorted(blocks, key=lambda b: (taken_at[b.id], -b.size, b.id)))


def _lowest_rank(rank: list[int], blocks: list[Block]) -> dict[int, int]:
    """block id -> the smallest rank over its steps, from a sparse table (level k: minima over 2^k steps),
    not by slicing every lifetime (N² steps when N blocks live across the whole graph)."""
    table = [rank]
    while 2 ** len(table) <= len(rank):
        table.append(list(map(min, table[-1], table[-1][2 ** (len(table) - 1):])))
    taken_at: dict[int, int] = {}
    for b in blocks:
        k = (b.end - b.start + 1).bit_length() - 1
        taken_at[b.id] = min(table[k][b.start], table[k][b.end - 2 ** k + 1])
    return taken_at


STRATEGIES: dict[str, Callable[[list[Block]], Offsets]] = {
    "greedy_by_size": greedy_by_size,  # first: it wins ties
    "best_fit": best_fit,
    "greedy_by_breadth": greedy_by_breadth,
    "greedy_by_size_best_gap": greedy_by_size_best_gap,
    "perturbed_greedy": perturbed_greedy,
    "no_reuse": no_reuse,
}


def check_strategy(strategy: str) -> None:
    if strategy != "auto" and strategy not in STRATEGIES:
        raise UsageError(f"unknown memory strategy '{strategy}'.",
                         hint=f"Known strategies: auto, {', '.join(STRATEGIES)}.")


NO_COPY = ", no-copy concat"  # suffix of a strategy's name when it ran with no-copy Concat parts pinned


def plan_memory(graph: Graph, *, alignment: int = 512, strategy: str = "auto", reuse: bool = True,
                inplace: bool = True, no_copy_concat: bool = True) -> MemoryPlan:
    """Plan one arena for every activation of `graph` (static shapes only).

    "auto" runs every strategy and keeps the smallest arena (ties: greedy_by_size); reuse=False is no_reuse.
    With no_copy_concat, each strategy also runs with qualifying Concats' inputs pinned inside their
    outputs (ge_core.memory.continuous); that layout is kept unless copying gives a smaller arena.
    """
    check_strategy(strategy)
    if alignment < 1:
        raise UsageError(f"memory alignment must be a positive number of bytes, not {alignment}.")
    lt = compute_lifetimes(graph)
    plain = build_blocks(lt, {}, alignment)
    names = ["no_reuse"] if not reuse else [strategy] if strategy != "auto" else list(STRATEGIES)
    layouts = [_Layout("", lt, {}, find_inplace(graph, lt) if inplace and reuse else {}, alignment)]
    parts = find_no_copy_concats(graph, lt, alignment) if no_copy_concat and reuse else {}
    if parts:
        layouts.append(_Layout(NO_COPY, lt, parts, find_inplace(graph, lt, parts) if inplace else {}, alignment))
    results: dict[str, tuple[int, _Layout, dict[str, Block], Offsets]] = {}
    for layout in reversed(layouts):  # no-copy Concats first: on a tie, keep the plan without the copies
        for name in names:
            owner = plain if name == "no_reuse" else layout.owner
            offsets = STRATEGIES[name](unique_blocks(owner))
            arena = max((offsets[b.id] + b.size for b in unique_blocks(owner)), default=0)
            results.setdefault(name + layout.suffix if name != "no_reuse" else name, (arena, layout, owner, offsets))
    order = list(results)
    chosen = min(results, key=lambda n: (results[n][0], order.index(n)))
    arena, layout, owner, offsets = results[chosen]
    no_reuse = chosen == "no_reuse"
    return MemoryPlan(
        alignment=alignment, strategy=chosen, arena_bytes=arena,
        theory_min_bytes=peak_live_bytes(unique_blocks(owner), len(lt.steps)),
        no_reuse_bytes=sum(b.size for b in unique_blocks(plain)), graph_outputs=list(graph.outputs),
        steps=_steps(lt, {} if no_reuse else layout.inplace, set() if no_reuse else layout.no_task),
        allocations=_allocations(lt, owner, offsets, alignment), aliases=dict(lt.aliases),
        strategies={n: r[0] for n, r in results.items()},
        copy_concat_min_bytes=peak_live_bytes(unique_blocks(layouts[0].owner), len(lt.steps)))


class _Layout:
    """Blocks for one way of sharing bytes: in-place pairs, and no-copy Concat parts or none."""

    def __init__(self, suffix: str, lt: Lifetimes, parts: Parts, inplace: dict[str, dict[str, str]],
                 alignment: int) -> None:
        self.suffix = suffix
        self.inplace = inplace
        self.no_task = no_task_concats(parts, lt)
        self.owner = build_blocks(lt, inplace, alignment, parts)


def _steps(lt: Lifetimes, pairs: dict[str, dict[str, str]], no_task: set[str]) -> list[PlanStep]:
    return [PlanStep(n.name, tuple(t for t in n.inputs if t), tuple(n.outputs), dict(pairs.get(n.name, {})),
                     n.name in no_task)
            for n in lt.steps]


def _allocations(lt: Lifetimes, owner: dict[str, Block], offsets: Offsets, alignment: int) -> dict[str, Allocation]:
    out: dict[str, Allocation] = {}
    for t, life in lt.tensors.items():
        size = aligned(lt.tensors[lt.root(t)].nbytes, alignment)
        out[t] = Allocation(t, offsets[owner[t].id] + owner[t].rel[t], size, life.shape, life.dtype)
    return out
