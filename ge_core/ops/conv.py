"""Convolutions: Conv and ConvTranspose over 1-D/2-D/3-D inputs (N x C x D1 ... Dn), with groups. These are the
reference kernels, numpy and numpy's BLAS only; faster compiled paths for common cases (depthwise convs, a
compiled im2col, the 2x2/2 ConvTranspose, a fused epilogue) are registered by ge_core/kernels/conv.py and
taken by the interpreter where they apply.

Conv runs as im2col + one batched BLAS matmul over all groups: kernel taps are copied from strided views
of the padded input into a column buffer (N, C, k1..kn, out1..outn), which reshapes without a copy to
(N, group, C/group * K, L) for the matmul. The buffer is built a slab of output rows at a time when it
would exceed IM2COL_BUDGET_BYTES. 1x1 stride-1 convs are one GEMM on the input as it is. Depthwise convs
(one input channel per group) skip the grouped im2col: 1-D/2-D ones take contiguous-row columns and a
per-channel matmul (conv_depthwise.py), others the K shifted views. 2-D stride-1 convs with few output
channels run one GEMM over all taps and K slice-adds instead of im2col (conv_taps.py). ConvTranspose is the
adjoint: a matmul gives every (output channel, tap, input pixel) contribution, and a loop over taps scatters
them with strided adds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import blas
from ge_core.ops.common import (
    UNK,
    io_bytes,
    make_desc,
    operand,
    optional,
    require_inputs,
    same_dtype,
    shape_error,
)
from ge_core.ops.conv_depthwise import depthwise2d_or_1d
from ge_core.ops.conv_taps import tap_gemm_conv, use_tap_gemm
from ge_core.ops.kernel_memo import memoized
from ge_core.ops.matrix_view import conv_view
from ge_core.ops.registry import Category, Cost, NpuLayout, OpDef, Operand
from ge_core.ops.spatial import (
    Window,
    auto_pad_of,
    dilated_span,
    explicit_pads,
    int_list,
    operands_of,
    pad_input,
    same_pads,
    sliding_window,
    spatial_numel,
)

FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")
IM2COL_BUDGET_BYTES = 256 << 20  # larger column buffers are built a slab of output rows at a time


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """float16 has no BLAS path in numpy: compute in float32 and cast the result back."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


# ---- shared checks -----------------------------------------------------------------------------------

def _check_operands(node: Node, operands: list[Operand | None]) -> tuple[TensorDesc, TensorDesc, str]:
    require_inputs(node, operands, 2, 3)
    x, w = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    dtype = same_dtype(node, operands, [0, 1, 2])
    if dtype not in FLOAT_TYPES:
        raise shape_error(node, operands, f"{node.op_type} supports {', '.join(FLOAT_TYPES)}, got {dtype}")
    if x.rank < 3:
        raise shape_error(node, operands, f"X must be N x C x D1 ... Dn (rank >= 3), got rank {x.rank}")
    if w.rank != x.rank:
        raise shape_error(node, operands, f"weight rank {w.rank} must equal input rank {x.rank}")
    return x, w, dtype


def _kernel_shape(node: Node, operands: list[Operand | None], w: TensorDesc) -> tuple[int, ...]:
    """kernel_shape if given (it must agree with W), else W's spatial dims."""
    from_w = tuple(w.shape[2:])
    if node.attr("kernel_shape") is None:
        return from_w
    kernel = int_list(node, operands, "kernel_shape", len(from_w), None)
    if any(k != d for k, d in zip(kernel, from_w, strict=True) if d >= 0):
        raise shape_error(node, operands, f"kernel_shape {list(kernel)} does not match the weight's "
                                          f"spatial dims {list(from_w)}")
    return kernel


def _group(node: Node, operands: list[Operand | None]) -> int:
    group = int(node.attr("group", 1))
    if group < 1:
        raise shape_error(node, operands, f"group={group} must be >= 1")
    return group


def _check_divisible(node: Node, operands: list[Operand | None], what: str, dim: int, group: int) -> None:
    if dim >= 0 and dim % group:
        raise shape_error(node, operands, f"group={group} does not divide {what} ({dim})")


def _check_bias(node: Node, operands: list[Operand | None], channels: int) -> None:
    b = optional(operands, 2)
    if b is None:
        return
    shape = b.desc.shape
    if len(shape) != 1 or (shape[0] >= 0 and channels >= 0 and shape[0] != channels):
        raise shape_error(node, operands, f"bias B must have shape [{channels}] (one per output channel), "
                                          f"got {list(shape)}")


