"""The op definition of fused nodes: whatever their body computes.

A node with a body and no op of its own in the registry (GE's fused kernels, UB fusion groups) infers its
output descs, runs, and costs what its body does. Its fusion category is the strongest among the body's
ops (a group holding a Conv is cube-like), so later passes see it as one kernel of that kind.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.registry import Category, Cost, OpDef, Operand

if TYPE_CHECKING:
    from ge_core.ops.registry import OpRegistry

_RANK = [Category.ELEMENTWISE, Category.BROADCAST, Category.INJECTIVE, Category.REDUCE, Category.CUBE,
         Category.OPAQUE]


def body_category(body: Graph, registry: OpRegistry) -> Category:
    ranks = [_RANK.index(op.category) for n in body.nodes if (op := registry.for_node(n)) is not None]
    return _RANK[max(ranks, default=_RANK.index(Category.OPAQUE))]


def fused_opdef(node: Node, registry: OpRegistry) -> OpDef:
    """An OpDef computing `node` through its body (cached per body graph)."""
    assert node.body is not None
    cached = _CACHE.get(node.body)
    if cached is None:
        cached = _make(node.body, registry)
        _CACHE[node.body] = cached
    return cached


_CACHE: weakref.WeakKeyDictionary[Graph, OpDef] = weakref.WeakKeyDictionary()


def _make(body: Graph, registry: OpRegistry) -> OpDef:
    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        if all(o is not None and o.desc == body.desc(t) for o, t in zip(operands, body.inputs, strict=True)):
            return [body.desc(t) for t in body.outputs]
        from ge_core.ops.infer import infer_graph  # the body under new input shapes (dynamic dims)

        trial = body.copy()
        for o, t in zip(operands, trial.inputs, strict=True):
            if o is not None:
                trial.set_desc(t, o.desc)
        result = infer_graph(trial, registry, apply=False)
        if result.problems:
            from ge_core.errors import ShapeError

            raise ShapeError(node.name, node.op_type, [o.desc.shape if o else None for o in operands],
                             "its body does not accept these inputs: " + "; ".join(result.problems[:3]))
        return [result.descs[t] for t in body.outputs]

    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        from ge_core.runtime.executor import body_executor  # runtime sits above ops

        arrays = [x for x in inputs if x is not None]  # a fused node's inputs are all present
        outputs = body_executor(body).run_body(dict(zip(body.inputs, arrays, strict=True)))
        return [outputs[t] for t in body.outputs]

    def cost(node: Node, in_descs: list[TensorDesc | None], out_descs: list[TensorDesc]) -> Cost:
        flops = 0
        for inner in body.nodes:
            op = registry.for_node(inner)
            if op is not None:
                flops += op.cost(inner, body.input_descs(inner), body.output_descs(inner)).flops
        read = sum(d.nbytes or 0 for d in in_descs if d is not None)
        return Cost(flops, read, sum(d.nbytes or 0 for d in out_descs))  # intermediates stay on chip

    return OpDef("Fused", body_category(body, registry), infer, kernel, cost, domain="ge", foldable=False,
                 doc="a fused kernel: runs its body")
