"""Inlining: a control-flow node replaced by one run of one of its subgraphs (an If whose condition is known).

The subgraph's constants and nodes are copied into the enclosing graph just before the node, each under its
own name unless that name is taken there (then under a fresh one); its captured tensors are the outer
tensors themselves. Readers of the node's outputs read the subgraph's outputs instead, and an output of the
node that is a graph output keeps its name (the inlined tensor is renamed to it), so the interface holds.
"""

from __future__ import annotations

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.scopes import rescope


def can_inline(graph: Graph, node: Node, attr: str) -> bool:
    """Whether `node` can be replaced by subgraph `attr`: it has it, with no formal inputs, and every graph
    output among the node's outputs comes from a node of the subgraph (a name that can be moved)."""
    sub = node.subgraphs.get(attr)
    if sub is None or sub.inputs or len(sub.outputs) != len(node.outputs):
        return False
    produced = [sub.producer(t) is not None for t in sub.outputs]
    if len(set(sub.outputs)) != len(sub.outputs):
        return False  # one inner tensor for two outputs: the names cannot both survive
    return all(ok or not graph.is_output(t) for t, ok in zip(node.outputs, produced, strict=True))


def inline_subgraph(graph: Graph, node: Node, attr: str) -> list[Node]:
    """Replace `node` by the nodes of its subgraph `attr` (check can_inline first); returns the new nodes."""
    sub = node.subgraphs[attr]
    names: dict[str, str] = {}
    for t, array in sub.constants.items():
        names[t] = graph.unique_tensor_name(t)
        graph.add_constant(names[t], array, sub.desc(t))
    added = []
    for inner in sub.nodes:
        for t in inner.outputs:
            names[t] = t if not graph.has_tensor(t) and t not in graph.inputs else graph.unique_tensor_name(t)
        copy = graph.insert_before(node, inner.op_type, [names.get(t, t) for t in inner.explicit_inputs],
                                   [names[t] for t in inner.outputs], dict(inner.attrs),
                                   name=graph.unique_node_name(inner.name), domain=inner.domain, opset=inner.opset,
                                   descs=[sub.desc(t) for t in inner.outputs], body=inner.body,
                                   subgraphs={k: g.copy() for k, g in inner.subgraphs.items()},
                                   captures=[names.get(t, t) for t in inner.captures])
        for old in inner.captures:  # a nested subgraph reads its captures under their new names
            if names.get(old, old) != old:
                rescope(copy, old, names[old])
        added.append(copy)
    results = [names.get(t, t) for t in sub.outputs]
    kept = [(out, t) for out, t in zip(node.outputs, results, strict=True) if graph.is_output(out)]
    for out, t in zip(node.outputs, results, strict=True):
        graph.replace_all_uses(out, t)
    graph.erase(node)
    for out, t in kept:  # the interface keeps its names
        graph.rename_tensor(t, out)
    return added
