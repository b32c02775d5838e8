"""Integer matrix products and convolutions: MatMulInteger, ConvInteger (int32 out), QLinearMatMul and
QLinearConv (requantized out).

Zero points are subtracted and the products accumulated in float64: every int8/uint8 product and sum a real
model makes is an integer well below 2**53, so the float64 BLAS result is exact (and far faster than numpy's
integer matmul), then wraps to int32 as the spec allows. The QLinear ops requantize as onnx.reference does:
round_half_even(acc * (scale_a * scale_b / scale_y) + zero_point_y), saturated to the output type.
Per-row (A) and per-column (B) parameters follow numpy.matmul's layout; QLinearConv's weight parameters may
be per output channel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    broadcast,
    io_bytes,
    make_desc,
    operand,
    optional,
    require_inputs,
    shape_error,
)
from ge_core.ops.conv import conv_forward
from ge_core.ops.math import check_dtype
from ge_core.ops.matrix_view import conv_view, matmul_view
from ge_core.ops.quant import FLOAT8, as_number, saturate
from ge_core.ops.registry import Category, Cost, CostFn, OpDef, Operand
from ge_core.ops.spatial import Window, int_list, operands_of, sliding_window, spatial_numel

INT8S = frozenset({"int8", "uint8"})
QLINEAR_MATMUL_TYPES = INT8S | FLOAT8  # opset 21 adds the float8 types (generic casts)
SCALES = frozenset({"float32", "float16", "bfloat16"})


# ---- matmul geometry and parameters --------------------------------------------------------------
def _matmul_shape(node: Node, operands: Sequence[Operand | None], ia: int, ib: int) -> tuple[int, ...]:
    """numpy.matmul's output shape for inputs `ia` @ `ib` (1-D operands promoted, then dropped)."""
    a, b = operand(node, operands, ia).desc.shape, operand(node, operands, ib).desc.shape
    if not a or not b:
        raise shape_error(node, operands, "the matrix inputs must have rank >= 1")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] >= 0 and b2[-2] >= 0 and a2[-1] != b2[-2]:
        raise shape_error(node, operands, f"inner dimensions differ: {list(a)} @ {list(b)}")
    out = [*broadcast(node, operands, [a2[:-2], b2[:-2]]), a2[-2], b2[-1]]
    if len(b) == 1:
        out.pop(-1)
    if len(a) == 1:
        out.pop(-2 if len(b) > 1 else -1)
    return tuple(out)


def _check_param(node: Node, operands: Sequence[Operand | None], index: int, matrix: int, row: bool) -> None:
    """A scale/zero point of the matrix at `matrix`: per tensor, per row of A (`row`) or per column of B."""
    param = optional(operands, index)
    if param is None:
        return
    p, m = param.desc.shape, operand(node, operands, matrix).desc.shape
    if len(p) == 0 or p == (1,):
        return
    if len(m) < 2:
        raise shape_error(node, operands, f"input {index} {list(p)} must be a scalar for a 1-D matrix")
    want = m[-2] if row else m[-1]
    if len(p) == 1:
        ok = p[0] < 0 or want < 0 or p[0] == want
    else:
        tail = (want, 1) if row else (1, want)
        ok = len(p) == len(m) and all(d < 0 or t < 0 or d == t for d, t in zip(p[-2:], tail, strict=True))
    if not ok:
        side = "per row of A ([..., M, 1] or [M])" if row else "per column of B ([..., 1, N] or [N])"
        raise shape_error(node, operands, f"input {index} {list(p)} must be a scalar or {side} for "
                                          f"{list(m)}")


def _row_param(p: np.ndarray) -> np.ndarray:
    """A per-row parameter given as an M-vector applies along A's rows, not its last axis."""
    return p.reshape(-1, 1) if p.ndim == 1 and p.size > 1 else p


