"""Unary float functions: the inverse trigonometric and hyperbolic family (Sin and Cos live in math.py),
plus the pointwise activations Shrink and Swish.

All are elementwise; float16/bfloat16 are computed in float32 (`math.float_kernel`), as ONNX Runtime does.
Out-of-domain inputs (acos(2), atanh(1)) give NaN or inf, as IEEE and numpy do: never an error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ge_core.ir.node import Node
from ge_core.ops.common import elementwise_cost
from ge_core.ops.math import FLOATS, NUMERIC, float_kernel, unary_infer
from ge_core.ops.registry import Category, KernelFn, OpDef, VectorClass

_FLOAT = unary_infer(FLOATS)


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> KernelFn:
    return float_kernel(lambda node, x: fn(x))


def _trig(op_type: str, fn: Callable[[np.ndarray], np.ndarray]) -> OpDef:
    """One transcendental per element on the vector unit."""
    return OpDef(op_type, Category.ELEMENTWISE, _FLOAT, _unary(fn), elementwise_cost(1),
                 vector_class=VectorClass.TRANSCENDENTAL)


def _float_attr(node: Node, name: str, default: float) -> float:
    """ONNX stores float attributes as float32: defaults are rounded the same way (as ORT)."""
    return float(np.float32(node.attr(name, default)))


def _shrink(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """x + bias below -lambd, x - bias above lambd, 0 between; integers are computed in float64 and cast
    back (ONNX allows every numeric type)."""
    x = inputs[0]
    assert x is not None
    lambd, bias = _float_attr(node, "lambd", 0.5), _float_attr(node, "bias", 0.0)
    work = x.astype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x
    if x.dtype.kind in "iub":
        work = x.astype(np.float64)
    out = np.where(work < -lambd, work + bias, np.where(work > lambd, work - bias, 0))
    return [out.astype(x.dtype)]


def _swish(node: Node, x: np.ndarray) -> np.ndarray:
    """x * sigmoid(alpha * x); the sigmoid without overflow (exp only sees -|z|)."""
    z = _float_attr(node, "alpha", 1.0) * x
    e = np.exp(-np.abs(z))
    sig = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return x * sig


OPS: list[OpDef] = [
    _trig("Tan", np.tan),  # tangent (radians)
    _trig("Asin", np.arcsin),  # inverse sine, NaN outside [-1, 1]
    _trig("Acos", np.arccos),  # inverse cosine, NaN outside [-1, 1]
    _trig("Atan", np.arctan),  # inverse tangent
    _trig("Sinh", np.sinh),  # hyperbolic sine
    _trig("Cosh", np.cosh),  # hyperbolic cosine
    _trig("Asinh", np.arcsinh),  # inverse hyperbolic sine
    _trig("Acosh", np.arccosh),  # inverse hyperbolic cosine, NaN below 1
    _trig("Atanh", np.arctanh),  # inverse hyperbolic tangent, +-inf at +-1
    # x + bias if x < -lambd, x - bias if x > lambd, else 0 (any numeric type)
    OpDef("Shrink", Category.ELEMENTWISE, unary_infer(NUMERIC), _shrink, elementwise_cost(3), activation=True),
    # x * sigmoid(alpha * x) (opset 24; not flagged `activation`: exporters write SiLU as Sigmoid + Mul,
    # and the epilogue fusions key on the ops of opset <= 21)
    OpDef("Swish", Category.ELEMENTWISE, _FLOAT, float_kernel(_swish), elementwise_cost(5),
          vector_class=VectorClass.TRANSCENDENTAL),
]
