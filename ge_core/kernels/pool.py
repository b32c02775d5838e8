"""2-D max and average pooling as compiled channels-last loops (numba), padding by skipping taps.

The numpy kernels (pool.py) pad a copy of the input, then reduce one strided view per kernel tap: several
passes over the map with short rows, 3-6x slower than ONNX Runtime's pools on Inception's and SqueezeNet's
maps. A loop along a row is no better: rows of 7..56 pixels make short vectors, and a compare per pixel a
branch. So these kernels do what conv_depthwise.py does: the input is transposed once to channels-last
(N, H, W, C), and every output pixel folds its taps in as C-wide vector max/add operations, taps in the
padding skipped instead of a padded copy, each output row written straight back to NCHW. An average divides
by a count that is separable per axis (pool.py's `_tap_counts`), passed in as a row and a column factor.

Max follows np.fmax over the padded taps, as the numpy kernel does: a NaN tap never wins over a number or
over the padding's -inf, and a window of NaN alone gives NaN.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels.checks import check_window
from ge_core.kernels.conv_depthwise import columns_inside
from ge_core.kernels.jit import compiled, frozen
from ge_core.kernels.registry import FastPath
from ge_core.ops.pool import average_pool_geometry, max_pool_window
from ge_core.ops.spatial import Window


def _inner_columns(kw: int, dw: int, pl: int, sw: int, ow: int, width: int) -> tuple[int, int]:
    """The output columns [lo, hi) whose every tap of a window row lands inside the image: outside them a
    window touches the padding."""
    inner_lo, inner_hi = 0, ow
    for j in range(kw):
        lo, hi = columns_inside(j * dw - pl, sw, ow, width)
        inner_lo, inner_hi = max(inner_lo, lo), min(inner_hi, hi)
    return inner_lo, inner_hi


inner_columns = compiled(_inner_columns) or _inner_columns


def _pool_rows(x: np.ndarray, kernel: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int],
               pads: tuple[int, int], is_max: bool, row_scale: np.ndarray, col_scale: np.ndarray,
               y: np.ndarray) -> None:
    """x (N, H, W, C) channels-last, y (N, C, OH, OW): per output row, the max (is_max) or the scaled sum
    (times row_scale[oy] * col_scale[ox]) of every window's taps inside the image."""
    n, h, width, c = x.shape
    oh, ow = y.shape[2], y.shape[3]
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    pt, pl = pads
    inner_lo, inner_hi = inner_columns(kw, dw, pl, sw, ow, width)
    for r in range(n * oh):  # output rows
        b, oy = r // oh, r % oh
        acc = np.empty((ow, c), dtype=y.dtype)
        if is_max:  # np.fmax over the padded taps: -inf where padding is a tap, else NaN until a number
            padded_row = oy * sh - pt < 0 or oy * sh + (kh - 1) * dh - pt >= h
            for ox in range(ow):
                acc[ox] = -np.inf if padded_row or ox < inner_lo or ox >= inner_hi else np.nan
        else:
            acc[:] = 0.0
        for i in range(kh):
            iy = oy * sh + i * dh - pt
            if iy < 0 or iy >= h:
                continue
            src = x[b, iy]
            for j in range(kw):
                offset = j * dw - pl
                lo, hi = columns_inside(offset, sw, ow, width)
                for ox in range(lo, hi):
                    row, pixel = acc[ox], src[ox * sw + offset]
                    if is_max:
                        for ch in range(c):
                            v, best = pixel[ch], row[ch]
                            row[ch] = v if v > best or best != best else best  # a select, no branch
                    else:
                        for ch in range(c):
                            row[ch] += pixel[ch]
        if is_max:
            for ch in range(c):
                for ox in range(ow):
                    y[b, ch, oy, ox] = acc[ox, ch]
        else:
            for ch in range(c):
                for ox in range(ow):
                    y[b, ch, oy, ox] = acc[ox, ch] * (row_scale[oy] * col_scale[ox])


