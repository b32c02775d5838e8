"""float32 convolutions with a kernel larger than 1x1 as an implicit GEMM over the input's phase planes
(numba + the LLVM microkernels of simd_microkernel.py), with the bias, residual and activation applied to
each output channel while it is in cache. 1x1 convs stay a plain OpenBLAS GEMM (conv.py): measured, this
kernel was no faster there, and slower inside whole models.

The im2col path (conv.py) copies every kernel tap of the input into a column buffer (9x the input for a
3x3 conv), hands it to OpenBLAS, and then makes a pass over the result for the epilogue. Here nothing is
copied per tap: on the phase planes (phase_planes_jit.py) output position p = oy*Wq + ox, counted over a
grid Wq wide, reads tap (c, i, j) at offset(c, i, j) + p, consecutive for consecutive p. So the GEMM's B
row for reduction step (c, i, j) is the flat input at that offset, and the microkernel computes 6 output
channels x 32 such positions in registers (the Wq - OW columns past each row computed and dropped: 2 of 15
on a 13x13 map, 2 of 57 on 55x55). When those dropped columns and the rounding of the channels to 6 cost
more than rounding the pixels to 6 and the channels to 32, conv_pixels_jit.py's kernel runs instead.

Measured, hot, two threads, against the im2col path with its separate epilogue pass: 3x3 convs of
SqueezeNet, Inception and ResNet 1.0-1.9x faster, first 3-channel convs (7x7 and 3x3, stride 2) 1.3-2.7x,
24-channel 3x3 on 160x160 3.4x; one core reaches 175-220 GFLOP/s (OpenBLAS's SkylakeX kernels: ~210).
In a whole SqueezeNet run its 3x3 convs took 0.21 ms against 0.39 ms through im2col.

Blocking: the reduction runs in chunks of KC steps (a chunk's input rows for a group of PB tiles stay in
L2 while every output-channel block passes over them); work items are (image, group, channel chunk, tile
group) and split over numba's threads, then a second loop writes the output channels with the epilogue
(epilogue.finish_rows: the same arithmetic as the separate pass). The last tile of an image may read past
the input's end: it reads from a zero-filled copy of its rows instead.
"""

from __future__ import annotations

import functools
import math
import weakref

import numpy as np

from ge_core.ops import conv_pixels_jit, epilogue, phase_planes_jit
from ge_core.ops.conv_tiles import work_item
from ge_core.ops.epilogue import Epilogue
from ge_core.ops.jit import prange, threaded
from ge_core.ops.simd_microkernel import MR, NR, microkernel
from ge_core.ops.spatial import Window

KC = 256  # reduction steps per pass over a tile group's input rows
PB = 4  # tiles (NR output positions each) per tile group
TARGET_ITEMS = 4  # split the output channels too when a map has fewer tile groups than this
FLOAT = np.dtype(np.float32)


