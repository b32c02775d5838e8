"""2-D stride-1 Conv with few output channels as one GEMM per kernel tap, with no column buffer.

im2col copies every tap of every input channel into a (C*K, H*W) buffer before its one GEMM: when the conv
has few output channels (a DenseNet 3x3 conv, 128 -> 32; the 48 -> 12 heads of a DB text detector), that
copy costs more than the GEMM (11 MB written for 66 MFLOP at 48 x 80 x 80). Here each channel's padded
image is flattened so that tap (i, j) over all output positions is one contiguous slice of it,
`flat[:, i*Wp + j : i*Wp + j + H*Wp]`, a matrix BLAS reads in place (row stride Hp*Wp); K GEMMs
(Cout, C) @ (C, H*Wp) are summed into the output, which is cropped from (H, Wp) to (H, W) once. It writes
2*K*Cout*H*Wp floats instead of K*C*H*W, so conv.py takes it when Cout <= C/2.
"""

from __future__ import annotations

import numpy as np

from ge_core.ops.spatial import Window


def use_tap_gemm(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> bool:
    """Whether this conv is one the tap GEMMs do faster than im2col (measured: 1.1-4.5x)."""
    return group == 1 and x.ndim == 4 and win.strides == (1, 1) and 2 * w.shape[0] <= w.shape[1] \
        and len(win.kernel) == 2 and win.kernel != (1, 1)


def tap_gemm_conv(xp: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
    """conv(xp, w) for an already padded N x C x Hp x Wp input, stride 1, one group."""
    n, c, hp, wp = xp.shape
    cout, (oh, ow), (dh, dw) = w.shape[0], win.out, win.dilations
    length = oh * wp
    flat = np.zeros((n, c, hp + 1, wp), dtype=xp.dtype)  # a spare zero row: the last tap's slice stays inside
    flat[:, :, :hp] = xp
    flat = flat.reshape(n, c, -1)
    y = np.empty((n, cout, length), dtype=xp.dtype)
    product = np.empty_like(y)
    for k, (i, j) in enumerate(win.positions()):
        start = i * dh * wp + j * dw
        np.matmul(w[:, :, i, j], flat[:, :, start:start + length], out=product if k else y)
        if k:
            y += product
    return np.ascontiguousarray(y.reshape(n, cout, oh, wp)[..., :ow])
