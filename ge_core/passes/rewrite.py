"""Small graph edits that many passes share, each keeping the graph's interface (input/output names)."""

from __future__ import annotations

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node


def bypass(graph: Graph, node: Node, source: str) -> bool:
    """Remove a node whose single output equals `source` (Identity, a no-op Reshape...).

    Readers of the output read `source` instead. A graph output's name must survive, so then `source` is
    renamed to it, which needs `source` to be an intermediate tensor (not a graph input, constant or other
    graph output). Returns False, graph untouched, when the bypass would change the graph's interface.
    """
    (out,) = node.outputs
    keep_name = graph.is_output(out)
    if keep_name and (graph.producer(source) is None or source in graph.outputs):
        return False
    graph.replace_all_uses(out, source)
    graph.erase(node)
    if keep_name:
        graph.rename_tensor(source, out)
    return True


def erase_if_unused(graph: Graph, node: Node) -> bool:
    """Erase a node none of whose outputs is read or is a graph output."""
    if any(graph.num_uses(t) for t in node.outputs):
        return False
    graph.erase(node)
    return True


def single_reader(graph: Graph, tensor: str) -> Node | None:
    """The one node reading `tensor` (exactly once), when it is not also a graph output; else None."""
    if graph.is_output(tensor) or graph.num_uses(tensor) != 1:
        return None
    (user,) = graph.users(tensor)
    return user
