"""Where each original node went in a compile: kept, fused into a node (which pass), or removed (which pass).

A fused node keeps the nodes it replaced as its body (nested when a fused node is fused again), names
preserved, and often takes the name of one of them; so "the node holding X" is the top-level node whose
name or body contains X. The pass that changed X is the first whose snapshot holds X elsewhere, or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ge_core.compiler import CompiledModel
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.instruments import PassRecord

KEPT, FUSED, REMOVED = "kept", "fused", "removed"


@dataclass(frozen=True)
class Fate:
    holder: str  # the top-level node of the final graph holding it; "" when removed
    status: str  # kept, fused or removed
    pass_name: str  # the pass that fused or removed it ("" when kept)


def holders(graph: Graph) -> dict[str, str]:
    """Every node name in `graph`, fused bodies included (at any depth) -> the top-level node holding it."""
    out: dict[str, str] = {}
    for node in graph.nodes:
        for name in _names_in(node):
            out.setdefault(name, node.name)
        out[node.name] = node.name  # a top-level node holds itself, whatever a body elsewhere says
    return out


def _names_in(node: Node) -> Iterator[str]:
    yield node.name
    if node.body is not None:
        for inner in node.body.nodes:
            yield from _names_in(inner)


def fused(graph: Graph, name: str) -> bool:
    """Is the top-level node `name` a fused node holding more than itself?"""
    node = graph.node(name)
    return node.body is not None and any(n.name != name or n.body is not None for n in node.body.nodes)


def fates(compiled: CompiledModel) -> dict[str, Fate]:
    """Original (input graph, top-level) node -> its fate in the final graph, in the input graph's order."""
    final = holders(compiled.graph)
    changed_by = _changed_by(compiled.records, compiled.input_graph)
    out: dict[str, Fate] = {}
    for node in compiled.input_graph.nodes:
        holder = final.get(node.name, "")
        if not holder:
            status = REMOVED
        elif holder != node.name or fused(compiled.graph, holder):
            status = FUSED
        else:
            status = KEPT
        out[node.name] = Fate(holder, status, changed_by.get(node.name, "") if status != KEPT else "")
    return out


def _changed_by(records: Sequence[PassRecord], input_graph: Graph) -> dict[str, str]:
    """Original node -> the first pass after which another node holds it, or none does."""
    pending = {n.name for n in input_graph.nodes}
    out: dict[str, str] = {}
    seen: set[int] = set()
    for record in records:
        snapshot = record.snapshot
        if snapshot is None or id(snapshot) in seen or not record.changed:
            continue
        seen.add(id(snapshot))
        now = holders(snapshot)
        for name in [n for n in pending if now.get(n) != n or fused(snapshot, n)]:
            out[name] = record.name
            pending.discard(name)
    return out