def _pool_separable(x: np.ndarray, kernel: tuple[int, int], strides: tuple[int, int],
                    dilations: tuple[int, int], pads: tuple[int, int], is_max: bool, row_scale: np.ndarray,
                    col_scale: np.ndarray, y: np.ndarray) -> None:
    """_pool_rows on x (N, C, H, W) as it is, for large maps, one axis at a time as the numpy kernel does
    (pool.py's `_reduce_taps`): per output row of one channel, the kh input rows folded into one row of the
    input's width (contiguous: vectorised), then that row's kw taps per output column. The same values: max
    and sum are folded per axis in the numpy kernel's order, with the same NaN rule."""
    n, c, h, width = x.shape
    oh, ow = y.shape[2], y.shape[3]
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    pt, pl = pads
    inner_lo, inner_hi = inner_columns(kw, dw, pl, sw, ow, width)
    for plane in range(n * c):  # (image, channel) planes; one row buffer per plane
        b, ch = plane // c, plane % c
        folded = np.empty(width, dtype=y.dtype)
        for oy in range(oh):
            if is_max:  # -inf where the window's rows reach into the padding, else NaN until a number
                padded_row = oy * sh - pt < 0 or oy * sh + (kh - 1) * dh - pt >= h
                start_value = -np.inf if padded_row else np.nan
                for ix in range(width):
                    folded[np.uint64(ix)] = start_value
            else:
                for ix in range(width):
                    folded[np.uint64(ix)] = 0.0
            for i in range(kh):
                iy = oy * sh + i * dh - pt
                if iy < 0 or iy >= h:
                    continue
                if is_max:
                    for ix in range(width):
                        u = np.uint64(ix)
                        v, best = x[b, ch, iy, u], folded[u]
                        folded[u] = v if (v > best) | (best != best) else best  # np.fmax, as a select
                else:
                    for ix in range(width):
                        u = np.uint64(ix)
                        folded[u] += x[b, ch, iy, u]
            if kw == 1 and inner_lo < inner_hi:  # a window one column wide (the CRNN's 2x1 pools): a copy
                for ox in range(inner_lo, inner_hi):
                    v = folded[np.uint64(ox * sw - pl)]
                    y[b, ch, oy, np.uint64(ox)] = v if is_max else v * (row_scale[oy] * col_scale[ox])
                edges = (0, inner_lo, inner_hi, ow)
            elif is_max and kw == 2 and dw == 1 and inner_lo < inner_hi:  # 2-wide max, unrolled
                for ox in range(inner_lo, inner_hi):
                    u = np.uint64(ox * sw - pl)
                    a, v1 = folded[u], folded[u + np.uint64(1)]
                    y[b, ch, oy, np.uint64(ox)] = v1 if (v1 > a) | (a != a) else a
                edges = (0, inner_lo, inner_hi, ow)
            elif is_max and kw == 3 and dw == 1 and inner_lo < inner_hi:  # the common 3-wide max: the interior unrolled
                for ox in range(inner_lo, inner_hi):
                    u = np.uint64(ox * sw - pl)
                    a, v1, v2 = folded[u], folded[u + np.uint64(1)], folded[u + np.uint64(2)]
                    a = v1 if (v1 > a) | (a != a) else a
                    y[b, ch, oy, np.uint64(ox)] = v2 if (v2 > a) | (a != a) else a
                edges = (0, inner_lo, inner_hi, ow)
            elif kw == 3 and dw == 1 and inner_lo < inner_hi:  # the 3-wide average
                for ox in range(inner_lo, inner_hi):
                    u = np.uint64(ox * sw - pl)
                    total = folded[u] + folded[u + np.uint64(1)] + folded[u + np.uint64(2)]
                    y[b, ch, oy, np.uint64(ox)] = total * (row_scale[oy] * col_scale[ox])
                edges = (0, inner_lo, inner_hi, ow)
            else:
                edges = (0, ow, ow, ow)
            for part in range(2):
                for ox in range(edges[2 * part], edges[2 * part + 1]):
                    padded = ox < inner_lo or ox >= inner_hi
                    best = (-np.inf if padded else np.nan) if is_max else 0.0
                    for j in range(kw):
                        ix = ox * sw + j * dw - pl
                        if 0 <= ix < width:
                            v = folded[np.uint64(ix)]
                            if is_max:
                                best = v if (v > best) | (best != best) else best
                            else:
                                best += v
                    y[b, ch, oy, ox] = best if is_max else best * (row_scale[oy] * col_scale[ox])


