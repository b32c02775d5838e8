"""Depthwise 2-D convolution (one input channel per group) as K multiply-adds over long contiguous rows.

The straightforward kernel multiplies K strided views of the padded input: numpy then walks rows of W
elements, which for the small feature maps of mobile nets (7..28 wide) costs more in per-row overhead than
in arithmetic, and makes 2K passes over the output. Here each channel's padded image is flattened, so tap
(i, j) of a stride-1 conv is ONE contiguous slice of it, `flat[c, i*Wp + j : i*Wp + j + H*Wp]`: the K
slices are copied into a column buffer (N, C, K, H*Wp) and one batched matmul, (m, K) @ (K, H*Wp) per
channel, sums them. The result is cropped from (H, Wp) to (H, W) once (Wp - W extra columns of work).

A stride s > 1 is first split into s*s phases (`xp[..., a::s, b::s]`, one copy of the input): output
(h, w) of tap offset o reads phase (o % s) at (h + o // s), so every tap is a slice of one phase.
Dilations only change the offsets o = i * dilation. Measured 3-6x faster than the shifted views on the
depthwise layers of ShuffleNet and the OCR models.
"""

from __future__ import annotations

import numpy as np

from ge_core.ops.spatial import Window

COLUMN_BUDGET_ELEMENTS = 1 << 21  # column buffer (8 MB of float32), reused a block of channels at a time


def depthwise2d_or_1d(xp: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """A 1-D depthwise conv runs as a 2-D one over a height of 1."""
    if xp.ndim == 4:
        return depthwise2d(xp, w, group, win)
    flat = Window((1, *win.kernel), (1, *win.strides), (1, *win.dilations), (0, *win.pads_begin),
                  (0, *win.pads_end), (1, *win.out))
    return depthwise2d(xp[:, :, None], w[:, :, None], group, flat)[:, :, 0]


def depthwise2d(xp: np.ndarray, w: np.ndarray, group: int, win: Window) -> np.ndarray:
    """conv(xp, w) for an already padded N x C x Hp x Wp input, C == group, W of shape (C*m, 1, kh, kw)."""
    n, c = xp.shape[:2]
    (sh, sw), (dh, dw), (oh, ow) = win.strides, win.dilations, win.out
    mult, taps = w.shape[0] // group, len(list(win.positions()))
    phases, pw = _phases(xp, sh, sw)  # (N, C, sh, sw, rows * pw): flattened phase images
    length = oh * pw
    weights = w.reshape(c, mult, taps)
    y = np.empty((n, c, mult, length), dtype=xp.dtype)
    block = max(1, COLUMN_BUDGET_ELEMENTS // (n * taps * length))  # channels per column buffer
    buffer = np.empty((n, min(block, c), taps, length), dtype=xp.dtype)  # reused: stays in cache, no new pages
    for c0 in range(0, c, block):
        c1 = min(c, c0 + block)
        cols = buffer[:, : c1 - c0]
        for k, (i, j) in enumerate(win.positions()):
            oi, oj = i * dh, j * dw
            start = (oi // sh) * pw + oj // sw
            cols[:, :, k] = phases[:, c0:c1, oi % sh, oj % sw, start:start + length]
        np.matmul(weights[c0:c1], cols, out=y[:, c0:c1])  # per channel: (m, K) @ (K, length)
    return np.ascontiguousarray(y.reshape(n, c * mult, oh, pw)[..., :ow])


def _phases(xp: np.ndarray, sh: int, sw: int) -> tuple[np.ndarray, int]:
    """xp split into its sh*sw stride phases, each (ph, pw) image flattened; one spare zero row at the end so
    that the last tap's slice of (oh * pw) elements never runs past its phase."""
    n, c, hp, wp = xp.shape
    ph, pw = -(-hp // sh), -(-wp // sw)
    phases = np.zeros((n, c, sh, sw, ph + 1, pw), dtype=xp.dtype)
    for a in range(sh):
        for b in range(sw):
            part = xp[:, :, a::sh, b::sw]
            phases[:, :, a, b, :part.shape[2], :part.shape[3]] = part
    return phases.reshape(n, c, sh, sw, (ph + 1) * pw), pw