# ---- Conv --------------------------------------------------------------------------------------------

def _conv_geometry(node: Node, operands: list[Operand | None]) -> tuple[Window | None, int]:
    """Validate a Conv's inputs and attributes; its window (None while the kernel is unknown), group."""
    x, w, _ = _check_operands(node, operands)
    kernel = _kernel_shape(node, operands, w)
    group = _group(node, operands)
    cin, cout, wc = x.shape[1], w.shape[0], w.shape[1]
    _check_divisible(node, operands, "input channels", cin, group)
    _check_divisible(node, operands, "output channels (weight dim 0)", cout, group)
    if cin >= 0 and wc >= 0 and wc * group != cin:
        raise shape_error(node, operands, f"weight has {wc} input channels per group but X has {cin} "
                                          f"channels with group={group} (expected {cin // group})")
    _check_bias(node, operands, cout)
    if any(k < 0 for k in kernel):
        return None, group
    return sliding_window(node, operands, x.shape[2:], kernel), group


def _infer_conv(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    win, _ = _conv_geometry(node, operands)
    x, w = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    spatial = win.out if win is not None else (UNK,) * (x.rank - 2)
    return [make_desc((x.shape[0], w.shape[0], *spatial), x.dtype)]


def conv_geometry(node: Node, inputs: list[np.ndarray | None]) -> tuple[Window, int]:
    """A Conv's window and group for concrete inputs, checked as inference checks them (memoized per
    attributes and shapes: the fast paths in ge_core/kernels ask too)."""
    win, group = memoized(node, inputs, lambda: _conv_geometry(node, operands_of(inputs)))
    assert win is not None  # concrete inputs: the kernel is known
    return win, group


def _conv(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w, b = inputs[0], inputs[1], (inputs[2] if len(inputs) > 2 else None)
    assert x is not None and w is not None
    win, group = conv_geometry(node, inputs)
    return [_with_bias(conv_forward, x, w, b, group, win)]


def _with_bias(forward: Callable[[np.ndarray, np.ndarray, int, Window], np.ndarray], x: np.ndarray,
               w: np.ndarray, b: np.ndarray | None, group: int, win: Window) -> np.ndarray:
    """forward(x, w) in the compute dtype, plus the per-channel bias, back in x's dtype."""
    dt = compute_dtype(x.dtype)
    y = forward(x.astype(dt, copy=False), w.astype(dt, copy=False), group, win)
    if b is not None:
        y += b.astype(dt, copy=False).reshape((-1,) + (1,) * len(win.out))
    return y.astype(x.dtype, copy=False)


def conv_forward(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """y = conv(x, w) for one resolved window; x and w already in the compute dtype."""
    if w.shape[1] == 1 and group > 1:
        if x.ndim in (3, 4):  # 1-D and 2-D: contiguous-row taps (conv_depthwise.py)
            return depthwise2d_or_1d(pad_input(x, win, 0), w, group, win)
        return _depthwise(pad_input(x, win, 0), w, group, win)
    if all(k == 1 for k in win.kernel) and all(s == 1 for s in win.strides) and \
            not any(win.pads_begin) and not any(win.pads_end):
        return gemm(x.reshape(x.shape[0], group, -1, math.prod(x.shape[2:])), w, group, win.out)
    if use_tap_gemm(x, w, group, win):  # few output channels: no column buffer (conv_taps.py)
        return tap_gemm_conv(pad_input(x, win, 0), w, win)
    xp = pad_input(x, win, 0)
    row_bytes = xp.shape[0] * xp.shape[1] * math.prod(win.kernel) * math.prod(win.out[1:]) * xp.itemsize
    rows = max(1, IM2COL_BUDGET_BYTES // max(row_bytes, 1))
    if rows >= win.out[0]:
        return _im2col_conv(xp, w, group, win)
    y = np.empty((x.shape[0], w.shape[0], *win.out), dtype=x.dtype)
    for r0 in range(0, win.out[0], rows):
        r1 = min(win.out[0], r0 + rows)
        lo, hi = r0 * win.strides[0], (r1 - 1) * win.strides[0] + win.spans[0]
        slab = Window(win.kernel, win.strides, win.dilations, win.pads_begin, win.pads_end,
                      (r1 - r0, *win.out[1:]))
        y[:, :, r0:r1] = _im2col_conv(xp[:, :, lo:hi], w, group, slab)
    return y


def column_bytes(x: np.ndarray, win: Window) -> int:
    """The bytes of x's whole im2col buffer for `win`."""
    return x.shape[0] * x.shape[1] * math.prod(win.kernel) * math.prod(win.out) * x.itemsize


def _im2col_conv(xp: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """Conv of an already padded input: gather the taps into columns, then one batched matmul."""
    n, c = xp.shape[:2]
    cols = np.empty((n, c, *win.kernel, *win.out), dtype=xp.dtype)
    for offset in win.positions():
        cols[(slice(None), slice(None), *offset)] = xp[win.taps(offset)]  # type: ignore[index]
    return gemm(cols.reshape(n, group, -1, math.prod(win.out)), w, group, win.out)


def gemm(cols: np.ndarray, w: np.ndarray, group: int, out: tuple[int, ...]) -> np.ndarray:
    """(group, Cout/g, Cin/g*K) @ (N, group, Cin/g*K, L) -> (N, Cout, *out)."""
    wmat = w.reshape(group, w.shape[0] // group, -1)
    y = blas.matmul(wmat, cols)
    return y.reshape(cols.shape[0], w.shape[0], *out)


def _depthwise(xp: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """One input channel per group (channel multiplier m = Cout / group): K shifted multiply-adds."""
    n, mult = xp.shape[0], w.shape[0] // group
    expand = (1,) * len(win.out)
    taps = w.reshape(group, mult, -1)
    acc = np.zeros((n, group, mult, *win.out), dtype=xp.dtype)
    tmp = np.empty_like(acc)
    for k, offset in enumerate(win.positions()):
        view = xp[win.taps(offset)][:, :, None]  # (N, C, 1, *out)
        np.multiply(view, taps[:, :, k].reshape(group, mult, *expand), out=tmp)
        acc += tmp
    return acc.reshape(n, group * mult, *win.out)


def _conv_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    w, y = inputs[1], outputs[0]
    assert w is not None
    per_output = 2 * spatial_numel(w.shape[1:])  # (Cin/group) * K multiply-adds per output element
    elems = spatial_numel(y.shape)
    bias = elems if len(inputs) > 2 and inputs[2] is not None else 0
    read, written = io_bytes(inputs, outputs)
    return Cost(per_output * elems + bias, read, written)


# ---- ConvTranspose -----------------------------------------------------------------------------------

def _transpose_geometry(node: Node, operands: list[Operand | None]) -> tuple[Window | None, int, int]:
    """Validate a ConvTranspose; its window (pads resolved, out = output dims), group, out channels."""
    x, w, _ = _check_operands(node, operands)
    kernel = _kernel_shape(node, operands, w)
    group = _group(node, operands)
    cin, wc = x.shape[1], w.shape[0]
    _check_divisible(node, operands, "input channels", cin, group)
    if cin >= 0 and wc >= 0 and wc != cin:
        raise shape_error(node, operands, f"weight dim 0 ({wc}) must equal the input channels ({cin})")
    cout = w.shape[1] * group if w.shape[1] >= 0 else UNK
    _check_bias(node, operands, cout)
    if any(k < 0 for k in kernel):
        return None, group, cout
    return _transpose_window(node, operands, x.shape[2:], kernel), group, cout


def _transpose_window(node: Node, operands: list[Operand | None], spatial: tuple[int, ...],
                      kernel: tuple[int, ...]) -> Window:
    """Output size: stride*(in-1) + output_padding + span - pads, or output_shape with pads derived."""
    rank = len(spatial)
    strides = int_list(node, operands, "strides", rank, 1)
    dils = int_list(node, operands, "dilations", rank, 1)
    extra = int_list(node, operands, "output_padding", rank, 0, minimum=0)
    auto_pad = auto_pad_of(node, operands)
    begin, end = explicit_pads(node, operands, rank)
    wanted = _output_shape_attr(node, operands, rank)
    pb, pe, out = list(begin), list(end), []
    for i in range(rank):
        if spatial[i] < 0:
            out.append(wanted[i] if wanted else UNK)
            continue
        full = strides[i] * (spatial[i] - 1) + extra[i] + dilated_span(kernel[i], dils[i])
        if wanted or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = wanted[i] if wanted else spatial[i] * strides[i]
            # ONNX: SAME_UPPER puts the odd pad at the end; NOTSET/SAME_LOWER at the beginning.
            pb[i], pe[i] = same_pads(max(0, full - target), "SAME_UPPER" if auto_pad == "SAME_UPPER"
                                     else "SAME_LOWER")
            out.append(target)
        else:
            if auto_pad == "VALID":
                pb[i] = pe[i] = 0
            out.append(full - pb[i] - pe[i])
            if out[-1] < 1:
                raise shape_error(node, operands, f"pads {pb[i]}+{pe[i]} remove the whole output on spatial "
                                                  f"axis {i} (unpadded size {full})")
    return Window(kernel, strides, dils, tuple(pb), tuple(pe), tuple(out))


def _output_shape_attr(node: Node, operands: list[Operand | None], rank: int) -> tuple[int, ...]:
    """output_shape as spatial dims (models write it with or without the N, C dims); () when absent."""
    raw = node.attr("output_shape")
    if raw is None:
        return ()
    dims = tuple(int(v) for v in raw)
    if len(dims) == rank + 2:
        dims = dims[2:]
    if len(dims) != rank or any(d < 1 for d in dims):
        raise shape_error(node, operands, f"output_shape {list(dims)} must give {rank} positive spatial dims")
    return dims


def _infer_conv_transpose(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    win, _, cout = _transpose_geometry(node, operands)
    x = operand(node, operands, 0).desc
    spatial = win.out if win is not None else (UNK,) * (x.rank - 2)
    return [make_desc((x.shape[0], cout, *spatial), x.dtype)]


def _conv_transpose(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, w, b = inputs[0], inputs[1], (inputs[2] if len(inputs) > 2 else None)
    assert x is not None and w is not None
    win, group = transpose_geometry(node, inputs)
    return [_with_bias(conv_transpose_forward, x, w, b, group, win)]


def transpose_geometry(node: Node, inputs: list[np.ndarray | None]) -> tuple[Window, int]:
    """A ConvTranspose's window (pads resolved, out = output dims) and group for concrete inputs (memoized)."""
    win, group, _ = memoized(node, inputs, lambda: _transpose_geometry(node, operands_of(inputs)))
    assert win is not None
    return win, group


def conv_transpose_forward(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """Every input pixel scatters W^T x into the taps it feeds; pads crop the full result."""
    n, cin, in_sp = x.shape[0], x.shape[1], x.shape[2:]
    cout = w.shape[1] * group
    wt = w.reshape(group, cin // group, -1).transpose(0, 2, 1)  # (g, Cout/g * K, Cin/g)
    cols = blas.matmul(wt, x.reshape(n, group, cin // group, -1))  # (N, g, Cout/g * K, L_in)
    cols = cols.reshape(n, cout, *win.kernel, *in_sp)
    # The buffer covers both the full (uncropped) result and the requested output, which may extend
    # past it (output_shape larger than the natural size).
    full = [(i - 1) * s + sp for i, s, sp in zip(in_sp, win.strides, win.spans, strict=True)]
    size = [max(f, b + o) for f, b, o in zip(full, win.pads_begin, win.out, strict=True)]
    buf = np.zeros((n, cout, *size), dtype=x.dtype)
    scatter = Window(win.kernel, win.strides, win.dilations, (0,) * len(in_sp), (0,) * len(in_sp),
                     tuple(in_sp))
    for offset in scatter.positions():
        tap: tuple[slice | int, ...] = (slice(None), slice(None), *offset)
        buf[scatter.taps(offset)] += cols[tap]
    crop = tuple(slice(b, b + o) for b, o in zip(win.pads_begin, win.out, strict=True))
    return np.ascontiguousarray(buf[(slice(None), slice(None), *crop)])


def _conv_transpose_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    # Each input element meets (Cout/group) * K weights.
    flops = 2 * spatial_numel(x.shape) * spatial_numel(w.shape[1:])
    bias = spatial_numel(outputs[0].shape) if len(inputs) > 2 and inputs[2] is not None else 0
    read, written = io_bytes(inputs, outputs)
    return Cost(flops + bias, read, written)


OPS: list[OpDef] = [
    # y = sum over (C/group) input channels and the kernel window of x * w, plus bias; 1-D/2-D/3-D
    OpDef("Conv", Category.CUBE, _infer_conv, _conv, _conv_cost, npu_layout=NpuLayout.CUBE, channel_axis=1,
          gemm=conv_view(0, 1), ge_types=("Conv2D", "DepthwiseConv2D", "Conv3D", "Conv2DCompress")),
    # the adjoint of Conv (fractionally strided conv): every input pixel scatters x * w into the output
    OpDef("ConvTranspose", Category.CUBE, _infer_conv_transpose, _conv_transpose, _conv_transpose_cost,
          npu_layout=NpuLayout.CUBE, channel_axis=1, gemm=conv_view(0, 1, transposed=True),
          ge_types=("Conv2DTranspose", "Conv2DTransposeD", "Deconvolution")),
]
