"""Logic: comparisons (bool out), boolean ops, NaN/Inf tests, Where, Identity, Dropout.

(Cast, CastLike and BitCast live in cast.py.)
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

from ge_core.errors import ShapeError
from ge_core.ir.dtypes import BY_NAME
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    broadcast,
    elementwise_cost,
    like,
    make_desc,
    operand,
    optional,
    require_inputs,
    same_dtype,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.math import FLOATS, NUMERIC, broadcast_infer, check_dtype, unary_infer
from ge_core.ops.registry import Category, InferFn, KernelFn, NpuLayout, OpDef, Operand, Unit

BOOL = frozenset({"bool"})
ANY = NUMERIC | BOOL | frozenset({"str"})  # what Equal compares
EVERY_DTYPE = frozenset(BY_NAME)  # Identity passes any tensor through


def _compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> KernelFn:
    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        a, b = inputs
        assert a is not None and b is not None
        return [np.asarray(fn(a, b), dtype=bool)]

    return kernel


def _bool_kernel(fn: Callable[..., np.ndarray]) -> KernelFn:
    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        return [np.asarray(fn(*[x for x in inputs if x is not None]), dtype=bool)]

    return kernel


def _as_float(x: np.ndarray) -> np.ndarray:
    """numpy's float tests need a numpy float dtype (an ml_dtypes bfloat16 array is widened)."""
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def _is_inf(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = _as_float(inputs[0])  # type: ignore[arg-type]
    out = np.zeros(x.shape, dtype=bool)
    if node.attr("detect_positive", 1):
        out |= np.isposinf(x)
    if node.attr("detect_negative", 1):
        out |= np.isneginf(x)
    return [out]


# ---- Where ----------------------------------------------------------------------------------------
def _where_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    cond = operand(node, operands, 0).desc
    check_dtype(node, operands, cond.dtype, BOOL, "the condition")
    dtype = same_dtype(node, operands, [1, 2])
    shapes = [operand(node, operands, i).desc.shape for i in range(3)]
    return [make_desc(broadcast(node, operands, shapes), dtype)]


def _where(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    cond, x, y = inputs
    assert cond is not None and x is not None and y is not None
    return [np.asarray(np.where(cond, x, y), dtype=x.dtype)]


def round_to_bfloat16(x: np.ndarray) -> np.ndarray:
    """`x` rounded to the nearest bfloat16 (ties to even), as an ml_dtypes bfloat16 array."""
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(ml_dtypes.bfloat16)


# ---- Identity, Dropout ----------------------------------------------------------------------------
def _identity(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [x.copy()]  # a copy, so the output never aliases a read-only constant or a graph input


def _dropout_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    """Inference only: the output is the input. Training mode (input 2, opset >= 12) with a ratio
    above zero would drop values at random and is refused."""
    require_inputs(node, operands, 1, 3 if node.opset >= 12 else 1)
    desc = operand(node, operands, 0).desc
    check_dtype(node, operands, desc.dtype, FLOATS)
    ratio_op, training_op = optional(operands, 1), optional(operands, 2)
    ratio: float | None = node.attr("ratio", 0.5) if node.opset < 12 else 0.5
    if ratio_op is not None:
        ratio = None if ratio_op.value is None else float(np.asarray(ratio_op.value).reshape(-1)[0])
    if ratio is not None and not 0.0 <= ratio < 1.0:
        raise shape_error(node, operands, f"ratio must be in [0, 1), got {ratio}")
    if training_op is not None and training_op.value is not None:
        _check_not_training(node, [o.desc.shape if o else None for o in operands],
                            bool(np.asarray(training_op.value).reshape(-1)[0]), ratio)
    return [like(desc), like(desc, dtype=_mask_dtype(node, desc.dtype))]


def _mask_dtype(node: Node, dtype: str) -> str:
    return "bool" if node.opset >= 10 else dtype  # the mask had the data's type before opset 10


def _check_not_training(node: Node, shapes: list[object], training: bool, ratio: float | None) -> None:
    if training and (ratio is None or ratio > 0):
        raise ShapeError(node.name, node.op_type, shapes,
                         "training mode (training_mode=true with ratio > 0) is not supported: "
                         "GE Workbench runs inference only; export the model in eval mode")


def _dropout(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    ratio = inputs[1] if len(inputs) > 1 else None
    training = inputs[2] if len(inputs) > 2 else None
    if node.opset >= 12 and training is not None:
        ratio_value = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
        shapes: list[object] = [None if a is None else a.shape for a in inputs]
        _check_not_training(node, shapes, bool(np.asarray(training).reshape(-1)[0]), ratio_value)
    return [x.copy(), np.ones(x.shape, dtype=_mask_dtype(node, x.dtype.name))]


def _compare_infer(allowed: frozenset[str]) -> InferFn:
    return broadcast_infer(allowed, out_dtype="bool")


def _float_test_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    """IsNaN/IsInf: a float input, a bool output of its shape."""
    (desc,) = unary_infer(FLOATS)(node, operands)
    return [like(desc, dtype="bool")]


_BOOL_BINARY = broadcast_infer(BOOL)

OPS: list[OpDef] = [
    # a == b with broadcasting
    OpDef("Equal", Category.BROADCAST, _compare_infer(ANY), _compare(np.equal), elementwise_cost(1), commutative=True),
    # a > b with broadcasting
    OpDef("Greater", Category.BROADCAST, _compare_infer(NUMERIC), _compare(np.greater), elementwise_cost(1)),
    # a < b with broadcasting
    OpDef("Less", Category.BROADCAST, _compare_infer(NUMERIC), _compare(np.less), elementwise_cost(1)),
    # a >= b with broadcasting
    OpDef("GreaterOrEqual", Category.BROADCAST, _compare_infer(NUMERIC), _compare(np.greater_equal),
          elementwise_cost(1)),
    # a <= b with broadcasting
    OpDef("LessOrEqual", Category.BROADCAST, _compare_infer(NUMERIC), _compare(np.less_equal),
          elementwise_cost(1)),
    # logical a and b (bool)
    OpDef("And", Category.BROADCAST, _BOOL_BINARY, _bool_kernel(np.logical_and), elementwise_cost(1), commutative=True),
    # logical a or b (bool)
    OpDef("Or", Category.BROADCAST, _BOOL_BINARY, _bool_kernel(np.logical_or), elementwise_cost(1), commutative=True),
    # logical a xor b (bool)
    OpDef("Xor", Category.BROADCAST, _BOOL_BINARY, _bool_kernel(np.logical_xor), elementwise_cost(1), commutative=True),
    # logical not x (bool)
    OpDef("Not", Category.ELEMENTWISE, unary_infer(BOOL), _bool_kernel(np.logical_not), elementwise_cost(1)),
    # True where x is NaN
    OpDef("IsNaN", Category.ELEMENTWISE, _float_test_infer,
          _bool_kernel(lambda x: np.isnan(_as_float(x))), elementwise_cost(1)),
    # True where x is +inf / -inf (detect_positive, detect_negative)
    OpDef("IsInf", Category.ELEMENTWISE, _float_test_infer, _is_inf, elementwise_cost(1)),
    # cond ? x : y, the three inputs broadcast together
    OpDef("Where", Category.BROADCAST, _where_infer, _where, elementwise_cost(1)),
    # a copy of x
    OpDef("Identity", Category.INJECTIVE, unary_infer(EVERY_DTYPE), _identity, zero_flop_cost, view=True,
          npu_layout=NpuLayout.PASS_THROUGH),
    # inference: x unchanged (and an all-True mask); training mode is refused
    OpDef("Dropout", Category.INJECTIVE, _dropout_infer, _dropout, zero_flop_cost,
          training_input=2, unit=Unit.MTE, npu_layout=NpuLayout.PASS_THROUGH),
]
