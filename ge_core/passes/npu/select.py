"""Format selection: which ops work in NC1HWC0, decided once over the whole graph in topological order.

Anchors (cube, pooling, normalisation) always do. A format-agnostic op does when one of its feature-map
inputs already comes in NC1HWC0 (forward propagation), so a residual Add or a Concat between convolutions
stays in the 5-D layout; between two anchors, a chain of agnostic ops never needs a TransData. Every
other op stays in its origin format. TransData nodes already in the graph keep theirs.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ge_core.ir.formats import NC1HWC0
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.npu.edits import is_transdata
from ge_core.passes.npu.rules import Kind, Refusal, Role, Rule, classify, feature_map_problem


@dataclass(frozen=True)
class Choice:
    """The format one op works in, and why (the compile report's `formats` entry)."""

    node: str
    op_type: str
    format: str  # NC1HWC0, or "origin" (NCHW/ND as imported)
    reason: str
    rule: Rule | None = None  # set when the op works in NC1HWC0

    def to_json(self) -> dict[str, str]:
        return {"node": self.node, "op_type": self.op_type, "format": self.format, "reason": self.reason}


ORIGIN = "origin"


def select_formats(graph: Graph) -> dict[str, Choice]:
    """node name -> Choice, for every node but TransData."""
    consts = set(graph.constants)
    chosen: dict[str, Choice] = {}
    for node in graph.nodes:
        if is_transdata(node):
            continue
        verdict = classify(graph, node)
        chosen[node.name] = _choose(graph, node, verdict, chosen, consts)
    return chosen


def _choose(graph: Graph, node: Node, verdict: Rule | Refusal, chosen: dict[str, Choice],
            consts: Collection[str]) -> Choice:
    if isinstance(verdict, Refusal):
        return Choice(node.name, node.op_type, ORIGIN, verdict.why)
    if verdict.kind == Kind.ANCHOR:
        return Choice(node.name, node.op_type, NC1HWC0, verdict.why, verdict)
    source = next((t for i, t in enumerate(node.inputs) if t and t not in consts
                   and verdict.roles[i] == Role.ACTIVATION and _comes_in_5hd(graph, t, chosen)), None)
    if source is None:
        return Choice(node.name, node.op_type, ORIGIN, "format-agnostic, and no input comes in NC1HWC0")
    return Choice(node.name, node.op_type, NC1HWC0, f"{verdict.why}: '{source}' comes in NC1HWC0", verdict)


def _comes_in_5hd(graph: Graph, tensor: str, chosen: dict[str, Choice]) -> bool:
    producer = graph.producer(tensor)
    if graph.desc(tensor).format == NC1HWC0:
        return True  # already lowered (a second run)
    return producer is not None and producer.name in chosen and chosen[producer.name].format == NC1HWC0


def is_candidate(graph: Graph, node: Node) -> bool:
    """Worth a line in the report: an op producing a 4-D float feature map (others are never in question)."""
    return any(feature_map_problem(graph.desc(t)) is None for t in node.outputs if t in graph.descs)
