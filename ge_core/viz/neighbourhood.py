"""The nodes around a node: everything within `depth` data (or control) edges, upstream and/or downstream.

Used by the Graph page's neighbourhood view, which is how a big graph is explored one region at a time.
Works on top-level nodes; a node inside a fused body is looked up through the fused node holding it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.viz.node_index import top_level

Direction = Literal["both", "up", "down"]


def neighbourhood(graph: Graph, node: str | Iterable[str], depth: int, direction: Direction = "both") -> set[str]:
    """Names of the nodes at most `depth` edges from `node` (itself included), or from any of several
    nodes; "up" follows producers only, "down" consumers only. A reference into a fused body counts as
    its top-level fused node."""
    if depth < 0:
        raise ValueError(f"depth must be >= 0, not {depth}")
    seeds = [node] if isinstance(node, str) else list(node)
    frontier = [graph.node(top_level(n)) for n in seeds]
    seen = {n.name for n in frontier}
    after = control_users(graph)
    for _ in range(depth):
        nxt = []
        for n in frontier:
            for other in _adjacent(graph, n, direction, after):
                if other.name not in seen:
                    seen.add(other.name)
                    nxt.append(other)
        if not nxt:
            break
        frontier = nxt
    return seen


def _adjacent(graph: Graph, node: Node, direction: Direction, after: dict[str, list[Node]]) -> Iterable[Node]:
    if direction in ("both", "up"):
        yield from producers(graph, node)
    if direction in ("both", "down"):
        yield from consumers(graph, node, after)


def producers(graph: Graph, node: Node) -> list[Node]:
    """Distinct nodes `node` reads from (data inputs, then control inputs), in input order."""
    out: dict[str, Node] = {}
    for t in node.inputs:
        p = graph.producer(t) if t else None
        if p is not None:
            out.setdefault(p.name, p)
    for name in node.control_inputs:
        if graph.has_node(name):
            out.setdefault(name, graph.node(name))
    return list(out.values())


def consumers(graph: Graph, node: Node, after: dict[str, list[Node]] | None = None) -> list[Node]:
    """Distinct nodes reading any output of `node`, then nodes ordered after it by a control edge
    (`after` is `control_users(graph)`, computed once by callers that ask about many nodes)."""
    out: dict[str, Node] = {}
    for t in node.outputs:
        for u in graph.users(t):
            out.setdefault(u.name, u)
    for other in (control_users(graph) if after is None else after).get(node.name, ()):
        out.setdefault(other.name, other)
    return list(out.values())


def control_users(graph: Graph) -> dict[str, list[Node]]:
    """Node name -> nodes that must run after it (control edges are rare: usually empty)."""
    out: dict[str, list[Node]] = {}
    for n in graph.nodes:
        for name in n.control_inputs:
            out.setdefault(name, []).append(n)
    return out
