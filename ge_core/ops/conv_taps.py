"""2-D stride-1 Conv with few output channels as ONE GEMM over all kernel taps, with no column buffer.

im2col copies every tap of every input channel into a (C*K, H*W) buffer before its one GEMM: when the conv
has few output channels (a DenseNet 3x3 conv, 128 -> 32; the 48 -> 12 heads of a DB text detector), that
copy costs more than the GEMM (11 MB written for 66 MFLOP at 48 x 80 x 80). Here the GEMM comes first:
(K*Cout, C) @ (C, Hp*Wp) gives every tap's contribution at every padded input position, and output (h, w)
sums tap (i, j)'s row at position (h + i*dh, w + j*dw). With each padded image flattened, that position
for all outputs is one contiguous slice, `Y[tap, :, i*dh*Wp + j*dw :][: H*Wp]`, so the K sums are K
slice-adds of (Cout, H*Wp); the result is cropped from (H, Wp) to (H, W) once (a fast path in
ge_core/kernels/conv_taps.py does the K adds and the crop in one compiled pass). One GEMM with M = K*Cout
runs at BLAS speed where K GEMMs with M = Cout do not (measured 1.5-2x faster than one GEMM per tap at
48 -> 12 and 128 -> 32), and it writes 2*K*Cout*Hp*Wp floats instead of K*C*H*W, so conv.py takes it when
Cout <= C/2.
"""

from __future__ import annotations

import numpy as np

from ge_core.ops import blas
from ge_core.ops.spatial import Window


def use_tap_gemm(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> bool:
    """Whether this conv is one the tap GEMM does faster than im2col (measured: 1.3-3x)."""
    return group == 1 and x.ndim == 4 and win.strides == (1, 1) and 2 * w.shape[0] <= w.shape[1] \
        and len(win.kernel) == 2 and win.kernel != (1, 1)


def tap_products(xp: np.ndarray, w: np.ndarray, win: Window) -> tuple[np.ndarray, np.ndarray]:
    """Every tap's contribution at every padded input position, (N, K, Cout, Hp*Wp), and where each tap's
    rows start in it (the flat offset i*dh*Wp + j*dw), for an already padded N x C x Hp x Wp input."""
    n, c, hp, wp = xp.shape
    cout, (dh, dw) = w.shape[0], win.dilations
    kh, kw = win.kernel
    every_tap = np.ascontiguousarray(w.transpose(2, 3, 0, 1)).reshape(kh * kw * cout, c)
    per_tap = blas.matmul(every_tap, xp.reshape(n, c, hp * wp)).reshape(n, kh * kw, cout, hp * wp)
    starts = np.array([i * dh * wp + j * dw for i, j in win.positions()], dtype=np.int64)
    return per_tap, starts


def tap_gemm_conv(xp: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
    """conv(xp, w) for an already padded N x C x Hp x Wp input, stride 1, one group."""
    n, _, hp, wp = xp.shape
    cout, (oh, ow) = w.shape[0], win.out
    size, length = hp * wp, oh * wp
    per_tap, starts = tap_products(xp, w, win)
    y = np.empty((n, cout, length), dtype=xp.dtype)
    for k, start in enumerate(starts.tolist()):
        end = min(size, start + length)  # the last taps' rows run past the image by up to kw - 1 columns
        part = per_tap[:, k, :, start:end]
        if k == 0:
            y[:, :, :end - start] = part
            y[:, :, end - start:] = 0
        else:
            y[:, :, :end - start] += part
    return np.ascontiguousarray(y.reshape(n, cout, oh, wp)[..., :ow])
