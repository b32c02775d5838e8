"""Fast paths for Conv and ConvTranspose, and the fused-body heads that end in the compiled epilogue.

The reference kernels (ge_core/ops/conv.py) are numpy's im2col and BLAS. Here, for float32/float64:
- a depthwise 1-D/2-D conv runs as one compiled loop (conv_depthwise.py), the bias its accumulators' start;
- a 2-D stride-1 conv with few output channels sums the taps of its one GEMM in one compiled pass
  (conv_taps.py);
- any other 2-D conv with a kernel larger than 1x1 builds its columns with a compiled, threaded im2col that
  writes the padding as zeros (conv_im2col.py) instead of numpy's padded copy and a view copy per tap;
- a ConvTranspose whose kernel equals its stride interleaves its GEMM's result (conv_transpose.py);
and each adds its bias in the compiled epilogue pass (epilogue.py). 1x1 convs are one GEMM either way:
they are left to the reference. Every path checks the arrays against the node's window before compiled
code indexes them (checks.py).
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels import conv_depthwise, conv_im2col, conv_taps, conv_transpose, epilogue
from ge_core.kernels.checks import check_conv, check_conv_transpose
from ge_core.kernels.registry import FAST_PATHS, FastPath
from ge_core.ops import conv as reference
from ge_core.ops.conv import (
    column_bytes,
    conv_forward,
    conv_geometry,
    conv_transpose_forward,
    gemm,
    transpose_geometry,
)
from ge_core.ops.conv_taps import use_tap_gemm
from ge_core.ops.epilogue import NO_ACTIVATION, Epilogue
from ge_core.ops.spatial import Window, pad_input

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _operands(inputs: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    x, w = inputs[0], inputs[1]
    assert x is not None and w is not None
    return x, w, inputs[2] if len(inputs) > 2 else None


def _same_float(x: np.ndarray, *others: np.ndarray | None) -> bool:
    return x.dtype in DTYPES and all(o is None or o.dtype == x.dtype for o in others)


def _is_depthwise(x: np.ndarray, w: np.ndarray, group: int) -> bool:
    return x.ndim in (3, 4) and w.shape[1] == 1 and group == x.shape[1] and group > 1


def _is_pointwise(win: Window) -> bool:
    return all(k == 1 for k in win.kernel) and all(s == 1 for s in win.strides) and not any(win.pads_begin) \
        and not any(win.pads_end)


def _compiled_forward(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray | None:
    """conv(x, w) by the first compiled path taken that applies, or None (1x1 convs: one GEMM either way)."""
    if _is_depthwise(x, w, group):
        return conv_depthwise.depthwise(x, w, None, win) if FAST_PATHS.taken("Conv.depthwise") else None
    if x.ndim != 4 or _is_pointwise(win):
        return None
    if use_tap_gemm(x, w, group, win):
        return conv_taps.tap_gemm_conv(pad_input(x, win, 0), w, win) if FAST_PATHS.taken("Conv.tap_sum") else None
    if column_bytes(x, win) > reference.IM2COL_BUDGET_BYTES or not FAST_PATHS.taken("Conv.im2col"):
        return None  # the reference builds such columns a slab of output rows at a time
    cols = conv_im2col.im2col(x, win)
    return gemm(cols.reshape(x.shape[0], group, -1, math.prod(win.out)), w, group, win.out)


def _checked(node: Node, inputs: list[np.ndarray | None]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Window, int] | None:
    """The operands, window and group of a float32/float64 Conv, checked against each other; None otherwise."""
    x, w, b = _operands(inputs)
    if not _same_float(x, w, b):
        return None
    win, group = conv_geometry(node, inputs)
    check_conv(node, x, w, b, win, group)
    return x, w, b, win, group


def _with_bias(y: np.ndarray, b: np.ndarray | None) -> list[np.ndarray]:
    if b is not None:
        epilogue.apply(y, b, None, NO_ACTIVATION)
    return [y]


def _depthwise(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x, w, _ = _operands(inputs)
    if not _is_depthwise(x, w, int(node.attr("group", 1))):  # decided before the geometry: a cheap no
        return None
    checked = _checked(node, inputs)
    if checked is None:
        return None
    x, w, b, win, _ = checked
    return [conv_depthwise.depthwise(x, w, b, win)]  # the bias starts the accumulators


def _tap_sum(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x, w, _ = _operands(inputs)
    if x.ndim != 4 or int(node.attr("group", 1)) != 1 or 2 * w.shape[0] > w.shape[1]:  # use_tap_gemm's cheap part
        return None
    checked = _checked(node, inputs)
    if checked is None:
        return None
    x, w, b, win, group = checked
    if x.ndim != 4 or not use_tap_gemm(x, w, group, win):
        return None
    return _with_bias(conv_taps.tap_gemm_conv(pad_input(x, win, 0), w, win), b)


def _im2col(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x, w, _ = _operands(inputs)
    if x.ndim != 4 or w.ndim != 4 or w.shape[2:] == (1, 1):  # 1x1: one GEMM either way
        return None
    checked = _checked(node, inputs)
    if checked is None:
        return None
    x, w, b, win, group = checked
    if x.ndim != 4 or _is_depthwise(x, w, group) or _is_pointwise(win) or use_tap_gemm(x, w, group, win) \
            or column_bytes(x, win) > reference.IM2COL_BUDGET_BYTES:
        return None
    cols = conv_im2col.im2col(x, win)
    return _with_bias(gemm(cols.reshape(x.shape[0], group, -1, math.prod(win.out)), w, group, win.out), b)


def _conv_transpose(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x, w, b = _operands(inputs)
    if not _same_float(x, w, b):
        return None
    win, group = transpose_geometry(node, inputs)
    if not conv_transpose.supports(x, group, win):
        return None
    check_conv_transpose(node, x, w, b, win, group)
    y = conv_transpose.conv_transpose(x, w, group, win)
    return _with_bias(y, b)


def conv_with_epilogue(node: Node, inputs: list[np.ndarray | None], residual: np.ndarray | None,
                       bias: np.ndarray | None, ending: Epilogue) -> np.ndarray | None:
    """A Conv node's result with `bias` (or its own B), `residual` and an activation applied in the same
    compiled pass: what a fused Conv + Add + activation body computes, or None when that pass cannot run
    (not float32/float64, two biases): then the caller runs the body op by op."""
    x, w, own_bias = _operands(inputs)
    if not _same_float(x, w, own_bias, bias, residual) or (own_bias is not None and bias is not None):
        return None
    win, group = conv_geometry(node, inputs)
    check_conv(node, x, w, own_bias if bias is None else bias, win, group, residual)
    if _is_depthwise(x, w, group) and FAST_PATHS.taken("Conv.depthwise"):  # its own bias starts the accumulators
        y, bias = conv_depthwise.depthwise(x, w, own_bias, win), bias
    else:
        compiled = _compiled_forward(x, w, group, win)
        y = conv_forward(x, w, group, win) if compiled is None else compiled
        bias = bias if bias is not None else own_bias
    epilogue.apply(y, bias, residual, ending)  # y is a fresh C-contiguous array of x's dtype
    return y


def conv_transpose_with_epilogue(node: Node, inputs: list[np.ndarray | None], residual: np.ndarray | None,
                                 bias: np.ndarray | None, ending: Epilogue) -> np.ndarray | None:
    """conv_with_epilogue's counterpart for a ConvTranspose node (the upsampling heads of U-Net and DB text
    detectors: ConvTranspose + bias + Relu)."""
    x, w, own_bias = _operands(inputs)
    if not _same_float(x, w, own_bias, bias, residual) or (own_bias is not None and bias is not None):
        return None
    win, group = transpose_geometry(node, inputs)
    check_conv_transpose(node, x, w, own_bias if bias is None else bias, win, group, residual)
    if conv_transpose.supports(x, group, win) and FAST_PATHS.taken("ConvTranspose.interleave"):
        y = conv_transpose.conv_transpose(x, w, group, win)
    else:
        y = conv_transpose_forward(x, w, group, win)
    if not (y.flags.c_contiguous and y.flags.writeable and y.dtype == x.dtype):
        return None
    epilogue.apply(y, bias if bias is not None else own_bias, residual, ending)
    return y


PATHS = [
    FastPath("Conv.depthwise", "Conv", _depthwise, "depthwise 1-D/2-D convs as one compiled loop (no columns)"),
    FastPath("Conv.tap_sum", "Conv", _tap_sum, "few output channels: the taps of one GEMM summed in one pass"),
    FastPath("Conv.im2col", "Conv", _im2col, "2-D convs' columns built by a compiled, threaded loop"),
    FastPath("ConvTranspose.interleave", "ConvTranspose", _conv_transpose,
             "kernel = stride: one GEMM, then a compiled interleave instead of a zeroed buffer and tap adds"),
]
