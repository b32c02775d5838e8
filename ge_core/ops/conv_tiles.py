"""How the implicit-GEMM conv kernels (conv_direct_jit.py, conv_pixels_jit.py) split their work into items.

An item is (image, group, chunk of output-channel blocks, group of tiles), numbered with the tile group
fastest, so that numba's static split of a prange hands each thread whole chunks of channels where there
are several (each thread then also writes out the channels it computed).

The two kernels' write-out loops look alike but are kept apart: one reads channel-major tiles (contiguous
rows, vectorised), the other pixel-major ones (a strided gather). One shared loop with the strides as
arguments measured 15-25% slower on both kernels (hot, 16->64 3x3 at 55x55 and 128->32 at 56x56).
"""

from __future__ import annotations

from ge_core.ops.jit import compiled


def _work_item(item: int, tile_groups: int, tiles_per_group: int, tiles: int, chunks: int, blocks: int,
               n_groups: int) -> tuple[int, int, int, int, int, int]:
    """Item `item` of n_images * n_groups * chunks * tile_groups: its image, group, block range [lo, hi) of
    `blocks` split into `chunks`, and tile range [lo, hi) of `tiles` in groups of `tiles_per_group`."""
    tg = item % tile_groups
    rest = item // tile_groups
    chunk = rest % chunks
    rest //= chunks
    per_chunk = (blocks + chunks - 1) // chunks
    return (rest // n_groups, rest % n_groups, chunk * per_chunk, min(blocks, (chunk + 1) * per_chunk),
            tg * tiles_per_group, min(tiles, (tg + 1) * tiles_per_group))


work_item = compiled(_work_item) or _work_item  # scalars only: no reference counts to pay per call
