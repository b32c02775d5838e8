"""im2col for 2-D convolutions as one compiled, threaded loop (numba), the padding written as zeros.

The numpy im2col (conv.py) first copies the input into a zero-padded buffer, then copies one strided view
per kernel tap into the column buffer: two passes, one thread, and a view copy per tap whose rows are as
short as the image (7..56 pixels). Measured on Inception and ResNet, that was 15-23% of a whole run beside
the GEMMs it feeds. Here every (channel, tap) row block of the column buffer is written once, straight
from the unpadded input (the taps that fall into the padding written as zeros), and the blocks are split
over numba's threads. The result is the numpy im2col's buffer exactly: a copy, no arithmetic.
"""

from __future__ import annotations

import numpy as np

from ge_core.kernels.conv_depthwise import columns_inside
from ge_core.kernels.jit import compiled, frozen
from ge_core.ops.spatial import Window


def _im2col(x: np.ndarray, kernel: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int],
            pads: tuple[int, int], cols: np.ndarray) -> None:
    """x (N, C, H, W) -> cols (N, C, kh, kw, OH, OW): cols[b, c, i, j, oy, ox] = x[b, c, oy*sh + i*dh - pt,
    ox*sw + j*dw - pl], zero where that lies in the padding."""
    n, c, h, width = x.shape
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    pt, pl = pads
    oh, ow = cols.shape[4], cols.shape[5]
    # No array views in the loops: each one is a reference count taken and dropped (atomics, 3x slower here).
    # Unsigned column indices: numba checks a signed index for a negative (Python) one on every access,
    # which stops a copy from vectorising; these are never negative.
    for t in range(n * c * kh):  # (image, channel, kernel row) blocks
        b, rest = t // (c * kh), t % (c * kh)
        ch, i = rest // kh, rest % kh
        for j in range(kw):
            offset = j * dw - pl
            lo, hi = columns_inside(offset, sw, ow, width)
            for oy in range(oh):
                iy = oy * sh + i * dh - pt
                inside = 0 <= iy < h and lo < hi
                first, last = (lo, hi) if inside else (ow, ow)
                for q in range(first):
                    cols[b, ch, i, j, oy, np.uint64(q)] = 0.0
                for q in range(last, ow):
                    cols[b, ch, i, j, oy, np.uint64(q)] = 0.0
                if not inside:
                    continue
                start = np.uint64(lo * sw + offset)
                if sw == 1:  # contiguous: a vector copy
                    for q in range(hi - lo):
                        cols[b, ch, i, j, oy, np.uint64(lo + q)] = x[b, ch, iy, start + np.uint64(q)]
                else:
                    step = np.uint64(sw)
                    for q in range(hi - lo):
                        cols[b, ch, i, j, oy, np.uint64(lo + q)] = x[b, ch, iy, start + np.uint64(q) * step]


im2col_kernel = compiled(_im2col)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(x: np.ndarray) -> bool:
    """A 2-D conv's input in float32/float64, when numba is on."""
    return im2col_kernel is not None and x.ndim == 4 and x.dtype in DTYPES


def im2col(x: np.ndarray, win: Window) -> np.ndarray:
    """The column buffer (N, C, kh, kw, OH, OW) of an unpadded N x C x H x W input."""
    assert im2col_kernel is not None
    cols = np.empty((*x.shape[:2], *win.kernel, *win.out), dtype=x.dtype)
    im2col_kernel(frozen(np.ascontiguousarray(x)), win.kernel, win.strides, win.dilations, win.pads_begin, cols)
    return cols
