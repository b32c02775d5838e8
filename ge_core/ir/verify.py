"""graph.verify(ops): every structural invariant of a Graph, all problems reported at once.

Structure (order, producers, dangling tensors, users map, control edges) is checked here, inside fused
bodies and control-flow subgraphs too (a subgraph's problems name the node and the subgraph). Whether each
node's output descs match what its operator infers lives with the operators: the caller passes a
ShapeChecker (the op registry: `graph.verify(REGISTRY)`), so the IR does not depend on the op registry and
what is checked never depends on which modules happen to be imported.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Protocol

from ge_core.errors import VerifyError

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph
    from ge_core.ir.node import Node


class ShapeChecker(Protocol):
    """What checks each node's output descs against its operator's inference (ge_core.ops.OpRegistry)."""

    def shape_problems(self, graph: Graph) -> list[str]: ...


def verify_graph(graph: Graph, ops: ShapeChecker | None = None) -> None:
    """Raise VerifyError on any broken structural invariant; with `ops`, on any desc its op disagrees with
    (shapes are checked only once the structure holds: inference needs a sound graph)."""
    problems = structural_problems(graph)
    if not problems and ops is not None:
        problems = ops.shape_problems(graph)
    if problems:
        raise VerifyError(graph.name, problems)


def structural_problems(graph: Graph) -> list[str]:
    problems: list[str] = []
    defined: set[str] = set(graph.inputs) | set(graph.constants) | set(graph.captures)
    for name in list(graph.inputs) + list(graph.constants) + list(graph.captures):
        if name not in graph.descs:
            problems.append(f"tensor '{name}' has no TensorDesc")
    clash = set(graph.inputs) & set(graph.constants)
    problems += [f"tensor '{t}' is both a graph input and a constant" for t in sorted(clash)]
    clash = set(graph.captures) & (set(graph.inputs) | set(graph.constants))
    problems += [f"captured tensor '{t}' is also defined in graph '{graph.name}'" for t in sorted(clash)]
    node_names: set[str] = set()
    expected_uses: Counter[str] = Counter()
    for node in graph.nodes:
        for t in node.inputs:
            if not t:
                continue
            expected_uses[t] += 1
            if t not in defined:
                where = "is produced later" if graph.producer(t) is not None else "is never produced"
                problems.append(f"node '{node.name}' ({node.op_type}) reads '{t}', which {where}")
        for c in node.control_inputs:
            if c not in node_names:
                problems.append(f"node '{node.name}' has a control edge from '{c}', which is not before it")
        for t in node.outputs:
            if t in defined:
                problems.append(f"tensor '{t}' is defined twice (again by node '{node.name}')")
            if graph.producer(t) is not node:
                problems.append(f"producer map is stale for '{t}' (node '{node.name}')")
            if t not in graph.descs:
                problems.append(f"output '{t}' of node '{node.name}' has no TensorDesc")
            defined.add(t)
        node_names.add(node.name)
    for t in graph.outputs:
        if t not in defined:
            problems.append(f"graph output '{t}' is not produced by any node, input or constant")
    for t, count in expected_uses.items():
        if graph.num_uses(t) - graph.outputs.count(t) != count:
            problems.append(f"users map is stale for '{t}'")
    for t, desc in graph.descs.items():
        if any(d < -1 for d in desc.shape):
            problems.append(f"tensor '{t}' has a negative dim in {list(desc.shape)}")
    for node in graph.nodes:
        if node.body is not None:
            problems += _body_problems(node)
        if node.subgraphs or node.num_captures:
            problems += _subgraph_problems(graph, node)
    for name, array in graph.constants.items():
        const_desc = graph.descs.get(name)
        if const_desc is not None and tuple(array.shape) != const_desc.shape:
            problems.append(f"constant '{name}' holds shape {list(array.shape)} but its desc says "
                            f"{list(const_desc.shape)}")
    return problems


def _subgraph_problems(graph: Graph, node: Node) -> list[str]:
    """A control-flow node's subgraphs are valid graphs, and every tensor they capture is one of the node's
    captured inputs (of the same dtype), so the enclosing graph sees the read."""
    where = f"node '{node.name}' ({node.op_type})"
    if not 0 <= node.num_captures <= len(node.inputs):
        return [f"{where} says {node.num_captures} captured inputs but has {len(node.inputs)} inputs"]
    captured = set(node.captures)
    problems = [f"{where} has an empty captured input" for t in node.captures if not t][:1]
    for attr, sub in sorted(node.subgraphs.items()):
        problems += [f"{attr} of {where}: {p}" for p in structural_problems(sub)]
        for t in sub.captures:
            outer, inner = graph.descs.get(t), sub.descs.get(t)
            if t not in captured:
                problems.append(f"{attr} of {where} reads outer tensor '{t}', which the node does not capture")
            elif outer is not None and inner is not None and "undefined" not in (outer.dtype, inner.dtype) \
                    and outer.dtype != inner.dtype:
                problems.append(f"{attr} of {where} holds captured '{t}' as {inner.text()}, outside it is "
                                f"{outer.text()}")
    return problems


def _body_problems(node: Node) -> list[str]:
    """A fused node's body must be a valid graph reading the node's inputs and producing its outputs."""
    body = node.body
    assert body is not None
    problems = [f"body of '{node.name}': {p}" for p in structural_problems(body)]
    if tuple(body.inputs) != tuple(t for t in node.inputs if t):
        problems.append(f"fused node '{node.name}' reads {list(node.inputs)} but its body's inputs are {body.inputs}")
    if tuple(body.outputs) != node.outputs:
        problems.append(f"fused node '{node.name}' produces {list(node.outputs)} but its body returns "
                        f"{body.outputs}")
    return problems
