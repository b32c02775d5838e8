"""Arithmetic: binary ops with numpy broadcasting, variadic Sum, unary math."""

from __future__ import annotations

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import broadcast, elementwise_cost, make_desc, require_inputs, same_dtype
from ge_core.ops.registry import Category, OpDef, Operand


def _infer_binary(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    dtype = same_dtype(node, operands, [0, 1])
    shape = broadcast(node, operands, [o.desc.shape for o in operands if o is not None])
    return [make_desc(shape, dtype)]


def _add(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs
    assert a is not None and b is not None
    return [np.add(a, b)]


OPS: list[OpDef] = [
    # a + b with broadcasting
    OpDef("Add", Category.BROADCAST, _infer_binary, _add, elementwise_cost(1)),
]
