"""Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

    QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point)
    DequantizeLinear  y = (x - zero_point) * scale

Scale and zero point are per tensor (a scalar), per axis (1-D along `axis`) or blocked (the input's rank,
`axis` divided into blocks of `block_size`). int8/uint8/int16/uint16 are computed here exactly; the
sub-byte and 8-bit float types (int4, uint4, int2, uint2, float8*, float4/float6) go through numpy casts to
their ml_dtypes dtypes, so they work wherever a tensor of that dtype can be held. As onnx.reference does,
float8 zero points are not added (they must be 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes  # also registers the float8/int4 dtype names with numpy
import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    dtype_from_onnx,
    elementwise_cost,
    like,
    make_desc,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    shape_error,
)
from ge_core.ops.math import check_dtype
from ge_core.ops.registry import Category, OpDef, Operand

# Saturation ranges of the integer quantized types.
INT_RANGES: dict[str, tuple[int, int]] = {
    "uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535), "int16": (-32768, 32767),
    "uint4": (0, 15), "int4": (-8, 7), "uint2": (0, 3), "int2": (-2, 1),
}
FLOAT8 = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"})
LOW_BIT_FLOATS = frozenset({"float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"})  # no inf/NaN: casts saturate
QUANTIZED = frozenset(INT_RANGES) | FLOAT8 | LOW_BIT_FLOATS
_NUMPY_INTS = frozenset({"uint8", "int8", "uint16", "int16"})
_SPARE = 1 << 17  # headroom past a type's range for the zero point: more than any 16-bit zero point
SCALE_FLOATS = frozenset({"float32", "float16", "bfloat16"})
QUANTIZE_INPUTS = SCALE_FLOATS | {"int32"}
QUANTIZE_SCALES = SCALE_FLOATS | {"int32", "float8_e8m0fnu"}
DEQUANTIZE_INPUTS = QUANTIZED | {"int32"}
DEQUANTIZE_SCALES = SCALE_FLOATS | {"float8_e8m0fnu"}


# ---- granularity: scalar, per axis, blocked ------------------------------------------------------
def check_granularity(node: Node, operands: Sequence[Operand | None], x: TensorDesc, index: int) -> None:
    """The scale (and zero point) at `index` fit the input: per tensor, per axis or blocked."""
    param = operand(node, operands, index).desc.shape
    zp = optional(operands, index + 1)
    if zp is not None and zp.desc.shape != param and not (_per_tensor(zp.desc.shape) and _per_tensor(param)):
        raise shape_error(node, operands, f"the zero point {list(zp.desc.shape)} must have the scale's shape "
                                          f"{list(param)}")
    block = int(node.attr("block_size", 0))
    if block < 0:
        raise shape_error(node, operands, f"block_size={block} must be >= 0")
    if _per_tensor(param):
        return
    if x.rank == 0:
        raise shape_error(node, operands, f"a scalar input takes a scalar scale, got {list(param)}")
    axis = normalize_axis(node, operands, int(node.attr("axis", 1)), x.rank)
    if block == 0:
        if len(param) != 1:
            raise shape_error(node, operands, f"the scale {list(param)} must be a scalar or 1-D (per axis) "
                                              "when block_size is 0")
        if param[0] >= 0 and x.shape[axis] >= 0 and param[0] != x.shape[axis]:
            raise shape_error(node, operands, f"the per-axis scale has {param[0]} values but axis {axis} of the "
                                              f"input has {x.shape[axis]}")
        return
    _check_blocked(node, operands, x.shape, param, axis, block)


def _check_blocked(node: Node, operands: Sequence[Operand | None], shape: tuple[int, ...],
                   param: tuple[int, ...], axis: int, block: int) -> None:
    if len(param) != len(shape):
        raise shape_error(node, operands, f"a blocked scale must have the input's rank {len(shape)}, "
                                          f"got {list(param)}")
    for i, (p, d) in enumerate(zip(param, shape, strict=True)):
        if i == axis:
            if p >= 0 and d >= 0 and -(-d // block) != p:
                raise shape_error(node, operands, f"block_size={block} splits axis {axis} ({d}) into "
                                                  f"{-(-d // block)} blocks, but the scale has {p}")
        elif p >= 0 and d >= 0 and p != d:
            raise shape_error(node, operands, f"the blocked scale {list(param)} must equal the input shape "
                                              f"{list(shape)} except on axis {axis}")


def _per_tensor(shape: tuple[int, ...]) -> bool:
    """A scalar, or one value in a 1-D tensor (the conformance data write both)."""
    return len(shape) == 0 or shape == (1,)


def expand_param(node: Node, p: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A scale or zero point broadcastable to `shape` (the layout check_granularity accepted)."""
    if p.size == 1:
        return p.reshape(())
    axis = int(node.attr("axis", 1)) % len(shape)
    block = int(node.attr("block_size", 0))
    if not block:
        return p.reshape([p.size if i == axis else 1 for i in range(len(shape))])
    repeated = np.repeat(p, block, axis=axis)  # every scale replicated over its block
    return repeated[(slice(None),) * axis + (slice(0, shape[axis]),)]


