"""Windowed spatial ops beyond Conv and the pools: LpPool, MaxUnpool and Col2Im.

Like the pools they loop over the kernel taps (one strided view each), never over pixels. All are OPAQUE:
window reductions (LpPool), scatters by index (MaxUnpool) or overlapping accumulations (Col2Im).
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import UNK, io_bytes, known_ints, make_desc, operand, optional, require_inputs, shape_error
from ge_core.ops.math import FLOATS, check_dtype
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass
from ge_core.ops.spatial import (
    Window,
    explicit_pads,
    int_list,
    operands_of,
    pad_input,
    sliding_window,
    spatial_numel,
)


def _feature_map(node: Node, operands: list[Operand | None], index: int = 0) -> TensorDesc:
    x = operand(node, operands, index).desc
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    if x.rank < 3:
        raise shape_error(node, operands, f"X must be N x C x D1 ... Dn (rank >= 3), got rank {x.rank}")
    return x


# ---- LpPool -------------------------------------------------------------------------------------------
def _lp_window(node: Node, operands: list[Operand | None], x: TensorDesc) -> Window:
    kernel = int_list(node, operands, "kernel_shape", x.rank - 2, None)
    return sliding_window(node, operands, x.shape[2:], kernel, ceil_mode=bool(node.attr("ceil_mode", 0)),
                          dilations=node.opset >= 18)


def _infer_lp_pool(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = _feature_map(node, operands)
    if float(node.attr("p", 2)) <= 0:
        raise shape_error(node, operands, f"p={node.attr('p')} must be positive")
    win = _lp_window(node, operands, x)
    return [make_desc((x.shape[0], x.shape[1], *win.out), x.dtype)]


def _lp_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """(sum over each window of |x|^p)^(1/p); padding contributes 0."""
    x = inputs[0]
    assert x is not None
    operands = operands_of(inputs)
    win = _lp_window(node, operands, operand(node, operands, 0).desc)
    p = float(node.attr("p", 2))
    xw = np.abs(x.astype(np.float32) if x.dtype.itemsize < 4 else x)
    xp = pad_input(xw * xw if p == 2 else xw ** p, win, 0)
    acc = np.zeros((x.shape[0], x.shape[1], *win.out), dtype=xp.dtype)
    for offset in win.positions():
        acc += xp[win.taps(offset)]
    out = np.sqrt(acc) if p == 2 else acc ** (1.0 / p)
    return [out.astype(x.dtype, copy=False)]


def _lp_pool_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """|x|^p per input element, an add per tap, a root per output element."""
    taps = math.prod(int(k) for k in node.attr("kernel_shape", [1]))
    x = inputs[0]
    read, written = io_bytes(inputs, outputs)
    return Cost(2 * spatial_numel(x.shape if x else ()) + (taps + 1) * spatial_numel(outputs[0].shape), read, written)


# ---- MaxUnpool ----------------------------------------------------------------------------------------
def _unpooled_shape(node: Node, operands: list[Operand | None], x: TensorDesc) -> tuple[int, ...]:
    """(in - 1) * stride - pads + kernel per spatial axis: the size MaxPool read."""
    rank = x.rank - 2
    kernel = int_list(node, operands, "kernel_shape", rank, None)
    strides = int_list(node, operands, "strides", rank, 1)
    begin, end = explicit_pads(node, operands, rank)
    spatial = [UNK if d < 0 else (d - 1) * s - b - e + k
               for d, s, b, e, k in zip(x.shape[2:], strides, begin, end, kernel, strict=True)]
    return (x.shape[0], x.shape[1], *spatial)


def _infer_max_unpool(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 3)
    x, idx = _feature_map(node, operands), operand(node, operands, 1).desc
    if idx.dtype != "int64" or idx.rank != x.rank:
        raise shape_error(node, operands, f"I must be an int64 tensor of X's shape, got {idx.text()}")
    inferred = _unpooled_shape(node, operands, x)
    shape_in = optional(operands, 2)
    if shape_in is None:
        return [make_desc(inferred, x.dtype)]
    if shape_in.desc.rank != 1 or shape_in.desc.shape[0] not in (x.rank, UNK):
        raise shape_error(node, operands, f"output_shape must list {x.rank} dims, got {shape_in.desc.text()}")
    wanted = known_ints(shape_in)
    if wanted is None:
        return [make_desc([UNK] * x.rank, x.dtype)]
    if any(0 <= w < d for w, d in zip(wanted, inferred, strict=True)):
        raise shape_error(node, operands, f"output_shape {wanted} is smaller than the unpooled shape "
                                          f"{list(inferred)}")
    return [make_desc(wanted, x.dtype)]


def _max_unpool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Zeros with X's values at the flat positions I. I indexes MaxPool's input, so with output_shape it
    indexes that shape (as the spec says, ONNX Runtime does and PyTorch's max_unpool with output_size needs);
    without, the unpooled shape (in - 1) * stride - pads + kernel."""
    x, idx = inputs[0], inputs[1]
    assert x is not None and idx is not None
    shape_in = inputs[2] if len(inputs) > 2 else None
    if shape_in is None:
        operands = operands_of(inputs)
        shape = list(_unpooled_shape(node, operands, operand(node, operands, 0).desc))
    else:
        shape = [int(v) for v in shape_in.reshape(-1)]
    flat = np.zeros(math.prod(shape), dtype=x.dtype)
    positions = idx.reshape(-1)
    if positions.size and (positions.min() < 0 or positions.max() >= flat.size):
        raise ExecutionError(node.name, node.op_type, [list(x.shape), list(idx.shape)],
                             f"an index in I is outside the unpooled tensor of {flat.size} elements {shape}.")
    flat[positions] = x.reshape(-1)
    return [flat.reshape(shape)]


