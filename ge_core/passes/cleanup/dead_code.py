"""PrunePass: dead code elimination by reverse reachability from the graph outputs (GE's PrunePass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.ir.limits import human_bytes
from ge_core.ir.node import Node
from ge_core.passes.infra.base import PassResult


@dataclass(frozen=True)
class PrunePass:
    """Remove every node no graph output depends on, and every constant nobody reads.

    Exported models carry branches whose results are never returned (debug heads, leftovers of
    training), and other passes leave work behind: a folded chain's inputs, a fused node's weights.
    GE walks back from the outputs along data and control edges and drops whatever it never reached,
    so no kernel runs and no memory is planned for it. Graph inputs stay, even unused: they are the
    model's interface.
    """

    name: ClassVar[str] = "PrunePass"

    def run(self, graph: Graph) -> PassResult:
        dead = _dead_nodes(graph)
        _erase_all(graph, dead)
        returned = set(graph.outputs)
        unused = [t for t in graph.constants if t not in returned and not graph.users(t)]
        freed = sum(graph.constants[t].nbytes for t in unused)
        for t in unused:
            graph.remove_constant(t)
        if not dead and not unused:
            return PassResult(False)
        return PassResult(True, (f"removed {len(dead)} dead node(s) and {len(unused)} unused constant(s) "
                                 f"({human_bytes(freed)})",))


def _erase_all(graph: Graph, dead: list[Node]) -> None:
    """Erase a set of nodes closed under readers (every reader of a dead node is dead).

    Their inputs are cut first, in graph order, then the nodes go. Cutting in graph order finds each node
    near the front of its input's users list; erasing readers-first would search those lists from the
    far end, which costs O(N^2) when thousands of dead nodes read one shared constant.
    """
    for node in reversed(dead):  # `dead` is in reverse graph order
        while node.inputs:  # last first: set_input drops trailing empty inputs
            graph.set_input(node, len(node.inputs) - 1, "")
    for node in dead:
        graph.erase(node)


def _dead_nodes(graph: Graph) -> list[Node]:
    """Nodes that reach no graph output, in reverse topological order (one backward sweep)."""
    needed: set[str] = set(graph.outputs)  # tensors some live node or the graph returns
    needed_nodes: set[str] = set()  # nodes a live node waits for (control edges)
    dead: list[Node] = []
    for node in reversed(graph.nodes):
        if node.name in needed_nodes or any(t in needed for t in node.outputs):
            needed.update(t for t in node.inputs if t)
            needed_nodes.update(node.control_inputs)
        else:
            dead.append(node)
    return dead
