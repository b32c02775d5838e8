"""Arithmetic: binary ops with numpy broadcasting, variadic Max/Min/Mean/Sum, unary math.

Also the dtype sets and inference factories the other elementwise families (activation, logic) share.
ONNX never promotes implicitly, so binary inputs must share one dtype (Pow's exponent is the exception).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    broadcast,
    elementwise_cost,
    like,
    make_desc,
    narrowed,
    operand,
    require_inputs,
    same_dtype,
    shape_error,
    widened,
)
from ge_core.ops.epilogue import ADDS
from ge_core.ops.registry import Category, Cost, InferFn, KernelFn, OpDef, Operand, VectorClass

FLOATS = frozenset({"float16", "float32", "float64", "bfloat16"})
SIGNED_INTS = frozenset({"int8", "int16", "int32", "int64"})
UNSIGNED_INTS = frozenset({"uint8", "uint16", "uint32", "uint64"})
INTS = SIGNED_INTS | UNSIGNED_INTS
NUMERIC = FLOATS | INTS
SIGNED_NUMERIC = FLOATS | SIGNED_INTS
# Variadic ops take any number of inputs; this only bounds require_inputs.
MANY = 1 << 16


# ---- inference helpers shared by the elementwise families -----------------------------------------
def check_dtype(node: Node, operands: Sequence[Operand | None], dtype: str, allowed: frozenset[str],
                what: str = "inputs") -> None:
    """A ShapeError when `dtype` is not one the operator accepts (ONNX type constraints)."""
    if dtype not in allowed:
        raise shape_error(node, operands, f"{what} must be one of {sorted(allowed)}, got {dtype}")


def unary_infer(allowed: frozenset[str]) -> InferFn:
    """Inference for one input of an allowed dtype -> the same desc."""

    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        require_inputs(node, operands, 1, 1)
        desc = operand(node, operands, 0).desc
        check_dtype(node, operands, desc.dtype, allowed)
        return [like(desc)]

    return infer


def broadcast_infer(allowed: frozenset[str], *, out_dtype: str | None = None, minimum: int = 2,
                    maximum: int = 2) -> InferFn:
    """Inference for inputs of one shared dtype, numpy-broadcast together; `out_dtype` for comparisons."""

    def infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
        require_inputs(node, operands, minimum, maximum)
        if any(o is None for o in operands):
            raise shape_error(node, operands, "every input is required (none may be omitted)")
        dtype = same_dtype(node, operands, range(len(operands)))
        check_dtype(node, operands, dtype, allowed)
        shape = broadcast(node, operands, [o.desc.shape for o in operands if o is not None])
        return [make_desc(shape, out_dtype or dtype)]

    return infer


def float_kernel(fn: Callable[[Node, np.ndarray], np.ndarray]) -> KernelFn:
    """A kernel for float ops: float16/bfloat16 are computed in float32 (as ORT does), the result cast
    back to the input dtype. Overflow to inf and NaN are IEEE results here, so their warnings are muted."""

    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        x = inputs[0]
        assert x is not None
        with np.errstate(all="ignore"):
            return [narrowed(fn(node, widened(x)), x.dtype)]  # float16 overflow on the way back is inf too

    return kernel


def numpy_kernel(fn: Callable[..., np.ndarray]) -> KernelFn:
    """A kernel applying a numpy function to all inputs; the result keeps the first input's dtype."""

    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        arrays = [x for x in inputs if x is not None]
        with np.errstate(all="ignore"):
            out = fn(*arrays)
        return [np.asarray(out, dtype=arrays[0].dtype)]

    return kernel


# ---- binary arithmetic ----------------------------------------------------------------------------
def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX integer Div truncates toward zero (C semantics); numpy's // floors, so correct it."""
    if a.dtype.kind not in "iu":
        return np.true_divide(a, b)
    q = np.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    rem = a - q * b
    return q + ((rem != 0) & ((a < 0) != (b < 0)))