def as_number(a: np.ndarray) -> np.ndarray:
    """numpy arithmetic needs a numpy dtype: ml_dtypes arrays (bfloat16, float8, int4, e8m0) widen to float32."""
    return a if a.dtype.kind in "fiub" else a.astype(np.float32)


def saturate(q: np.ndarray, zero_point: np.ndarray | None, target: str, *, clip_float8: bool = True) -> np.ndarray:
    """round_half_even(q) + zero_point, clipped to `target`'s range (integers); float targets are cast,
    float8 clipped to its finite range first unless `clip_float8` is off (then out of range is inf/NaN)."""
    if target in INT_RANGES:
        lo, hi = INT_RANGES[target]
        work = np.float64 if q.dtype == np.float64 else np.float32  # float16 sums of integers are not exact
        r = np.rint(q).astype(work, copy=False)
        if zero_point is not None:
            np.clip(r, lo - _SPARE, hi + _SPARE, out=r)  # |r + zero_point| < 2**24 stays exact in float32
            r += zero_point.astype(work)
        np.clip(r, lo, hi, out=r)
        return r.astype(target) if target in _NUMPY_INTS else r.astype(np.int8).astype(target)  # int4 via int8
    if target in FLOAT8:
        if clip_float8:
            info = ml_dtypes.finfo(np.dtype(target))
            q = np.clip(q, float(info.min), float(info.max))
        return q.astype(target)
    if zero_point is not None:
        q = q + zero_point.astype(q.dtype)
    return q.astype(target)


def _input_and_scale(node: Node, operands: Sequence[Operand | None], inputs: frozenset[str],
                     scales: frozenset[str]) -> TensorDesc:
    """(De)QuantizeLinear's input x (returned) and its scale, each of an allowed dtype; a zero point may follow."""
    require_inputs(node, operands, 2, 3)
    x, scale = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    check_dtype(node, operands, x.dtype, inputs, "the input")
    check_dtype(node, operands, scale.dtype, scales, "the scale")
    return x


# ---- QuantizeLinear -------------------------------------------------------------------------------
def _quantize_target(node: Node, operands: Sequence[Operand | None]) -> str:
    """The output dtype: the zero point's, else output_dtype, else uint8 (and the two must agree)."""
    zp = optional(operands, 2)
    code = int(node.attr("output_dtype", 0))
    wanted = dtype_from_onnx(node, code) if code else None
    if zp is not None and wanted is not None and zp.desc.dtype != wanted:
        raise shape_error(node, operands, f"output_dtype {wanted} differs from the zero point's {zp.desc.dtype}")
    target = zp.desc.dtype if zp is not None else wanted or "uint8"
    check_dtype(node, operands, target, QUANTIZED, "the quantized type")
    return target


