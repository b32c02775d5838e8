"""Pooling: MaxPool (with the optional Indices output), AveragePool, GlobalAveragePool, GlobalMaxPool.

Windowed pools reduce over the kernel taps one strided view at a time (a loop over kh*kw, never over
pixels). MaxPool pads with -inf (the dtype's minimum for integers) so padding never wins; AveragePool
pads with 0 and divides by a count that is separable per axis: the product over axes of how many of
the window's taps land inside the input (or inside input + declared pads with count_include_pad).
Taps that only exist because of ceil_mode are never counted, as in ONNX Runtime.

Categories: the windowed pools are OPAQUE (a window reduction over padded input; UB fusion cannot chain
elementwise ops through it the way it can through a plain axis reduction); the global pools are REDUCE
(a mean/max over the spatial axes with keepdims).
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.dtypes import is_float
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import io_bytes, like, make_desc, operand, require_inputs, shape_error, wide_dtype
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.registry import Category, Cost, NpuLayout, OpDef, Operand
from ge_core.ops.spatial import Window, int_list, operands_of, pad_input, sliding_window, spatial_numel

FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")
MAXPOOL_TYPES = (*FLOAT_TYPES, "int8", "uint8")


def _input(node: Node, operands: list[Operand | None], dtypes: tuple[str, ...]) -> TensorDesc:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    if x.dtype not in dtypes:
        raise shape_error(node, operands, f"{node.op_type} supports {', '.join(dtypes)}, got {x.dtype}")
    if x.rank < 3:
        raise shape_error(node, operands, f"X must be N x C x D1 ... Dn (rank >= 3), got rank {x.rank}")
    return x


def _window(node: Node, operands: list[Operand | None], x: TensorDesc, *, dilations: bool) -> Window:
    kernel = int_list(node, operands, "kernel_shape", x.rank - 2, None)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    win = sliding_window(node, operands, x.shape[2:], kernel, ceil_mode=ceil_mode, dilations=dilations)
    # As ONNX Runtime does: a pad as large as the kernel makes windows that see only padding.
    for axis, (b, e, k) in enumerate(zip(win.pads_begin, win.pads_end, kernel, strict=True)):
        if max(b, e) >= k:
            raise shape_error(node, operands, f"pads {b},{e} on spatial axis {axis} must be smaller than "
                                              f"the kernel ({k}); such windows would see only padding")
    return win


def _avg_dilations(node: Node) -> bool:
    return node.opset >= 19  # AveragePool gained dilations at opset 19


# ---- MaxPool -----------------------------------------------------------------------------------------

def _infer_max_pool(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x = _input(node, operands, MAXPOOL_TYPES)
    win = _window(node, operands, x, dilations=True)
    _check_storage_order(node, operands)
    shape = (x.shape[0], x.shape[1], *win.out)
    return [make_desc(shape, x.dtype), make_desc(shape, "int64")]


def _check_storage_order(node: Node, operands: list[Operand | None]) -> None:
    order = int(node.attr("storage_order", 0))
    if order not in (0, 1):
        raise shape_error(node, operands, f"storage_order={order} must be 0 (row major) or 1 (column major)")
    if len([t for t in node.outputs if t]) > 1 and node.opset < 8:
        raise shape_error(node, operands, "the Indices output exists only since opset 8")


def _kernel_window(node: Node, inputs: list[np.ndarray | None], *, dilations: bool) -> Window:
    """The pool's window for concrete inputs, checked as inference checks it."""
    operands = operands_of(inputs)
    return _window(node, operands, operand(node, operands, 0).desc, dilations=dilations)


def max_pool_window(node: Node, inputs: list[np.ndarray | None]) -> Window:
    """A MaxPool's window for concrete inputs (memoized; the fast path in ge_core/kernels asks too)."""
    return memoized(node, inputs, lambda: _kernel_window(node, inputs, dilations=True))


