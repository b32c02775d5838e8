"""TransDataSymmetryEliminationPass: a TransData A->B followed by a TransData B->A is no conversion at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned, erase_if_unused
from ge_core.passes.npu.edits import formats_of, is_transdata, rebind_bodies


@dataclass(frozen=True)
class TransDataSymmetryEliminationPass:
    """Remove back-to-back inverse TransData pairs (GE's TransOpSymmetryEliminationPass).

    Format selection converts at every op's boundary, so two ops working in NC1HWC0 in a row meet through
    NC1HWC0 -> NCHW -> NC1HWC0: the readers of the second TransData can read the first one's input
    directly. The first TransData goes too once nothing else reads it (an op that needs NCHW, or a graph
    output, keeps it). What is left are the conversions at real format boundaries: the network's input,
    and where the feature maps meet an op that needs its origin layout (Flatten, MatMul, Softmax...).
    """

    name: ClassVar[str] = "TransDataSymmetryEliminationPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        pairs = erased = 0
        for node in graph.nodes:  # topological: a chain A->B->A->B resolves from its start
            if not graph.has_node(node.name) or not is_transdata(node) or node.name in pinned:
                continue
            first = _inverse_producer(graph, node, pinned)
            if first is None or not bypass(graph, node, first.input(0)):
                continue
            pairs += 1
            erased += 1 + erase_if_unused(graph, first)
        if not pairs:
            return PassResult(False)
        rebind_bodies(graph)
        return PassResult(True, (f"removed {pairs} inverse TransData pair(s) ({erased} TransData erased; a first "
                                 "half that another reader needs stays)",))


def _inverse_producer(graph: Graph, second: Node, pinned: set[str]) -> Node | None:
    """The TransData producing `second`'s input when it converts exactly the other way, else None."""
    first = graph.producer(second.input(0))
    if first is None or not is_transdata(first) or first.name in pinned:
        return None
    src, dst = formats_of(first)
    before, after = graph.desc(first.input(0)), graph.desc(second.outputs[0])
    if formats_of(second) != (dst, src) or (before.shape, before.dtype, before.format) != (
            after.shape, after.dtype, after.format):
        return None
    return first