def _infer_quantize(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x = _input_and_scale(node, operands, QUANTIZE_INPUTS, QUANTIZE_SCALES)
    target = _quantize_target(node, operands)
    check_granularity(node, operands, x, 1)
    _precision(node, operands)
    return [like(x, dtype=target)]


def _precision(node: Node, operands: Sequence[Operand | None]) -> np.dtype | None:
    """The dtype of the division (opset 23's `precision`), None: numpy's promotion of x and the scale."""
    code = int(node.attr("precision", 0))
    if not code:
        return None
    dtype = dtype_from_onnx(node, code)
    check_dtype(node, operands, dtype, SCALE_FLOATS | {"float64"}, "precision")
    return np.dtype(np.float32 if dtype == "bfloat16" else dtype)


def _quantize(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, scale = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    code = int(node.attr("output_dtype", 0))
    target = zp.dtype.name if zp is not None else dtype_from_onnx(node, code) if code else "uint8"
    s = expand_param(node, as_number(scale), x.shape)
    z = None if zp is None or target in FLOAT8 else expand_param(node, as_number(zp), x.shape)
    precision = _precision(node, [])
    with np.errstate(all="ignore"):
        q = x.astype(precision) / s.astype(precision) if precision is not None else as_number(x) / s
        return [saturate(q, z, target, clip_float8=bool(node.attr("saturate", 1)))]


# ---- DequantizeLinear -----------------------------------------------------------------------------
def _dequantize_dtype(node: Node, operands: Sequence[Operand | None]) -> str:
    """output_dtype (opset 23) or the scale's dtype."""
    code = int(node.attr("output_dtype", 0))
    out = dtype_from_onnx(node, code) if code else operand(node, operands, 1).desc.dtype
    check_dtype(node, operands, out, SCALE_FLOATS, "the output")
    return out


def _infer_dequantize(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x = _input_and_scale(node, operands, DEQUANTIZE_INPUTS, DEQUANTIZE_SCALES)
    zp = optional(operands, 2)
    if zp is not None and zp.desc.dtype != x.dtype:
        raise shape_error(node, operands, f"the zero point ({zp.desc.dtype}) must have the input's dtype "
                                          f"({x.dtype})")
    check_granularity(node, operands, x, 1)
    return [like(x, dtype=_dequantize_dtype(node, operands))]


def _dequantize(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, scale = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    code = int(node.attr("output_dtype", 0))
    out = dtype_from_onnx(node, code) if code else None
    dx = x.astype(np.float32)
    if zp is not None and x.dtype.name not in FLOAT8 | LOW_BIT_FLOATS:  # float zero points are 0
        dx -= expand_param(node, zp.astype(np.float32), x.shape)
    y = dx * expand_param(node, as_number(scale), x.shape)
    return [y.astype(out or scale.dtype, copy=False)]  # bfloat16 rounds to nearest even


# ---- DynamicQuantizeLinear ------------------------------------------------------------------------
def _infer_dynamic(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, frozenset({"float32"}), "the input")
    return [like(x, dtype="uint8"), make_desc((), "float32"), make_desc((), "uint8")]


def _dynamic(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """uint8 with the range [min(x, 0), max(x, 0)] mapped onto [0, 255], in float32. An all-zero input gets
    the scale 1/255 as onnx.reference computes it (ORT gives 1.0; both quantize it to the zero point 0)."""
    x = inputs[0]
    assert x is not None
    hi = np.float32(max(0.0, float(x.max()))) if x.size else np.float32(0)
    lo = np.float32(min(0.0, float(x.min()))) if x.size else np.float32(0)
    scale = np.float32(1.0 if hi == lo else hi - lo) / np.float32(255)
    zp = np.rint(np.clip(np.float32(0) - lo / scale, 0, 255))
    with np.errstate(all="ignore"):
        y = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return [y, np.array(scale, dtype=np.float32), np.array(zp, dtype=np.uint8)]


OPS: list[OpDef] = [
    # y = saturate(round_half_even(x / scale) + zero_point): per tensor, per axis or blocked
    OpDef("QuantizeLinear", Category.BROADCAST, _infer_quantize, _quantize, elementwise_cost(3)),
    # y = (x - zero_point) * scale: per tensor, per axis or blocked
    OpDef("DequantizeLinear", Category.BROADCAST, _infer_dequantize, _dequantize, elementwise_cost(2)),
    # uint8 quantization with the scale and zero point computed from the input's range
    OpDef("DynamicQuantizeLinear", Category.OPAQUE, _infer_dynamic, _dynamic, elementwise_cost(5)),
]
