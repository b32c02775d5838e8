"""The compiled epilogue pass (numba): bias, residual and activation applied to a fresh accumulator in one
pass, in place — what a fused Conv/MatMul/BatchNormalization body ends with (kernels/body_epilogue.py) and
how the Conv fast paths add their bias.

A convolution's result is a fresh buffer still in cache when its GEMM returns. numpy adds the bias in one
pass over it, a residual in another and the activation in a third (each reading and writing the whole
map): for the Conv + bias + Relu of SqueezeNet's and ResNet's blocks those passes cost as much as the GEMM
itself (measured: (64, 3025) float32, GEMM 0.15 ms, numpy bias + Relu 0.13 ms more, one compiled pass
0.00-0.03 ms more). ONNX Runtime applies them in its GEMM's epilogue; here one loop applies bias,
residual and activation per element, in place. The arithmetic is the numpy kernels' own, in the same order
and dtype, without fused multiply-adds, so a fused node gives bit for bit what its body's ops give one by one.
An inference BatchNormalization followed by an activation is x * k and then this pass with its shift as
the bias (`scaled`).
"""

from __future__ import annotations

import numpy as np

from ge_core.kernels.jit import compiled, frozen
from ge_core.ops.epilogue import Epilogue


def _finish_rows(y: np.ndarray, lo: int, hi: int, bias: np.ndarray, residual: np.ndarray, act: int,
                 params: np.ndarray, bias_per_column: bool, source: np.ndarray, scale: np.ndarray) -> None:
    """Rows lo..hi of y (N, C, L), as N*C rows: with a scale, first y <- source * scale[c] (an inference
    BatchNormalization's x * k, read once instead of a numpy product and a pass over it); then
    y <- act(y + bias[c] + residual), in place (bias[l] with
    bias_per_column: a MatMul's bias, one value per output feature, its rows as C); an empty bias or
    residual is skipped. params holds p0, p1 and the constants 0, 1, 6, 1/2 in y's dtype, so float32
    arithmetic stays float32 as in numpy's kernels (a float64 literal would widen it). Per channel row, the
    sums are one loop and the activation another, each with its tests outside it: with every test inside
    one loop the compiler kept it scalar (measured: (64, 1280) float32 with Relu 32 us, 2-3 us split). The
    row is still in cache for the second loop, and the arithmetic is unchanged. Indices are unsigned (no
    negative-index check). Callers take rows in a few large ranges: a call between compiled functions
    passes each array with a reference count taken and dropped (~50 ns), too much per row."""
    c, length = y.shape[1], y.shape[2]
    has_bias, has_residual = bias.size > 0, residual.size > 0
    p0, p1, zero, one, six, half = params[0], params[1], params[2], params[3], params[4], params[5]
    has_scale = scale.size > 0
    for p in range(lo, hi):
        b, ch = p // c, p % c
        if has_scale:
            factor = scale[ch]
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = source[b, ch, u] * factor
        if has_bias and bias_per_column and has_residual:
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = y[b, ch, u] + bias[u] + residual[b, ch, u]
        elif has_bias and bias_per_column:
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = y[b, ch, u] + bias[u]
        elif has_bias and has_residual:
            shift = bias[ch]
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = y[b, ch, u] + shift + residual[b, ch, u]
        elif has_bias:
            shift = bias[ch]
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = y[b, ch, u] + shift
        elif has_residual:
            for i in range(length):
                u = np.uint64(i)
                y[b, ch, u] = y[b, ch, u] + residual[b, ch, u]
        if act == 1:
            for i in range(length):
                u = np.uint64(i)
                v = y[b, ch, u]
                y[b, ch, u] = zero if v < zero else v  # NaN passes, as np.maximum's does
        elif act == 2:
            for i in range(length):
                u = np.uint64(i)
                v = y[b, ch, u]
                y[b, ch, u] = p0 * v if v < zero else v
        elif act == 3:  # max then min, as np.clip's ONNX form: min > max gives max everywhere
            for i in range(length):
                u = np.uint64(i)
                v = y[b, ch, u]
                v = p0 if v < p0 else v
                y[b, ch, u] = p1 if v > p1 else v
        elif act == 4:
            for i in range(length):
                u = np.uint64(i)
                t = p0 * y[b, ch, u] + p1
                y[b, ch, u] = zero if t < zero else (one if t > one else t)
        elif act == 5:
            for i in range(length):
                u = np.uint64(i)
                v = y[b, ch, u]
                t = v / six + half
                y[b, ch, u] = v * (zero if t < zero else (one if t > one else t))




