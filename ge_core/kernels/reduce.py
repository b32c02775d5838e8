"""Softmax along a contiguous last axis, and GlobalAveragePool, as compiled row loops (numba).

numpy's Softmax is five passes with a fresh array: the row maximum (its max along short rows runs at ~0.6
ns an element here, (1536, 128) float32: 0.12 ms, more than the exp), x - max, exp, the row sum, the
division. Here one loop finds each row's maximum and writes x - max; in float32 a second loop takes the
exp (exp32.py's vectorised polynomial), sums each row (in float32, reordered) and divides by the sum; in float64
numpy's exp runs in place between the two loops (no float64 polynomial here). The maximum's comparisons may
assume no NaN: where a row holds one, whatever maximum the loop returns, the row's sum is NaN and so is
every quotient, as with numpy's. The sum is reordered to vectorise, so results differ from numpy's
pairwise float32 sums in the last bits.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels.exp32 import exp32
from ge_core.kernels.jit import compiled, frozen
from ge_core.kernels.registry import FastPath
from ge_core.ops.reduce import softmax_axis


def _shift_rows(x: np.ndarray, y: np.ndarray) -> None:
    """y[r] = x[r] - max(x[r]). The maximum is kept in 16 lanes and folded at the end: a running maximum
    stays scalar (measured (512, 128) float32: 25 -> 14 us). Indexed in full with unsigned column indices:
    no row views (a reference count each) and no negative-index checks in the vectorised loops."""
    rows, length = x.shape
    full = length - length % 16
    blocks = (rows + 15) // 16
    for block in range(blocks):  # blocks of 16 rows: one lane buffer per block
        lanes = np.empty(16, dtype=x.dtype)
        for r in range(block * 16, min(rows, block * 16 + 16)):
            for lane in range(16):
                lanes[lane] = x[r, 0]
            for i in range(0, full, 16):
                for lane in range(16):
                    v = x[r, np.uint64(i + lane)]
                    lanes[lane] = v if v > lanes[lane] else lanes[lane]
            best = lanes[0]
            for lane in range(1, 16):
                best = lanes[lane] if lanes[lane] > best else best
            for i in range(full, length):
                v = x[r, np.uint64(i)]
                best = v if v > best else best
            for i in range(length):
                u = np.uint64(i)
                y[r, u] = x[r, u] - best


def _normalize_rows(y: np.ndarray) -> None:
    """y[r] /= sum(y[r]), in place."""
    rows, length = y.shape
    for r in range(rows):
        total = 0.0
        for i in range(length):
            total += y[r, np.uint64(i)]
        for i in range(length):
            u = np.uint64(i)
            y[r, u] = y[r, u] / total


def _exp_normalize_rows32(y: np.ndarray) -> None:
    """y[r] = exp(y[r]) / sum(exp(y[r])), in place, float32: exp32's vectorised polynomial (exp32.py) and the
    sum in one loop, then the division; one pass fewer than numpy's exp and _normalize_rows."""
    rows, length = y.shape
    for r in range(rows):
        total = np.float32(0.0)  # float32, as numpy sums float32: a float64 sum kept the loop 2x slower
        for i in range(length):
            u = np.uint64(i)
            e = exp32(y[r, u])
            y[r, u] = e
            total += e
        for i in range(length):
            u = np.uint64(i)
            y[r, u] = y[r, u] / total


def _mean_rows(x: np.ndarray, y: np.ndarray) -> None:
    """y[r] = mean(x[r]), summed in float64 (GlobalAveragePool over (N*C, H*W) rows)."""
    rows, length = x.shape
    for r in range(rows):
        total = 0.0
        for i in range(length):
            total += x[r, np.uint64(i)]
        y[r] = total / length


# threaded from ~50 us of serial work (128k and 256k elements)
shift_rows = compiled(_shift_rows, reassociate=True, finite=True)
normalize_rows = compiled(_normalize_rows, reassociate=True)
exp_normalize_rows32 = compiled(_exp_normalize_rows32, reassociate=True)
mean_rows = compiled(_mean_rows, reassociate=True)
# Row length from which the one-loop float32 exp wins (measured: (12 x 128, 128) 159 -> 95 us, (512, 128)
# even; on rows of 10 numpy's exp over the whole array is faster: 17 against 28 us for 1000 rows).
LONG_ROW = 32
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(x: np.ndarray) -> bool:
    return shift_rows is not None and normalize_rows is not None and x.dtype in DTYPES and x.ndim >= 1 \
        and x.size > 0 and x.shape[-1] > 0


def softmax_last_axis(x: np.ndarray) -> np.ndarray:
    """Softmax of x along its last axis (see the module's docstring on NaN and rounding)."""
    assert shift_rows is not None and normalize_rows is not None
    flat = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
    y = np.empty_like(flat)
    shift_rows(frozen(flat), y)
    if y.dtype == np.float32 and exp_normalize_rows32 is not None and y.shape[1] >= LONG_ROW:
        exp_normalize_rows32(y)
    else:
        np.exp(y, out=y)
        normalize_rows(y)
    return y.reshape(x.shape)


def mean_last_axes(x: np.ndarray, axes: int) -> np.ndarray:
    """The mean over x's last `axes` axes (kept as 1s), float32/float64 x, summed in float64 and rounded
    once to x's dtype, as numpy's mean(dtype=float64) does (the sum's order differs: the last float64
    bits may, the rounded result practically never)."""
    assert mean_rows is not None
    keep = x.shape[:x.ndim - axes]
    flat = np.ascontiguousarray(x).reshape(math.prod(keep), -1)
    y = np.empty(flat.shape[0], dtype=np.float64)
    mean_rows(frozen(flat), y)
    return y.astype(x.dtype).reshape(*keep, *(1,) * axes)


def _softmax(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    if not supports(x):
        return None
    if node.opset < 13:  # coerced to 2-D at the axis: the normalised axis is always the last
        data = x.reshape(math.prod(x.shape[:softmax_axis(node, x.ndim)]), -1)
    elif softmax_axis(node, x.ndim) == x.ndim - 1:
        data = x
    else:
        return None
    return [softmax_last_axis(data).reshape(x.shape)]


def _global_average_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    if mean_rows is None or x.dtype not in DTYPES or x.size == 0 or x.ndim <= 2:
        return None
    return [mean_last_axes(x, x.ndim - 2)]


PATHS = [
    FastPath("Softmax.rows", "Softmax", _softmax, "one pass for the maximum, one for exp and the sum (float32)"),
    FastPath("GlobalAveragePool.rows", "GlobalAveragePool", _global_average_pool,
             "the mean of each (image, channel) in one compiled pass, summed in float64"),
]