def _mod(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """fmod=1: sign of the dividend (C fmod); fmod=0: sign of the divisor (Python %)."""
    a, b = inputs
    assert a is not None and b is not None
    fn = np.fmod if node.attr("fmod", 0) else np.mod
    with np.errstate(all="ignore"):
        out = fn(a, b)
    return [np.asarray(out, dtype=a.dtype)]


def _pow_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    base, exponent = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    if node.opset < 12:  # mixed base/exponent dtypes arrived in opset 12
        same_dtype(node, operands, [0, 1])
    check_dtype(node, operands, base.dtype, NUMERIC, "the base")
    check_dtype(node, operands, exponent.dtype, NUMERIC, "the exponent")
    return [make_desc(broadcast(node, operands, [base.shape, exponent.shape]), base.dtype)]


def _pow(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """The output has the base's dtype whatever the exponent's (float exponents of int bases truncate)."""
    a, b = inputs
    assert a is not None and b is not None
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            out = _int_pow(a, b)
        elif a.dtype.kind in "iu":
            out = np.power(a.astype(np.float64), b)
        else:
            out = np.power(a, b)
        return [np.asarray(out).astype(a.dtype)]


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer power in 64 bits (wraps like C); numpy refuses negative exponents, which give
    1/a^|b|: 0 unless |a| == 1."""
    wide = np.uint64 if a.dtype.kind == "u" else np.int64
    b64 = b.astype(np.int64)
    negative = b64 < 0
    out = np.power(a.astype(wide), np.where(negative, 0, b64).astype(wide))
    if not negative.any():
        return out
    if a.dtype.kind == "u":
        at_negative = (a == 1).astype(wide)
    else:
        at_negative = np.where(a == 1, 1, np.where(a == -1, np.where(b64 % 2 == 1, -1, 1), 0))
    return np.where(negative, at_negative, out)


# ---- variadic -------------------------------------------------------------------------------------
def _variadic(fn: np.ufunc) -> KernelFn:
    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        arrays = [x for x in inputs if x is not None]
        if len(arrays) == 1:
            return [np.array(arrays[0])]  # a copy: never alias an input
        out = np.asarray(fn(arrays[0], arrays[1]))  # a new array: the later inputs are folded into it in place
        for x in arrays[2:]:
            out = fn(out, x, out=out) if np.broadcast_shapes(out.shape, x.shape) == out.shape else fn(out, x)
        return [out.astype(arrays[0].dtype, copy=False)]

    return kernel


def _mean(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (total,) = _variadic(np.add)(node, inputs)
    return [np.asarray(total / len(inputs), dtype=total.dtype)]


def _variadic_cost(extra: int) -> Callable[[Node, list[TensorDesc | None], list[TensorDesc]], Cost]:
    """(n - 1 + extra) FLOPs per output element for an n-input reduction such as Sum."""

    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        n = len([d for d in inputs if d is not None])
        return elementwise_cost(max(n - 1 + extra, 1))(node, inputs, outputs)

    return cost


# ---- unary ----------------------------------------------------------------------------------------
def _abs(x: np.ndarray) -> np.ndarray:
    return x.copy() if x.dtype.kind == "u" else np.abs(x)


def _float_unary(fn: Callable[[np.ndarray], np.ndarray]) -> KernelFn:
    return float_kernel(lambda node, x: fn(x))


_ARITH = broadcast_infer(NUMERIC)
_VARIADIC = broadcast_infer(NUMERIC, minimum=1, maximum=MANY)

OPS: list[OpDef] = [
    # a + b with broadcasting (integers wrap)
    OpDef("Add", Category.BROADCAST, _ARITH, numpy_kernel(np.add), elementwise_cost(1), commutative=True,
          epilogue=lambda node, values: ADDS),
    # a - b with broadcasting
    OpDef("Sub", Category.BROADCAST, _ARITH, numpy_kernel(np.subtract), elementwise_cost(1)),
    # a * b with broadcasting
    OpDef("Mul", Category.BROADCAST, _ARITH, numpy_kernel(np.multiply), elementwise_cost(1), commutative=True),
    # a / b; integer division truncates toward zero
    OpDef("Div", Category.BROADCAST, _ARITH, numpy_kernel(_div), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
    # a ** b, output in the base's dtype
    OpDef("Pow", Category.BROADCAST, _pow_infer, _pow, elementwise_cost(2), vector_class=VectorClass.TRANSCENDENTAL),
    # remainder: sign of the divisor, or of the dividend with fmod=1
    OpDef("Mod", Category.BROADCAST, _ARITH, _mod, elementwise_cost(2), vector_class=VectorClass.TRANSCENDENTAL),
    # elementwise maximum over 1..n broadcast inputs (NaN propagates)
    OpDef("Max", Category.BROADCAST, _VARIADIC, _variadic(np.maximum), _variadic_cost(0)),
    # elementwise minimum over 1..n broadcast inputs (NaN propagates)
    OpDef("Min", Category.BROADCAST, _VARIADIC, _variadic(np.minimum), _variadic_cost(0)),
    # (x1 + ... + xn) / n over broadcast inputs
    OpDef("Mean", Category.BROADCAST, broadcast_infer(FLOATS, minimum=1, maximum=MANY), _mean,
          _variadic_cost(1)),
    # x1 + ... + xn over broadcast inputs
    OpDef("Sum", Category.BROADCAST, _VARIADIC, _variadic(np.add), _variadic_cost(0),
          epilogue=lambda node, values: ADDS if len(node.inputs) == 2 else None),
    # square root (NaN below 0)
    OpDef("Sqrt", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.sqrt), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
    # e ** x
    OpDef("Exp", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.exp), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
    # natural logarithm
    OpDef("Log", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.log), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
    # -x (integers wrap)
    OpDef("Neg", Category.ELEMENTWISE, unary_infer(SIGNED_NUMERIC), numpy_kernel(np.negative),
          elementwise_cost(1)),
    # |x|
    OpDef("Abs", Category.ELEMENTWISE, unary_infer(NUMERIC), numpy_kernel(_abs), elementwise_cost(1)),
    # 1 / x
    OpDef("Reciprocal", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.reciprocal),
          elementwise_cost(1), vector_class=VectorClass.TRANSCENDENTAL),
    # largest integer <= x
    OpDef("Floor", Category.ELEMENTWISE, unary_infer(FLOATS), numpy_kernel(np.floor), elementwise_cost(1)),
    # smallest integer >= x
    OpDef("Ceil", Category.ELEMENTWISE, unary_infer(FLOATS), numpy_kernel(np.ceil), elementwise_cost(1)),
    # nearest integer, halves to even
    OpDef("Round", Category.ELEMENTWISE, unary_infer(FLOATS), numpy_kernel(np.round), elementwise_cost(1)),
    # -1, 0 or 1 by the sign of x (NaN stays NaN)
    OpDef("Sign", Category.ELEMENTWISE, unary_infer(NUMERIC), numpy_kernel(np.sign), elementwise_cost(1)),
    # sine (radians)
    OpDef("Sin", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.sin), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
    # cosine (radians)
    OpDef("Cos", Category.ELEMENTWISE, unary_infer(FLOATS), _float_unary(np.cos), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
]