def _max_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    win = max_pool_window(node, inputs)
    floats = is_float(x.dtype.name)  # bfloat16 too
    low = -np.inf if floats else np.iinfo(x.dtype).min
    want_indices = len(node.outputs) > 1 and bool(node.outputs[1])
    xp = pad_input(x, win, low)
    if not want_indices:
        return [_reduce_taps(xp, win, np.fmax if floats else np.maximum)]
    return list(_max_with_indices(x, xp, win, int(node.attr("storage_order", 0))))


def _reduce_taps(xp: np.ndarray, win: Window, fn: np.ufunc) -> np.ndarray:
    """fn over every window of the padded input, one spatial axis at a time: a box's max or sum is the
    max or sum along each axis in turn, (k1 - 1) + (k2 - 1) + ... ufunc calls instead of k1 * k2 * ... - 1."""
    acc = xp
    for axis, (k, d, s, o) in enumerate(zip(win.kernel, win.dilations, win.strides, win.out, strict=True)):
        def tap(i: int, axis: int = axis, d: int = d, s: int = s, o: int = o) -> tuple[slice, ...]:
            return (slice(None),) * (2 + axis) + (slice(i * d, i * d + (o - 1) * s + 1, s),)

        reduced = acc[tap(0)].copy()
        for i in range(1, k):
            fn(reduced, acc[tap(i)], out=reduced)
        acc = reduced
    return acc if acc is not xp else xp.copy()