def _centered(x: np.ndarray, zp: np.ndarray | None) -> np.ndarray:
    """x - zero_point in float64 (exact for 8- and 16-bit integers); float8 zero points are 0."""
    out = as_number(x).astype(np.float64)
    if zp is not None and x.dtype.name not in FLOAT8:
        out -= zp.astype(np.float64)
    return out


def _to_int32(acc: np.ndarray) -> np.ndarray:
    """The exact float64 accumulation as int32, wrapping as 32-bit accumulation would."""
    return acc.astype(np.int64).astype(np.int32)


def _requantize(acc: np.ndarray, multiplier: np.ndarray, y_zp: np.ndarray) -> np.ndarray:
    """round_half_even(acc * multiplier + y_zp), saturated to y_zp's type (onnx.reference's order)."""
    z = as_number(y_zp).astype(np.float64)
    return saturate(acc * multiplier.astype(np.float64) + z, None, y_zp.dtype.name)


# ---- MatMulInteger / QLinearMatMul -----------------------------------------------------------------
def _check_integer_inputs(node: Node, operands: list[Operand | None]) -> None:
    """MatMulInteger's and ConvInteger's inputs: A, B and their optional zero points, each 8-bit, each zero
    point of its data input's dtype."""
    require_inputs(node, operands, 2, 4)
    for i, data in ((0, 0), (1, 1), (2, 0), (3, 1)):
        o = optional(operands, i)
        if o is not None:
            check_dtype(node, operands, o.desc.dtype, INT8S, f"input {i}")
            if o.desc.dtype != operand(node, operands, data).desc.dtype:
                raise shape_error(node, operands, f"zero point {i} must have input {data}'s dtype")


def _infer_matmul_integer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    _check_integer_inputs(node, operands)
    _check_param(node, operands, 2, 0, True)
    _check_param(node, operands, 3, 1, False)
    return [make_desc(_matmul_shape(node, operands, 0, 1), "int32")]