# ---- Col2Im -------------------------------------------------------------------------------------------
def _col2im_args(node: Node, operands: list[Operand | None], rank: int) -> tuple[tuple[int, ...], ...]:
    strides = int_list(node, operands, "strides", rank, 1)
    dilations = int_list(node, operands, "dilations", rank, 1)
    begin, end = explicit_pads(node, operands, rank)
    return strides, dilations, begin, end


def _blocks(image: list[int], block: list[int], args: tuple[tuple[int, ...], ...]) -> list[int]:
    """Sliding blocks along each axis: (image + pads - dilated block) // stride + 1."""
    strides, dilations, begin, end = args
    return [(i + b + e - (d * (k - 1) + 1)) // s + 1
            for i, k, s, d, b, e in zip(image, block, strides, dilations, begin, end, strict=True)]


def _infer_col2im(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 3, 3)
    x = operand(node, operands, 0).desc
    image, block = operand(node, operands, 1), operand(node, operands, 2)
    if x.rank != 3:
        raise shape_error(node, operands, f"input must be [N, C * prod(block_shape), L], got rank {x.rank}")
    rank = image.desc.shape[0] if image.desc.rank == 1 else UNK
    if rank < 1 or block.desc.rank != 1 or block.desc.shape[0] not in (rank, UNK):
        raise shape_error(node, operands, f"image_shape and block_shape must be 1-D of one static length, got "
                                          f"{image.desc.text()} and {block.desc.text()}")
    image_v, block_v = known_ints(image), known_ints(block)
    args = _col2im_args(node, operands, rank)
    channels = UNK
    if block_v is not None and x.shape[1] >= 0:
        taps = math.prod(block_v)
        if taps <= 0 or x.shape[1] % taps:
            raise shape_error(node, operands, f"input dim 1 ({x.shape[1]}) must be a multiple of "
                                              f"prod(block_shape) = {taps}")
        channels = x.shape[1] // taps
        if image_v is not None and x.shape[2] >= 0:
            n = math.prod(_blocks(image_v, block_v, args))
            if n != x.shape[2]:
                raise shape_error(node, operands, f"input dim 2 ({x.shape[2]}) must be the number of sliding "
                                                  f"blocks, {n}")
    return [make_desc((x.shape[0], channels, *(image_v or [UNK] * rank)), x.dtype)]


def _col2im(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Sum each column back into its block of the image: one strided add per block tap."""
    x, image_t, block_t = inputs[0], inputs[1], inputs[2]
    assert x is not None and image_t is not None and block_t is not None
    image, block = [int(v) for v in image_t.reshape(-1)], [int(v) for v in block_t.reshape(-1)]
    args = _col2im_args(node, operands_of(inputs), len(image))
    strides, dilations, begin, end = args
    nb = _blocks(image, block, args)
    n, c = x.shape[0], x.shape[1] // math.prod(block)
    cols = x.reshape(n, c, *block, *nb)
    work = np.zeros((n, c, *(i + b + e for i, b, e in zip(image, begin, end, strict=True))), dtype=x.dtype)
    for offset in np.ndindex(*block):
        taps = tuple(slice(o * d, o * d + (m - 1) * s + 1, s)
                     for o, d, m, s in zip(offset, dilations, nb, strides, strict=True))
        work[(slice(None), slice(None), *taps)] += cols[(slice(None), slice(None), *offset)]
    crop = tuple(slice(b, b + i) for b, i in zip(begin, image, strict=True))
    return [np.ascontiguousarray(work[(slice(None), slice(None), *crop)])]


def _col2im_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """One add per column element."""
    read, written = io_bytes(inputs, outputs)
    x = inputs[0]
    return Cost((x.numel or 0) if x is not None else 0, read, written)


OPS: list[OpDef] = [
    # (sum of |x|^p over each kernel window)^(1/p)
    OpDef("LpPool", Category.OPAQUE, _infer_lp_pool, _lp_pool, _lp_pool_cost, doc="p-norm pooling"),
    # scatter X into zeros at MaxPool's flat Indices
    OpDef("MaxUnpool", Category.OPAQUE, _infer_max_unpool, _max_unpool, _col2im_cost, doc="inverse of MaxPool",
          vector_class=VectorClass.DATA_MOVE),
    # rearrange (and sum overlapping) columns of sliding blocks back into an image
    OpDef("Col2Im", Category.OPAQUE, _infer_col2im, _col2im, _col2im_cost, doc="columns to image"),
]
