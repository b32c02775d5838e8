"""Bitwise ops on integers: BitwiseAnd/Or/Xor (numpy broadcasting), BitwiseNot, BitShift.

BitShift takes unsigned types, and signed ones from opset 28: a right shift of a signed value is arithmetic
(sign-extending); a left shift discards the bits pushed past the width (through the sign bit). A shift
amount below 0 or >= the bit width gives what the sign extension alone gives: -1 for a right shift of a
negative value, 0 otherwise (C leaves it undefined; ONNX pins it down).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import choice_attr, elementwise_cost
from ge_core.ops.math import INTS, UNSIGNED_INTS, broadcast_infer, unary_infer
from ge_core.ops.registry import Category, KernelFn, OpDef, Operand

DIRECTIONS = ("LEFT", "RIGHT")


def _bitwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> KernelFn:
    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        a, b = inputs
        assert a is not None and b is not None
        return [np.asarray(fn(a, b), dtype=a.dtype)]

    return kernel


def _bitwise_not(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [np.asarray(np.invert(x))]


def _direction(node: Node, operands: list[Operand | None]) -> str:
    return choice_attr(node, operands, "direction", DIRECTIONS)


def _infer_bitshift(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    _direction(node, operands)
    allowed = INTS if node.opset >= 28 else UNSIGNED_INTS  # signed types arrived in opset 28
    return broadcast_infer(allowed)(node, operands)


def _bitshift(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, y = inputs
    assert x is not None and y is not None
    bits = x.dtype.itemsize * 8
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    in_range = (y >= 0) & (y < bits)
    amount = np.where(in_range, y, 0).astype(unsigned)  # a safe shift everywhere; masked below
    if _direction(node, []) == "RIGHT":
        shifted = np.right_shift(x, amount.astype(x.dtype))  # arithmetic for signed types
        fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    else:  # shift the bit pattern unsigned (no signed overflow), then read it back in x's type
        shifted = np.left_shift(x.astype(unsigned), amount).astype(x.dtype)
        fill = 0
    return [np.asarray(np.where(in_range, shifted, fill)).astype(x.dtype, copy=False)]


_BINARY = broadcast_infer(INTS)

OPS: list[OpDef] = [
    # a & b with broadcasting
    OpDef("BitwiseAnd", Category.BROADCAST, _BINARY, _bitwise(np.bitwise_and), elementwise_cost(1),
          commutative=True),
    # a | b with broadcasting
    OpDef("BitwiseOr", Category.BROADCAST, _BINARY, _bitwise(np.bitwise_or), elementwise_cost(1),
          commutative=True),
    # a ^ b with broadcasting
    OpDef("BitwiseXor", Category.BROADCAST, _BINARY, _bitwise(np.bitwise_xor), elementwise_cost(1),
          commutative=True),
    # ~x
    OpDef("BitwiseNot", Category.ELEMENTWISE, unary_infer(INTS), _bitwise_not, elementwise_cost(1)),
    # x << y or x >> y (direction), with broadcasting; out-of-range amounts as the spec says
    OpDef("BitShift", Category.BROADCAST, _infer_bitshift, _bitshift, elementwise_cost(1)),
]
