"""TransDataBreadthFusionPass: identical TransData on one tensor become one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import control_pinned
from ge_core.passes.npu.edits import formats_of, is_transdata, rebind_bodies


@dataclass(frozen=True)
class TransDataBreadthFusionPass:
    """Merge TransData nodes that convert the same tensor the same way (GE's TransOpBreadthFusionPass).

    An input read by several ops that work in NC1HWC0 (a network input feeding two branches, a tensor
    feeding an Inception block's convolutions) got one TransData per reader; one conversion is enough,
    and the others' readers share its output. A TransData writing a graph output keeps its own.
    """

    name: ClassVar[str] = "TransDataBreadthFusionPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        merged = 0
        while True:  # merging two conversions makes their readers' conversions identical too: sweep again
            sweep = _merge_sweep(graph, pinned)
            merged += sweep
            if not sweep:
                break
        if not merged:
            return PassResult(False)
        rebind_bodies(graph)
        return PassResult(True, (f"merged {merged} duplicate TransData into the first converting the same tensor",))


def _merge_sweep(graph: Graph, pinned: set[str]) -> int:
    groups: dict[tuple[str, str, str], list[Node]] = {}
    for node in graph.nodes:  # graph order: the first of a group comes before every other's readers
        if is_transdata(node) and node.name not in pinned:
            groups.setdefault((node.input(0), *formats_of(node)), []).append(node)
    merged = 0
    for keep, *others in groups.values():
        for other in others:
            (out,) = other.outputs
            if graph.is_output(out) or graph.desc(out) != graph.desc(keep.outputs[0]):
                continue
            graph.replace_all_uses(out, keep.outputs[0])
            graph.erase(other)
            merged += 1
    return merged
