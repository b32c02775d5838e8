"""Activations: elementwise, one output element from one input element."""

from __future__ import annotations

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import elementwise_cost, like, operand, require_inputs
from ge_core.ops.registry import Category, OpDef, Operand


def _infer_unary(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    return [like(operand(node, operands, 0).desc)]


def _relu(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    return [np.maximum(x, x.dtype.type(0))]


OPS: list[OpDef] = [
    # max(x, 0)
    OpDef("Relu", Category.ELEMENTWISE, _infer_unary, _relu, elementwise_cost(1)),
]
