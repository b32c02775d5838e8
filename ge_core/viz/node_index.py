"""Every node of a graph under a stable reference, fused bodies included.

A fused node keeps the ops it replaced as its body, names preserved, and often takes the name of one of
them (FusedConv 'relu1' holds 'conv1' and 'relu1'). So a body node is referred to by its path:
`relu1 › conv1`. Top-level nodes keep their plain name as reference. The Graph page uses references for
selection, search, the inspector and the drawings.
"""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node

SEP = " › "  # between a fused node's reference and a body node's name


@dataclass(frozen=True, slots=True)
class Located:
    """A node, the graph that holds it (a fused body for body nodes) and its fused parent's reference."""

    ref: str
    node: Node
    graph: Graph
    parent: str | None = None

    @property
    def depth(self) -> int:
        return self.ref.count(SEP)


def body_ref(parent: str, name: str) -> str:
    return f"{parent}{SEP}{name}"


def index_nodes(graph: Graph) -> dict[str, Located]:
    """Reference -> Located for every node, in topological order; a body follows its fused node."""
    out: dict[str, Located] = {}
    _index_into(out, graph, None)
    return out


def _index_into(out: dict[str, Located], graph: Graph, parent: str | None) -> None:
    for node in graph.nodes:
        ref = node.name if parent is None else body_ref(parent, node.name)
        out[ref] = Located(ref, node, graph, parent)
        if node.body is not None:
            _index_into(out, node.body, ref)


def top_level(ref: str) -> str:
    """The top-level node a reference lives in (itself, or the outermost fused node holding it)."""
    return ref.split(SEP, 1)[0]


def ancestors(ref: str) -> list[str]:
    """The fused nodes holding `ref`, outermost first (empty for a top-level node)."""
    parts = ref.split(SEP)
    return [SEP.join(parts[:i]) for i in range(1, len(parts))]