def _max_with_indices(x: np.ndarray, xp: np.ndarray, win: Window, storage_order: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Max plus the flat index of the first maximum (scan order) into x, per ONNX's Indices."""
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    # Flat index strides over the spatial axes: row major, or column major with storage_order=1.
    dims = spatial if storage_order == 0 else spatial[::-1]
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    if storage_order == 1:
        strides = strides[::-1]
    base = (np.arange(n * c, dtype=np.int64) * math.prod(spatial)).reshape(n, c, *(1,) * len(spatial))
    best = np.full((n, c, *win.out), xp.dtype.type(0), dtype=xp.dtype)
    where = np.zeros((n, c, *win.out), dtype=np.int64)
    seen = np.zeros((n, c, *win.out), dtype=bool)  # best holds a real (non-padding) tap
    for offset in win.positions():
        view = xp[win.taps(offset)]
        flat, valid = _tap_index(win, offset, spatial, strides)
        better = valid & ((view > best) | ~seen)
        np.copyto(best, view, where=better)
        np.copyto(where, np.broadcast_to(flat, view.shape), where=better)
        seen |= better
    return best, where + base


def _tap_index(win: Window, offset: tuple[int, ...], spatial: tuple[int, ...], strides: list[int]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Spatial flat index of tap `offset` for every output position, and whether it is inside x."""
    total = np.zeros((1,) * len(win.out), dtype=np.int64)
    valid = np.ones((1,) * len(win.out), dtype=bool)
    for axis, (i, s, d, b, o, st) in enumerate(
            zip(offset, win.strides, win.dilations, win.pads_begin, win.out, strides, strict=True)):
        pos = np.arange(o, dtype=np.int64) * s - b + i * d
        shape = [1] * len(win.out)
        shape[axis] = o
        total = total + (pos * st).reshape(shape)
        valid = valid & ((pos >= 0) & (pos < spatial[axis])).reshape(shape)
    return total, valid


def _pool_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    taps = math.prod(int(k) for k in node.attr("kernel_shape", [1]))
    read, written = io_bytes(inputs, outputs)
    return Cost(taps * spatial_numel(outputs[0].shape), read, written)


# ---- AveragePool -------------------------------------------------------------------------------------

def _infer_average_pool(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    x = _input(node, operands, FLOAT_TYPES)
    win = _window(node, operands, x, dilations=_avg_dilations(node))
    return [make_desc((x.shape[0], x.shape[1], *win.out), x.dtype)]


def _average_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    win, counts = average_pool_geometry(node, inputs)
    xc = x.astype(wide_dtype(x.dtype), copy=False)
    total = _reduce_taps(pad_input(xc, win, 0), win, np.add)
    total /= counts.astype(total.dtype)
    return [total.astype(x.dtype, copy=False)]


def average_pool_geometry(node: Node, inputs: list[np.ndarray | None]) -> tuple[Window, np.ndarray]:
    """An AveragePool's window and, per output position, the number of taps it divides by (memoized; the
    fast path in ge_core/kernels asks too)."""
    x = inputs[0]
    assert x is not None
    include_pad = bool(node.attr("count_include_pad", 0))

    def geometry() -> tuple[Window, np.ndarray]:
        win = _kernel_window(node, inputs, dilations=_avg_dilations(node))
        return win, _tap_counts(win, x.shape[2:], include_pad)

    return memoized(node, inputs, geometry)


def _tap_counts(win: Window, spatial: tuple[int, ...], include_pad: bool) -> np.ndarray:
    """Per output position, how many taps fall inside the input (or input + pads): an outer product."""
    counts = np.ones((1,) * len(spatial), dtype=np.int64)
    for axis, size in enumerate(spatial):
        k, d, s, b, o = (win.kernel[axis], win.dilations[axis], win.strides[axis], win.pads_begin[axis],
                         win.out[axis])
        pos = (np.arange(o)[:, None] * s - b) + np.arange(k)[None, :] * d  # (out, taps) input coords
        lo, hi = (-b, size + win.pads_end[axis]) if include_pad else (0, size)
        per_axis = ((pos >= lo) & (pos < hi)).sum(axis=1)
        shape = [1] * len(spatial)
        shape[axis] = o
        counts = counts * np.maximum(per_axis, 1).reshape(shape)  # an empty window divides 0 by 1
    return counts


# ---- global pools ------------------------------------------------------------------------------------

def _infer_global(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    dtypes = FLOAT_TYPES if node.op_type == "GlobalAveragePool" else MAXPOOL_TYPES
    x = _input(node, operands, dtypes)
    return [like(x, shape=(x.shape[0], x.shape[1], *(1,) * (x.rank - 2)))]


def _global_average_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    axes = tuple(range(2, x.ndim))
    return [x.mean(axis=axes, keepdims=True, dtype=wide_dtype(x.dtype)).astype(x.dtype, copy=False)]


def _global_max_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    return [x.max(axis=tuple(range(2, x.ndim)), keepdims=True)]


def _global_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    x = inputs[0]
    assert x is not None
    read, written = io_bytes(inputs, outputs)
    return Cost(spatial_numel(x.shape), read, written)


OPS: list[OpDef] = [
    # max over each (dilated, strided, padded) kernel window; optional flat argmax Indices
    OpDef("MaxPool", Category.OPAQUE, _infer_max_pool, _max_pool, _pool_cost, npu_layout=NpuLayout.POOL,
          ge_types=("MaxPoolV3", "MaxPoolV2", "Pooling")),
    # mean over each kernel window, counting padding only with count_include_pad
    OpDef("AveragePool", Category.OPAQUE, _infer_average_pool, _average_pool, _pool_cost, npu_layout=NpuLayout.POOL,
          ge_types=("AvgPool", "AvgPoolV2", "Pooling")),
    # mean over all spatial axes, keeping them as size 1
    OpDef("GlobalAveragePool", Category.REDUCE, _infer_global, _global_average_pool, _global_cost,
          npu_layout=NpuLayout.POOL, ge_types=("ReduceMeanD", "AvgPool", "AvgPoolV2", "Pooling")),
    # max over all spatial axes, keeping them as size 1
    OpDef("GlobalMaxPool", Category.REDUCE, _infer_global, _global_max_pool, _global_cost, npu_layout=NpuLayout.POOL),
]
