"""2-D max and average pooling as compiled channels-last loops (numba), padding by skipping taps.

The numpy kernels (pool.py) pad a copy of the input, then reduce one strided view per kernel tap: several
passes over the map with short rows, 3-6x slower than ONNX Runtime's pools on Inception's and SqueezeNet's
maps. A loop along a row is no better: rows of 7..56 pixels make short vectors, and a compare per pixel a
branch. So these kernels do what conv_depthwise_jit.py does: the input is transposed once to channels-last
(N, H, W, C), and every output pixel folds its taps in as C-wide vector max/add operations, taps in the
padding skipped instead of a padded copy, each output row written straight back to NCHW. An average divides
by a count that is separable per axis (pool.py's `_tap_counts`), passed in as a row and a column factor.

Max follows np.fmax over the padded taps, as the numpy kernel does: a NaN tap never wins over a number or
over the padding's -inf, and a window of NaN alone gives NaN.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ops.conv_depthwise_jit import columns_inside
from ge_core.ops.jit import prange, threaded
from ge_core.ops.spatial import Window


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
    # Output columns every tap of a window row reaches inside the image: outside [inner_lo, inner_hi) a
    # window touches the padding.
    inner_lo, inner_hi = 0, ow
    for j in range(kw):
        lo, hi = columns_inside(j * dw - pl, sw, ow, width)
        inner_lo, inner_hi = max(inner_lo, lo), min(inner_hi, hi)
    for r in prange(n * oh):  # output rows, split over threads
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


pool_rows = threaded(_pool_rows, min_work=1 << 19)  # threaded from 512k taps read (~40 us serially)
AVAILABLE = pool_rows is not None
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Input pixels per channel up to which this kernel beats the numpy one (measured, float32, 3x3 pools, two
# threads: 1.3-2x faster on 14x14..28x28 maps, slower from 55x55 on, where the transposes cost more than
# they save).
MAX_PIXELS = 784


def supports(x: np.ndarray, win: Window) -> bool:
    """A 1-D or 2-D pool over float32/float64 on a map small enough for this kernel to win, when numba is
    on (ceil_mode windows included: they only reach further past the end, where taps are skipped)."""
    return AVAILABLE and x.ndim in (3, 4) and x.dtype in DTYPES and 0 < math.prod(x.shape[2:]) <= MAX_PIXELS


def _run(x: np.ndarray, win: Window, is_max: bool, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    assert pool_rows is not None
    if x.ndim == 3:  # 1-D: a height of 1
        flat = Window((1, *win.kernel), (1, *win.strides), (1, *win.dilations), (0, *win.pads_begin),
                      (0, *win.pads_end), (1, *win.out))
        return _run(x[:, :, None], flat, is_max, rows, cols)[:, :, 0]
    n, c, h, width = x.shape
    channels_last = np.empty((n, h, width, c), dtype=x.dtype)
    np.copyto(channels_last, x.transpose(0, 2, 3, 1))  # numpy's blocked transpose: faster than a plain loop
    y = np.empty((n, c, *win.out), dtype=x.dtype)
    pool_rows(channels_last, win.kernel, win.strides, win.dilations, win.pads_begin,
              is_max, rows.astype(x.dtype), cols.astype(x.dtype), y, work=y.size * math.prod(win.kernel))
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
