"""Depthwise 2-D convolution as one compiled loop over channels-last rows (numba), bias included.

The numpy kernel (conv_depthwise.py) copies every tap into a column buffer and runs a per-channel matmul:
several passes over memory and a GEMV per channel, 3-8x slower than ONNX Runtime's depthwise kernel on
the small maps of mobile nets. This one does what ORT's does: the channels are the innermost, vectorised
axis. The input is transposed once to (N, H, W, C); every output pixel then accumulates its taps as
C-wide multiply-adds (one SIMD run per tap, whatever the image width), with the padding handled by
skipping taps outside the image instead of a padded copy, and each output row is written straight back
to the NCHW result. On large maps a loop over the input's phase planes (phase_planes.py) runs instead:
per channel, each tap one contiguous multiply-add run over the output positions. A channel multiplier
m > 1 repeats each input channel m times first, so output channel c*m + k reads input channel c.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.kernels import phase_planes
from ge_core.kernels.jit import compiled, frozen
from ge_core.ops.spatial import Window


def _to_channels_last(x: np.ndarray, out: np.ndarray) -> None:
    """(N, C, P) -> (N, P, C), a block of positions at a time (reads and writes stay in cache), indexed with
    unsigned indices (numba's negative-index checks kept it scalar: 2-3x slower than numpy's blocked copy on
    many channels; now 1.0-2.4x faster than it: (1, 96, 112, 112) 0.78 -> 0.33 ms serially)."""
    n, c, p = x.shape
    blocks = (p + 63) // 64
    for t in range(n * blocks):
        b, p0 = t // blocks, (t % blocks) * 64
        p1 = min(p, p0 + 64)
        for ch in range(c):
            for q in range(p0, p1):
                out[b, np.uint64(q), np.uint64(ch)] = x[b, np.uint64(ch), np.uint64(q)]


def _columns_inside(offset: int, stride: int, out: int, width: int) -> tuple[int, int]:
    """The output columns [lo, hi) whose tap at `offset` (kernel column * dilation - left pad) lands inside
    an image row of `width` pixels."""
    lo = 0 if offset >= 0 else (stride - 1 - offset) // stride
    return lo, min(out, (width - 1 - offset) // stride + 1)


def _depthwise_rows(x: np.ndarray, w: np.ndarray, bias: np.ndarray, strides: tuple[int, int],
                    dilations: tuple[int, int], pads: tuple[int, int], y: np.ndarray) -> None:
    """x (N, H, W, C), w (kh, kw, C), bias (C,), y (N, C, OH, OW), one output row at a time: per tap, the
    range of output columns it reaches inside the image, then C-wide multiply-adds along that range."""
    n, h, width, c = x.shape
    kh, kw = w.shape[0], w.shape[1]
    oh, ow = y.shape[2], y.shape[3]
    sh, sw = strides
    dh, dw = dilations
    pt, pl = pads
    # Indexed in full, no row views in the loops: every view is a reference count taken and dropped (two
    # atomics), per output pixel and tap here (measured: the view form 1.5-2.5x slower). Unsigned indices
    # skip numba's negative-index check, which would stop the channel loop from vectorising.
    for r in range(n * oh):  # output rows
        b, oy = r // oh, r % oh
        acc = np.empty((ow, c), dtype=y.dtype)
        for ox in range(ow):
            for ch in range(c):
                acc[ox, np.uint64(ch)] = bias[np.uint64(ch)]
        for i in range(kh):
            iy = oy * sh + i * dh - pt
            if iy < 0 or iy >= h:
                continue
            for j in range(kw):
                offset = j * dw - pl
                lo, hi = columns_inside(offset, sw, ow, width)
                for ox in range(lo, hi):
                    ix = np.uint64(ox * sw + offset)
                    for ch in range(c):
                        u = np.uint64(ch)
                        acc[ox, u] += x[b, iy, ix, u] * w[i, j, u]
        for ch in range(c):
            for ox in range(ow):
                y[b, ch, oy, ox] = acc[ox, ch]


def _depthwise_phases(xflat: np.ndarray, w: np.ndarray, offsets: np.ndarray, bias: np.ndarray, wq: int,
                      y: np.ndarray) -> None:
    """xflat (N, C * block) the input's phase planes (phase_planes.py), w (C, taps), y (N, C, OH, OW): per
    channel plane, output positions p = oy*wq + ox computed as one contiguous run per tap (bias first, then
    the taps in order: the channels-last loop's sums, bit for bit, padding taps adding zeros), then the
    OW columns of each row copied out. Wins over the channels-last loop on large maps (no transposes, long
    vectors: 160x160 stride 2 and 80x80 1.9-2x, 28x28 1.4x), loses on small ones (7x7: 2x slower)."""
    n, c, oh, ow = y.shape
    block = xflat.shape[1] // c
    length = (oh - 1) * wq + ow
    source, target = xflat.reshape(-1), y.reshape(-1)
    for plane in range(n * c):  # (image, channel)
        ch = np.uint64(plane % c)
        acc = np.empty(length, dtype=y.dtype)
        start = bias[ch]
        for q in range(length):
            acc[np.uint64(q)] = start
        base = np.uint64(plane * block)
        for t in range(offsets.size):
            o, tap = base + np.uint64(offsets[t]), w[ch, np.uint64(t)]
            for q in range(length):
                u = np.uint64(q)
                acc[u] += source[o + u] * tap
        dst = np.uint64(plane * oh * ow)
        for oy in range(oh):
            src = np.uint64(oy * wq)
            for ox in range(ow):
                target[dst + np.uint64(ox)] = acc[src + np.uint64(ox)]
            dst += np.uint64(ow)


columns_inside = compiled(_columns_inside) or _columns_inside
# Threaded from ~50 us of serial work (128k elements copied, 512k multiply-adds): see jit.py on launches.
to_channels_last = compiled(_to_channels_last)
depthwise_rows = compiled(_depthwise_rows)
depthwise_phases = compiled(_depthwise_phases)
AVAILABLE = depthwise_rows is not None
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Output pixels per channel from which the phase-plane loop beats the channels-last one (measured, float32,
# two threads, 15 maps of DB, CRNN and ShuffleNet: from 28x28 and 56x56 stride 2 on 1.1-2x faster, 20x20
# even, 14x14 and smaller slower).
PHASES_MIN_PIXELS = 500


def supports(x: np.ndarray, w: np.ndarray, group: int) -> bool:
    """A 1-D or 2-D depthwise conv (one input channel per group) in float32/float64, when numba is on. On every
    map size measured (4x4 to 320x320, 16 to 960 channels, two threads) it is as fast as the numpy kernel or
    faster: 1.0-1.7x on 40x40..112x112 maps, 20x at 16 x 160 x 160 stride 2, where numpy's batched matmul
    has 16 rows."""
    return AVAILABLE and x.ndim in (3, 4) and w.shape[1] == 1 and group == x.shape[1] and x.dtype in DTYPES \
        and w.dtype == x.dtype


def depthwise(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, win: Window) -> np.ndarray:
    """conv(x, w) + b for an unpadded N x C x [H x] W input and W of shape (C*m, 1, *kernel)."""
    assert to_channels_last is not None and depthwise_rows is not None
    if x.ndim == 3:  # 1-D: a height of 1
        flat = Window((1, *win.kernel), (1, *win.strides), (1, *win.dilations), (0, *win.pads_begin),
                      (0, *win.pads_end), (1, *win.out))
        return depthwise(x[:, :, None], w[:, :, None], b, flat)[:, :, 0]
    n, c, h, width = x.shape
    cout = w.shape[0]
    if cout != c:  # channel multiplier: output channel c*m + k reads input channel c
        x = np.repeat(x, cout // c, axis=1)
    x = np.ascontiguousarray(x)
    bias = np.zeros(cout, dtype=x.dtype) if b is None else np.ascontiguousarray(b, dtype=x.dtype)
    y = np.empty((n, cout, *win.out), dtype=x.dtype)
    if math.prod(win.out) >= PHASES_MIN_PIXELS:  # large maps: contiguous runs per tap, no transposes
        assert depthwise_phases is not None
        xflat, hq, wq = phase_planes.split(x, win)
        offsets = phase_planes.tap_offsets(1, *win.kernel, *win.dilations, *win.strides, hq, wq)
        taps = np.ascontiguousarray(w.reshape(cout, -1))
        depthwise_phases(frozen(xflat), frozen(taps), frozen(offsets), frozen(bias), wq, y)
        return y
    channels_last = np.empty((n, h * width, cout), dtype=x.dtype)
    to_channels_last(frozen(x.reshape(n, cout, h * width)), channels_last)
    taps = np.ascontiguousarray(w[:, 0].transpose(1, 2, 0))  # (kh, kw, C)
    depthwise_rows(frozen(channels_last.reshape(n, h, width, cout)), frozen(taps), frozen(bias), win.strides,
                   win.dilations, win.pads_begin, y)
    return y
