"""What rewrites share: small edits that keep the graph's interface (input/output names), and the rules
every pass respects (nodes pinned by control edges). Which ops are never folded or merged is a fact of
each op in the registry (OpDef.foldable, OpDef.deterministic)."""

from __future__ import annotations

from collections.abc import Iterable

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node


def control_pinned(graph: Graph) -> set[str]:
    """Names of nodes at either end of a control edge: no rewrite erases them. Erasing the source breaks
    the edge; erasing the target drops the ordering, which would unpin the source for the next run."""
    pinned: set[str] = set()
    for node in graph.nodes:
        if node.control_inputs:
            pinned.add(node.name)
            pinned.update(node.control_inputs)
    return pinned


def is_onnx(node: Node) -> bool:
    """Standard ONNX ops only: a custom domain's 'Conv' or 'Mul' may mean something else."""
    return node.domain in ("", "ai.onnx")


def drop_unused_constants(graph: Graph, names: Iterable[str]) -> None:
    """Remove constants a rewrite detached (PrunePass would too; this keeps weights from piling up)."""
    for name in names:
        if name and graph.is_constant(name) and graph.num_uses(name) == 0:
            graph.remove_constant(name)


def bypass(graph: Graph, node: Node, source: str) -> bool:
    """Remove a node whose first output equals `source` (Identity, a no-op Reshape, Dropout at inference...).

    Readers of the output read `source` instead; any other output (Dropout's mask) must be unread. A graph
    output's name must survive, so then `source` is renamed to it, which needs `source` to be an
    intermediate tensor (not a graph input, constant or other graph output). Returns False, graph
    untouched, when the bypass would change the graph's interface or drop a value someone reads.
    """
    out, *extra = node.outputs
    if any(graph.num_uses(t) or graph.is_output(t) for t in extra):
        return False
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