pool_separable = compiled(_pool_separable)
pool_rows = compiled(_pool_rows)
AVAILABLE = pool_rows is not None
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Input pixels per channel up to which the channels-last loop beats the NCHW one (measured, float32, 3x3 pools,
# two threads: 1.3-2x faster on 14x14..28x28 maps; from 54x54 on the separable NCHW loop is 1.0-3.6x faster
# than the numpy kernel and the channels-last one, whose transposes cost more than they save).
MAX_PIXELS = 784


def supports(x: np.ndarray, win: Window) -> bool:
    """A 1-D or 2-D pool over float32/float64, when numba is on (ceil_mode windows included: they only reach
    further past the end, where taps are skipped)."""
    return AVAILABLE and x.ndim in (3, 4) and x.dtype in DTYPES and math.prod(x.shape[2:]) > 0


def _run(x: np.ndarray, win: Window, is_max: bool, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    assert pool_rows is not None
    if x.ndim == 3:  # 1-D: a height of 1
        flat = Window((1, *win.kernel), (1, *win.strides), (1, *win.dilations), (0, *win.pads_begin),
                      (0, *win.pads_end), (1, *win.out))
        return _run(x[:, :, None], flat, is_max, rows, cols)[:, :, 0]
    n, c, h, width = x.shape
    if h * width > MAX_PIXELS:  # large maps: pooled in NCHW as they are, one axis at a time, no transposes
        assert pool_separable is not None
        y = np.empty((n, c, *win.out), dtype=x.dtype)
        pool_separable(frozen(np.ascontiguousarray(x)), win.kernel, win.strides, win.dilations, win.pads_begin,
                       is_max, frozen(rows.astype(x.dtype)), frozen(cols.astype(x.dtype)), y)
        return y
    channels_last = np.empty((n, h, width, c), dtype=x.dtype)
    np.copyto(channels_last, x.transpose(0, 2, 3, 1))  # numpy's blocked transpose: faster than a plain loop
    y = np.empty((n, c, *win.out), dtype=x.dtype)
    pool_rows(frozen(channels_last), win.kernel, win.strides, win.dilations, win.pads_begin,
              is_max, frozen(rows.astype(x.dtype)), frozen(cols.astype(x.dtype)), y)
    return y


_NO_SCALE = np.ones(1)


def max_pool(x: np.ndarray, win: Window) -> np.ndarray:
    """MaxPool of an unpadded N x C x [H x] W input."""
    return _run(x, win, True, _NO_SCALE, _NO_SCALE)


def average_pool(x: np.ndarray, win: Window, counts: np.ndarray) -> np.ndarray:
    """AveragePool of an unpadded N x C x [H x] W input; `counts` is the outer product of per-axis tap counts
    (pool.py's `_tap_counts`): 1 / counts[oy, ox] = rows[oy] * cols[ox] with the factors below."""
    grid = counts.reshape(-1, counts.shape[-1]).astype(np.float64)  # (OH, OW); 1-D: (1, OW)
    rows = 1.0 / grid[:, 0]
    cols = grid[0, 0] / grid[0, :]
    return _run(x, win, False, rows, cols)


def _max_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    if len(node.outputs) > 1 and node.outputs[1]:
        return None  # the Indices output: the reference computes it
    win = max_pool_window(node, inputs)
    if not supports(x, win):
        return None
    check_window(node, x, win)
    return [max_pool(x, win)]


def _average_pool(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x = inputs[0]
    assert x is not None
    if x.dtype not in DTYPES:
        return None
    win, counts = average_pool_geometry(node, inputs)
    if not supports(x, win):
        return None
    check_window(node, x, win)
    return [average_pool(x, win, counts)]


PATHS = [
    FastPath("MaxPool.rows", "MaxPool", _max_pool, "1-D/2-D max pools in one compiled pass, no padded copy"),
    FastPath("AveragePool.rows", "AveragePool", _average_pool,
             "1-D/2-D average pools in one compiled pass, no padded copy"),
]