def _conv_kernel(xflat: np.ndarray, limit: int, wpack: np.ndarray, offsets: np.ndarray, group_stride: int,
                 tiles: int, chunks: int, buf: np.ndarray, wp: int, y: np.ndarray, bias: np.ndarray,
                 residual: np.ndarray, act: int, params: np.ndarray) -> None:
    """Phase 1: buf[n, g, m, p] = sum_k wpack[g, m // MR, k, m % MR] * xflat[n, g*group_stride + offsets[k] + p]
    for p < tiles*NR; phase 2: y[n, g*Mg + m, oy, ox] = epilogue(buf[n, g, m, oy*wp + ox]) for m < Mg.
    xflat (N, L) holds `limit` valid floats per image; reads past them count as zeros."""
    n_img, n_groups, m_blocks, steps = xflat.shape[0], wpack.shape[0], wpack.shape[1], wpack.shape[2]
    ldc = buf.shape[3]
    tile_groups = (tiles + PB - 1) // PB
    items = n_img * n_groups * chunks * tile_groups
    gather_offsets = np.arange(KC, dtype=np.int64) * NR
    for item in prange(items):
        b, g, mb_lo, mb_hi, t_lo, t_hi = work_item(item, tile_groups, PB, tiles, chunks, m_blocks, n_groups)
        if mb_lo < mb_hi:  # (a chunk past the last block when blocks < chunks: nothing to do)
            x_base = xflat.ctypes.data + (b * xflat.shape[1] + g * group_stride) * 4
            gathered = np.empty((0, NR), dtype=np.float32)  # allocated only for a tile that needs it
            for k0 in range(0, steps, KC):
                kl = min(KC, steps - k0)
                last = t_hi - 1
                # the last tile of the group reads past `limit`: copy its rows (zeros beyond) instead
                reach = g * group_stride + offsets[k0 + kl - 1] + (last + 1) * NR
                gather = reach > limit
                if gather:
                    gathered = np.empty((kl, NR), dtype=np.float32)
                    for kk in range(kl):
                        start = g * group_stride + offsets[k0 + kk] + last * NR
                        for j in range(NR):
                            gathered[kk, j] = xflat[b, start + j] if start + j < limit else 0.0
                for mb in range(mb_lo, mb_hi):
                    a_addr = wpack.ctypes.data + ((g * m_blocks + mb) * steps + k0) * MR * 4
                    c_row = buf.ctypes.data + ((b * n_groups + g) * m_blocks * MR + mb * MR) * ldc * 4
                    for t in range(t_lo, t_hi):
                        if gather and t == last:
                            microkernel(a_addr, gathered.ctypes.data, gather_offsets.ctypes.data, kl,
                                        c_row + t * NR * 4, ldc, k0)
                        else:
                            microkernel(a_addr, x_base + t * NR * 4, offsets.ctypes.data + k0 * 8, kl,
                                        c_row + t * NR * 4, ldc, k0)
    channels, oh, ow = y.shape[1], y.shape[2], y.shape[3]
    per_group = channels // n_groups
    flat = y.reshape(n_img, channels, oh * ow)
    source, target = buf.reshape(-1), y.reshape(-1)  # flat, unsigned indices: no negative-index checks
    planes = n_img * channels
    parts = min(planes, epilogue.PARTS)
    for part in prange(parts):  # phase 2: output channels, with the epilogue while in cache
        lo, hi = part * planes // parts, (part + 1) * planes // parts
        for plane in range(lo, hi):
            ch, b = plane % channels, plane // channels
            g, m = ch // per_group, ch % per_group
            src = np.uint64(((b * n_groups + g) * m_blocks * MR + m) * ldc)
            dst = np.uint64(plane * oh * ow)
            for _row in range(oh):
                for ox in range(ow):
                    target[dst + np.uint64(ox)] = source[src + np.uint64(ox)]
                src += np.uint64(wp)
                dst += np.uint64(ow)
        epilogue.finish_rows(flat, lo, hi, bias, residual, act, params, False, flat, bias[:0])


# exact: no contracted multiply-adds outside the microkernel, so the inlined epilogue rounds as numpy's ops do
conv_kernel = threaded(_conv_kernel, exact=True, min_work=8_000_000)  # threaded from 8M multiply-adds (~80 us)
AVAILABLE = conv_kernel is not None and microkernel is not None and epilogue.apply_kernel is not None


def supports(x: np.ndarray, w: np.ndarray, group: int, win: Window) -> bool:
    """A 1-D or 2-D float32 conv (any stride, dilation, padding, group), when numba is on."""
    return (AVAILABLE and x.dtype == FLOAT and w.dtype == FLOAT and x.ndim in (3, 4) and x.size > 0
            and w.size > 0 and all(o > 0 for o in win.out) and math.prod(win.kernel) > 1)


