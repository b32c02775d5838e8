"""Fused bodies with no special plan run as a plain list of kernel calls.

A body the epilogue and gate plans do not cover (attention, Slice + Squeeze + Transpose, Add + Add +
LayerNormalization ...) runs through an interpreter of its own: feeds checked into an environment, every
node through run_node's hooks and checks, the outputs through the result's ownership rule. On the small
transformer bodies that machinery cost as much as the kernels (BERT's attention body: 5 kernels, ~25 us of
interpretation around them). Here the same kernels run in the same order on the same values, so the result
is bit for bit the loop's; the body's outputs are made owned by the interpreter's rule. Any exception falls
back to the loop, which raises it with the node named. Taken only with registered kernels, known dims, and
no node that runs a body or subgraphs of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.kernels import FAST_PATHS
from ge_core.ops.registry import OpDef, OpRegistry

Owned = Callable[[np.ndarray, bool], np.ndarray]  # the interpreter's ownership rule for outputs


@dataclass(frozen=True)
class ChainPlan:
    """The body's nodes in order, each with its op (its kernel called as the interpreter calls it: a fast path
    where one takes the inputs, else the reference kernel)."""

    steps: tuple[tuple[Node, OpDef], ...]
    owned: Owned
    borrowed: frozenset[str]  # the body's constants and inputs: an output that is one of them is copied

    def run(self, body: Graph, args: Sequence[np.ndarray | None]) -> list[np.ndarray] | None:
        """The body's outputs, or None (then the loop runs it and reports what went wrong)."""
        env: dict[str, np.ndarray] = dict(body.constants)
        env.update(zip(body.inputs, [x for x in args if x is not None], strict=True))
        try:
            for node, op in self.steps:
                values = FAST_PATHS.call(node, op, [env[t] if t else None for t in node.inputs])
                if len(values) < len(node.outputs):
                    return None
                env.update(zip(node.outputs, values, strict=False))
        except Exception:  # the loop runs the body again and raises it as an ExecutionError naming the node
            return None
        return [self.owned(np.asarray(env[t]), t in self.borrowed) for t in body.outputs]


def plan_body_chain(body: Graph, registry: OpRegistry, owned: Owned) -> ChainPlan | None:
    """The plan for any body of registered ops without bodies or subgraphs of their own; None otherwise."""
    steps = []
    for node in body.nodes:
        op = registry.lookup(node)
        if registry.runs_body(node) or op.run_subgraphs is not None:  # (an op's own reference body is not run)
            return None
        steps.append((node, op))
    return ChainPlan(tuple(steps), owned, frozenset(body.constants) | frozenset(body.inputs)) if steps else None
