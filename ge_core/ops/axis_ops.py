"""Ops along axes that keep their input's shape: CumProd, Hardmax, LpNormalization and
MeanVarianceNormalization.

Hardmax, LpNormalization and MVN read whole rows (one axis, or MVN's axes) for every output element:
REDUCE with a `reduce_span`, as Softmax is. CumProd is a scan, OPAQUE like CumSum.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import check_axis_input, like, normalize_axis, operand, require_inputs, shape_error
from ge_core.ops.math import FLOATS, NUMERIC, check_dtype
from ge_core.ops.reduce import softmax_span
from ge_core.ops.registry import Category, Cost, CostFn, OpDef, Operand

# MVN's default axes: per channel over batch and space (NCHW), as instance-free BatchNorm statistics.
MVN_AXES = (0, 2, 3)
MVN_EPSILON = 1e-9  # the constant in ONNX's function body: (X - mean) / (sqrt(var) + 1e-9)


def _row_cost(flops_per_input: int) -> CostFn:
    """Every input element read once and touched `flops_per_input` times; the output written once."""

    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        x = inputs[0]
        n = (x.numel or 0) if x is not None else 0
        return Cost(flops_per_input * n, (x.nbytes or 0) if x is not None else 0, sum(d.nbytes or 0 for d in outputs))

    return cost


def _work(x: np.ndarray) -> np.ndarray:
    """Half-precision floats computed in float32, as ORT does."""
    return x.astype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x


# ---- CumProd ----------------------------------------------------------------------------------------
def _infer_cumprod(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, NUMERIC, "x")
    axis_dtype = operand(node, operands, 1).desc.dtype
    if axis_dtype not in ("int32", "int64"):
        raise shape_error(node, operands, f"axis must be int32 or int64, got {axis_dtype}")
    check_axis_input(node, operands, 1, x.rank)
    return [like(x)]


def _cumprod(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Running product along axis; exclusive shifts it by one (the first element is 1)."""
    x, axis_t = inputs[0], inputs[1]
    assert x is not None and axis_t is not None
    axis = int(axis_t.reshape(-1)[0]) % max(x.ndim, 1)
    reverse = bool(node.attr("reverse", 0))
    data = np.flip(x, axis=axis) if reverse else x
    out = np.cumprod(_work(data), axis=axis)
    if node.attr("exclusive", 0):
        ones = np.ones_like(np.take(out, [0], axis=axis))
        out = np.concatenate([ones, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        out = np.flip(out, axis=axis)
    return [np.ascontiguousarray(out).astype(x.dtype, copy=False)]


# ---- Hardmax / LpNormalization: one axis --------------------------------------------------------------
def _hardmax_axis(node: Node) -> int:
    """As Softmax: before opset 13 the input is coerced to 2-D at axis (default 1); since, one axis (-1)."""
    return int(node.attr("axis", 1 if node.opset < 13 else -1))


def _infer_hardmax(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "input")
    normalize_axis(node, operands, _hardmax_axis(node), max(x.rank, 1))
    return [like(x)]


def _hardmax(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """1 at the first maximum along the axis, 0 elsewhere."""
    x = inputs[0]
    assert x is not None
    axis = _hardmax_axis(node) % max(x.ndim, 1)
    data = x.reshape(math.prod(x.shape[:axis]), -1) if node.opset < 13 else x
    axis = 1 if node.opset < 13 else axis
    out = np.zeros(data.shape, dtype=x.dtype)
    if data.size:
        np.put_along_axis(out, np.expand_dims(np.argmax(data, axis=axis), axis), 1, axis=axis)
    return [out.reshape(x.shape)]


def _infer_lp_norm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "input")
    normalize_axis(node, operands, int(node.attr("axis", -1)), max(x.rank, 1))
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise shape_error(node, operands, f"p={p} must be 1 or 2")
    return [like(x)]


def _lp_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """x / ||x||_p along the axis; a zero norm gives 0 (not NaN), as ONNX's reference does."""
    x = inputs[0]
    assert x is not None
    xw = _work(x)
    axis = int(node.attr("axis", -1))
    p = int(node.attr("p", 2))
    norm = np.sum(np.abs(xw), axis=axis, keepdims=True) if p == 1 else \
        np.sqrt(np.sum(xw * xw, axis=axis, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(norm == 0, 0, xw / norm)
    return [out.astype(x.dtype, copy=False)]


def _lp_span(node: Node, shape: tuple[int, ...]) -> int:
    return shape[int(node.attr("axis", -1)) % len(shape)]


# ---- MeanVarianceNormalization ----------------------------------------------------------------------
def _mvn_axes(node: Node, rank: int) -> tuple[int, ...]:
    return tuple(sorted({int(a) % rank for a in node.attr("axes", MVN_AXES)}))


def _infer_mvn(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    for a in node.attr("axes", MVN_AXES):
        normalize_axis(node, operands, int(a), x.rank, name="axes")
    return [like(x)]


def _mvn(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over the axes, as ONNX's function body computes it."""
    x = inputs[0]
    assert x is not None
    xw = _work(x)
    axes = _mvn_axes(node, x.ndim)
    mean = np.mean(xw, axis=axes, keepdims=True)
    var = np.mean(xw * xw, axis=axes, keepdims=True) - mean * mean
    out = (xw - mean) / (np.sqrt(np.maximum(var, 0)) + MVN_EPSILON)
    return [out.astype(x.dtype, copy=False)]


def _mvn_span(node: Node, shape: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in _mvn_axes(node, len(shape)))


OPS: list[OpDef] = [
    # running product along axis (exclusive/reverse); a scan keeps the shape: OPAQUE, like CumSum
    OpDef("CumProd", Category.OPAQUE, _infer_cumprod, _cumprod, _row_cost(1), doc="cumulative product"),
    # one-hot of the (first) maximum along axis (2-D coerced before opset 13)
    OpDef("Hardmax", Category.REDUCE, _infer_hardmax, _hardmax, _row_cost(2), doc="1 at the argmax along axis",
          reduce_span=softmax_span),
    # x / ||x||_p (p = 1 or 2) along axis
    OpDef("LpNormalization", Category.REDUCE, _infer_lp_norm, _lp_norm, _row_cost(3), doc="x / ||x||_p along axis",
          reduce_span=_lp_span),
    # (x - mean) / (std + 1e-9) over axes (default N, H, W)
    OpDef("MeanVarianceNormalization", Category.REDUCE, _infer_mvn, _mvn, _row_cost(6),
          doc="zero mean, unit variance over axes", reduce_span=_mvn_span),
]
