"""InferShapePass: re-run shape and dtype inference over the whole graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ge_core.errors import ModelError
from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY, infer_graph
from ge_core.passes.infra.base import PassResult


@dataclass(frozen=True)
class InferShapePass:
    """Infer every tensor's shape and dtype from its producer, through the op registry.

    GE runs InferShape right after parsing (the AfterInfershape stage) and again whenever a rewrite may
    have changed shapes. Every later pass relies on the TensorDescs it writes: memory planning sizes
    buffers from them and fusion checks shapes against them.
    """

    name: ClassVar[str] = "InferShapePass"

    def run(self, graph: Graph) -> PassResult:
        before = dict(graph.descs)
        result = infer_graph(graph, REGISTRY)
        if result.problems:
            raise ModelError("shape inference failed:", problems=result.problems)
        changed = [t for t, d in graph.descs.items() if before.get(t) != d]
        return PassResult(bool(changed), (f"{len(changed)} tensor desc(s) updated",) if changed else ())
