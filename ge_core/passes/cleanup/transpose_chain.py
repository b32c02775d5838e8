"""TransposeChainPass: Transpose -> Transpose becomes one Transpose with the composed perm, or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned, is_onnx, single_reader


@dataclass(frozen=True)
class TransposeChainPass:
    """Merge back-to-back Transposes into one whose perm is their composition, or remove both when the
    composition is the identity (NCHW -> NHWC -> NCHW round trips that layout conversions leave behind).

    A Transpose moves every element of its tensor through memory; two in a row move it twice. Graph
    compilers collapse such chains (GE's TransOpDepthFusionPass, ONNX's fuse_consecutive_transposes) so the
    data moves at most once.
    A first Transpose that something else also reads stays, since merging would compute it twice.
    """

    name: ClassVar[str] = "TransposeChainPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        merged = removed = 0
        while True:  # removing an identity can give an earlier Transpose a single reader: sweep again
            sweep_merged, sweep_removed = self._sweep(graph, pinned)
            merged, removed = merged + sweep_merged, removed + sweep_removed
            if not sweep_merged:
                break
        if not merged:
            return PassResult(False)
        return PassResult(True, (f"merged {merged} Transpose pair(s) into one; "
                                 f"{removed} composition(s) were the identity and were removed",))

    @staticmethod
    def _sweep(graph: Graph, pinned: set[str]) -> tuple[int, int]:
        merged = removed = 0
        for node in graph.nodes:  # topological: the producer of each Transpose has already absorbed its own
            if node.op_type != "Transpose" or not is_onnx(node) or not graph.has_node(node.name):
                continue
            count = 0
            while _merge_with_producer(graph, node, pinned):
                count += 1
            merged += count
            if count and _is_identity(graph, node) and node.name not in pinned and _bypass(graph, node):
                removed += 1
        return merged, removed


def perm_of(graph: Graph, node: Node) -> list[int]:
    """The node's perm; ONNX's default reverses the axes."""
    perm = node.attr("perm")
    rank = graph.desc(node.input(0)).rank
    return [int(p) for p in perm] if perm is not None else list(range(rank))[::-1]


def _merge_with_producer(graph: Graph, second: Node, pinned: set[str]) -> bool:
    """second(first(x)) -> second'(x), when first is a Transpose read only by `second`."""
    first = graph.producer(second.input(0))
    if first is None or first.op_type != "Transpose" or not is_onnx(first) or first.name in pinned:
        return False
    if single_reader(graph, second.input(0)) is not second:
        return False
    p1, p2 = perm_of(graph, first), perm_of(graph, second)
    second.attrs["perm"] = [p1[p] for p in p2]  # out[k] = mid[p2[k]] = x[p1[p2[k]]]
    graph.set_input(second, 0, first.input(0))
    graph.erase(first)
    return True


def _is_identity(graph: Graph, node: Node) -> bool:
    return perm_of(graph, node) == list(range(graph.desc(node.input(0)).rank))


def _bypass(graph: Graph, node: Node) -> bool:
    """Remove an identity Transpose; it stays (as a copy) when bypassing would rename a graph input/output."""
    return bypass(graph, node, node.input(0))
