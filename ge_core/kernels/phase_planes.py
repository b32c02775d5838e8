"""A conv's or pool's input as phase planes: padded, and split by stride phase, so that every kernel tap reads
a contiguous run of the input for a run of output positions.

Pad a channel plane (Hp x Wp) and output pixel (oy, ox) reads tap (i, j) at padded (sh*oy + i*dh,
sw*ox + j*dw). With stride 1, flatten the plane: the tap lies at i*dh*Wp + j*dw + (oy*Wp + ox), so for output
positions p = oy*Wp + ox counted over a grid Wp wide (the columns past OW computed and dropped) each tap reads
input[offset(i, j) + p], consecutive for consecutive p. A stride s > 1 breaks that: consecutive outputs read
every s-th input. So the padded plane is split into its s*s phases, phase (a, b) holding the rows a, a+s, ...
and the columns b, b+s, ...: tap (i, j) then lies in phase ((i*dh) % sh, (j*dw) % sw), (i*dh) // sh rows
and (j*dw) // sw columns down its phase plane, and consecutive outputs read consecutive values there again.
Stride 1 is the special case of one phase: the padded copy.

conv_depthwise.py computes large depthwise maps on these planes; `split` builds them, `tap_offsets` gives
each tap's offset.
"""

from __future__ import annotations

import functools

import numpy as np

from ge_core.kernels.jit import compiled, frozen
from ge_core.ops.spatial import Window


def _phase_split(x: np.ndarray, pads: tuple[int, int], strides: tuple[int, int], xq: np.ndarray) -> None:
    """x (N, C, H, W) -> xq (N, C, sh, sw, Hq, Wq): xq[n, c, a, b, i, j] = x[n, c, sh*i + a - pt,
    sw*j + b - pl], zero where that lies in the padding (or past it). With stride 1 it is the padded copy."""
    n, c, h, width = x.shape
    sh, sw = strides
    pt, pl = pads
    hq, wq = xq.shape[4], xq.shape[5]
    source, target = x.reshape(-1), xq.reshape(-1)  # flat, unsigned indices: no negative-index checks
    for phase_plane in range(n * c * sh * sw):  # (image, channel, row phase, column phase)
        bb = phase_plane % sw
        a = (phase_plane // sw) % sh
        plane = phase_plane // (sw * sh)  # (image, channel)
        # the columns j with sw*j + bb - pl inside [0, width): [lo, hi)
        lo = min(wq, max(0, (pl - bb + sw - 1) // sw))
        hi = max(lo, min(wq, (width - 1 + pl - bb) // sw + 1))
        dst = np.uint64(phase_plane * hq * wq)
        for i in range(hq):
            src_row = sh * i + a - pt
            inside = 0 <= src_row < h
            first, last = (lo, hi) if inside else (wq, wq)
            for j in range(first):
                target[dst + np.uint64(j)] = 0.0
            if inside:
                src = np.uint64((plane * h + src_row) * width + bb - pl + sw * first)
                for j in range(last - first):
                    target[dst + np.uint64(first + j)] = source[src + np.uint64(sw * j)]
            for j in range(last, wq):
                target[dst + np.uint64(j)] = 0.0
            dst += np.uint64(wq)


phase_split = compiled(_phase_split, exact=True)


def split(x: np.ndarray, win: Window) -> tuple[np.ndarray, int, int]:
    """x (N, C, H, W) as phase planes (N, C * sh * sw * Hq * Wq), with Hq and Wq: x itself, flattened, when
    there is neither padding nor a stride."""
    assert phase_split is not None
    n, c, h, width = x.shape
    (pt, pl), (pb, pr) = win.pads_begin, win.pads_end
    sh, sw = win.strides
    hq, wq = -(-(h + pt + pb) // sh), -(-(width + pl + pr) // sw)
    if not (pt or pb or pl or pr or sh > 1 or sw > 1):
        return np.ascontiguousarray(x).reshape(n, c * h * width), hq, wq
    xq = np.empty((n, c, sh, sw, hq, wq), dtype=x.dtype)
    phase_split(frozen(np.ascontiguousarray(x)), (pt, pl), (sh, sw), xq)
    return xq.reshape(n, -1), hq, wq


@functools.lru_cache(maxsize=512)
def tap_offsets(cg: int, kh: int, kw: int, dh: int, dw: int, sh: int, sw: int, hq: int, wq: int) -> np.ndarray:
    """Reduction step (c, i, j) -> its tap's offset in the flat phase planes (c, sh, sw, hq, wq): tap row
    i*dh lies in phase (i*dh) % sh, (i*dh) // sh rows down; c-major as W's layout."""
    c, i, j = np.meshgrid(np.arange(cg), np.arange(kh), np.arange(kw), indexing="ij")
    ty, tx = i * dh, j * dw
    phase = (c * sh + ty % sh) * sw + tx % sw
    return (phase * hq * wq + (ty // sh) * wq + tx // sw).reshape(-1).astype(np.int64)
