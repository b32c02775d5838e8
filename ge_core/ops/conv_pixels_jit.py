"""The small-map kernel of conv_direct_jit.py: output pixels as the GEMM's rows, output channels as its vectors.

conv_direct_jit's kernel vectorises over 32 consecutive output positions of a row-major grid as wide as the
padded input, so on a 7x7 map it computes 64 positions (9-wide rows, rounded up to two tiles of 32) for 49
pixels, and a 512-channel 3x3 conv there ran at half the speed it reaches on 56x56. Here a tile is 6 output
pixels by 32 output channels (simd_microkernel.microkernel_gathered): per reduction step, the 6 pixels'
input values are loaded from the phase planes at their own positions (no padding columns) and multiplied
with 32 channels of the packed weights. The tile's results land pixel-major in a buffer; the second loop
writes them channel-major into the output with the epilogue, as the other kernel does.
"""

from __future__ import annotations

import numpy as np

from ge_core.ops import epilogue
from ge_core.ops.conv_tiles import work_item
from ge_core.ops.jit import prange, threaded
from ge_core.ops.simd_microkernel import MR, NR, microkernel_gathered

KC = 256  # reduction steps per pass: a (KC, NR) weight panel stays in L1 across the pixel tiles


def _conv_kernel(xflat: np.ndarray, wpack: np.ndarray, offsets: np.ndarray, group_stride: int, rows: np.ndarray,
                 chunks: int, pixel_groups: int, buf: np.ndarray, y: np.ndarray, bias: np.ndarray,
                 residual: np.ndarray, act: int, params: np.ndarray) -> None:
    """Phase 1: buf[n, g, p, m] = sum_k xflat[n, g*group_stride + offsets[k] + rows[p]] * wpack[g, m // NR, k,
    m % NR]; phase 2: y[n, g*Mg + m, p] = epilogue(buf[n, g, p, m]) for p < OH*OW, m < Mg. rows holds each
    output pixel's position in a phase plane, padded to whole tiles with the last one's."""
    n_img, n_groups, n_blocks, steps = xflat.shape[0], wpack.shape[0], wpack.shape[1], wpack.shape[2]
    ldc = buf.shape[3]
    tiles = rows.size // MR
    tile_group = (tiles + pixel_groups - 1) // pixel_groups
    items = n_img * n_groups * chunks * pixel_groups
    for item in prange(items):
        b, g, nb_lo, nb_hi, t_lo, t_hi = work_item(item, pixel_groups, tile_group, tiles, chunks, n_blocks,
                                                   n_groups)
        x_base = xflat.ctypes.data + (b * xflat.shape[1] + g * group_stride) * 4
        for k0 in range(0, steps, KC):
            kl = min(KC, steps - k0)
            for nb in range(nb_lo, nb_hi):
                w_addr = wpack.ctypes.data + ((g * n_blocks + nb) * steps + k0) * NR * 4
                for t in range(t_lo, t_hi):
                    c_addr = buf.ctypes.data + (((b * n_groups + g) * tiles * MR + t * MR) * ldc + nb * NR) * 4
                    microkernel_gathered(x_base, offsets.ctypes.data + k0 * 8, rows.ctypes.data + t * MR * 8, kl,
                                         w_addr, c_addr, ldc, k0)
    channels, pixels = y.shape[1], y.shape[2]
    per_group = channels // n_groups
    planes = n_img * channels
    parts = min(planes, epilogue.PARTS)
    for part in prange(parts):  # phase 2: output channels, with the epilogue while in cache
        lo, hi = part * planes // parts, (part + 1) * planes // parts
        for plane in range(lo, hi):
            ch, b = plane % channels, plane // channels
            g, m = ch // per_group, ch % per_group
            for p in range(pixels):
                y[b, ch, np.uint64(p)] = buf[b, g, np.uint64(p), np.uint64(m)]
        epilogue.finish_rows(y, lo, hi, bias, residual, act, params, False, y, bias[:0])


# exact: no contracted multiply-adds outside the microkernel, so the inlined epilogue rounds as numpy's ops do
conv_kernel = threaded(_conv_kernel, exact=True, min_work=8_000_000)  # threaded from 8M multiply-adds (~80 us)
AVAILABLE = conv_kernel is not None and microkernel_gathered is not None
