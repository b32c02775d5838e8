"""Tensor makers: Constant, ConstantOfShape, Range, EyeLike, and NonZero (its output size depends on data).

These build tensors from attributes or small shape inputs rather than moving input elements, so they
are OPAQUE for fusion. Kernels check the tensor budget before allocating a data-sized output.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.limits import check_tensor_size
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    dtype_from_onnx,
    known_ints,
    like,
    make_desc,
    np_dtype,
    operand,
    require_inputs,
    shape_error,
    zero_flop_cost,
)
from ge_core.ops.registry import Category, OpDef, Operand, Unit


def _dtype_name(a: np.ndarray) -> str:
    return "str" if a.dtype.kind in "OUS" else a.dtype.name


# ---- Constant ------------------------------------------------------------------------------------
_CONSTANT_ATTRS = ("value", "value_float", "value_floats", "value_int", "value_ints",
                   "value_string", "value_strings", "sparse_value")


def _constant_value(node: Node) -> np.ndarray:
    """The one value attribute of a Constant node, as an array (strings as object arrays)."""
    given = [k for k in _CONSTANT_ATTRS if node.attr(k) is not None]
    if len(given) != 1:
        raise shape_error(node, [], f"needs exactly one of {list(_CONSTANT_ATTRS)}, got {given or 'none'}")
    key, value = given[0], node.attr(given[0])
    if key == "sparse_value":
        raise shape_error(node, [], "sparse_value constants are not supported; store the tensor densely")
    if key == "value":
        return np.asarray(value)
    if key in ("value_float", "value_floats"):
        return np.asarray(value, dtype=np.float32)
    if key in ("value_int", "value_ints"):
        return np.asarray(value, dtype=np.int64)
    text = value if key == "value_string" else list(value)
    return np.asarray(text, dtype=object)


def _infer_constant(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 0, 0)
    value = _constant_value(node)
    return [make_desc(value.shape, _dtype_name(value))]


def _constant(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    return [_constant_value(node)]


# ---- ConstantOfShape -----------------------------------------------------------------------------
def _fill_value(node: Node) -> np.ndarray:
    """The 1-element `value` attribute (float32 0 by default)."""
    value = node.attr("value")
    if value is None:
        return np.zeros((), dtype=np.float32)
    arr = np.asarray(value)
    if arr.size != 1:
        raise shape_error(node, [], f"value must hold one element, got shape {list(arr.shape)}")
    return arr.reshape(())


def _checked_dims(node: Node, operands: list[Operand | None], dims: list[int]) -> list[int]:
    if any(d < 0 for d in dims):
        raise shape_error(node, operands, f"shape {dims} has a negative dim")
    return dims


def _infer_constant_of_shape(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    shape = operand(node, operands, 0)
    dtype = _dtype_name(_fill_value(node))
    if shape.desc.rank != 1:
        raise shape_error(node, operands, "the shape input must be 1-D")
    dims = known_ints(shape)
    if dims is not None:
        return [make_desc(_checked_dims(node, operands, dims), dtype)]
    if shape.desc.shape[0] < 0:
        raise shape_error(node, operands, "cannot infer the output rank: the shape input is unknown "
                                          "and its length is not static")
    return [make_desc([UNK] * shape.desc.shape[0], dtype)]


def _constant_of_shape(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    shape = inputs[0]
    assert shape is not None
    value = _fill_value(node)
    dims = _checked_dims(node, [], [int(d) for d in shape.reshape(-1)])
    check_tensor_size(f"node '{node.name}' ({node.op_type})", dims, _dtype_name(value))
    return [np.full(dims, value, dtype=value.dtype)]


# ---- Range ---------------------------------------------------------------------------------------
def _scalar(op: Operand | None) -> float | int | None:
    if op is None or op.value is None:
        return None
    v = np.asarray(op.value).reshape(-1)
    return v[0].item() if v.size == 1 else None


def _range_length(node: Node, operands: list[Operand | None], start: float, limit: float,
                  delta: float) -> int:
    if delta == 0:
        raise shape_error(node, operands, "delta must not be 0")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        n = -((start - limit) // delta)  # exact integer ceil((limit - start) / delta)
    else:
        n = math.ceil((float(limit) - float(start)) / float(delta))
    return max(int(n), 0)


def _infer_range(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    descs = [operand(node, operands, i).desc for i in range(3)]
    if len({d.dtype for d in descs}) != 1:
        raise shape_error(node, operands, f"start, limit and delta must share a dtype, got "
                                          f"{[d.dtype for d in descs]}")
    if any(d.numel not in (1, None) for d in descs):
        raise shape_error(node, operands, "start, limit and delta must be scalars")
    values = [_scalar(operands[i]) for i in range(3)]
    if any(v is None for v in values):
        return [like(descs[0], [UNK])]
    start, limit, delta = values
    assert start is not None and limit is not None and delta is not None
    return [like(descs[0], [_range_length(node, operands, start, limit, delta)])]


def _range(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    start, limit, delta = (np.asarray(a).reshape(-1)[0] for a in inputs if a is not None)
    n = _range_length(node, [], start.item(), limit.item(), delta.item())
    dtype = np.asarray(inputs[0]).dtype
    check_tensor_size(f"node '{node.name}' ({node.op_type})", [n], dtype.name)
    if dtype.kind in "iu":
        return [(start + np.arange(n, dtype=dtype) * delta).astype(dtype)]
    # start + i * delta in double, as the spec defines each element, then rounded once
    return [(float(start) + np.arange(n, dtype=np.float64) * float(delta)).astype(dtype)]


# ---- EyeLike -------------------------------------------------------------------------------------
def _infer_eye_like(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    if x.rank != 2:
        raise shape_error(node, operands, f"input must be 2-D, got rank {x.rank}")
    code = node.attr("dtype")
    return [like(x, dtype=x.dtype if code is None else dtype_from_onnx(node, int(code)))]


def _eye_like(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    code = node.attr("dtype")
    dtype = x.dtype if code is None else np_dtype(dtype_from_onnx(node, int(code)))
    return [np.eye(x.shape[0], x.shape[1], k=int(node.attr("k", 0)), dtype=dtype)]


# ---- NonZero -------------------------------------------------------------------------------------
def _infer_nonzero(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    return [make_desc([x.rank, UNK], "int64")]  # how many are non-zero is known only at run time


def _nonzero(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    if x.ndim == 0:  # numpy refuses nonzero() on 0-d arrays: a scalar has no coordinates
        return [np.zeros((0, int(bool(x))), dtype=np.int64)]
    return [np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)]


OPS: list[OpDef] = [
    # a tensor stored in an attribute (value, value_float(s), value_int(s), value_string(s))
    OpDef("Constant", Category.OPAQUE, _infer_constant, _constant, zero_flop_cost, doc="attribute tensor",
          unit=Unit.SCALAR),
    # a tensor of the given shape filled with one value
    OpDef("ConstantOfShape", Category.OPAQUE, _infer_constant_of_shape, _constant_of_shape,
          zero_flop_cost, doc="filled tensor of a shape"),
    # start, start + delta, ... up to (excluding) limit
    OpDef("Range", Category.OPAQUE, _infer_range, _range, zero_flop_cost, doc="arithmetic sequence"),
    # identity-like matrix (ones on diagonal k) of the input's shape
    OpDef("EyeLike", Category.OPAQUE, _infer_eye_like, _eye_like, zero_flop_cost, doc="2-D identity"),
    # coordinates of the non-zero elements, [rank, count] int64; count depends on the data
    OpDef("NonZero", Category.OPAQUE, _infer_nonzero, _nonzero, zero_flop_cost, doc="indices of non-zeros"),
]
