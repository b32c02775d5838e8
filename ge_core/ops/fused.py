"""The op definition of fused nodes: whatever their body computes.

A node with a body and no op of its own in the registry (GE's fused kernels, UB fusion groups) infers its
output descs and costs what its body does. Its fusion category is the strongest among the body's ops (a
group holding a Conv is cube-like), so later passes see it as one kernel of that kind. It has no kernel:
the interpreter (ge_core.runtime) runs the body node by node, with its own kernel-call hook applying there
too (a precision mode rounds inside fused kernels).
"""

from __future__ import annotations

import weakref

import numpy as np

from ge_core.errors import GEError, ShapeError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.infer import infer_graph
from ge_core.ops.registry import Category, Cost, OpDef, Operand, OpRegistry

_RANK = [Category.ELEMENTWISE, Category.BROADCAST, Category.INJECTIVE, Category.REDUCE, Category.CUBE,
         Category.OPAQUE]


def body_category(body: Graph, registry: OpRegistry) -> Category:
    ranks = [_RANK.index(op.category) for n in body.nodes if (op := registry.for_node(n)) is not None]
    return _RANK[max(ranks, default=_RANK.index(Category.OPAQUE))]


def fused_opdef(node: Node, registry: OpRegistry) -> OpDef:
    """An OpDef inferring and costing `node` through its body (cached per body graph)."""
    assert node.body is not None
    cached = _CACHE.get(node.body)
    if cached is None:
        cached = _CACHE[node.body] = _make(body_category(node.body, registry), registry)
    return cached


# The OpDef reads the body from the node it is given, so a cached value never keeps its body alive.
_CACHE: weakref.WeakKeyDictionary[Graph, OpDef] = weakref.WeakKeyDictionary()


def _body(node: Node) -> Graph:
    if node.body is None:
        raise GEError(f"node '{node.name}' ({node.op_type}) has no body and no op of its own.")
    return node.body


def _make(category: Category, registry: OpRegistry) -> OpDef:
    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        body = _body(node)
        if all(o is not None and o.desc == body.desc(t) for o, t in zip(operands, body.inputs, strict=True)):
            return [body.desc(t) for t in body.outputs]
        trial = body.copy()  # the body under new input shapes (dynamic dims)
        for o, t in zip(operands, trial.inputs, strict=True):
            if o is not None:
                trial.set_desc(t, o.desc)
        result = infer_graph(trial, registry, apply=False)
        if result.problems:
            raise ShapeError(node.name, node.op_type, [o.desc.shape if o else None for o in operands],
                             "its body does not accept these inputs: " + "; ".join(result.problems[:3]))
        return [result.descs[t] for t in body.outputs]

    def cost(node: Node, in_descs: list[TensorDesc | None], out_descs: list[TensorDesc]) -> Cost:
        body = _body(node)
        flops = 0
        for inner in body.nodes:
            op = registry.for_node(inner)
            if op is not None:
                flops += op.cost(inner, body.input_descs(inner), body.output_descs(inner)).flops
        read = sum(d.nbytes or 0 for d in in_descs if d is not None)
        return Cost(flops, read, sum(d.nbytes or 0 for d in out_descs))  # intermediates stay on chip

    return OpDef("Fused", category, infer, _no_kernel, cost, domain="ge", foldable=False,
                 doc="a fused kernel: the interpreter runs its body")


def _no_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    raise GEError(f"fused node '{node.name}' ({node.op_type}) has no kernel of its own: its body runs through "
                  "the interpreter.", hint="Run the graph with ge_core.runtime (Executor, Interpreter, execute).")
