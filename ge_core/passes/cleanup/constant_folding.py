"""ConstantFoldingPass: evaluate, once at compile time, every node that only depends on constants."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.inline import can_inline, inline_subgraph
from ge_core.ir.limits import human_bytes
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.evaluate import evaluate
from ge_core.ops.registry import OpDef, Operand
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import control_pinned


@dataclass(frozen=True)
class ConstantFoldingPass:
    """Compute at compile time every node whose inputs are all constants, and store the result as a constant.

    Exported models are full of work that never depends on the input: weights reshaped or transposed,
    shapes computed by Shape-Gather-Concat chains, scales multiplied together. GE folds it once while
    compiling, so the device never runs it. Shape and Size of a tensor with a static shape fold too.
    Outputs above `max_elements` stay as nodes so that the model file does not balloon. An If whose
    condition is a constant becomes the nodes of the branch it takes (GE folds it so), which fold in turn.
    """

    name: ClassVar[str] = "ConstantFoldingPass"
    max_elements: int = 1 << 20  # per node, summed over its outputs

    def run(self, graph: Graph) -> PassResult:
        keep = control_pinned(graph)
        folded = created = inlined = 0
        todo = deque(graph.nodes)  # topological: a folded node's readers see constants when visited
        while todo:
            node = todo.popleft()
            op = REGISTRY.for_node(node)
            if op is not None and op.inline_branch is not None:
                added = _inline(graph, node, op, keep)
                todo.extendleft(reversed(added))  # the branch's nodes next, in order: they may fold too
                inlined += bool(added)
                continue
            if op is None or not self._may_fold(node, op, keep):
                continue
            values = self._evaluate(graph, node, op)
            if values is None:
                continue
            graph.fold_to_constants(node, values)
            folded += 1
            created += sum(v.nbytes for v in values)
        if not folded and not inlined:
            return PassResult(False)
        notes = (f"folded {folded} node(s) into constants ({human_bytes(created)} of constants created)",)
        return PassResult(True, notes + ((f"inlined the branch taken by {inlined} If node(s) on a constant "
                                          "condition",) if inlined else ()))

    @staticmethod
    def _may_fold(node: Node, op: OpDef, keep: set[str]) -> bool:
        # control edges are ordering the user asked for: leave such nodes to run
        # (a random op is never foldable: OpDef refuses deterministic=False with foldable=True)
        return op.foldable and not node.control_inputs and node.name not in keep

    def _evaluate(self, graph: Graph, node: Node, op: OpDef) -> list[np.ndarray] | None:
        """The node's output values, or None when it cannot (or should not) be folded."""
        operands = [Operand(graph.desc(t), graph.constants.get(t)) if t else None for t in node.inputs]
        return evaluate(node, op, operands, [graph.desc(t) for t in node.outputs], self.max_elements)


def _inline(graph: Graph, node: Node, op: OpDef, keep: set[str]) -> list[Node]:
    """The nodes of the one subgraph `node` runs once on its constant inputs, put in its place ([] if none)."""
    if node.control_inputs or node.name in keep or op.inline_branch is None:
        return []
    operands = [Operand(graph.desc(t), graph.constants.get(t)) if t else None for t in node.explicit_inputs]
    attr = op.inline_branch(node, operands)
    if attr is None or not can_inline(graph, node, attr):
        return []
    return inline_subgraph(graph, node, attr)