apply_kernel = compiled(_finish_rows, exact=True)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_NONE = {dtype: (frozen(np.empty(0, dtype)), frozen(np.empty((0, 0, 0), dtype))) for dtype in DTYPES}


def runs_on(dtype: np.dtype) -> bool:
    """The compiled pass runs on float32/float64 accumulators, when numba is on."""
    return apply_kernel is not None and dtype in DTYPES


def apply(y: np.ndarray, bias: np.ndarray | None, residual: np.ndarray | None, ending: Epilogue,
          bias_axis: int = 1) -> None:
    """y <- act(y + bias + residual), in place; the bias holds one value per index of y's axis 1 (a Conv's
    channels) or, with bias_axis=-1, of its last axis (a MatMul's output features). `runs_on(y.dtype)` must
    hold, y (N, C, ...) or (..., F) must be C-contiguous and writable, residual of y's shape."""
    assert apply_kernel is not None
    per_column = bias_axis == -1
    flat = y.reshape(1, -1, y.shape[-1]) if per_column else y.reshape(y.shape[0], y.shape[1], -1)
    b, r, params = kernel_operands(flat.shape, y.dtype, bias, residual, ending, per_column)
    apply_kernel(flat, 0, flat.shape[0] * flat.shape[1], b, r, int(ending.act), params, per_column, frozen(flat),
                 _NONE[y.dtype][0])


def scaled(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, residual: np.ndarray | None,
           ending: Epilogue) -> np.ndarray:
    """act(x * scale + shift + residual) as a fresh array, scale and shift one value per channel (axis 1):
    an inference BatchNormalization and what follows it, in one pass over x, rounded as numpy's x * scale
    and then `apply` round. `runs_on(x.dtype)` must hold and scale be of x's dtype."""
    assert apply_kernel is not None
    y = np.empty(x.shape, dtype=x.dtype)
    flat = y.reshape(y.shape[0], y.shape[1], -1)
    source = np.ascontiguousarray(x).reshape(flat.shape)
    b, r, params = kernel_operands(flat.shape, y.dtype, shift, residual, ending, False)
    factors = np.ascontiguousarray(scale.reshape(-1), dtype=y.dtype)
    if factors.size != flat.shape[1]:  # read per channel by the compiled loop: checked before it runs
        raise ValueError(f"scale has {factors.size} values for {flat.shape[1]} channels")
    apply_kernel(flat, 0, flat.shape[0] * flat.shape[1], b, r, int(ending.act), params, False, frozen(source),
                 frozen(factors))
    return y


def kernel_operands(shape: tuple[int, ...], dtype: np.dtype, bias: np.ndarray | None, residual: np.ndarray | None,
                    ending: Epilogue, per_column: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bias, residual (reshaped to `shape`, empty when absent) and params arrays the compiled loop takes.
    The loop indexes the bias by channel (or column) and the residual as y: their sizes are checked here, before
    it runs (a reshape of the residual refuses a wrong size)."""
    no_bias, no_residual = _NONE[np.dtype(dtype)]
    b = no_bias if bias is None else np.ascontiguousarray(bias.reshape(-1), dtype=dtype)
    want = shape[2] if per_column else shape[1]
    if bias is not None and b.size != want:
        raise ValueError(f"the bias has {b.size} values where the epilogue adds one per {want} "
                         f"{'columns' if per_column else 'channels'}")
    r = no_residual if residual is None else np.ascontiguousarray(residual, dtype=dtype).reshape(shape)
    return frozen(b), frozen(r), frozen(np.array([ending.p0, ending.p1, 0.0, 1.0, 6.0, 0.5], dtype=dtype))