def conv(x: np.ndarray, w: np.ndarray, group: int, win: Window, bias: np.ndarray | None = None,
         residual: np.ndarray | None = None, ending: Epilogue = epilogue.NO_ACTIVATION) -> np.ndarray:
    """ending(conv(x, w) + bias + residual) as a fresh (N, Cout, *out) array; `supports` must hold."""
    if x.ndim == 3:  # 1-D: a height of 1
        flat_win = Window((1, *win.kernel), (1, *win.strides), (1, *win.dilations), (0, *win.pads_begin),
                          (0, *win.pads_end), (1, *win.out))
        res = None if residual is None else residual[:, :, None]
        return conv(x[:, :, None], w[:, :, None], group, flat_win, bias, res, ending)[:, :, 0]
    assert conv_kernel is not None
    n, c = x.shape[:2]
    (sh, sw), (oh, ow) = win.strides, win.out
    xflat, hq, wq = phase_planes_jit.split(x, win)  # (module docstring of phase_planes_jit.py)
    cg, m = c // group, w.shape[0]
    offsets = phase_planes_jit.tap_offsets(cg, w.shape[2], w.shape[3], win.dilations[0], win.dilations[1], sh, sw,
                                           hq, wq)
    y = np.empty((n, m, oh, ow), dtype=FLOAT)
    b, r, params = epilogue.kernel_operands((n, m, oh * ow), FLOAT, bias, residual, ending)
    work = n * m * cg * math.prod(w.shape[2:]) * oh * ow
    group_stride = cg * sh * sw * hq * wq
    if _pixel_rows_pay(oh, ow, wq, m // group, cg * math.prod(w.shape[2:])):  # many channels (conv_pixels_jit.py)
        _pixel_rows(xflat, _packed(w, group, NR), offsets, group_stride, oh, ow, wq, y, b, r, ending, work)
        return y
    tiles = -(-(oh * wq) // NR)
    wpack = _packed(w, group, MR)
    tile_groups = -(-tiles // PB)
    blocks = wpack.shape[1]
    # channel chunks first (each thread then stores the channels it computed), positions where that balances badly
    chunks = min(blocks, max(2 if blocks % 2 == 0 or blocks >= 8 else 1,
                             -(-TARGET_ITEMS // (n * group * tile_groups))))
    buf = np.empty((n, group, blocks * MR, tiles * NR), dtype=FLOAT)
    conv_kernel(xflat, xflat.shape[1], wpack, offsets, group_stride, tiles, chunks, buf, wq, y, b, r,
                int(ending.act), params, work=work * wq // ow)
    return y


def _pixel_rows_pay(oh: int, ow: int, wq: int, per_group: int, steps: int) -> bool:
    """Whether the pixel-row kernel computes fewer padding values than the flat one, by enough to pay for
    its gathered loads: the flat one computes ceil(OH*Wq / 32)*32 positions for OH*OW pixels and rounds the
    channels up to 6, the pixel-row one rounds the pixels up to 6 and the channels up to 32, and its tiles
    cost (1 + 64/K) flat ones for a reduction of K steps (fitted to 30 conv shapes, 3 to 512 input channels,
    7x7 to 160x160 maps, with freed memory kept as the Executor keeps it: a short reduction pays its
    per-tile setup and gathers over fewer steps)."""
    if not conv_pixels_jit.AVAILABLE:
        return False
    pixels = oh * ow
    flat = -(-(oh * wq) // NR) * NR * -(-per_group // MR) * MR
    by_pixels = -(-pixels // MR) * MR * -(-per_group // NR) * NR
    return by_pixels * (1 + 64 / steps) < flat


def _pixel_rows(xflat: np.ndarray, wpack: np.ndarray, offsets: np.ndarray, group_stride: int, oh: int, ow: int,
                wq: int, y: np.ndarray, bias: np.ndarray, residual: np.ndarray, ending: Epilogue, work: int) -> None:
    assert conv_pixels_jit.conv_kernel is not None
    n, group, blocks = xflat.shape[0], wpack.shape[0], wpack.shape[1]
    rows = _pixel_positions(oh, ow, wq)
    tiles = rows.size // MR
    chunks = min(blocks, 2) if blocks >= 2 else 1
    pixel_groups = min(tiles, max(1, -(-TARGET_ITEMS // (n * group * chunks))))
    buf = np.empty((n, group, tiles * MR, blocks * NR), dtype=FLOAT)
    params = np.array([ending.p0, ending.p1, 0.0, 1.0, 6.0, 0.5], dtype=FLOAT)
    conv_pixels_jit.conv_kernel(xflat, wpack, offsets, group_stride, rows, chunks, pixel_groups, buf,
                                y.reshape(n, y.shape[1], oh * ow), bias, residual, int(ending.act), params,
                                work=work)


@functools.lru_cache(maxsize=512)
def _pixel_positions(oh: int, ow: int, wq: int) -> np.ndarray:
    """Each output pixel's position in a phase plane (oy*wq + ox), padded to whole tiles of MR with the last."""
    oy, ox = np.divmod(np.arange(oh * ow), ow)
    rows = oy * wq + ox
    return np.concatenate([rows, np.full(-len(rows) % MR, rows[-1])]).astype(np.int64)


_PACKED: dict[tuple[int, int], tuple[weakref.ref[np.ndarray], int, np.ndarray]] = {}


def _packed(w: np.ndarray, group: int, width: int) -> np.ndarray:
    """W (M, C/g, kh, kw) as (g, ceil(M/g / width), K, width) panels, zero rows padding each group's channels
    to a multiple of `width` (MR for the flat kernel, NR for the pixel-row one). Kept per read-only weight
    (graph constants are) while it lives."""
    key = (id(w), width)
    known = _PACKED.get(key)
    if known is not None and known[0]() is w and known[1] == group:
        return known[2]
    per_group, steps = w.shape[0] // group, math.prod(w.shape[1:])
    blocks = -(-per_group // width)
    panels = np.zeros((group, blocks * width, steps), dtype=FLOAT)
    panels[:, :per_group] = w.reshape(group, per_group, steps)
    packed = np.ascontiguousarray(panels.reshape(group, blocks, width, steps).transpose(0, 1, 3, 2))
    if not w.flags.writeable:
        _PACKED[key] = (weakref.ref(w), group, packed)
        weakref.finalize(w, _PACKED.pop, key, None)
    return packed