def _matmul_integer(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    assert a is not None and b is not None
    a_zp, b_zp = (inputs[i] if len(inputs) > i else None for i in (2, 3))
    acc = np.matmul(_centered(a, None if a_zp is None else _row_param(a_zp)), _centered(b, b_zp))
    return [_to_int32(np.asarray(acc))]


def _infer_qlinear_matmul(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 8, 8)
    for data, scale in ((0, 1), (3, 4), (7, 6)):
        check_dtype(node, operands, operand(node, operands, data).desc.dtype, QLINEAR_MATMUL_TYPES,
                    f"input {data}")
        check_dtype(node, operands, operand(node, operands, scale).desc.dtype, SCALES, f"scale {scale}")
    for zp, data in ((2, 0), (5, 3)):
        if operand(node, operands, zp).desc.dtype != operand(node, operands, data).desc.dtype:
            raise shape_error(node, operands, f"zero point {zp} must have input {data}'s dtype")
    for index, matrix, row in ((1, 0, True), (2, 0, True), (4, 3, False), (5, 3, False)):
        _check_param(node, operands, index, matrix, row)
    shape = _matmul_shape(node, operands, 0, 3)
    for i in (6, 7):  # the output's scale and zero point broadcast over it
        broadcast(node, operands, [shape, operand(node, operands, i).desc.shape])
    return [make_desc(shape, operand(node, operands, 7).desc.dtype)]


def _qlinear_matmul(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = inputs
    assert a is not None and b is not None and a_s is not None and b_s is not None
    assert y_s is not None and y_zp is not None
    acc = np.asarray(np.matmul(_centered(a, None if a_zp is None else _row_param(a_zp)), _centered(b, b_zp)))
    multiplier = _row_param(a_s) * b_s / y_s  # in the scales' own precision, as onnx.reference
    return [_requantize(acc, multiplier, y_zp)]


def _matmul_cost(a: int, b: int, per_output: int) -> CostFn:
    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        da, db = inputs[a], inputs[b]
        assert da is not None and db is not None
        k = da.shape[-1] if da.shape[-1] >= 0 else db.shape[0 if db.rank == 1 else -2]
        read, written = io_bytes(inputs, outputs)
        numel = spatial_numel(outputs[0].shape)
        return Cost((2 * max(k, 0) + per_output) * numel, read, written)

    return cost


# ---- ConvInteger / QLinearConv ---------------------------------------------------------------------
def _conv_geometry(node: Node, operands: Sequence[Operand | None], ix: int, iw: int) -> tuple[Window | None, int]:
    """Validate X (input ix) and W (input iw) like Conv; the window (None while the kernel is unknown)."""
    x, w = operand(node, operands, ix).desc, operand(node, operands, iw).desc
    if x.rank < 3:
        raise shape_error(node, operands, f"X must be N x C x D1 ... Dn (rank >= 3), got rank {x.rank}")
    if w.rank != x.rank:
        raise shape_error(node, operands, f"weight rank {w.rank} must equal input rank {x.rank}")
    kernel = tuple(w.shape[2:])
    if node.attr("kernel_shape") is not None:
        given = int_list(node, operands, "kernel_shape", len(kernel), None)
        if any(k != d for k, d in zip(given, kernel, strict=True) if d >= 0):
            raise shape_error(node, operands, f"kernel_shape {list(given)} does not match the weight's "
                                              f"spatial dims {list(kernel)}")
        kernel = given
    group = int(node.attr("group", 1))
    cin, cout, wc = x.shape[1], w.shape[0], w.shape[1]
    if group < 1 or (cin >= 0 and cin % group) or (cout >= 0 and cout % group):
        raise shape_error(node, operands, f"group={group} must be >= 1 and divide the input channels ({cin}) "
                                          f"and the output channels ({cout})")
    if cin >= 0 and wc >= 0 and wc * group != cin:
        raise shape_error(node, operands, f"weight has {wc} input channels per group but X has {cin} "
                                          f"channels with group={group}")
    if any(k < 0 for k in kernel):
        return None, group
    return sliding_window(node, operands, x.shape[2:], kernel), group


def _conv_out(node: Node, operands: Sequence[Operand | None], ix: int, iw: int) -> tuple[int, ...]:
    win, _ = _conv_geometry(node, operands, ix, iw)
    x, w = operand(node, operands, ix).desc, operand(node, operands, iw).desc
    return (x.shape[0], w.shape[0], *(win.out if win is not None else (UNK,) * (x.rank - 2)))


def _check_channel_param(node: Node, operands: Sequence[Operand | None], index: int, channels: int,
                         per_channel: bool) -> None:
    """A scale/zero point that is a scalar, or (per_channel) one value per output channel."""
    param = optional(operands, index)
    if param is None:
        return
    p = param.desc.shape
    if len(p) == 0 or p == (1,):
        return
    if not per_channel or len(p) != 1 or (p[0] >= 0 and channels >= 0 and p[0] != channels):
        want = f"a scalar or [{channels}] (per output channel)" if per_channel else "a scalar"
        raise shape_error(node, operands, f"input {index} {list(p)} must be {want}")


def _channel_param(p: np.ndarray | None, rank: int) -> np.ndarray | None:
    """A per-output-channel parameter shaped to broadcast over the weight (M, C/g, k...) or output (N, M, ...)."""
    if p is None or p.size == 1:
        return None if p is None else p.reshape(())
    return p.reshape((-1,) + (1,) * (rank - 1))


def _infer_conv_integer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    _check_integer_inputs(node, operands)
    shape = _conv_out(node, operands, 0, 1)
    _check_channel_param(node, operands, 2, shape[1], False)
    _check_channel_param(node, operands, 3, shape[1], True)
    return [make_desc(shape, "int32")]


def _integer_conv(node: Node, x: np.ndarray, w: np.ndarray, x_zp: np.ndarray | None, w_zp: np.ndarray | None,
                  ix: int, iw: int, inputs: list[np.ndarray | None]) -> np.ndarray:
    """conv(x - x_zp, w - w_zp) accumulated exactly in float64 (zero padding is x_zp padding)."""
    win, group = _conv_geometry(node, operands_of(inputs), ix, iw)
    assert win is not None
    return conv_forward(_centered(x, x_zp), _centered(w, _channel_param(w_zp, w.ndim)), group, win)


def _conv_integer(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    x_zp, w_zp = (inputs[i] if len(inputs) > i else None for i in (2, 3))
    return [_to_int32(_integer_conv(node, x, w, x_zp, w_zp, 0, 1, inputs))]


def _infer_qlinear_conv(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 8, 9)
    for data, zp in ((0, 2), (3, 5), (7, 7)):
        check_dtype(node, operands, operand(node, operands, data).desc.dtype, INT8S, f"input {data}")
        if operand(node, operands, zp).desc.dtype != operand(node, operands, data).desc.dtype:
            raise shape_error(node, operands, f"zero point {zp} must have input {data}'s dtype")
    for scale in (1, 4, 6):
        check_dtype(node, operands, operand(node, operands, scale).desc.dtype, frozenset({"float32"}),
                    f"scale {scale}")
    shape = _conv_out(node, operands, 0, 3)
    for index in (1, 2, 4, 5, 6, 7):
        _check_channel_param(node, operands, index, shape[1], index in (4, 5))
    bias = optional(operands, 8)
    if bias is not None:
        check_dtype(node, operands, bias.desc.dtype, frozenset({"int32"}), "the bias")
        _check_channel_param(node, operands, 8, shape[1], True)
    return [make_desc(shape, operand(node, operands, 7).desc.dtype)]


def _qlinear_conv(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = inputs[:8]
    bias = inputs[8] if len(inputs) > 8 else None
    assert x is not None and w is not None and x_s is not None and w_s is not None
    assert y_s is not None and y_zp is not None
    acc = _integer_conv(node, x, w, x_zp, w_zp, 0, 3, inputs)
    if bias is not None:
        acc += bias.astype(np.float64).reshape((-1,) + (1,) * (x.ndim - 2))
    scale = _channel_param(w_s, x.ndim - 1)
    assert scale is not None
    return [_requantize(_to_int32(acc), x_s.reshape(()) * scale / y_s.reshape(()), y_zp.reshape(()))]


def _conv_cost(iw: int, per_output: int) -> CostFn:
    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        w = inputs[iw]
        assert w is not None
        elems = spatial_numel(outputs[0].shape)
        read, written = io_bytes(inputs, outputs)
        return Cost((2 * spatial_numel(w.shape[1:]) + per_output) * elems, read, written)

    return cost


OPS: list[OpDef] = [
    # int32 (A - a_zero_point) @ (B - b_zero_point), numpy.matmul semantics
    OpDef("MatMulInteger", Category.CUBE, _infer_matmul_integer, _matmul_integer, _matmul_cost(0, 1, 0),
          channel_axis=-1, gemm=matmul_view(0, 1)),
    # requantized matmul of two quantized tensors (per-tensor, per-row A, per-column B parameters)
    OpDef("QLinearMatMul", Category.CUBE, _infer_qlinear_matmul, _qlinear_matmul, _matmul_cost(0, 3, 3),
          channel_axis=-1, gemm=matmul_view(0, 3)),
    # int32 conv(x - x_zero_point, w - w_zero_point), Conv's attributes
    OpDef("ConvInteger", Category.CUBE, _infer_conv_integer, _conv_integer, _conv_cost(1, 0), channel_axis=1,
          gemm=conv_view(0, 1)),
    # requantized conv with an int32 bias; weight scale/zero point per tensor or per output channel
    OpDef("QLinearConv", Category.CUBE, _infer_qlinear_conv, _qlinear_conv, _conv_cost(3, 3), channel_axis=1,
          gemm=conv_view(0, 3)),
]
