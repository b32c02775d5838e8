"""Fusing a group of nodes into one node that keeps them as its body.

The fused node reads the group's external inputs and produces, under the same names, the group's outputs
that anything outside still reads. Its body is a Graph of the original nodes (names preserved), so the
executor can run it and the UI can expand it. A group is fusable only if it is convex: no path leaves the
group and comes back into it, which would make the fused node depend on itself (a cycle).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ge_core.errors import GraphEditError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node


def external_inputs(graph: Graph, group: Sequence[Node]) -> list[str]:
    """Tensors the group reads but does not produce, in first-use order."""
    produced = {t for n in group for t in n.outputs}
    seen: dict[str, None] = {}
    for n in group:
        for t in n.inputs:
            if t and t not in produced:
                seen.setdefault(t, None)
    return list(seen)


def external_outputs(graph: Graph, group: Sequence[Node]) -> list[str]:
    """Tensors the group produces that a node outside it, or the graph's interface, still reads."""
    members = {id(n) for n in group}
    return [t for n in group for t in n.outputs
            if graph.is_output(t) or any(id(u) not in members for u in graph.users(t))]


def cycle_through(graph: Graph, group: Sequence[Node]) -> Node | None:
    """An outside node on a path from the group back into the group (fusing would create a cycle)."""
    members = {id(n) for n in group}
    last = max(group, key=lambda n: graph.index_key(n))
    stack = [u for n in group for t in n.outputs for u in graph.users(t) if id(u) not in members]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or not graph.is_before(node, last):
            continue  # after the group's last node nothing can lead back into it
        seen.add(id(node))
        for t in node.outputs:
            for user in graph.users(t):
                if id(user) in members:
                    return node
                stack.append(user)
    return None


def build_body(graph: Graph, group: Sequence[Node], name: str, inputs: Sequence[str] | None = None) -> Graph:
    """The group as a standalone graph: inputs and outputs named as outside, original node names kept.

    With `inputs` given (the fused op's own operand order, e.g. LayerNormalization's X, scale, B), those
    become the body's inputs and any other external input must be a constant, which the body embeds
    (LayerNorm's epsilon becomes an attribute of the fused op but stays a constant in its body).
    """
    body = Graph(name, graph.opset)
    external = external_inputs(graph, group)
    chosen = list(external if inputs is None else inputs)
    missing = [t for t in chosen if t not in external]
    if missing:
        raise GraphEditError(f"fused op inputs {missing} are not read by the group {[n.name for n in group]}.")
    for t in chosen:
        body.add_input(t, graph.desc(t))
    for t in external:
        if t not in chosen:
            if not graph.is_constant(t):
                raise GraphEditError(f"the group {[n.name for n in group]} reads '{t}', which is neither an input "
                                     "of the fused op nor a constant.")
            body.add_constant(t, graph.constants[t])
    for n in sorted(group, key=lambda n: graph.index_key(n)):
        body.add_node(n.op_type, n.inputs, n.outputs, dict(n.attrs), name=n.name, domain=n.domain,
                      opset=n.opset, descs=[graph.desc(t) for t in n.outputs], body=n.body)
    body.set_outputs(external_outputs(graph, group))
    return body


def fuse(graph: Graph, group: Sequence[Node], op_type: str, *, name: str | None = None, domain: str = "ge",
         attrs: dict[str, Any] | None = None, inputs: Sequence[str] | None = None) -> Node:
    """Replace `group` by one node of `op_type` whose body is the group. Refuses a non-convex group.

    `op_type`/`domain` may name a registered op (LayerNormalization, Gemm...), which then runs with its own
    kernel and `inputs` in its operand order; otherwise the fused node runs its body.
    """
    if not group:
        raise GraphEditError("cannot fuse an empty group.")
    blocker = cycle_through(graph, group)
    if blocker is not None:
        raise GraphEditError(f"cannot fuse {[n.name for n in group]}: the path through '{blocker.name}' leaves "
                             "the group and comes back, so the fused node would depend on itself.")
    node_name = name or graph.unique_node_name("+".join(n.name for n in group[:3]) + ("+..." if len(group) > 3
                                                                                     else ""))
    body = build_body(graph, group, node_name, inputs)
    fused = Node(node_name, op_type, tuple(body.inputs), tuple(body.outputs), dict(attrs or {}),
                 (), domain, graph.opset.get(domain, 1), body)
    return graph.replace_nodes(group, fused)
