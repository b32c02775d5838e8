"""validate_plan: check a MemoryPlan against its graph's lifetimes, listing every problem at once."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.memory.intervals import LiveRanges
from ge_core.memory.lifetimes import Lifetimes, compute_lifetimes
from ge_core.memory.plan import Allocation, MemoryPlan


class MemoryPlanError(GEError):
    """A memory plan is wrong: overlapping live tensors, short or unaligned allocations, missing ones."""

    max_problems_shown = 30

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(f"memory plan has {len(problems)} problem(s):", problems=problems)


def validate_plan(plan: MemoryPlan, graph: Graph) -> None:
    lt = compute_lifetimes(graph)
    holder = _holders(plan, lt)
    problems = _allocation_problems(plan, lt) + _part_problems(plan, lt) + _overlap_problems(plan, lt, holder)
    if problems:
        raise MemoryPlanError(problems)


def _holds(outer: str, inner: str, lt: Lifetimes, holder: dict[str, str]) -> bool:
    """Is `inner` (or the tensor it views) a part, at any depth, of `outer`'s bytes?"""
    t = lt.root(inner)
    target = lt.root(outer)
    while t in holder:
        t = lt.root(holder[t])
        if t == target:
            return True
    return False


def _rng(a: Allocation) -> str:
    return f"[{a.offset}, {a.end})"


def _allocation_problems(plan: MemoryPlan, lt: Lifetimes) -> list[str]:
    problems = []
    for t, life in lt.tensors.items():
        a = plan.allocations.get(t)
        if a is None:
            problems.append(f"tensor '{t}' (produced by '{life.producer}' at step {life.start}) has no allocation")
            continue
        if a.size < life.nbytes:
            problems.append(f"tensor '{t}' needs {life.nbytes} bytes but its allocation {_rng(a)} has {a.size}")
        if a.offset % plan.alignment:
            problems.append(f"tensor '{t}' at offset {a.offset} is not aligned to {plan.alignment} bytes")
        if a.offset < 0 or a.end > plan.arena_bytes:
            problems.append(f"tensor '{t}' at {_rng(a)} lies outside the arena of {plan.arena_bytes} bytes")
    return problems


def _holders(plan: MemoryPlan, lt: Lifetimes) -> dict[str, str]:
    """part -> the no-copy Concat output holding its bytes (from the plan's no-task steps)."""
    return {t: s.outputs[0] for s in plan.steps if s.no_task and s.outputs for t in s.inputs if t in lt.tensors}


def _part_problems(plan: MemoryPlan, lt: Lifetimes) -> list[str]:
    """A no-task Concat launches nothing: each input must already sit at its slice of the output."""
    problems = []
    for step in (s for s in plan.steps if s.no_task):
        out = plan.allocations.get(step.outputs[0]) if step.outputs else None
        offset = out.offset if out is not None else 0
        for t in step.inputs:
            a = plan.allocations.get(t)
            if t not in lt.tensors or a is None or a.offset != offset:
                where = "outside the arena" if a is None else f"at offset {a.offset}"
                problems.append(f"no-copy Concat '{step.node}': input '{t}' must be written at offset {offset} "
                                f"(its slice of '{step.outputs[0]}') but is {where}")
            offset += lt.tensors[t].nbytes if t in lt.tensors else 0
    return problems


def _overlap_problems(plan: MemoryPlan, lt: Lifetimes, holder: dict[str, str]) -> list[str]:
    """Pairs alive at one step whose byte ranges overlap: each tensor, as it is born, against the live ones.

    A sweep in birth order; the live tensors whose bytes overlap the newborn's are found by byte range
    (ge_core.memory.intervals) rather than by comparing it with every live tensor: every overlapping live
    pair is still examined. Tensors of one view root at one range form a group, found as one (views of a
    root share its bytes by design, so a root with many live views costs one lookup, not their pairs).
    """
    inplace = {out: x for step in plan.steps for out, x in step.inplace.items()}
    placed = sorted((lt.tensors[t].start, i, t) for i, t in enumerate(plan.allocations) if t in lt.tensors)
    group, groups = _groups([t for _, _, t in placed], plan, lt)
    ranges = LiveRanges([(offset, end) for _, offset, end in groups])
    members: list[dict[str, int]] = [{} for _ in groups]  # group -> its live tensors -> birth rank
    dying: list[tuple[int, int, str]] = []  # heap of (last step, birth rank, tensor)
    problems = []
    for rank, (step, _, b) in enumerate(placed):
        while dying and dying[0][0] < step:
            _, _, a = heapq.heappop(dying)
            del members[group[a]][a]
            if not members[group[a]]:
                ranges.switch(group[a], False)
        ab = plan.allocations[b]
        found = [(r, a) for g in ranges.overlapping(ab.offset, ab.end) if groups[g][0] != lt.root(b)
                 for a, r in members[g].items() if not _shares_legally(a, b, lt, inplace, holder)]
        for _, a in sorted(found):  # in birth order, as a walk over the live tensors lists them
            aa = plan.allocations[a]
            problems.append(f"tensors '{a}' {_rng(aa)} and '{b}' {_rng(ab)} are both alive at step {step} "
                            f"('{lt.steps[step].name}') and their bytes overlap")
        if not members[group[b]]:
            ranges.switch(group[b], True)
        members[group[b]][b] = rank
        heapq.heappush(dying, (lt.tensors[b].end, rank, b))
    return problems


def _groups(tensors: list[str], plan: MemoryPlan, lt: Lifetimes) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
    """tensor -> its group, and group -> (view root, offset, end): the tensors sharing a root and a range."""
    group: dict[str, int] = {}
    keys: dict[tuple[str, int, int], int] = {}
    for t in tensors:
        alloc = plan.allocations[t]
        group[t] = keys.setdefault((lt.root(t), alloc.offset, alloc.end), len(keys))
    return group, list(keys)


def _shares_legally(a: str, b: str, lt: Lifetimes, inplace: dict[str, str], holder: dict[str, str]) -> bool:
    """Same bytes by design: views of one root, a no-copy Concat output and the parts it holds (at any depth),
    or one written in place over the other as it dies."""
    if lt.root(a) == lt.root(b) or _holds(a, b, lt, holder) or _holds(b, a, lt, holder):
        return True
    for new, old in ((a, b), (b, a)):
        x = inplace.get(new)
        if x is not None and x in lt.tensors and lt.root(x) == lt.root(old) \
                and lt.tensors[old].end == lt.tensors[new].start:
            return True
    return False
