"""A memory-aware execution order: a topological order chosen to keep the bytes alive low.

The graph's own order is the import's (or what the passes left); any topological order computes the same
values, but the peak of live bytes depends on it — run one branch of an Inception block to its end before
starting the next, and the first branch's outputs wait less. This is greedy list scheduling: among the
nodes whose producers have all run, take the one that adds the fewest bytes (what it allocates minus what
it frees as the last reader), ties to the earlier node of the current order — or depth first, finishing
what a node made ready before starting anything else. Either can lose to the graph's own order (greedy
scheduling is myopic), so the order kept is the one with the lowest peak. Views own no bytes: their
readers keep the viewed tensor alive. Control edges are respected.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.memory.blocks import aligned, build_blocks, peak_live_bytes, unique_blocks
from ge_core.memory.lifetimes import compute_lifetimes
from ge_core.ops import REGISTRY

MEMORY_ORDERS = ("graph", "memory_aware")


def memory_aware_order(graph: Graph, alignment: int = 512) -> tuple[list[Node], int]:
    """The candidate order with the lowest peak of live bytes, and that peak. Candidates: the graph's own
    order, greedy list scheduling, and depth-first (finish what a node just made ready first)."""
    order, peak, _ = order_choice(graph, alignment)
    return order, peak


def order_choice(graph: Graph, alignment: int = 512) -> tuple[list[Node], int, int]:
    """As memory_aware_order, plus the peak in the graph's own order (the first candidate, measured anyway)."""
    candidates = [list(graph.nodes), greedy_order(graph, alignment), depth_first_order(graph)]
    measured: dict[tuple[int, ...], int] = {}  # the candidates often coincide: measure each order once
    peaks: list[int] = []
    for order in candidates:
        key = tuple(id(n) for n in order)
        if key not in measured:
            measured[key] = order_peak_bytes(graph, order, alignment)
        peaks.append(measured[key])
    best = min(range(len(candidates)), key=lambda i: (peaks[i], i))  # ties keep the graph's order
    return candidates[best], peaks[best], peaks[0]


def greedy_order(graph: Graph, alignment: int = 512) -> list[Node]:
    """Take the ready node adding the fewest bytes (allocated minus freed as last reader) each step.

    The ready nodes wait in a heap keyed by (gain, position). A node's gain only changes when a tensor
    it reads is left with it as its one remaining reader (it will then free that tensor): its gain drops
    and it is pushed again; the older, larger entry is skipped when it surfaces (lazy invalidation).
    """
    nodes = list(graph.nodes)
    root = _view_roots(nodes)
    owned = {t: aligned(graph.descs[t].nbytes or 0, alignment)
             for n in nodes for t in n.outputs if t and t not in root and graph.descs.get(t) is not None}
    reads = [_roots_read(n, root, owned) for n in nodes]
    readers: dict[str, set[int]] = {}  # owning tensor -> nodes still to read it (through views too)
    for i, ts in enumerate(reads):
        for t in ts:
            readers.setdefault(t, set()).add(i)
    pinned = {root.get(t, t) for t in graph.outputs}
    gain = [sum(owned.get(t, 0) for t in n.outputs)
            - sum(owned[t] for t in reads[i] if t not in pinned and readers[t] == {i}) for i, n in enumerate(nodes)]
    waiting, users = _dependencies(graph, nodes)
    heap = [(gain[i], i) for i in range(len(nodes)) if waiting[i] == 0]
    heapq.heapify(heap)
    order: list[Node] = []
    while heap:
        g, pick = heapq.heappop(heap)
        if g != gain[pick] or waiting[pick] < 0:
            continue  # stale: its gain has dropped since, or it has run
        waiting[pick] = -1
        order.append(nodes[pick])
        for t in reads[pick]:
            readers[t].discard(pick)
            if len(readers[t]) == 1 and t not in pinned:
                (last,) = readers[t]
                gain[last] -= owned[t]
                if waiting[last] == 0:
                    heapq.heappush(heap, (gain[last], last))
        _release(pick, users, waiting, lambda user: heapq.heappush(heap, (gain[user], user)))
    return order


def depth_first_order(graph: Graph) -> list[Node]:
    """Run next what the last node made ready (a branch is finished before the next starts)."""
    nodes = list(graph.nodes)
    waiting, users = _dependencies(graph, nodes)
    stack = sorted((i for i in range(len(nodes)) if waiting[i] == 0), reverse=True)
    order: list[Node] = []
    while stack:
        pick = stack.pop()
        order.append(nodes[pick])
        became: list[int] = []
        _release(pick, users, waiting, became.append)
        stack.extend(sorted(became, reverse=True))  # the earliest (in the graph's order) runs first
    return order


def _release(done: int, users: list[set[int]], waiting: list[int], on_ready: Callable[[int], None]) -> None:
    for user in users[done]:
        waiting[user] -= 1
        if waiting[user] == 0:
            on_ready(user)


def _view_roots(nodes: list[Node]) -> dict[str, str]:
    """View output -> the tensor owning its bytes (views of views resolve to the first owner)."""
    root: dict[str, str] = {}
    for n in nodes:
        op = REGISTRY.for_node(n)
        if op is not None and op.view and n.inputs and n.outputs and n.outputs[0]:
            root[n.outputs[0]] = root.get(n.inputs[0], n.inputs[0])
    return root


def _roots_read(node: Node, root: dict[str, str], owned: dict[str, int]) -> set[str]:
    return {root.get(t, t) for t in node.inputs if t and root.get(t, t) in owned}


def _dependencies(graph: Graph, nodes: list[Node]) -> tuple[list[int], list[set[int]]]:
    """Per node: how many distinct predecessors it waits for, and which nodes wait for it."""
    position = {id(n): i for i, n in enumerate(nodes)}
    users: list[set[int]] = [set() for _ in nodes]
    waiting = [0] * len(nodes)
    for i, n in enumerate(nodes):
        before = {position[id(p)] for t in n.inputs if t and (p := graph.producer(t)) is not None}
        before |= {position[id(graph.node(c))] for c in n.control_inputs}
        waiting[i] = len(before)
        for b in before:
            users[b].add(i)
    return waiting, users


def order_peak_bytes(graph: Graph, order: list[Node], alignment: int = 512) -> int:
    """Peak live bytes (the plan's lower bound without in-place) if `graph` ran in `order`."""
    lt = compute_lifetimes(graph, order)
    return peak_live_bytes(unique_blocks(build_blocks(lt, {}, alignment)), len(lt.steps))
